"""What the world's threads do while the target runs, and where a breakpoint stops one of them.

A real target never stands still after ``g``: a client calls ``DeviceIoControl`` and the I/O
manager hands the IRP to the driver, services open and read files, a system worker allocates
pool. The simulated machine plays a fixed cycle of such *events*, each a thread of the world
calling a chain of routines on one processor, and advances the clock by a fixed step per event
(deterministic: the same commands give the same bytes). An enabled breakpoint on a routine in
an event's chain stops the target there, as kd reports it (corpus misc/05, misc/07)::

    Breakpoint 0 hit
    nt!NtCreateFile:
    fffff800`62c3a1e0 48895c2408      mov     qword ptr [rsp+8],rbx

and the hitting thread is then the processor's current thread with frame 0 at the routine's
entry, so ``k``, ``r``, ``!thread`` and ``dps @rsp`` describe the stop. What an event or a step
changes (frames, registers, the stack's return slots, the current threads) is saved first and
put back when the target runs again: the thread returns to what it was doing.
"""

from __future__ import annotations

import copy
import dataclasses
import struct
import zlib
from dataclasses import dataclass

from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world import filters, loading
from kdmcp.sim.world.cycle import Event, events, load_event
from kdmcp.sim.world.machine import Breakpoint, ExprError, World
from kdmcp.sim.world.model import Arrival, Frame, Thread
from kdmcp.sim.world.regtext import location

__all__ = [
    "CALL_CHAINS",
    "EVENT_MS",
    "FIXED_CODE",
    "Event",
    "RunBreakpoint",
    "Stop",
    "boot_loads",
    "boot_notice",
    "break_in",
    "events",
    "go_to",
    "play",
    "resolve_deferred",
    "resume",
    "save_thread",
    "scripted_stop",
]

EVENT_MS = 25  # one event every 25 ms of target time (and of wall time while the target runs)
USER_TOP = 0x00007FFFFFFFFFFF
# Calls the events' stacks rely on, for the builder to assemble (``ub`` at each return address
# shows the call): innermost first, as catalog.STACKS. The builder records them before it
# lays code (build.py). IofCallDriver's call is an indirect one through the driver's dispatch
# table, so it is fixed code, not a chain here.
CALL_CHAINS: tuple[tuple[str, ...], ...] = (
    ("nt!IofCallDriver", "nt!IopSynchronousServiceTail+0x1a8"),
    ("nt!IoCreateFileEx", "nt!NtCreateFile+0x44"),
    ("nt!IopCreateFile", "nt!IoCreateFileEx+0x10c"),
    ("nt!IofCallDriver", "nt!NtReadFile+0x2f1"),
    ("nt!ExAllocatePoolWithTag", "nt!ExpWorkerThread+0x1b2"),
    # the D1 bugcheck's stack (cmd_report.crash): KiPageFault calls KiBugCheckDispatch, which
    # calls KeBugCheckEx (corpus analyze/01, 12)
    ("nt!KeBugCheckEx", "nt!KiBugCheckDispatch+0x69", "nt!KiPageFault+0x469"),
    # a live bugcheck breaks into kd from KeBugCheck2 (cmd_report.crash, live)
    ("nt!DbgBreakPointWithStatus", "nt!KiBugCheckDebugBreak+0x12", "nt!KeBugCheck2+0xb2c", "nt!KeBugCheckEx+0x107"),
)
# IofCallDriver+0x51: "call qword ptr [rax+rcx*8+70h]" -- DRIVER_OBJECT.MajorFunction[major]
# (the routine returns to +0x55, as the canned D1 stack's nt!IofCallDriver+0x55)
FIXED_CODE: dict[str, dict[int, bytes]] = {"nt!IofCallDriver": {0x51: bytes.fromhex("ff54c870")}}


@dataclass
class RunBreakpoint(Breakpoint):
    """A breakpoint with the passes it has been passed by (``bl``'s first count falls to 1)."""

    passed: int = 0


@dataclass(frozen=True)
class Stop:
    """A breakpoint stop: what kd prints, and the breakpoint's commands to run at the prompt."""

    text: str
    breakpoint: int
    commands: str = ""


# ----------------------------------------------------------------- kd's text


