"""The run-control tools' logic (issue 15): breakpoints, steps, running to an address, waiting for a stop.

Each composes kd's own commands from checked arguments and reads kd's own answers back:
``bp``/``bu``/``ba`` between two ``bl`` (the new id is the one the second lists and the first
did not), ``p``/``t``/``gu`` and ``g ADDRESS`` as go-class lines whose end the engine reports
as a ``step`` event (``engine/step_stop.py``), and the location after a stop from ``u @$ip L1``
with the current thread and process (``? @$thread`` / ``? @$proc`` in a kernel, ``~.`` in a
process). A wait that times out is a result (``running``), never an error: the target runs,
which is what the caller asked for.

Records are read by their ``kind`` (the parse layer's models are imported on first parse,
not at server start: docs/performance.md, "Cold start").
"""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any, Literal

from kdmcp.engine import DebuggerEvent, DebuggerSession, SessionState
from kdmcp.errors import InvalidArgument
from kdmcp.server import typed
from kdmcp.server.kind_rules import is_kernel
from kdmcp.server.tools.run.bp_book import BreakpointBook, BreakpointNote
from kdmcp.server.tools.run.models import (
    BreakpointKind,
    BreakpointRow,
    BreakpointsResult,
    ClearResult,
    Location,
    LocationResult,
    RunToResult,
    SetBreakpointResult,
    StepResult,
    Stop,
    WaitResult,
)

if TYPE_CHECKING:
    from kdmcp.server.app import KdMcpApp

__all__ = ["breakpoints", "clear_breakpoints", "location", "run_to", "set_breakpoint", "step", "wait_for_stop",
           "watch"]

STOP_KINDS = frozenset({"breakpoint", "exception", "bugcheck", "break_in", "step", "exited"})
# States a wait goes on through: the target runs, or is on its way back (a reboot reconnects).
_STILL_GOING = frozenset({SessionState.running, SessionState.rebooting, SessionState.reconnecting,
                          SessionState.waiting_for_target})
# How a condition becomes a breakpoint command string ("Setting a Conditional Breakpoint":
# bp Address ".if (Condition) {OptionalCommands} .else {gc}") and how it is read back from bl.
_CONDITIONAL_RE = re.compile(r"\.if \((?P<cond>.*)\) \{(?P<cmd>.*)\} \.else \{gc\}", re.DOTALL)


# ------------------------------------------------------------------------ breakpoints

def _bl(ran: typed.Ran, *, show: bool) -> list[Any]:
    record = ran.record("bl", show=show)
    return list(getattr(record, "breakpoints", []) or [])


def _hits(session: DebuggerSession, bp_id: int, since_seq: int) -> int:
    return sum(1 for e in session.events_since(since_seq) if e.kind == "breakpoint" and e.breakpoint == bp_id)


def _row(app: KdMcpApp, session: DebuggerSession, bp: Any) -> BreakpointRow:
    """A ``bl`` row with the book's note (when kd-mcp set it and the row is still that breakpoint)."""
    note = app.state_of(BreakpointBook).get(session.session_id, bp.id)
    command: str | None = bp.command
    condition = None
    if note is not None:
        condition, command = note.condition, note.command
    elif command is not None and (m := _CONDITIONAL_RE.fullmatch(command)) is not None:
        condition, command = m["cond"], m["cmd"] or None
    kind: BreakpointKind = (note.kind if note is not None
                            else "data" if bp.access else "deferred" if bp.unresolved else "code")
    return BreakpointRow(
        id=bp.id, state="enabled" if bp.enabled else "disabled", kind=kind, address=bp.address, symbol=bp.symbol,
        unresolved=bp.unresolved, access=bp.access, size=bp.size,
        hits=_hits(session, bp.id, note.since_seq if note is not None else 0),
        condition=condition, command=command, one_shot=note.one_shot if note is not None else False,
        thread=None if bp.thread == "0:****" else bp.thread,  # process 0, any thread: the usual filter
    )


