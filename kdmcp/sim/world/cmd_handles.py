"""World commands: ``!handle`` in kernel mode, over :mod:`~kdmcp.sim.world.handles`' tables.

``!handle [Handle [KMFlags [Process [TypeName]]]]`` (Microsoft docs, !handle): Handle 0 or
omitted is every handle; KMFlags (default 3) 1 the handle rows, 2 each object's block, 4 the
free entries too, 0x10 the kernel handle table (System's); Process 0 is every process, -1 or
omitted the current one, else an EPROCESS address or a process id; TypeName keeps one type.

Formats: families/handles/05 (Windows 10 x64 ``!handle 0 3 <process> File``: the "Searching
for handles of type" line, the PROCESS header as ``!process 0 0`` prints it, "Handle table
at ... with N entries in use", each handle with its object block and a blank line) and
handles/09 (one handle); free entries as kernel_objects/09 prints them.
"""

from __future__ import annotations

from kdmcp.sim.world.cmd_process import process_header
from kdmcp.sim.world.handle_objects import lay_objects
from kdmcp.sim.world.handles import (
    ENTRIES_PER_PAGE,
    TYPE_OBJECTS,
    HandleInfo,
    entry_address,
    handle,
    lay_tables,
    table_pages,
)
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Process
from kdmcp.sim.world.registry import command

__all__: list[str] = []

_MASK = (1 << 64) - 1


def _row(h: HandleInfo) -> str:
    attrs = "".join(f" ({a})" for a in h.attributes)
    return f"{h.value:04x}: Object: {h.object:016x}  GrantedAccess: {h.access:08x}{attrs} Entry: {h.entry:016x}\n"


def _object_block(h: HandleInfo) -> str:
    out = [
        f"Object: {h.object:016x}  Type: ({TYPE_OBJECTS[h.type]:016x}) {h.type}\n",
        f"    ObjectHeader: {h.header:016x} (new version)\n",
        f"        HandleCount: {h.handle_count}  PointerCount: {h.pointer_count}\n",
    ]
    if h.directory is not None:
        directory = f"{h.directory:016x}" if h.directory else "00000000"
        out.append(f"        Directory Object: {directory}  Name: {h.name}\n")
    return "".join(out)


def _free_row(world: World, p: Process, value: int) -> str:
    # kernel_objects/09: "0170: free handle, Entry address e10022e0, Next Entry 00000458"
    last = len(table_pages(world, p)) * ENTRIES_PER_PAGE * 4
    nxt = value + 4 if value + 4 < last else 0
    return f"{value:04x}: free handle, Entry address {entry_address(world, p, value):016x}, Next Entry {nxt:08x}\n"


def _resolve_process(world: World, text: str) -> Process | int | None:
    """The process an argument names: an EPROCESS address or a pid; 0: all, -1: current."""
    value = world.evaluate(text) & _MASK
    if value == 0:
        return 0
    if value == _MASK:
        return world.current_process()
    return world.process(value) or world.process_by_pid(value)


def _one_process(
    world: World, p: Process, value: int, flags: int, type_name: str | None, shown: Process | None = None
) -> str:
    """One process's block: ``shown``'s PROCESS header (the current process, for the kernel
    table of flag 0x10, as handles/03's "Kernel ... handle table" follows Idle's header), then
    ``p``'s table."""
    out = [process_header(shown or p), "\n"]
    kernel = "Kernel h" if shown is not None else "H"
    out.append(f"{kernel}andle table at {p.object_table:016x} with {p.handle_count} entries in use\n")
    out.append("\n")
    if value:
        values = [value]
    elif flags & 7:
        values = list(range(4, 4 * (p.handle_count + 1), 4))
        if flags & 4:
            values += range(4 * (p.handle_count + 1), len(table_pages(world, p)) * ENTRIES_PER_PAGE * 4, 4)
    else:
        values = []
    block = bool(flags & 2)
    for v in values:
        h = handle(world, p, v)
        if h is None:
            if value or flags & 4:
                out.append(_free_row(world, p, v))
                if block:
                    out.append("\n")
            continue
        if type_name is not None and h.type != type_name:
            continue
        if flags & 1 or value:
            out.append(_row(h))
        if block:
            out.append(_object_block(h))
            out.append("\n")
    return "".join(out)


@command("!handle", summary="handle table entries and their objects")
def _handle(world: World, name: str, args: str) -> str | None:
    parts = args.split()
    lay_tables(world)  # the tables kd walks are in memory from here on (dq of an Entry agrees)
    lay_objects(world)  # and the objects' headers (dt nt!_OBJECT_HEADER at ObjectHeader:)
    value = world.evaluate(parts[0]) & _MASK if parts else 0
    if value == _MASK:
        value = 0  # -1: every handle of the process
    flags = world.evaluate(parts[1]) if len(parts) > 1 else 3
    target: Process | int | None = world.current_process()
    if len(parts) > 2:
        target = _resolve_process(world, parts[2])
    type_name = " ".join(parts[3:]) if len(parts) > 3 else None
    if target is None:
        return f"Invalid process {parts[2]}\n" if len(parts) > 2 else None
    procs = world.processes if isinstance(target, int) else [target]
    out = ["\n"]
    if type_name is not None:
        out += [f"Searching for handles of type {type_name}\n", "\n"]
    system = world.process_by_pid(4)
    for p in procs:
        if flags & 0x10 and system is not None:  # the kernel handle table: System's
            out.append(_one_process(world, system, value, flags, type_name, shown=p))
        else:
            out.append(_one_process(world, p, value, flags, type_name))
    return "".join(out)
