"""What ``debug_batch`` undoes: a snapshot of the session before its steps, and the rollback to it.

Synchronous (run in a worker thread): every command goes through ``typed.Ran``, so the
caller's policy applies to the rollback as to the steps — an undo the policy denies is
reported in ``not_rolled_back``, never forced. A rollback only undoes what a batch *can*
change through the policy that let it change it (``bp`` and ``bc`` are allowed together, as
``r rax=…`` and ``eb`` are), so in practice the policy denies nothing the batch did.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

# The record models are kdmcp.parse's lazy attributes, built on the first command, not at start-up:
# serving the tools builds no record model (docs/performance.md, "Cold start").
from kdmcp import parse as parsing
from kdmcp.engine import DebuggerSession, SessionState
from kdmcp.errors import KdMcpError
from kdmcp.parse.register_names import INTEGER_CONTEXT
from kdmcp.server.tools.batch.models import Restore
from kdmcp.server.typed import Ran

__all__ = ["Snapshot", "rollback", "take_snapshot"]

log = logging.getLogger(__name__)

# The registers ``r`` sets that make up a thread's integer context: what a batch's
# ``r rax=…`` changes (the parse layer's one list). Segments and the x87/SSE state are not
# written back.
GENERAL_REGISTERS = frozenset(INTEGER_CONTEXT)
# The events that say the target stopped after running: after one, the registers of the
# snapshot describe a moment that is gone (engine/events.py).
RAN_EVENTS = frozenset(
    {"break_in", "breakpoint", "exception", "bugcheck", "step", "reboot", "reconnecting", "transport_lost"}
)
# One bound for each rollback command: the rollback itself runs shielded from cancellation.
ROLLBACK_COMMAND_S = 15.0
# eb takes at most this many values a line here (kd reads long lists; a short line reads better in a log).
EB_VALUES = 64


@dataclass
class Snapshot:
    """The session as the batch found it, the first time it was broken in."""

    started_broken: bool
    taken: bool = False
    event_seq: int = 0
    breakpoints: dict[int, bool] = field(default_factory=dict)  # id -> enabled
    processor: int | None = None  # the prompt's processor (kd) or thread (cdb)
    registers: dict[str, int] = field(default_factory=dict)
    memory: list[tuple[int, list[int | None]]] = field(default_factory=list)  # (address, bytes; None: ??)


def _breakpoints(ran: Ran) -> dict[int, bool]:
    record = ran.record("bl", show=False)
    if not isinstance(record, parsing.BreakpointsRecord):
        return {}
    return {bp.id: bp.enabled for bp in record.breakpoints}


def _registers(ran: Ran) -> dict[str, int]:
    record = ran.record("r", show=False)
    if not isinstance(record, parsing.RegistersRecord):
        return {}
    return {name: int(value, 16) for name, value in record.registers.items() if name in GENERAL_REGISTERS}


def _bytes(ran: Ran, address: str, length: int) -> tuple[int, list[int | None]] | None:
    """``db ADDRESS L0xN``: its first row's address and the bytes (None where kd shows ``??``)."""
    record = ran.record(f"db {address} L{length:#x}", show=False)
    if not isinstance(record, parsing.MemoryRecord) or not record.rows:
        return None
    start = int(record.rows[0].address.replace("`", ""), 16)
    values: list[int | None] = []
    for row in record.rows:
        values += [None if v.startswith("?") else int(v, 16) for v in row.values]
    return start, values[:length]


def _processor(session: DebuggerSession) -> int | None:
    prompt = session.prompt
    if prompt is None:
        return None
    return prompt.processor if prompt.processor is not None else prompt.thread


def take_snapshot(ran: Ran, snap: Snapshot, restore: Restore) -> None:
    """Fill ``snap`` from the session, which is broken in (``bl``; ``r`` and ``db`` when asked)."""
    snap.event_seq = ran.session.last_event_seq
    snap.breakpoints = _breakpoints(ran)
    snap.processor = _processor(ran.session)
    if restore.registers:
        snap.registers = _registers(ran)
    for part in restore.memory:
        got = _bytes(ran, part.address, part.length)
        if got is not None:
            snap.memory.append(got)
    snap.taken = True


def _hex(value: int) -> str:
    return f"{value:#x}"


@dataclass
class _Undo:
    ran: Ran
    done: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def run(self, command: str) -> bool:
        try:
            self.ran.run(command, show=False, timeout_s=ROLLBACK_COMMAND_S)
        except KdMcpError as exc:
            self.missed.append(f"{command} (error[{exc.category}]: {exc.message})")
            return False
        self.done.append(command)
        return True


