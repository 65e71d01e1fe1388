"""The stepping tools and where the target stopped (issue 15): ``step``, ``run_to``, ``wait_for_stop``, ``location``.

``p``/``t``/``gu`` and ``g ADDRESS`` are go-class lines whose end the engine reports as a
``step`` event (``engine/step_stop.py``), and the location after a stop is read from
``u @$ip L1`` with the current thread and process (``? @$thread`` / ``? @$proc`` in a kernel,
``~.`` in a process). A wait that times out is a result (``running``), never an error: the
target runs, which is what the caller asked for.

Records are read by their kind (the parse layer's models are imported on first parse, not at
server start: docs/performance.md, "Cold start").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from kdmcp import parse as parsing
from kdmcp.engine import DebuggerEvent, SessionState
from kdmcp.errors import InvalidArgument
from kdmcp.server import typed
from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Call
from kdmcp.server.kind_rules import is_kernel
from kdmcp.server.registry import controls, reads, tool
from kdmcp.server.tools.run.models import Location, LocationResult, RunToResult, StepResult, Stop, WaitResult
from kdmcp.server.tools.run.target import STILL_GOING, watch

if TYPE_CHECKING:
    from kdmcp.parse.record_base import RecordBase

__all__ = ["location", "run_to", "step", "wait_for_stop"]

STOP_KINDS = frozenset({"breakpoint", "exception", "bugcheck", "break_in", "step", "exited", "module_load",
                        "module_unload", "process_exit", "thread_exit"})
# Reported without stopping as often as with (a module loaded, an exception the target handled):
# a stop only when the engine marked it the stop's reason.
_STOP_IF_MARKED = frozenset({"exception", "module_load", "module_unload", "process_exit", "thread_exit"})

WaitS = Annotated[float, Field(gt=0,
                               le=3600)]


# --------------------------------------------------------------------------- location

def _value(record: RecordBase | None) -> str | None:
    return record.value if isinstance(record, parsing.ExpressionRecord) else None


def _read_location(ran: typed.Ran) -> Location:
    """Where the broken-in target is: ``u @$ip L1`` (shown), then who is current (not shown)."""
    session = ran.session
    record = ran.read("u @$ip L1", parsing.DisassemblyRecord)
    instructions = record.instructions if record is not None else []
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
        threads = ran.record("~.", show=False)
        current = [t for t in threads.threads if t.current] if isinstance(threads, parsing.ThreadsRecord) else []
        if current:
            loc.thread, loc.process, loc.thread_index = current[0].id, current[0].process_id, current[0].index
        elif prompt is not None:
            loc.thread_index = prompt.thread
    return loc


# ------------------------------------------------------------------------ stops, waits

def _last_stop(events: list[DebuggerEvent]) -> Stop | None:
    for event in reversed(events):
        if event.kind in STOP_KINDS and (event.stopped or event.kind not in _STOP_IF_MARKED):
            first = event.text.strip().splitlines()[0] if event.text.strip() else event.kind
            return Stop(reason=event.kind, breakpoint=event.breakpoint, code=event.code, text=first,  # type: ignore[arg-type]
                        seq=event.seq)
    return None


def _stopped(ran: typed.Ran, since_seq: int) -> tuple[Stop | None, Location | None]:
    """The stop since ``since_seq`` (else the session's last one) and, at a prompt, the location."""
    session = ran.session
    stop = _last_stop(session.events_since(since_seq)) or _last_stop(session.events_since(0))
    loc = _read_location(ran) if session.state == SessionState.broken else None
    return stop, loc


def _run(call: Call, ran: typed.Ran, line: str, timeout_s: float) -> int:
    """Send the go-class ``line`` and wait (bounded) for the stop it ends in; return the seq before it."""
    since = ran.session.last_event_seq
    ran.run(line, show=False)
    if ran.session.state == SessionState.running:
        watch(ran.session, timeout_s, call.cancel, until_prompt=True)
    return since


@tool("control", controls("Step"))
def step(
    call: Call,
    mode: Annotated[Literal["over", "into", "out"], Field()] = "over",
    count: Annotated[int, Field(ge=1, le=1000)] = 1,
    timeout_s: WaitS = 30.0,
    session_id: SessionId = None,
) -> StepResult:
    """Step over, into or out."""
    # p/t with a count, or gu (a run to the return) count times, then where it ended.
    call.progress(f"step {mode}", timeout_s)
    ran = typed.open_session(call.app, session_id, call.owner, needs="run")
    t0 = time.monotonic()
    if mode == "out":
        since = ran.session.last_event_seq
        for _ in range(count):
            _run(call, ran, "gu", timeout_s)
            last = _last_stop(ran.session.events_since(since))
            if ran.session.state != SessionState.broken or (last is not None and last.reason != "step"):
                break  # a breakpoint or an exception on the way out ends the steps
    else:
        since = _run(call, ran, ("p" if mode == "over" else "t") + (f" {count}" if count > 1 else ""), timeout_s)
    stop, loc = _stopped(ran, since)
    running = ran.session.state != SessionState.broken
    return typed.serve(ran, StepResult, elapsed_ms=(time.monotonic() - t0) * 1000,
                       stop=None if running else stop, location=loc)


@tool("control", controls("Run to a location"))
def run_to(
    call: Call,
    location: Address,
    timeout_s: WaitS = 30.0,
    session_id: SessionId = None,
) -> RunToResult:
    """Run to a location (g ADDR)."""
    # g ADDRESS: kd's one-time breakpoint there; hit when the stop is at that address.
    call.progress(f"running to {location}", timeout_s)
    ran = typed.open_session(call.app, session_id, call.owner, needs="run")
    t0 = time.monotonic()
    evaluated = ran.read(f"? {location}", parsing.ExpressionRecord, show=False)
    address = evaluated.value if evaluated is not None else None
    if address is None:
        raise InvalidArgument(f"kd cannot evaluate {location!r}: {ran.outputs[-1].output.strip()}",
                              session_id=ran.session.session_id, state=ran.session.state)
    since = _run(call, ran, f"g {location}", timeout_s)
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


@tool("control", controls("Wait for the target to stop", idempotent=True))
def wait_for_stop(
    call: Call,
    timeout_s: WaitS = 30.0,
    session_id: SessionId = None,
) -> WaitResult:
    """Wait for a running target to stop."""
    # A stop that came before the call is the answer at once.
    call.progress("waiting for a stop", timeout_s)
    ran = typed.open_session(call.app, session_id, call.owner)
    session = ran.session
    since = session.last_event_seq
    waited = watch(session, timeout_s, call.cancel, until_prompt=True) if session.state in STILL_GOING else 0.0
    stop, loc = (None, None) if session.state in STILL_GOING else _stopped(ran, since)
    return typed.serve(ran, WaitResult, elapsed_ms=waited * 1000, waited_s=waited, stop=stop, location=loc)


@tool("inspect", reads("Where the target is stopped"))
def location(call: Call, session_id: SessionId = None) -> LocationResult:
    """Where the target stopped: ip, symbol, thread."""
    ran = typed.open_session(call.app, session_id, call.owner)
    return typed.serve(ran, LocationResult, location=_read_location(ran))
