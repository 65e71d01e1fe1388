"""Events the user world reports while its process runs: the app's access violation (``g``) and
cdb's break-in (Ctrl+C), each changing the world as cdb then shows it.

Both return the text cdb prints for the event and leave the event's thread current, its
exception as the last event (``.exr -1``, ``.lastevent``, ``.ecxr``). They are played by the
running process (:mod:`~kdmcp.sim.world.user_activity`), which first puts back what a stop
changed.
"""

from __future__ import annotations

from kdmcp.sim.world import filters
from kdmcp.sim.world import user_catalog as cat
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.regtext import pc_location
from kdmcp.sim.world.user import Event, UserWorld, lay_loader

__all__ = ["break_in", "fault", "load_pending", "set_current", "tick"]


def set_current(world: World, address: int) -> None:
    """Thread ``address`` becomes current (cdb's prompt names it); the tables follow the model."""
    for cpu in world.processors:
        cpu.current_thread = cpu.idle_thread = address
    world.context_thread = None
    world.context_process = None
    world.reindex()  # the thread index follows the threads that joined or left


def fault(world: UserWorld) -> str:
    """What ``g`` brings a launched app: its other images load (cdb's ``ModLoad`` lines) and
    ``app!wmain`` writes through a null pointer on the main thread -- cdb's first-chance report,
    then (at the next ``g``, nothing handling it) the second-chance one (corpus: a published
    cdb session, "(6fd4.c30): Access violation - code c0000005 (first chance)" and
    "(!!! second chance !!!)"). The event thread becomes current; ``.exr -1`` and ``.ecxr`` read
    the exception record and context set here."""
    state, b = world.user, world.builder
    proc = world.processes[0]
    out = load_pending(world)
    main = proc.threads[0]
    if state.faults == 0:
        # the break-in thread of an attach has returned and exited; the main thread runs on
        proc.threads = [t for t in proc.threads if t.role != "break_in"]
        b.set_stack(main, "fault")
        b.lay_stack(main)
        main.state = "RUNNING"
    state.faults += 1
    state.event = Event(main.address, 0xC0000005, main.frames[0].site, (1, 0), state.faults == 1, dict(main.registers))
    set_current(world, main.address)
    pid_tid = f"({proc.pid:x}.{main.tid:x})"
    if state.faults == 1:
        out += (
            f"{pid_tid}: Access violation - code c0000005 (first chance)\n"
            "First chance exceptions are reported before any exception handling.\n"
            "This exception may be expected and handled.\n"
        )
    else:
        out += f"{pid_tid}: Access violation - code c0000005 (!!! second chance !!!)\n"
    return out + pc_location(world, world.registers(main))


def tick(value: int) -> str:
    """``00007ffc`81a00000``: an address as cdb prints it in ``ModLoad`` lines."""
    return f"{value >> 32:08x}`{value & 0xFFFFFFFF:08x}"


def load_pending(world: UserWorld) -> str:
    """Map a launch's remaining images (the app runs past the loader): cdb's ``ModLoad`` lines."""
    state = world.user
    if not state.pending:
        return ""
    proc = world.processes[0]
    mem = world.user_memory[proc.address]
    mem.absorb(state.pending_memory)
    world.modules.extend(state.pending)
    lay_loader(mem, world.modules, {m.name: world.builder.facts[m.name] for m in world.modules})
    shown = [m for m in state.pending if filters.shown(world, "ld", m.image)]  # "sxi ld": no lines
    out = "".join(f"ModLoad: {tick(m.base)} {tick(m.end)}   {m.path}\n" for m in shown)
    state.pending = []
    world.reindex()  # the symbol table holds the images' symbols
    return out


def break_in(world: UserWorld) -> str:
    """Ctrl+C while the process runs: cdb starts a thread in the process that breaks in at
    ``ntdll!DbgBreakPoint`` (``ntdll!DbgUiRemoteBreakin``'s thread, id 5d0 as the attach banner's;
    corpus connect/07, connect/08), and prints the break's banner::

        (1a2c.5d0): Break instruction exception - code 80000003 (first chance)
        ntdll!DbgBreakPoint:
        00007ffc`81a986a0 cc              int     3
    """
    state, b = world.user, world.builder
    out = load_pending(world)
    proc = world.processes[0]
    main = proc.threads[0]
    if world.name(main.frames[0].site).startswith("ntdll!LdrpDoDebuggerBreak"):
        b.set_stack(main, "main_wait")  # past the loader, a launched app waits in wmain
        b.lay_stack(main)
    thread = next((t for t in proc.threads if t.role == "break_in"), None)
    if thread is None:
        thread = b.thread(proc, len(proc.threads), "break_in", "break_in")
        b.lay_teb(thread, cat.TLS_STORAGE)
    else:
        b.set_stack(thread, "break_in")
    b.lay_stack(thread)
    state.event = Event(thread.address, 0x80000003, thread.frames[0].site, (0,))
    set_current(world, thread.address)
    return (
        out
        + f"({proc.pid:x}.{thread.tid:x}): Break instruction exception - code 80000003 (first chance)\n"
        + pc_location(world, world.registers(thread))
    )
