"""How debug_batch reads a step's result (kdmcp/server/tools/batch/expect.py), in the fast tier: from the
result model or the error itself, as the client reads the same call's answer; the expect matcher; the summaries."""

from __future__ import annotations

import pytest

from kdmcp.engine import DebuggerEvent
from kdmcp.errors import CommandTimeout, TargetRunning
from kdmcp.secret import MASK, Secret
from kdmcp.server import models
from kdmcp.server.redaction import Redactor
from kdmcp.server.render import from_exception, ok_result, read_error
from kdmcp.server.tools.batch.expect import Observed, observe, summary_of, unmet
from kdmcp.server.tools.batch.models import Expect
from kdmcp.session_state import SessionState

KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"
BROKEN = SessionState.broken

OK = Observed(
    ok=True,
    data={"state": "broken", "confirmed": "running", "output_id": "s1:0-9"},
    text="[s1 broken 1 ms]\nrip=fffff800`62a05c20",
    state="broken",
)
DENIED = Observed(
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
    assert unmet(Expect.model_validate(expect), seen) == miss


# ------------------------------------------------------------------- reading an outcome


def _command(output: str, **fields: object) -> models.CommandResult:
    return models.CommandResult(session_id="s1", state=BROKEN, prompt="0: kd> ", elapsed_ms=0.5, command="r",
                                output=output, output_id="s1:0-9", output_bytes=9, **fields)


def test_a_result_is_read_as_the_client_reads_it_from_the_model_itself():
    redactor = Redactor([Secret(KEY)])
    event = DebuggerEvent(seq=1, kind="dbgprint", text=f"key {KEY}\n", offset=0, end_offset=9, time_unix=0.0)
    result = _command(f"rip=fffff800`62a05c20 {KEY}", events=[event])
    seen = observe(result, redactor, SessionState.running)
    served = ok_result(result, redactor, structured=True)
    assert seen.ok and seen.data == served.structured_content and seen.text == served.content[0].text
    assert KEY not in seen.text and MASK in seen.data["output"]
    assert seen.state == "broken"  # the result's own state, not the session's now
    assert seen.events == (event,)  # the step's events, typed, for the batch's result (served masked there)


def test_an_error_is_read_as_the_client_reads_it_from_the_error_itself():
    redactor = Redactor([Secret(KEY)])
    error = CommandTimeout(f"no prompt after 5s ({KEY})", session_id="s1", state=SessionState.busy,
                           partial_output="half", output_offset=3, output_end=9)
    seen = observe(error, redactor, BROKEN)
    served = from_exception(error, redactor)
    assert not seen.ok and seen.category == "timeout"
    assert seen.data == read_error(served)
    assert seen.data["output_id"] == "s1:3-9" and seen.data["partial_output"] == "half"
    assert seen.text == served.content[0].text == f"error[timeout]: no prompt after 5s ({MASK})"
    assert seen.state == "busy" and seen.events == ()


def test_an_error_without_a_state_takes_the_sessions():
    seen = observe(TargetRunning("the target is running: break in first"), Redactor(), SessionState.running)
    assert seen.data == {"category": "target_running", "message": "the target is running: break in first"}
    assert seen.state == "running"


# ---------------------------------------------------------------------------- summaries


@pytest.mark.parametrize(
    ("seen", "summary"),
    [
        (OK, "rip=fffff800`62a05c20"),
        (Observed(True, {}, "[h]\none\ntwo\nthree", "broken"), "one (+2 lines)"),
        (
            Observed(True, {"session_id": "s1", "state": "broken"}, "[s1 broken]\n[event break_in] Break", "broken"),
            "",
        ),
        (DENIED, ""),  # an error's message is the step's error, not repeated as its summary
    ],
)
def test_summary(seen, summary):
    assert summary_of(seen) == summary


@pytest.mark.parametrize(
    ("result", "text", "summary"),
    [
        (
            models.ContinueResult(session_id="s1", state=SessionState.running, elapsed_ms=15.3, confirmed="running"),
            "[s1 running 15.3 ms confirmed running]",
            "confirmed running",
        ),
        (
            _command("", record={"kind": "text"}),
            '[s1 broken "0: kd> " 0.5 ms unparsed]',
            "",  # "unparsed" says nothing of what the step did
        ),
        (
            _command("", truncated=True, record={"kind": "text"}),
            '[s1 broken "0: kd> " 0.5 ms truncated, 9 B in all: read_output output_id=s1:0-9 unparsed]',
            "truncated, 9 B in all: read_output output_id=s1:0-9",
        ),
        (
            models.BreakResult(session_id="s1", state=BROKEN, elapsed_ms=0.2, already_broken=True,
                               events=[DebuggerEvent(seq=1, kind="break_in", text="Break instruction", offset=0,
                                                     end_offset=5, time_unix=0.0)]),
            "[s1 broken 0.2 ms already broken in]\n[event break_in] Break instruction",
            "already broken in",
        ),
        (
            models.OutputChunk(session_id="s1", state=BROKEN, offset=0, next_offset=0, total_bytes=0, eof=True,
                               text=""),
            "[s1 broken bytes 0-0 of 0 eof]",
            "bytes 0-0 of 0 eof",
        ),
        (
            models.ResumeResult(session_id="s1", state=SessionState.running, elapsed_ms=3000.0, confirmed="running",
                                waited_s=3.0, hint="break_in when done\nor wait_for_stop"),
            "[s1 running 3000 ms confirmed running waited 3.0 s]\nbreak_in when done\nor wait_for_stop",
            "break_in when done (+1 lines)",
        ),
        (_command("1\n\n2\n" + "x" * 200), None, "1 (+2 lines)"),
        (_command("y" * 200), None, "y" * 159 + "…"),
    ],
)
def test_a_results_summary_is_its_first_line_under_the_header_else_what_the_header_adds(result, text, summary):
    seen = observe(result, Redactor(), BROKEN)
    if text is not None:
        assert seen.text == text
    assert summary_of(seen) == summary
