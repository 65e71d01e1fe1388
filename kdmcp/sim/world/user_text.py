"""cdb's user-mode text for the world's threads: stacks with their source lines, ``~`` rows.

Read by the user commands (:mod:`~kdmcp.sim.world.cmd_user`: ``k``, ``~``, ``~*k``); registers and
the pc's instruction are :mod:`~kdmcp.sim.world.regtext`'s, which the events the user world
reports (:mod:`~kdmcp.sim.world.user_events`) print with too.
"""

from __future__ import annotations

from kdmcp.sim.world import user_catalog as cat
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Thread

__all__ = ["source_of", "stack_text", "thread_row"]


def source_of(world: World, site: int) -> str:
    """`` [C:\\src\\app\\app.cpp @ 14]`` for a site in a routine with private line information."""
    mod, sym, off = world.symbols.nearest(site)
    if mod is None or sym is None or mod.symbol_status != "(private pdb symbols)":
        return ""
    lines = cat.SOURCE.get(sym.name)
    if lines is None:
        return ""
    path, table = lines
    line = max((ln for start, ln in table if start <= off), default=table[0][1])
    return f" [{path} @ {line}] "


def stack_text(world: World, thread: Thread, *, args: bool = False, numbers: bool = True, limit: int = 256) -> str:
    """``k`` (``kn``, ``kb``) in cdb's user-mode layout (the canned k; corpus stack/06, stack/03)::

     # Child-SP          RetAddr               Call Site
    00 00000000`00affb68 00007ffc`81ac7c0e     ntdll!DbgBreakPoint
    """
    frames = thread.frames[:limit]
    head = " # " if numbers else ""
    if args:
        out = f"{head}Child-SP          RetAddr               : Args to Child{' ' * 59}: Call Site\n"
    else:
        out = f"{head}Child-SP          RetAddr               Call Site\n"
    space = world.space()
    for i, f in enumerate(frames):
        ret = thread.frames[i + 1].site if i + 1 < len(thread.frames) else 0
        row = f"{i:02x} " if numbers else ""
        row += f"{fmt_addr(f.child_sp)} {fmt_addr(ret)}     "
        if args:
            homes = [space.u64(f.child_sp + 8 + 8 * k) for k in range(4)]
            row += ": " + " ".join(fmt_addr(v or 0) for v in homes) + " : "
        out += row + world.name(f.site) + source_of(world, f.site) + "\n"
    return out


def thread_row(world: World, index: int, thread: Thread, current: int, event: int | None) -> str:
    """One ``~`` line: ``.  2  Id: 1a2c.5d0 Suspend: 1 Teb: 00000000`002d6000 Unfrozen`` --
    ``.`` the current thread, ``#`` the last event's when it is another (corpus process_thread/06,
    families/threads/03)."""
    mark = "." if thread.address == current else "#" if thread.address == event else " "
    pid = world.owner(thread).pid
    return f"{mark}{index:>3}  Id: {pid:x}.{thread.tid:x} Suspend: 1 Teb: {fmt_addr(thread.teb)} Unfrozen\n"
