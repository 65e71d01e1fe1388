"""debug_batch's steps checked before anything runs (kdmcp/server/tools/batch/steps.py), in the fast tier.

What runs on a session (rollback, timeout, cancellation) is tests/server/test_batch_e2e.py.
"""

from __future__ import annotations

import time
import types
from typing import Any

import pytest

from kdmcp.errors import InvalidArgument, PolicyDenied
from kdmcp.secret import MASK, Secret
from kdmcp.server.redaction import Redactor
from kdmcp.server.registry import all_tools, tool_groups
from kdmcp.server.tools.batch import steps as batch


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


# ------------------------------------------------------------------------ progress

KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"


@pytest.mark.anyio
async def test_a_steps_progress_is_the_batchs_named_for_the_step_and_masked():
    sent: list[tuple[float, float | None, str | None]] = []

    class Ctx:
        async def report_progress(self, progress, total, message):
            sent.append((progress, total, message))

    call = types.SimpleNamespace(app=types.SimpleNamespace(redactor=Redactor([Secret(KEY)])))
    running = types.SimpleNamespace(call=call, t0=time.monotonic() - 5, timeout_s=60.0,
                                    label=f"step 2/3 `.echo {KEY}`")
    step = batch._StepContext(Ctx(), running)
    await step.report_progress(1.0, 30.0, f"running '.echo {MASK}' (1s)")
    await step.report_progress(2.0)
    (first, total, message), (second, _, bare) = sent
    assert first >= 5 and second >= first and total == 60.0  # the batch's seconds and bound, not the step's
    assert message == f"step 2/3 `.echo {MASK}`: running '.echo {MASK}' (1s)"
    assert bare == f"step 2/3 `.echo {MASK}`"