def _kd_refusal(record: Any) -> str | None:
    """kd's own words when a command failed ("Couldn't resolve error at …", a syntax error): the
    parse layer's error record (kdmcp.parse reads every output that is the debugger's error)."""
    return str(record.message) if getattr(record, "kind", None) == "error" else None


# The breakpoint's command string is one quoted string of the bp line: a '"' would end it, a line
# break would end the line; a condition sits inside ".if (…) {…}", so it has no braces either.
_STRING_BAD = re.compile(r'["\x00-\x08\x0a-\x1f\x7f]')
_PROCESS_RE = re.compile(r"(?:0x)?[0-9a-fA-F`]{1,20}")


def _check_strings(condition: str | None, command: str | None, process: str | None) -> None:
    for name, value in (("condition", condition), ("command", command)):
        if value is not None and (_STRING_BAD.search(value) or not value.strip()):
            raise InvalidArgument(f"{name} must be one line without '\"' (it becomes part of kd's quoted "
                                  "breakpoint command string)")
    if condition is not None and ("{" in condition or "}" in condition):
        raise InvalidArgument("condition may not contain braces (it sits inside .if (condition) {...})")
    if command is not None and command.count("{") != command.count("}"):
        raise InvalidArgument("command has unbalanced braces")
    if process is not None and not _PROCESS_RE.fullmatch(process):
        raise InvalidArgument(f"process must be an EPROCESS address (hex), not {process!r}")


def set_breakpoint(
    app: KdMcpApp, session_id: str | None, location: str, kind: Literal["code", "deferred", "data"],
    access: Literal["e", "r", "w", "i"], size: int, condition: str | None, command: str | None, one_shot: bool,
    process: str | None, *, owner: str | None,
) -> SetBreakpointResult:
    """``bp``/``bu``/``ba`` with kd's options, the new breakpoint read back from ``bl``."""
    _check_strings(condition, command, process)
    ran = typed.open_session(app, session_id, owner, needs="breakpoint")
    kernel = is_kernel(ran.session)
    if process is not None and not kernel:
        raise InvalidArgument("process applies to kernel targets (bp /p EPROCESS); a user-mode breakpoint is "
                              "the debugged process's", session_id=ran.session.session_id)
    if kind == "data" and access == "e" and size != 1:
        raise InvalidArgument("an execute (e) data breakpoint has size 1 (ba e1 ADDRESS)",
                              session_id=ran.session.session_id)
    line = {"code": "bp", "deferred": "bu", "data": f"ba {access}{size}"}[kind]
    line += " /1" if one_shot else ""
    line += f" /p {process}" if process is not None else ""
    line += f" {location}"
    string = f".if ({condition}) {{{command or ''}}} .else {{gc}}" if condition is not None else command
    if string is not None:
        line += f' "{string}"'
    app.enforce_policy(line, owner, ran.session.session_id)  # before bl: nothing runs if the line is denied
    since = ran.session.last_event_seq
    before = {bp.id for bp in _bl(ran, show=False)}
    refusal = _kd_refusal(ran.record(line))
    after = _bl(ran, show=False)
    new = [bp for bp in after if bp.id not in before]
    if not new:  # "breakpoint 0 redefined": kd reused the id of one already there
        new = [bp for bp in after if location in (bp.symbol, bp.address)]
    if not new:
        raise InvalidArgument(f"kd set no breakpoint: {refusal or ran.outputs[-2].output.strip() or 'no answer'}",
                              session_id=ran.session.session_id, state=ran.session.state)
    bp = new[-1]
    set_kind = "deferred" if kind == "code" and bp.unresolved else kind  # "adding deferred bp"
    app.state_of(BreakpointBook).note(ran.session.session_id, bp.id, BreakpointNote(
        kind=set_kind, expression=location, since_seq=since, condition=condition,
        command=command, one_shot=one_shot))
    return typed.serve(ran, SetBreakpointResult, breakpoint=_row(app, ran.session, bp))