def _address(world: World, name: str) -> int:
    return world.evaluate(name)


def play(world: World) -> tuple[str, Stop | None]:
    """Run the next event: what it prints, and the stop if a breakpoint caught it.

    A driver's load (loading.py) is played first in the tick it is due in; when nothing stops
    it, the cycle's event follows in the same tick, so the cycle keeps its order and pace."""
    run = world.run
    if world.bugcheck is not None:
        return "", None  # a machine in a bugcheck runs nothing
    if run.boot_loads and (stop := boot_notice(world)) is not None:
        return "", stop  # a rebooted target reports its boot images first
    arrival = loading.due(world, run.played)
    run.played += 1
    world.uptime_ms += EVENT_MS
    if arrival is not None and (stop := _play_load(world, arrival)) is not None:
        return "", stop
    cycle = events(world)
    if not cycle:
        return "", None
    event = cycle[run.cursor % len(cycle)]
    run.cursor += 1
    routines: list[tuple[int, int | None]] = []
    for name, ret in event.chain:
        routines.append((_address(world, name), ret))
        if (stop := _stop_at(world, event, routines)) is not None:
            return "", stop
    if (stop := _data_stop(world, event, routines)) is not None:
        return "", stop
    return event.dbgprint, None


def _play_load(world: World, arrival: Arrival) -> Stop | None:
    """The load event, from the frame a stop left it at: the image maps when the chain reaches
    nt!PnpCallDriverEntry; the object is initialised when DriverEntry returns (the chain's end)."""
    run = world.run
    event = load_event(world)
    routines: list[tuple[int, int | None]] = []
    for depth, (name, ret) in enumerate(event.chain):
        if depth == loading.MAP_DEPTH:
            loading.map_image(world, arrival)
            resolve_deferred(world)
            if (stop := _load_notice(world, arrival)) is not None:
                run.load_depth = depth  # g goes on from the mapped image
                return stop
        routines.append((_address(world, name), ret))
        if depth < run.load_depth:
            continue
        if (stop := _stop_at(world, event, routines)) is not None:
            run.load_depth = depth + 1  # g goes on below this frame
            return stop
    loading.finish(world, arrival)
    run.load_depth = 0
    return None


def _load_notice(world: World, arrival: Arrival) -> Stop | None:
    """``sxe ld[:image]``: the image's load notification stops the target once, in
    ``nt!DebugService2+0x5`` on the loading thread (loading.NOTICE_CHAIN), kd printing only the
    location (set1 misc/a_12); ``.lastevent`` then names the load, and the filter's ``-c``
    commands run at the stop."""
    run, image = world.run, arrival.module.image
    if run.load_noticed or not filters.breaks(world, "ld", image):
        return None
    run.load_noticed = True
    event = dataclasses.replace(load_event(world), chain=loading.NOTICE_CHAIN, cpu=0)
    return _notice(world, event, image, arrival.module.base)


def _notice(world: World, event: Event, image: str, base: int) -> Stop:
    """Stop ``event``'s thread on DebugService2's ``int 3``: the load of ``image`` at ``base``."""
    run = world.run
    _stop_in(world, event, [(_address(world, name), ret) for name, ret in event.chain])
    t = world.thread(event.thread)
    site = _address(world, "nt!DebugService2") + loading.NOTICE_OFFSET
    if t is not None:
        t.frames[0] = Frame(t.frames[0].child_sp, site)
        t.registers = dict(t.registers, rip=site)
    run.last_event, run.go_to, run.load_module = ("load", 0, event.thread), [], (image, base)
    return Stop(location(world, site, note=False), -1, filters.commands(world, "ld", image))


def boot_loads(world: World) -> None:
    """The target rebooted: it loads its boot images again, each reported to kd -- the kernel
    (``ntoskrnl.exe``, as kd names it), hal, then the rest by address, the order of a real
    session's notices after a reboot (set1 connect/a_10: ntoskrnl.exe, hal.dll, kdnet.dll,
    kd_02_8086.dll, mcupdate_…, …). Session drivers and the third-party ones load later."""
    nt = world.symbols.module("nt")
    hal = world.symbols.module("hal")
    if nt is None:
        return
    rest = sorted((m for m in world.modules if m.base > nt.base and m is not hal), key=lambda m: m.base)
    order = [nt, *([hal] if hal is not None else []), *rest]
    world.run.boot_loads = [("ntoskrnl.exe" if m is nt else m.image, m.base) for m in order]


