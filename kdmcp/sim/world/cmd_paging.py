"""World commands: paging and memory use -- ``!pte``, ``!vm``.

``!pte`` walks :mod:`~kdmcp.sim.world.paging`'s tables for the VA (a user VA in the current
process's, through its DirBase); ``!vm`` summarises what the world holds -- its pool pages,
its threads' kernel stacks, its processes -- so its figures agree with ``!poolused`` and
``!process``.

Formats: families/pte/02, 03, 06 and 09 (Windows 10/11 x64 ``!pte``: the VA line, the four
``at`` columns, ``contains``, ``pfn``/flags or ``not valid``), families/kernel_state/06
(Windows 10/11 ``!vm 1``: the page files first, then the counters).
"""

from __future__ import annotations

from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import PAGE
from kdmcp.sim.world.paging import LEVELS, entry_addresses, flags_text, mapped_by, walk
from kdmcp.sim.world.pool import all_blocks
from kdmcp.sim.world.registry import command

__all__ = ["PAGE_FILES", "PHYSICAL_PAGES", "process_commit"]

_COLUMN = 27  # each level's column: "PXE at FFFFF67B3D9ECF80    " (families/pte/03)


@command("!pte", summary="page table entries of a virtual address")
def _pte(world: World, name: str, args: str) -> str | None:
    if not args.strip():
        return None
    va = world.evaluate(args.split(maxsplit=1)[0]) & ((1 << 64) - 1)
    mapped = mapped_by(va)  # "!pte <PTE address>" shows the VA that PTE maps
    va = va if mapped is None else mapped
    entries = walk(world, va)
    at_line = "".join(f"{lvl} at {a:016X}".ljust(_COLUMN) for lvl, a in zip(LEVELS, entry_addresses(va), strict=True))
    contains = "".join(f"contains {e.value:016X}".ljust(_COLUMN) for e in entries)
    pfns = "".join(
        (f"pfn {e.pfn:<10x}{flags_text(e.value)}" if e.valid else "not valid").ljust(_COLUMN) for e in entries
    )
    return f"{' ' * 43}VA {va:016x}\n" + "\n".join(line.rstrip() for line in (at_line, contains, pfns)) + "\n"


# --------------------------------------------------------------------------- !vm

PHYSICAL_PAGES = 0xFFF00  # 4 GB less the firmware's share: 1048320 pages
# (name, current Kb, free Kb, minimum Kb, maximum Kb): kernel_state/06's three kinds
PAGE_FILES: tuple[tuple[str | None, int, int, int, int], ...] = (
    ("\\??\\C:\\pagefile.sys", 1441792, 1402316, 1441792, 4194304),
    ("\\??\\C:\\swapfile.sys", 262144, 262136, 262144, 6291456),
    (None, 4194304, 4194296, 4194304, 4194304),
)


def process_commit(world: World) -> list[tuple[int, str, int]]:
    """(pid, image, committed pages) per process, most first, as ``!vm``'s list ends."""
    rows = []
    for p in world.processes:
        # a system process (no PEB) commits a few pages (the sample's "System  112 Kb")
        pages = 25 + len(p.threads) if not p.peb else 180 + 3 * p.handle_count + 40 * len(p.threads) + (p.pid & 0xFF)
        rows.append((p.pid, p.image, pages))
    return sorted(rows, key=lambda r: (-r[2], r[0]))


def _row(label: str, pages: int) -> str:
    # the count right-aligned to column 33, the Kb in 11 ("Physical Memory:          2844914 (   11379656 Kb)")
    width = max(33 - len(label), len(str(pages)) + 1)
    return f"{label}{pages:>{width}} ({pages * 4:>11} Kb)\n"


def _counters(world: World) -> list[tuple[str, int]]:
    blocks = all_blocks(world)
    nonpaged = len({b.address // PAGE for b in blocks if b.pool_type != "Paged pool"})
    paged = len({b.address // PAGE for b in blocks if b.pool_type == "Paged pool"})
    stacks = sum((t.stack_base - t.stack_limit) // PAGE for t in world.all_threads())
    drivers = sum(m.size // PAGE for m in world.modules)
    private = sum(pages for _, _, pages in process_commit(world))
    shared = 61234
    system = nonpaged + paged + stacks + drivers + shared
    committed = system + private
    return [
        ("Physical Memory:", PHYSICAL_PAGES),
        ("Available Pages:", PHYSICAL_PAGES - committed - 210000),
        ("ResAvail Pages:", PHYSICAL_PAGES - 82110),
        ("Locked IO Pages:", 0),
        ("Free System PTEs:", 4294980212),
        ("", -1),
        ("Modified Pages:", 4312),
        ("Modified PF Pages:", 4290),
        ("Modified No Write Pages:", 0),
        ("NonPagedPool Usage:", 0),
        ("NonPagedPoolNx Usage:", nonpaged),
        ("NonPagedPool Max:", 4294967296),
        ("PagedPool Usage:", paged),
        ("PagedPool Maximum:", 4294967296),
        ("Processor Commit:", 421 * len(world.processors) // 4),
        ("Session Commit:", 1730),
        ("Shared Commit:", shared),
        ("Special Pool:", 0),
        ("Kernel Stacks:", stacks),
        ("Pages For MDLs:", 512),
        ("ContigMem Pages:", 4),
        ("Partition Pages:", 0),
        ("Pages For AWE:", 0),
        ("NonPagedPool Commit:", nonpaged),
        ("PagedPool Commit:", paged),
        ("Driver Commit:", drivers),
        ("Boot Commit:", 2419),
        ("PFN Array Commit:", PHYSICAL_PAGES * 48 // PAGE),
        ("SmallNonPagedPtesCommit:", 310),
        ("SlabAllocatorPages:", 1024),
        ("SkPagesInUnchargedSlabs:", 0),
        ("System PageTables:", 602),
        ("ProcessLockedFilePages:", 6),
        ("Pagefile Hash Pages:", 32),
        ("Sum System Commit:", system),
        ("Total Private:", private),
        ("Committed pages:", committed),
        ("Commit limit:", PHYSICAL_PAGES + sum(f[1] for f in PAGE_FILES) // 4),
    ]


@command("!vm", summary="virtual memory use")
def _vm(world: World, name: str, args: str) -> str | None:
    flags = world.evaluate(args.split(maxsplit=1)[0]) if args.split() else 0
    out: list[str] = []
    for file_name, current, free, minimum, maximum in PAGE_FILES:
        out.append(f"Page File: {file_name}\n" if file_name else "No Name for Paging File\n")
        out.append(f"  Current: {current:>9} Kb  Free Space: {free:>9} Kb\n")
        out.append(f"  Minimum: {minimum:>9} Kb  Maximum:    {maximum:>9} Kb\n")
    out.append("\n")
    for label, pages in _counters(world):
        out.append(_row(label, pages) if label else "\n")
    if not flags & 1:  # flag 1 leaves out the per-process list
        # a Windows 8/10 "!vm" (jasandoval1-style notes in the code corpus): the heading, then
        # each process's commit in Kb, most first
        out += ["\n", f"{'Pid':>5} {'ImageName':<24}{'Commit':>15}{'SharedCommit':>15}{'Debt':>12}\n", "\n"]
        for pid, image, pages in process_commit(world):
            out.append(f"{pid:5x} {image:<24}{pages * 4:>12} Kb{0:>12} Kb{0:>9} Kb\n")
    return "".join(out)