def breakpoints(app: KdMcpApp, session_id: str | None, *, owner: str | None) -> BreakpointsResult:
    ran = typed.open_session(app, session_id, owner)
    listed = _bl(ran, show=True)
    app.state_of(BreakpointBook).keep_only(ran.session.session_id, {bp.id for bp in listed})
    return typed.serve(ran, BreakpointsResult, breakpoints=[_row(app, ran.session, bp) for bp in listed])


def clear_breakpoints(app: KdMcpApp, session_id: str | None, ids: list[int] | None, clear_all: bool, *,
                      owner: str | None) -> ClearResult:
    if clear_all == (ids is not None):
        raise InvalidArgument("give ids, or all=true (not both)")
    ran = typed.open_session(app, session_id, owner)
    line = "bc *" if clear_all else "bc " + " ".join(map(str, ids or []))
    app.enforce_policy(line, owner, ran.session.session_id)
    before = {bp.id for bp in _bl(ran, show=False)}
    ran.run(line)
    remaining = _bl(ran, show=False)
    left = {bp.id for bp in remaining}
    app.state_of(BreakpointBook).keep_only(ran.session.session_id, left)
    asked = before if clear_all else set(ids or [])
    return typed.serve(ran, ClearResult, cleared=sorted((before & asked) - left), not_found=sorted(asked - before),
                       remaining=[_row(app, ran.session, bp) for bp in remaining])


# --------------------------------------------------------------------------- location

def _value(record: Any) -> str | None:
    return getattr(record, "value", None) if getattr(record, "kind", None) == "expression" else None


def read_location(ran: typed.Ran) -> Location:
    """Where the broken-in target is: ``u @$ip L1`` (shown), then who is current (not shown)."""
    session = ran.session
    record = ran.record("u @$ip L1")
    instructions = list(getattr(record, "instructions", []) or [])
    if not instructions:
        raise InvalidArgument(f"kd shows no instruction at the instruction pointer: {ran.outputs[-1].output.strip()}",
                              session_id=session.session_id, state=session.state)
    first = instructions[0]
    prompt = session.prompt
    loc = Location(ip=first.address, symbol=first.symbol, instruction=f"{first.mnemonic} {first.operands}".strip(),
                   bytes=first.bytes or None)
    if is_kernel(session):
        loc.processor = prompt.processor if prompt is not None else None
        loc.thread = _value(ran.record("? @$thread", show=False))
        loc.process = _value(ran.record("? @$proc", show=False))
    else:
        current = [t for t in getattr(ran.record("~.", show=False), "threads", []) or [] if t.current]
        if current:
            loc.thread, loc.process, loc.thread_index = current[0].id, current[0].process_id, current[0].index
        elif prompt is not None:
            loc.thread_index = prompt.thread
    return loc


def location(app: KdMcpApp, session_id: str | None, *, owner: str | None) -> LocationResult:
    ran = typed.open_session(app, session_id, owner)
    return typed.serve(ran, LocationResult, location=read_location(ran))


# ------------------------------------------------------------------------ stops, waits

def watch(session: DebuggerSession, timeout_s: float, cancel: threading.Event | None = None,
          *, until_prompt: bool = False) -> float:
    """Wait (bounded) while the target runs; return the seconds waited.

    ``resume_for_winrm`` ends its wait at any change (a reboot is news for WinRM);
    ``until_prompt`` waits on through a reboot's reconnect, for a stop at a prompt.
    """
    going = _STILL_GOING if until_prompt else frozenset({SessionState.running})
    t0 = time.monotonic()
    session.wait_for(lambda: session.state not in going or (cancel is not None and cancel.is_set()), timeout_s)
    return round(time.monotonic() - t0, 3)


def _last_stop(events: list[DebuggerEvent]) -> Stop | None:
    for event in reversed(events):
        if event.kind in STOP_KINDS:
            first = event.text.strip().splitlines()[0] if event.text.strip() else event.kind
            return Stop(reason=event.kind, breakpoint=event.breakpoint, code=event.code, text=first,  # type: ignore[arg-type]
                        seq=event.seq)
    return None


