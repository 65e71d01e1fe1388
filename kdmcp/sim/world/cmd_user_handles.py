"""World commands: cdb's ``!handle`` on the simulated live process (text: :mod:`.user_handles`).

The process holds what a small Windows 10 console program holds after start-up (the types and
counts of i4's published ``!handle`` of such a process, "Handles", 2023-10-24: console Files,
thread-pool Events, IoCompletion, TpWorkerFactory, WaitCompletionPacket and IRTimer handles,
the KnownDlls and session Directories, Keys, an ALPC Port), plus one named Mutant its main
thread owns, one Semaphore and a handle to each of its threads, so ``Mutant Owner`` and a Thread
handle name the process's own ids (``~``'s ``Id: pid.tid``). Handle values and access masks are
the usual ones of such a process; names are those Windows gives these objects.
"""

from __future__ import annotations

from kdmcp.sim.world.machine import World
from kdmcp.sim.world.registry import command
from kdmcp.sim.world.user import user_state
from kdmcp.sim.world.user_handles import UserHandle, handle_text

__all__ = ["process_handles"]

_EVENT = 0x1F0003
_FILE = 0x12019F
_KEY = 0x20019


def process_handles(world: World) -> list[UserHandle]:
    """The simulated process's handle table, by value."""
    proc = world.processes[0]
    main = proc.threads[0].tid if proc.threads else 0
    rows: list[UserHandle] = [
        UserHandle(0x4, "Event", _EVENT, pointer_count=65536, info=("Event Type Manual Reset", "Event is Set")),
        UserHandle(0x8, "Key", 0x9, name=r"\REGISTRY\MACHINE\SYSTEM\ControlSet001\Control\Session Manager"),
        UserHandle(0xC, "Event", _EVENT, pointer_count=65536, info=("Event Type Auto Reset", "Event is Waiting")),
        UserHandle(0x10, "WaitCompletionPacket", 0x1, pointer_count=32768),
        UserHandle(0x14, "IoCompletion", _EVENT, pointer_count=65535),
        UserHandle(0x18, "TpWorkerFactory", 0xF00FF, pointer_count=32768),
        UserHandle(0x1C, "IRTimer", 0x100002, pointer_count=32768),
        UserHandle(0x20, "WaitCompletionPacket", 0x1, pointer_count=32768),
        UserHandle(0x38, "Directory", 0x3, handle_count=52, pointer_count=65550, name=r"\KnownDlls"),
        UserHandle(0x3C, "Event", 0x1F0003, pointer_count=32769, info=("Event Type Auto Reset", "Event is Waiting")),
        UserHandle(0x40, "File", 0x100020, pointer_count=32769),  # the current directory
        UserHandle(0x44, "File", _FILE, handle_count=3, pointer_count=98301),  # \Device\ConDrv: in, out, err
        UserHandle(0x48, "File", _FILE, handle_count=3, pointer_count=98302),
        UserHandle(0x4C, "File", _FILE, handle_count=3, pointer_count=98303),
        UserHandle(0x50, "ALPC Port", 0x1F0001, pointer_count=32768),
        UserHandle(0x54, "Key", _KEY, name=r"\REGISTRY\MACHINE\SYSTEM\ControlSet001\Control\Nls\Sorting\Versions"),
        UserHandle(0x58, "Key", 0x1, name=r"\REGISTRY\MACHINE"),
        UserHandle(0x5C, "Directory", 0xF, handle_count=24, pointer_count=65560,
                   name=r"\Sessions\1\BaseNamedObjects"),
        UserHandle(0x60, "Mutant", 0x1F0001, pointer_count=65536,
                   name=r"\Sessions\1\BaseNamedObjects\SimAppSingleInstance",
                   info=("Mutex is Owned", f"Mutant Owner {proc.pid:x}.{main:x}")),
        UserHandle(0x64, "Semaphore", 0x1F0003, pointer_count=65536, info=("Semaphore Count 0", "Semaphore Limit 1")),
        UserHandle(0x68, "Section", 0x4, pointer_count=32768, name=r"\Sessions\1\Windows\SharedSection"),
    ]
    # a handle to each of its threads (CreateThread's, kept open)
    rows += [UserHandle(0x80 + 4 * i, "Thread", 0x1F03FF, handle_count=2, pointer_count=65536)
             for i, _ in enumerate(proc.threads)]
    return rows


@command("!handle", modes=("user",), summary="the process's handles (!handle [h [flags [type]]])")
def _handle(world: World, name: str, args: str) -> str | None:
    if user_state(world) is None:
        return None
    return handle_text(process_handles(world), args, world.evaluate, live=True)