def boot_notice(world: World) -> Stop | None:
    """The next boot image an ``ld`` filter stops at (set1 connect/a_09: the reconnect banner,
    then "nt!DebugService2+0x5:"), on processor 0's initial thread; the call chain above
    DbgLoadImageSymbols is not modelled."""
    run = world.run
    while run.boot_loads:
        image, base = run.boot_loads.pop(0)
        if filters.breaks(world, "ld", image):
            boot = world.processors[0].idle_thread
            return _notice(world, Event("boot load", boot, 0, loading.NOTICE_CHAIN[-2:]), image, base)
    return None


def _stop_at(world: World, event: Event, routines: list[tuple[int, int | None]]) -> Stop | None:
    """The stop at the innermost of ``routines`` (an event's chain so far), if anything stops there."""
    run = world.run
    address = routines[-1][0]
    if any(at == address for _, at in run.go_to):
        # g BreakAddress: kd's one-time breakpoint prints only where the target stopped, no
        # "Breakpoint N hit" (g (Go): "Execution will halt ... when BreakAddress is hit")
        _stop_in(world, event, routines)
        run.last_event, run.go_to = ("go", 0, event.thread), []
        return Stop(location(world, address, note=False), -1)
    bp = _enabled_at(world, address, event.thread)
    if bp is None or (bp.condition and not _holds(world, event, routines, bp.condition)):
        return None
    return _hit(world, event, routines, bp)


def _data_stop(world: World, event: Event, routines: list[tuple[int, int | None]]) -> Stop | None:
    """A processor breakpoint on data the event's innermost routine reads or writes: the target
    stops after the access ("ba r4": read or write, "ba w4": write; ba (Break on Access): the
    processor breaks after the instruction that touched the data), at the next instruction."""
    t = world.thread(event.thread)
    for kind, at, size, after in event.accesses:
        for bp in world.breakpoints:
            if not bp.enabled or bp.kind != "ba" or bp.address is None or bp.access not in ("r", kind):
                continue
            if not (bp.address < at + size and at < bp.address + bp.size):
                continue
            if bp.process and (t is None or t.process != bp.process):
                continue
            stop = _hit(world, event, [*routines[:-1], (routines[-1][0] + after, None)], bp)
            if stop is not None:
                return stop
    return None


def _hit(world: World, event: Event, routines: list[tuple[int, int | None]], bp: Breakpoint) -> Stop | None:
    """Breakpoint ``bp`` reached at the innermost of ``routines``: the stop, once its passes are spent."""
    run = world.run
    address = routines[-1][0]
    if isinstance(bp, RunBreakpoint) and bp.passed + 1 < bp.pass_count:
        bp.passed += 1  # kd: the breakpoint is passed by "Passes - 1" times, then breaks
        return None
    if isinstance(bp, RunBreakpoint):
        bp.passed = max(bp.passed, bp.pass_count - 1)
    bp.hits += 1
    _stop_in(world, event, routines)
    # g's breakpoint lasts until the target stops, whatever stopped it
    run.last_event, run.go_to = ("breakpoint", bp.id, event.thread), []
    if bp.one_shot:
        world.breakpoints.remove(bp)  # bp /1: "the breakpoint is deleted after it is hit once"
    # the breakpoint's number, then where the target stopped (corpus misc/05; kd shows no
    # register block there, unlike cdb's stack/07); the event stopped before it printed
    return Stop(f"Breakpoint {bp.id} hit\n" + location(world, address, note=False), bp.id, bp.command)


def _holds(world: World, event: Event, routines: list[tuple[int, int | None]], condition: str) -> bool:
    """``bp /w``'s condition, evaluated in the hitting thread's context (its registers); one
    that does not evaluate stops the target, as a breakpoint without a condition would."""
    _stop_in(world, event, routines)
    try:
        value = world.evaluate(condition)
    except ExprError:
        return True
    if not value:
        resume(world)  # the thread runs on: what the look at it changed goes back
    return bool(value)