def rollback(ran: Ran, snap: Snapshot, restore: Restore) -> tuple[list[str], list[str]]:
    """Undo what the batch changed, in this order: break in (the target runs, and was broken in at
    the start), the processor the prompt showed, breakpoints added (``bc``) or enabled/disabled,
    registers (``r name=value``), memory (``eb``); a target that was running at the start is
    resumed last. Returns (actions done, what could not be undone and why)."""
    session = ran.session
    undo = _Undo(ran)
    was_running = not snap.started_broken
    if session.state in (SessionState.running, SessionState.busy) and (snap.started_broken or snap.taken):
        # A target found broken in goes back to broken in; one the batch broke into must be
        # stopped to take its breakpoints back (it is resumed again below).
        try:
            session.break_in(ROLLBACK_COMMAND_S)
            undo.done.append("break_in")
        except KdMcpError as exc:
            undo.missed.append(f"break_in (error[{exc.category}]: {exc.message})")
    if not snap.taken:
        return undo.done, undo.missed
    if session.state != SessionState.broken:
        undo.missed.append(f"everything: the session is {session.state.value}, not at a prompt")
        return undo.done, undo.missed
    ran_since = any(e.kind in RAN_EVENTS for e in session.events_since(snap.event_seq))
    now = _processor(session)
    if snap.processor is not None and now is not None and now != snap.processor:
        undo.run(f"~{snap.processor}s")
    _undo_breakpoints(undo, snap)
    if restore.registers:
        _undo_registers(undo, snap, ran_since)
    for address, values in snap.memory:
        _undo_memory(undo, address, values)
    if was_running and session.state == SessionState.broken:
        undo.run("g")
    return undo.done, undo.missed


def _undo_breakpoints(undo: _Undo, snap: Snapshot) -> None:
    try:
        now = _breakpoints(undo.ran)
    except KdMcpError as exc:
        undo.missed.append(f"breakpoints: bl failed (error[{exc.category}]: {exc.message})")
        return
    added = sorted(set(now) - set(snap.breakpoints))
    if added:
        # bc: "Breakpoints: Specifies the ID numbers of the breakpoints to remove" — a list of
        # numbers separated by spaces (Microsoft, bc (Breakpoint Clear)).
        undo.run("bc " + " ".join(str(i) for i in added))
    for bp_id in sorted(set(snap.breakpoints) - set(now)):
        undo.missed.append(f"breakpoint {bp_id}: the batch cleared it (set it again: its command is not kept)")
    for bp_id, enabled in sorted(snap.breakpoints.items()):
        if bp_id in now and now[bp_id] != enabled:
            undo.run(f"{'be' if enabled else 'bd'} {bp_id}")


def _undo_registers(undo: _Undo, snap: Snapshot, ran_since: bool) -> None:
    if not snap.registers:
        undo.missed.append("registers: r gave no registers at the start")
        return
    if ran_since:
        # Once the target ran, the stopped thread's context is a new one (maybe another thread's):
        # writing the old values into it would corrupt it, not restore it.
        undo.missed.append("registers: the target ran since the snapshot, so they are not the same context")
        return
    try:
        now = _registers(undo.ran)
    except KdMcpError as exc:
        undo.missed.append(f"registers: r failed (error[{exc.category}]: {exc.message})")
        return
    for name, value in snap.registers.items():
        if now.get(name) != value:
            undo.run(f"r {name}={_hex(value)}")


def _undo_memory(undo: _Undo, address: int, values: list[int | None]) -> None:
    try:
        got = _bytes(undo.ran, _hex(address), len(values))
    except KdMcpError as exc:
        undo.missed.append(f"memory at {_hex(address)}: db failed (error[{exc.category}]: {exc.message})")
        return
    now = got[1] if got is not None and got[0] == address else []
    # Each run of changed bytes is one eb (eb: "eb Address [Values]", Microsoft, e, ea, eb, ed…).
    run_start: int | None = None
    run: list[int] = []
    for i, old in enumerate([*values, None]):
        changed = old is not None and i < len(now) and now[i] != old
        if changed and run_start is not None and len(run) == EB_VALUES:
            undo.run(f"eb {_hex(address + run_start)} " + " ".join(f"{b:02x}" for b in run))
            run_start, run = None, []
        if changed:
            assert old is not None
            run_start = i if run_start is None else run_start
            run.append(old)
        elif run_start is not None:
            undo.run(f"eb {_hex(address + run_start)} " + " ".join(f"{b:02x}" for b in run))
            run_start, run = None, []
    if not now and values:
        undo.missed.append(f"memory at {_hex(address)}: unreadable now")