def _stopped(ran: typed.Ran, since_seq: int) -> tuple[Stop | None, Location | None]:
    """The stop since ``since_seq`` (else the session's last one) and, at a prompt, the location."""
    session = ran.session
    stop = _last_stop(session.events_since(since_seq)) or _last_stop(session.events_since(0))
    loc = read_location(ran) if session.state == SessionState.broken else None
    return stop, loc


def _run(ran: typed.Ran, line: str, timeout_s: float, cancel: threading.Event | None) -> int:
    """Send the go-class ``line`` and wait (bounded) for the stop it ends in; return the seq before it."""
    ran.app.enforce_policy(line, ran.owner, ran.session.session_id)
    since = ran.session.last_event_seq
    ran.run(line, show=False)
    if ran.session.state == SessionState.running:
        watch(ran.session, timeout_s, cancel, until_prompt=True)
    return since


def step(app: KdMcpApp, session_id: str | None, mode: Literal["over", "into", "out"], count: int,
         timeout_s: float, cancel: threading.Event | None, *, owner: str | None) -> StepResult:
    """``p``/``t`` (with a count) or ``gu`` (a run to the return, ``count`` times), then where it ended."""
    ran = typed.open_session(app, session_id, owner, needs="run")
    t0 = time.monotonic()
    if mode == "out":
        since = ran.session.last_event_seq
        for _ in range(count):
            _run(ran, "gu", timeout_s, cancel)
            last = _last_stop(ran.session.events_since(since))
            if ran.session.state != SessionState.broken or (last is not None and last.reason != "step"):
                break  # a breakpoint or an exception on the way out ends the steps
    else:
        since = _run(ran, ("p" if mode == "over" else "t") + (f" {count}" if count > 1 else ""), timeout_s, cancel)
    stop, loc = _stopped(ran, since)
    running = ran.session.state != SessionState.broken
    return typed.serve(ran, StepResult, elapsed_ms=(time.monotonic() - t0) * 1000,
                       stop=None if running else stop, location=loc)


def run_to(app: KdMcpApp, session_id: str | None, target: str, timeout_s: float, cancel: threading.Event | None,
           *, owner: str | None) -> RunToResult:
    """``g ADDRESS``: kd's one-time breakpoint there; ``hit`` when the stop is at that address."""
    ran = typed.open_session(app, session_id, owner, needs="run")
    t0 = time.monotonic()
    address = _value(ran.record(f"? {target}", show=False))
    if address is None:
        raise InvalidArgument(f"kd cannot evaluate {target!r}: {ran.outputs[-1].output.strip()}",
                              session_id=ran.session.session_id, state=ran.session.state)
    since = _run(ran, f"g {target}", timeout_s, cancel)
    stop, loc = _stopped(ran, since)
    if ran.session.state != SessionState.broken:
        outcome: Literal["hit", "stopped_elsewhere", "running"] = "running"
        stop = None
    elif loc is not None and int(loc.ip, 16) == int(address, 16):
        outcome = "hit"
    else:
        outcome = "stopped_elsewhere"
    return typed.serve(ran, RunToResult, elapsed_ms=(time.monotonic() - t0) * 1000, outcome=outcome,
                       target=address, stop=stop, location=loc)


def wait_for_stop(app: KdMcpApp, session_id: str | None, timeout_s: float, cancel: threading.Event | None, *,
                  owner: str | None) -> WaitResult:
    """Wait for a running target to stop; a stop that came before the call is the answer at once."""
    ran = typed.open_session(app, session_id, owner)
    session = ran.session
    since = session.last_event_seq
    waited = watch(session, timeout_s, cancel, until_prompt=True) if session.state in _STILL_GOING else 0.0
    stop, loc = (None, None) if session.state in _STILL_GOING else _stopped(ran, since)
    return typed.serve(ran, WaitResult, elapsed_ms=waited * 1000, waited_s=waited, stop=stop, location=loc)
