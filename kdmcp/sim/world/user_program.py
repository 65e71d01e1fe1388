"""A launched program that ends: what cdb prints while it runs to its end, and the exit stops.

With the scenario's ``world: {program: exits}`` a launch does not run into the access violation
(:func:`.user_events.fault`): after its start the main thread, one event each
(:mod:`.user_activity`'s pace),

1. loads a DLL -- cdb prints ``ModLoad: 00007ffc`7f9a0000 00007ffc`7f9b6000   C:\\target\\plugin.dll``
   while the process runs (corpus misc/05 and exceptions_errors/16: ``0:000> g`` then
   ``ModLoad:`` lines), ``lm`` and ``!peb`` list it;
2. throws a C++ exception its own handler catches -- cdb prints the first chance and the program
   runs on: ``(1a2c.1a8): C++ EH exception - code e06d7363 (first chance)`` (published cdb
   sessions, e.g. a WinDbg blog's "(2fcc.34c8): C++ EH exception - code e06d7363 (first
   chance)" lines with the target still running; ``eh``'s default breaks at the second chance only);
3. unloads the DLL -- nothing is printed (``ud`` is ignored by default, filters.DEFAULTS); after
   ``sxn ud`` (or ``sxe ud``, which the world does not stop at) cdb prints ``Unload module
   C:\\target\\plugin.dll at 00007ffc`7f9a0000`` (the form a published cdb front end parses,
   "Unload module C:\\Windows\\System32\\wininet.dll at 00007ffa`0b670000", stored-index file id
   59755972684, and a real kd log prints: "Unload module WUDFRd.sys at fffff803`7fac0000",
   fixtures/sessions/geocausa-kd-arm64-unload-logopen.log);
4. its worker thread ends -- nothing is printed (``et`` is ignored by default); after ``sxe et``
   the process stops on that thread in ``ntdll!NtTerminateThread+0x14`` (reconstructed: the
   stub's ``ret``, as the process's own exit stop shows it), ``.lastevent`` says ``Exit thread``;
5. the process exits -- cdb's final stop, the main thread in ``ntdll!NtTerminateProcess+0x14``::

       ntdll!NtTerminateProcess+0x14:
       00007ffc`81a953c4 c3              ret

   (published cdb sessions: "0:000> g" / "ModLoad: ..." / "ntdll!NtTerminateProcess+0x14:" /
   "00007ffc`a0500904 c3              ret"), and ``.lastevent`` says ``Exit process 0:1a2c, code 0``
   (a cdb front end's test: "Last event: 8ec.1ff0: Exit process 0:8ec, code c"). The process is
   gone: ``g``, ``p`` and ``t`` answer ``^ No runnable debuggees error in 'g'`` (the debugger
   package's own check, "No runnable debuggees error in '.*'", and a book's
   "0:000> p" / "       ^ No runnable debuggees error in 'p'").
"""

from __future__ import annotations

from kdmcp.sim.world import filters
from kdmcp.sim.world import user_catalog as cat
from kdmcp.sim.world.laying import pe_header
from kdmcp.sim.world.model import Module, Thread
from kdmcp.sim.world.regtext import pc_location
from kdmcp.sim.world.user import Event, UserWorld, lay_loader
from kdmcp.sim.world.user_events import set_current, tick

__all__ = ["EXIT_CODE", "play"]

EXIT_CODE = 0  # what wmain returns


def play(world: UserWorld) -> tuple[str, bool]:
    """The program's next step after its start: what cdb prints, and whether the process stopped."""
    run = world.user.run
    step = run.program_step
    run.program_step += 1
    proc = world.processes[0]
    main = proc.threads[0]
    if step == 0:
        return _load(world), False
    if step == 1:
        if not filters.shown(world, "eh"):
            return "", False
        return f"({proc.pid:x}.{main.tid:x}): C++ EH exception - code e06d7363 (first chance)\n", False
    if step == 2:
        return _unload(world), False
    worker = next((t for t in proc.threads if t.role == "worker"), None)
    if step == 3 and worker is not None:
        if filters.breaks(world, "et"):
            return _stop(world, worker, "exit_thread", "thread"), True
        _leave(world, worker)
        return "", False
    if worker is not None:
        _leave(world, worker)  # the thread whose exit stopped the process is gone when it runs
    world.user.exited = True
    return _stop(world, main, "exit", "process"), True


def _load(world: UserWorld) -> str:
    """LoadLibrary: the DLL maps, joins the loader's lists and the symbol table."""
    facts = cat.PLUGIN
    mod = Module(facts.name, "plugin.dll", facts.path, facts.base, facts.size, facts.timestamp, 0)
    mod.symbol_status = facts.status
    mem = world.user_memory[world.processes[0].address]
    mem.defer(mod.base, 0x400, pe_header(mod))
    mem.map(mod.base, mod.size)
    world.modules.append(mod)
    world.builder.facts[mod.name] = facts
    _relink(world)
    if not filters.shown(world, "ld", mod.image):
        return ""
    return f"ModLoad: {tick(mod.base)} {tick(mod.end)}   {mod.path}\n"


def _unload(world: UserWorld) -> str:
    """FreeLibrary: the DLL leaves the module list (its pages stay, unread)."""
    mod = next((m for m in world.modules if m.name == cat.PLUGIN.name), None)
    if mod is None:
        return ""
    world.modules.remove(mod)
    _relink(world)
    if not filters.shown(world, "ud", mod.image):
        return ""
    return f"Unload module {mod.path} at {tick(mod.base)}\n"


def _relink(world: UserWorld) -> None:
    mem = world.user_memory[world.processes[0].address]
    lay_loader(mem, world.modules, {m.name: world.builder.facts[m.name] for m in world.modules})
    world.reindex()


def _stop(world: UserWorld, t: Thread, stack: str, what: str) -> str:
    """Thread ``t`` stops in its last system call (``stack``); the exit is the last event."""
    b = world.builder
    b.set_stack(t, stack)
    b.lay_stack(t)
    t.state = "RUNNING"
    world.user.event = Event(t.address, 0, t.frames[0].site, (), exit=what)
    set_current(world, t.address)
    return pc_location(world, world.registers(t))


def _leave(world: UserWorld, t: Thread) -> None:
    proc = world.processes[0]
    proc.threads = [x for x in proc.threads if x is not t]
    set_current(world, world.current_thread().address if world.current_thread() is not t else proc.threads[0].address)
