"""What the user world's process does while it runs, and where a breakpoint stops one of its threads.

The kernel world plays a fixed cycle of events (:mod:`.activity`); a user process does the same
at its own scale. An attached process's thread-pool worker runs ``app!WorkCallback`` over and
over, one call an event (``EVENT_MS`` apart): it allocates (``ucrtbase!malloc`` ->
``ntdll!RtlAllocateHeap``), prints (``ucrtbase!wprintf``), frees (``ntdll!RtlFreeHeap``) and
sleeps (``KERNEL32!Sleep`` -> ``KERNELBASE!SleepEx`` -> ``ntdll!NtDelayExecution``). A launched
process's main thread runs from ``ntdll!RtlUserThreadStart`` into ``app!wmain`` and into its
access violation (:func:`~kdmcp.sim.world.user_events.fault`).

An enabled breakpoint on a routine in the chain stops the process at the routine's entry, as cdb
reports it on x64 -- the number, then the location, no register block (corpus misc/05; cdb's
x64 stops print no registers either: connect/07's initial breakpoint)::

    Breakpoint 0 hit
    ntdll!RtlAllocateHeap:
    00007ffc`81a3a7f0 48895c2408      mov     qword ptr [rsp+8],rbx

The hitting thread becomes current (the prompt ``0:001>`` names it), with frame 0 at the
routine, so ``k``, ``r``, ``p`` and ``gu`` work from there. What a stop changes is saved
(:func:`.activity.save_thread`, the stack slots here) and put back when the process runs again,
or when Ctrl+C breaks in (:func:`break_in`), before the event (:mod:`.user_events`) is played.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from kdmcp.sim.world import activity, user_events, user_program
from kdmcp.sim.world import user_catalog as cat
from kdmcp.sim.world.activity import RunBreakpoint, Stop
from kdmcp.sim.world.machine import Breakpoint, ExprError, World
from kdmcp.sim.world.model import Frame, Thread
from kdmcp.sim.world.regtext import location
from kdmcp.sim.world.user import Event, UserWorld

__all__ = ["START", "UserEvent", "UserStep", "break_in", "events", "go", "play", "resume"]


@dataclass(frozen=True)
class UserEvent:
    """One thing the running process does: the thread with ``role`` calls ``chain`` (outermost
    first: ``(routine, return offset)``, ``None`` for the last). ``sps`` are the chain's frames'
    stack pointers where a stack in the catalogue fixes them (a launch's main thread, as its
    fault's ``k`` shows); else the outermost keeps the thread's frame ``anchor``'s and the rest
    follow from fixed frame sizes, the frames past ``anchor`` staying below the chain."""

    name: str
    role: str
    chain: tuple[tuple[str, int | None], ...]
    anchor: int = 1
    sps: tuple[int, ...] = ()


@dataclass(frozen=True)
class UserStep:
    """What one event printed and whether the process stopped (then the breakpoint's commands)."""

    text: str
    stopped: bool
    commands: str = ""


def _chain(names: list[str]) -> tuple[tuple[str, int | None], ...]:
    """The catalogue's innermost-first call sites as an outermost-first chain."""
    out: list[tuple[str, int | None]] = []
    for text in reversed(names):
        routine, _, off = text.partition("+")
        out.append((routine, int(off, 16) if off else None))
    return tuple(out)


def events() -> list[UserEvent]:
    """The attached process's cycle: the worker's calls in ``user_catalog.RUN_CHAINS`` order."""
    names = ("alloc", "print", "free", "sleep")
    return [UserEvent(n, "worker", _chain(c)) for n, c in zip(names, cat.RUN_CHAINS, strict=True)]


# a launch's main thread from its start into wmain (the fault stack's frames, outermost first)
START = UserEvent(
    "start",
    "main",
    _chain(["app!wmain", *cat.STACKS["fault"][1:]]),
    sps=tuple(reversed(cat.STACK_SPS["fault"][1:])),
)


def _thread(world: World, role: str) -> Thread | None:
    return next((t for t in world.processes[0].threads if t.role == role), None)


def _frame_size(name: str) -> int:
    """A routine's frame size, fixed per routine (the same every time the routine runs)."""
    return 0x28 + 0x10 * (zlib.crc32(name.encode()) % 8)


def resume(world: UserWorld) -> None:
    """The process runs again: the stack slots a stop wrote and every thread a stop or a step
    changed go back to what they were (:func:`.activity.resume` for the threads)."""
    run = world.user.run
    mem = world.user_memory[world.processes[0].address]
    for slot, data in run.saved_slots.items():
        mem.write(slot, data)
    run.saved_slots.clear()
    activity.resume(world)


def go(world: World) -> None:
    """``g``: the stopped threads go back to what they were doing; an attach's break-in thread
    (``ntdll!DbgUiRemoteBreakin``'s) has done its work and exits as the process resumes."""
    assert isinstance(world, UserWorld), "not a user world"
    resume(world)
    proc = world.processes[0]
    if any(t.role == "break_in" for t in proc.threads):
        proc.threads = [t for t in proc.threads if t.role != "break_in"]
        user_events.set_current(world, proc.threads[0].address)


def play(world: World) -> UserStep:
    """The process's next event: a launch runs into wmain (a breakpoint on the way stops it),
    then into its access violation; an attach plays the worker's cycle."""
    assert isinstance(world, UserWorld), "not a user world"
    run = world.user.run
    if world.user.mode == "launch":
        exits = world.user.program == "exits"  # a program that ends (user_program.py)
        if run.started:
            if exits:
                text, stopped = user_program.play(world)
                return UserStep(text, stopped)
            return UserStep(user_events.fault(world), True)
        # the images load before wmain runs (corpus misc/05: ModLoad, then the hit)
        text = user_events.load_pending(world)
        stop, depth = _walk(world, START, run.start_depth)
        if stop is not None:
            run.start_depth = depth + 1
            return UserStep(text + stop.text, True, stop.commands)
        run.started, run.start_depth = True, 0
        resume(world)
        if exits:
            return UserStep(text, False)
        return UserStep(text + user_events.fault(world), True)
    cycle = events()
    event = cycle[run.cursor % len(cycle)]
    run.cursor += 1
    stop, _ = _walk(world, event, 0)
    if stop is None:
        return UserStep("", False)
    return UserStep(stop.text, True, stop.commands)


def break_in(world: World) -> str:
    """Ctrl+C while the process runs: a stopped thread's stack goes back to what it was doing
    (:func:`resume`), then cdb's break-in thread breaks in (:func:`.user_events.break_in`)."""
    assert isinstance(world, UserWorld), "not a user world"
    resume(world)
    return user_events.break_in(world)


def _walk(world: UserWorld, event: UserEvent, from_depth: int) -> tuple[Stop | None, int]:
    """Call down ``event``'s chain from ``from_depth``: the stop and the depth it happened at."""
    routines: list[tuple[int, int | None]] = []
    for depth, (name, ret) in enumerate(event.chain):
        routines.append((world.evaluate(name), ret))
        if depth < from_depth:
            continue
        if (stop := _stop_at(world, event, routines)) is not None:
            return stop, depth
    return None, -1


def _stop_at(world: UserWorld, event: UserEvent, routines: list[tuple[int, int | None]]) -> Stop | None:
    address = routines[-1][0]
    run = world.run
    if any(at == address for _, at in run.go_to):
        # g BreakAddress: a one-time breakpoint; only where the process stopped is printed
        _stop_in(world, event, routines, None)
        run.go_to = []
        return Stop(location(world, address, note=False), -1)
    t = _thread(world, event.role)
    bp = next((b for b in world.breakpoints if _catches(b, address)), None)
    if bp is None or t is None:
        return None
    if bp.condition and not _holds(world, event, routines, bp):
        return None
    if isinstance(bp, RunBreakpoint) and bp.passed + 1 < bp.pass_count:
        bp.passed += 1  # "Passes - 1" times passed by, then it breaks (bp Address Passes)
        return None
    if isinstance(bp, RunBreakpoint):
        bp.passed = max(bp.passed, bp.pass_count - 1)
    bp.hits += 1
    _stop_in(world, event, routines, bp.id)
    run.go_to = []
    if bp.one_shot:
        world.breakpoints.remove(bp)  # bp /1: "deleted after it is hit once"
    return Stop(f"Breakpoint {bp.id} hit\n" + location(world, address, note=False), bp.id, bp.command)


def _catches(bp: Breakpoint, address: int) -> bool:
    return bp.enabled and bp.address == address and (bp.kind != "ba" or bp.access == "e")


def _holds(world: UserWorld, event: UserEvent, routines: list[tuple[int, int | None]], bp: Breakpoint) -> bool:
    """``bp /w``'s condition in the hitting thread's context; one that does not evaluate stops."""
    _stop_in(world, event, routines, bp.id)
    try:
        value = world.evaluate(bp.condition)
    except ExprError:
        return True
    if not value:
        resume(world)
    return bool(value)


def _stop_in(world: UserWorld, event: UserEvent, routines: list[tuple[int, int | None]], number: int | None) -> None:
    """Make ``event``'s thread current, stopped at the entry of the last of ``routines``."""
    resume(world)
    t = _thread(world, event.role)
    if t is None:
        return
    activity.save_thread(world, t)
    names = [name for name, _ in event.chain[: len(routines)]]
    sites = [addr + (ret or 0) for addr, ret in routines[:-1]] + [routines[-1][0]]
    sps: list[int] = []
    for depth, name in enumerate(names[:-1]):
        if depth < len(event.sps):
            sps.append(event.sps[depth])
        elif depth == 0:
            sps.append(t.frames[event.anchor].child_sp)
        else:
            sps.append(sps[-1] - 8 - _frame_size(name))
    sps.append(sps[-1] - 8)  # at the entry rsp points at the return address
    outer = [] if event.sps else t.frames[event.anchor + 1 :]
    t.frames = [Frame(sp, site) for sp, site in reversed(list(zip(sps, sites, strict=True)))] + outer
    _write_return_slots(world, t)
    regs = dict(t.registers)
    regs.update(rip=t.frames[0].site, rsp=t.frames[0].child_sp)
    t.registers = regs
    t.state = "RUNNING"
    run = world.run
    if run.saved_current is None:
        run.saved_current = [p.current_thread for p in world.processors]
        run.saved_cpu = world.cpu
    for p in world.processors:
        p.current_thread = t.address
    world.context_thread = world.context_process = None
    # .exr -1 / .lastevent: a breakpoint is a break instruction exception at its address
    world.user.event = Event(t.address, 0x80000003, t.frames[0].site, (0,), breakpoint=number)


def _write_return_slots(world: UserWorld, t: Thread) -> None:
    """Each return address where the callee's frame ends (``Child-SP - 8`` of the caller, as the
    builder lays the stacks), so ``dps @rsp`` and ``k`` agree; the originals are kept."""
    run = world.user.run
    mem = world.user_memory[world.processes[0].address]
    for nxt in t.frames[1:]:
        slot = nxt.child_sp - 8
        if not t.stack_limit <= slot < t.stack_base:
            continue
        if slot not in run.saved_slots:
            old = mem.read(slot, 8)
            if old is None:
                continue
            run.saved_slots[slot] = old
        mem.write(slot, struct.pack("<Q", nxt.site))
