"""Whether the target runs: ``break_in``, ``continue_go`` and ``resume_for_winrm``.

``resume_for_winrm`` is the WinRM loop's half: WinRM on the guest cannot answer while the kernel
is broken in, so it continues, confirms the target runs, and watches it for ``wait_s`` (the wait
``wait_for_stop`` does, ended by any change) before handing back with the next step named.
That wait is ``watch``, here beside the tools that make the target run; ``stops.py`` waits with it.
"""

from __future__ import annotations

import threading
import time
from typing import Annotated

from pydantic import Field

from kdmcp.engine import DebuggerSession, SessionState
from kdmcp.server import models
from kdmcp.server.args import SessionId, Timeout
from kdmcp.server.call import Call
from kdmcp.server.kind_rules import refuse_for_kind
from kdmcp.server.registry import controls, tool

__all__ = ["STILL_GOING", "break_in", "continue_go", "resume_for_winrm", "watch"]

# States a wait goes on through: the target runs, or is on its way back (a reboot reconnects).
STILL_GOING = frozenset({SessionState.running, SessionState.rebooting, SessionState.reconnecting,
                         SessionState.waiting_for_target})


def watch(session: DebuggerSession, timeout_s: float, cancel: threading.Event | None = None,
          *, until_prompt: bool = False) -> float:
    """Wait (bounded) while the target runs; return the seconds waited.

    ``resume_for_winrm`` ends its wait at any change (a reboot is news for WinRM);
    ``until_prompt`` waits on through a reboot's reconnect, for a stop at a prompt.
    """
    going = STILL_GOING if until_prompt else frozenset({SessionState.running})
    t0 = time.monotonic()
    session.wait_for(lambda: session.state not in going or (cancel is not None and cancel.is_set()), timeout_s)
    return round(time.monotonic() - t0, 3)


@tool("control", controls("Break into the running target", idempotent=True))
def break_in(call: Call, session_id: SessionId = None, timeout_s: Timeout = None) -> models.BreakResult:
    """Break into a running target (the guest freezes)."""
    session = call.app.session(session_id, call.owner)
    refuse_for_kind(session, "break_in")
    result = session.break_in(timeout_s)
    return models.BreakResult.serve(result, session_id=session.session_id, prompt=session.prompt,
                                    events=call.app.new_events(session))


@tool("control", controls("Let the target run"))
def continue_go(
    call: Call,
    session_id: SessionId = None,
    command: Annotated[str, Field(description='g, gh, gn or g ADDR',
                                  min_length=1, max_length=256)] = "g",
) -> models.ContinueResult:
    """Resume the target (g)."""
    session = call.app.session(session_id, call.owner)
    call.app.enforce_policy(command, call.owner, session.session_id)
    refuse_for_kind(session, "run")
    result = session.go(command)
    return models.ContinueResult.serve(result, session_id=session.session_id, prompt=session.prompt,
                                       events=call.app.new_events(session))


@tool("control", controls("Resume the guest so WinRM answers again"))
def resume_for_winrm(
    call: Call,
    session_id: SessionId = None,
    wait_s: Annotated[float | None, Field(ge=0, le=600)] = None,
) -> models.ResumeResult:
    """Let the guest run wait_s s so WinRM answers."""
    app = call.app
    wait = app.options.config.timeouts.continue_wait_sec if wait_s is None else wait_s
    call.progress("letting the guest run", wait)
    t0 = time.monotonic()
    session = app.session(session_id, call.owner)
    app.enforce_policy("g", call.owner, session.session_id)
    refuse_for_kind(session, "resume_for_winrm")
    # Already running: nothing to resume.
    confirmed = "running" if session.state == SessionState.running else session.go("g").confirmed
    waited = watch(session, wait, call.cancel)
    state = session.state
    return models.ResumeResult(
        session_id=session.session_id,
        state=state,
        prompt=session.prompt.text if session.prompt is not None else None,
        events=app.new_events(session),
        elapsed_ms=round((time.monotonic() - t0) * 1000, 3),
        confirmed=confirmed,
        waited_s=round(waited, 3),
        hint=_resume_hint(state) if confirmed != "unread" else (
            "kd has not read the g (frozen or hung?): the guest may still be at its break, so WinRM will not "
            "answer. break_in (or stop_kd and start again), then resume_for_winrm; check the guest meanwhile."),
    )


def _resume_hint(state: SessionState) -> str:
    """What the caller of ``resume_for_winrm`` does next, by the state the wait ended in."""
    if state == SessionState.running:
        return ("The target is running: retry the WinRM call now. Call break_in when you need the "
                "debugger again (WinRM stops answering while the target is broken in).")
    if state in (SessionState.rebooting, SessionState.reconnecting, SessionState.waiting_for_target):
        return "The guest is rebooting: wait for it to come back (the session reconnects), then retry WinRM."
    if state == SessionState.broken:
        return ("The target stopped again (see events: breakpoint, exception or bugcheck): WinRM will not "
                "answer until it runs. Inspect it with kd_command, then resume_for_winrm again.")
    return f"The session is {state.value}: WinRM cannot be relied on; see events."