def resolve_deferred(world: World) -> None:
    """A module arrived: deferred breakpoints (and ``g`` targets) whose names now resolve get
    their address, so ``bl`` shows the address and symbol where it showed ``u`` and the name."""
    for bp in world.breakpoints:
        if bp.address is None:
            try:
                bp.address = world.evaluate(bp.expression)
            except ExprError:
                continue
            module = world.symbols.module_at(bp.address)
            if module is not None:
                module.deferred = False  # kd loads the module's symbols to resolve the name
    run = world.run
    for i, (expr, at) in enumerate(run.go_to):
        if at is None:
            try:
                run.go_to[i] = (expr, world.evaluate(expr))
            except ExprError:
                continue


def go_to(world: World, targets: list[str]) -> None:
    """``g BreakAddress ...``: where the run stops (up to ten addresses; a name whose module is
    not loaded is kept unresolved, "stored as an unresolved breakpoint", g (Go))."""
    run = world.run
    run.go_to = []
    for expr in targets:
        try:
            at: int | None = world.evaluate(expr)
        except ExprError:
            if "!" not in expr:
                raise
            at = None
        run.go_to.append((expr, at))


def scripted_stop(world: World, number: int) -> str:
    """A scenario's scripted breakpoint event: breakpoint ``number`` stops in ``nt!NtCreateFile``
    on processor 0 (where the simulator's scripted stop has always been), on the NtCreateFile
    event's thread."""
    event = next((e for e in events(world) if e.chain[0][0] == "nt!NtCreateFile"), None)
    address = _address(world, "nt!NtCreateFile")
    if event is not None:
        _stop_in(world, dataclasses.replace(event, cpu=0), [(address, None)])
        world.run.last_event = ("breakpoint", number, event.thread)
    return f"Breakpoint {number} hit\n" + location(world, address, note=False)


def _enabled_at(world: World, address: int, thread: int) -> Breakpoint | None:
    t = world.thread(thread)
    for bp in world.breakpoints:
        if not bp.enabled or bp.address != address:
            continue
        if bp.kind == "ba" and bp.access != "e":
            continue  # a data breakpoint: no event reads or writes watched data
        if bp.process and (t is None or t.process != bp.process):
            continue  # bp /p EPROCESS: only that process's threads break
        return bp
    return None


def _frame_size(name: str) -> int:
    """A routine's frame size: fixed per routine (so a routine's frame is the same every time)."""
    return 0x30 + 0x10 * (zlib.crc32(name.encode()) % 12)


def _stop_in(world: World, event: Event, routines: list[tuple[int, int | None]]) -> None:
    """Make ``event``'s thread the one stopped at the last of ``routines``, on its processor."""
    resume(world)
    t = world.thread(event.thread)
    if t is None:
        return
    save_thread(world, t)
    names = [name for name, _ in event.chain[: len(routines)]]
    sites = [routines[-1][0]] + [addr + (ret or 0) for addr, ret in reversed(routines[:-1])]
    inner = list(reversed(names))
    outer = [world.evaluate(n) for n in event.outer]
    kernel_sites = sites + [s for s in outer if s >= 0xFFFF800000000000]
    user_sites = [s for s in outer if s < 0xFFFF800000000000]
    sizes = [_frame_size(n) for n in inner]
    sizes += [_frame_size(n) for n, s in zip(event.outer, outer, strict=True) if s >= 0xFFFF800000000000]
    sp = t.stack_init - sum(sizes)
    frames: list[Frame] = []
    for site, size in zip(kernel_sites, sizes, strict=False):
        frames.append(Frame(sp, site))
        sp += size
    user_sp = next((f.child_sp for f in t.frames if f.child_sp <= USER_TOP), 0)
    for site in user_sites:
        frames.append(Frame(user_sp, site))
        user_sp += 0x40
    t.frames = frames
    _write_return_slots(world, t)
    regs = dict(t.registers)
    regs.update(rip=frames[0].site, rsp=frames[0].child_sp, rbp=frames[0].child_sp + 0x80)
    regs.update(dict(event.registers))
    t.registers = regs
    cpu = event.cpu % len(world.processors)
    _run_on(world, t, cpu)
    code = dict(event.registers).get("r8")
    if code is not None and world.irps:
        _set_irp_code(world, code)


