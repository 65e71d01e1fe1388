"""debug_batch's pure parts, in the fast tier: the batch's validation, the expect matcher, the summaries.

What runs on a session (rollback, timeout, cancellation) is tests/server/test_batch_e2e.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from kdmcp.errors import InvalidArgument, PolicyDenied
from kdmcp.server.registry import all_tools, tool_groups
from kdmcp.server.tools.batch import steps as batch
from kdmcp.server.tools.batch.models import BatchResult, Expect, StepRecord, text


def _plan(
    steps: list[dict[str, Any]], always: list[dict[str, Any]] | None = None, surface: frozenset[str] = all_tools()
) -> list[batch.PlannedStep]:
    return batch.plan(batch.parse_request(steps, always, None), "s1", surface)


# ----------------------------------------------------------------------- validation


def test_a_command_step_is_kd_command_and_the_session_is_forced_into_every_step():
    planned = _plan(
        [{"command": "bp nt!NtCreateFile"}, {"tool": "registers", "arguments": {"register": "rip"}}],
        always=[{"tool": "read_output"}],
    )
    assert [p.step.tool_name for p in planned] == ["kd_command", "registers", "read_output"]
    assert [p.kwargs["session_id"] for p in planned] == ["s1"] * 3
    assert planned[0].kwargs["command"] == "bp nt!NtCreateFile"
    assert planned[1].kwargs["register"] == "rip"
    assert [p.always for p in planned] == [False, False, True]
    assert planned[0].step.what == "`bp nt!NtCreateFile`" and planned[1].step.what == "registers"


@pytest.mark.parametrize("tool", [*tool_groups()["session"], "debug_batch"])
def test_session_tools_and_the_batch_itself_are_not_steps(tool):
    with pytest.raises(InvalidArgument, match=r"steps\[2\]: .*not a step"):
        _plan([{"command": "bl"}, {"tool": tool}])


def test_read_output_is_a_step():
    assert _plan([{"tool": "read_output", "arguments": {"limit": 10}}])[0].kwargs["limit"] == 10


@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        ([{"tool": "no_such_tool"}], r"steps\[1\]: unknown tool 'no_such_tool'"),
        (
            [{"command": "bl"}, {"tool": "registers", "arguments": {"regster": "rip"}}],
            r"steps\[2\]: registers has no argument 'regster' \(its arguments: register, session_id\)",
        ),
        ([{"tool": "registers", "arguments": {"register": "r ax"}}], r"steps\[1\]: invalid arguments for registers"),
        (
            [{"tool": "kd_command", "arguments": {"command": "bl", "session_id": "s2"}}],
            r"runs on the batch's session \(s1\), not 's2'",
        ),
        ([{"tool": "kd_command", "command": "bl"}], r"one of them"),
        ([{}], r"one of them"),
        ([{"command": "bl", "arguments": {"x": 1}}], r"arguments go with \"tool\""),
        ([{"command": "bl", "expect": {"ok": True, "error": "timeout"}}], r"contradict"),
        ([{"command": "bl", "expect": {"error": "no_such_category"}}], r"steps\.0\.expect\.error"),
        ([{"command": "bl", "expect": {"colour": "red"}}], r"is not a known key"),
        ([{"command": "bl"}] * 51, r"steps: List should have at most 50 items"),
        ([], r"steps: List should have at least 1 item"),
    ],
)
def test_a_bad_step_refuses_the_whole_batch(steps, problem):
    with pytest.raises(InvalidArgument, match=problem):
        _plan(steps)


def test_a_step_naming_its_own_session_is_fine():
    assert _plan([{"tool": "kd_command", "arguments": {"command": "bl", "session_id": "s1"}}])


def test_a_tool_outside_the_callers_surface_is_policy_denied():
    with pytest.raises(PolicyDenied, match=r"steps\[1\]: tool 'continue_go' is not available"):
        _plan([{"tool": "continue_go"}], surface=frozenset({"kd_command", "debug_batch"}))


@pytest.mark.parametrize(
    "restore",
    [
        {"memory": [{"address": "@rsp", "length": 4097}]},
        {"memory": [{"address": "@rsp L100", "length": 8}]},
        {"registers": "yes please"},
        {"stack": True},
    ],
)
def test_restore_is_checked(restore):
    with pytest.raises(InvalidArgument, match=r"restore"):
        batch.parse_request([{"command": "bl"}], None, restore)


# ------------------------------------------------------------------------- expect

OK = batch.Observed(
    ok=True,
    data={"state": "broken", "confirmed": "running", "output_id": "s1:0-9"},
    text="[s1 broken 1 ms]\nrip=fffff800`62a05c20",
    state="broken",
)
DENIED = batch.Observed(
    ok=False,
    data={"category": "policy_denied", "message": "bp is not allowed"},
    text="error[policy_denied]: bp is not allowed",
    state="broken",
)


@pytest.mark.parametrize(
    ("expect", "seen", "miss"),
    [
        ({}, OK, None),
        ({}, DENIED, "expected ok, got error[policy_denied]"),
        ({"ok": True}, DENIED, "expected ok, got error[policy_denied]"),
        ({"ok": False}, DENIED, None),
        ({"ok": False}, OK, "expected an error, got ok"),
        ({"error": "policy_denied"}, DENIED, None),
        ({"error": "target_running"}, DENIED, "expected error[target_running], got error[policy_denied]"),
        ({"error": "policy_denied"}, OK, "expected error[policy_denied], got ok"),
        ({"state": "broken"}, OK, None),
        ({"state": "running"}, OK, "expected state running, got broken"),
        ({"contains": "rip=fffff800"}, OK, None),
        ({"contains": "rax="}, OK, "expected text containing 'rax='"),
        ({"error": "policy_denied", "contains": "not allowed"}, DENIED, None),
        ({"fields": {"confirmed": "running"}}, OK, None),
        ({"fields": {"confirmed": "stopped"}}, OK, "expected confirmed='stopped', got 'running'"),
        ({"fields": {"hint": "x"}}, OK, "expected hint='x', got nothing"),
        ({"error": "policy_denied", "fields": {"message": "bp is not allowed"}}, DENIED, None),
    ],
)
def test_expect(expect, seen, miss):
    assert batch.unmet(Expect.model_validate(expect), seen) == miss


@pytest.mark.parametrize(
    ("seen", "summary"),
    [
        (OK, "rip=fffff800`62a05c20"),
        (
            batch.Observed(
                True,
                {"session_id": "s1", "state": "running", "elapsed_ms": 15.3},
                "[s1 running 15.3 ms confirmed running]",
                "running",
            ),
            "confirmed running",
        ),
        (
            batch.Observed(
                True,
                {"session_id": "s1", "state": "broken", "prompt": "0: kd> ", "elapsed_ms": 0.5},
                '[s1 broken "0: kd> " 0.5 ms unparsed]',
                "broken",
            ),
            "",
        ),
        (batch.Observed(True, {}, "[h]\none\ntwo\nthree", "broken"), "one (+2 lines)"),
        (
            batch.Observed(
                True, {"session_id": "s1", "state": "broken"}, "[s1 broken]\n[event break_in] Break", "broken"
            ),
            "",
        ),
        (DENIED, ""),  # an error's message is the step's error, not repeated as its summary
    ],
)
def test_summary(seen, summary):
    assert batch.summary_of(seen) == summary


def test_the_text_block_has_a_line_per_step_and_the_rollback():
    result = BatchResult(
        session_id="s1",
        state="broken",
        prompt="0: kd> ",
        elapsed_ms=42.0,
        outcome="failed",
        failed_step=3,
        steps=[
            StepRecord(index=1, what="`bp nt!NtWriteFile`", ok=True),
            StepRecord(index=2, what="continue_go", ok=True, summary="confirmed running"),
            StepRecord(
                index=3,
                what="`r`",
                ok=False,
                unmet="expected ok, got error[target_running]",
                error={"category": "target_running", "message": "break in first"},
            ),
            StepRecord(index=1, what="`.echo done`", always=True, ok=True, summary="done"),
        ],
        rolled_back=["break_in", "bc 0"],
        not_rolled_back=["registers: the target ran"],
    )
    assert text(result.model_dump(mode="json", exclude_defaults=True, exclude_none=True)).splitlines() == [
        '[s1 broken "0: kd> " 42.0 ms failed at step 3]',
        "1 ok `bp nt!NtWriteFile`",
        "2 ok continue_go: confirmed running",
        "3 FAILED `r`: expected ok, got error[target_running] (break in first)",
        "always 1 ok `.echo done`: done",
        "rolled back: break_in; bc 0",
        "not rolled back: registers: the target ran",
    ]


def test_an_expected_error_reads_as_ok_with_the_error():
    step = StepRecord(index=1, what="`bp x`", ok=True, error={"category": "policy_denied", "message": "no"})
    result = BatchResult(session_id="s1", state="broken", elapsed_ms=1.0, outcome="committed", steps=[step])
    lines = text(result.model_dump(mode="json", exclude_defaults=True, exclude_none=True)).splitlines()
    assert lines[1] == "1 ok `bp x`: error[policy_denied]: no"