def _run_on(world: World, t: Thread, cpu: int) -> None:
    run = world.run
    if run.saved_current is None:
        run.saved_current = [p.current_thread for p in world.processors]
        run.saved_cpu = world.cpu
    t.state, t.cpu = "RUNNING", cpu
    world.processors[cpu].current_thread = t.address
    world.cpu = cpu
    world.context_thread = world.context_process = None
    if cpu != 0:
        _freeze(world, world.processors[0].current_thread)


def _freeze(world: World, address: int) -> None:
    """Processor 0 did not break in this time: its idle thread is frozen by the stopping
    processor's IPI, in KiFreezeTargetExecution like every other processor (catalog's frozen_idle)."""
    t = world.thread(address)
    if t is None or t.address != world.processors[0].idle_thread:
        return
    save_thread(world, t)
    sites = [world.evaluate(name) for name in cat.STACKS["frozen_idle"]]
    sizes = [_frame_size(name) for name in cat.STACKS["frozen_idle"]]
    sp = t.stack_init - sum(sizes)
    frames = []
    for site, size in zip(sites, sizes, strict=True):
        frames.append(Frame(sp, site))
        sp += size
    t.frames = frames
    _write_return_slots(world, t)
    t.registers = dict(t.registers, rip=frames[0].site, rsp=frames[0].child_sp)


def _write_return_slots(world: World, t: Thread) -> None:
    """Each return address where the callee's frame ends (``rsp - 8`` of the caller; build.py)."""
    space = world.space(world.owner(t))
    run = world.run
    for nxt in t.frames[1:]:
        slot = nxt.child_sp - 8
        if not t.stack_limit <= slot < t.stack_base:
            continue
        if slot not in run.saved_bytes:
            old = space.read(slot, 8)
            if old is None:
                continue
            run.saved_bytes[slot] = old
        space.write(slot, struct.pack("<Q", nxt.site))


def _set_irp_code(world: World, code: int) -> None:
    """The client's IRP carries the event's control code (Parameters.DeviceIoControl.IoControlCode)."""
    run = world.run
    irp = world.irps[0]
    stack = irp.stacks[irp.current - 1]
    if run.saved_irp_args is None:
        run.saved_irp_args = stack.args
    stack.args = (stack.args[0], stack.args[1], code, stack.args[3])
    where = irp.address + 0xD0 + 0x48 * (irp.current - 1) + 8 + 0x10
    world.kernel.write(where, struct.pack("<Q", code))


def save_thread(world: World, t: Thread) -> None:
    """Keep ``t`` as it was before the first change a stop or a step makes to it."""
    run = world.run
    if t.address not in run.saved_threads:
        run.saved_threads[t.address] = copy.deepcopy(t)


def resume(world: World) -> None:
    """The target runs again: every thread a stop or a step changed goes back to what it was."""
    run = world.run
    for address, original in run.saved_threads.items():
        t = world.thread(address)
        if t is not None:
            t.frames, t.registers = original.frames, original.registers
            t.state, t.cpu = original.state, original.cpu
    run.saved_threads.clear()
    for slot, data in run.saved_bytes.items():
        world.kernel.write(slot, data)
    run.saved_bytes.clear()
    if run.saved_current is not None:
        for p, current in zip(world.processors, run.saved_current, strict=True):
            p.current_thread = current
        world.cpu = run.saved_cpu or 0
        run.saved_current = run.saved_cpu = None
    if run.saved_irp_args is not None and world.irps:
        irp = world.irps[0]
        irp.stacks[irp.current - 1].args = run.saved_irp_args
        where = irp.address + 0xD0 + 0x48 * (irp.current - 1) + 8 + 0x10
        world.kernel.write(where, struct.pack("<Q", run.saved_irp_args[2]))
        run.saved_irp_args = None
    world.registers_written.clear()  # r rax=...: the stopped context is gone


def break_in(world: World) -> None:
    """A Ctrl+C break-in: processor 0 stops where the first break-in did (its idle thread in
    ``nt!DbgBreakPointWithStatus``), which is what kd's break-in banner names."""
    resume(world)
    world.cpu = 0
    world.context_thread = world.context_process = None
    world.run.last_event = ("break", 0, 0)
    world.run.go_to = []
