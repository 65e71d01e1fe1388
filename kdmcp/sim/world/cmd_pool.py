"""World commands: the pool -- ``!pool``, ``!poolfind``, ``!poolused``.

``!pool`` reads each block's ``_POOL_HEADER`` from memory (size, type, tag) walking the page
:mod:`~kdmcp.sim.world.pool` fills; ``!poolfind`` and ``!poolused`` summarise every block the
world has, so a tag's count is the blocks ``!pool`` shows with it.

Formats: families/pool/03 and 11 (``!pool`` page walk, ``*`` on the block holding the address,
the tab-indented ``Pooltag`` line under it), pool/12 (flag 2: that block alone), pool/05 (an
address in no pool), pool/07 (Windows 10/11 ``!poolfind``), pool/06 and 10 (``!poolused``).
"""

from __future__ import annotations

import fnmatch
import zlib

from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import PoolBlock
from kdmcp.sim.world.pool import TAGS, all_blocks, large_block, large_blocks, page_view, tag_text
from kdmcp.sim.world.registry import command

__all__ = ["BIG_TABLE", "NONPAGED_RANGE"]

# the pool regions !poolfind says it searches (families/pool/07: "Searching nonpaged pool
# (ffffda0000000000 : ffffea0000000000)"), around where the world's pools are
NONPAGED_RANGE = (0xFFFFE70000000000, 0xFFFFF70000000000)
_PAGED_RANGE = (0xFFFFB20000000000, 0xFFFFC20000000000)
BIG_TABLE = (0xFFFFE70F27E00000, 0xFFFFE70F27F00000)  # the large-allocation table's extent


def _description(tag: str) -> str:
    """The line under the block holding the address (families/pool/03, 11)."""
    known = TAGS.get(tag)
    if known is None:
        return "\t\tOwning component : Unknown (update pooltag.txt)\n"
    desc, binary = known
    return f"\t\tPooltag {tag} : {desc}" + (f", Binary : {binary}" if binary else "") + "\n"


def _header_row(world: World, blk: PoolBlock, marked: bool) -> str:
    """`` ffffe2809abee880 size:  760 previous size:    0  (Free)       .r."`` -- from memory."""
    head = world.space().read(blk.address, 8)
    if head is not None:
        word = int.from_bytes(head[:4], "little")
        size, prev, pool_type = ((word >> 16) & 0xFF) * 16, (word & 0xFF) * 16, word >> 24
        tag = head[4:8].decode("latin-1")
        allocated = pool_type != 0
    else:
        size, prev, tag, allocated = blk.size, 0, blk.tag, blk.allocated
    state = "(Allocated)" if allocated else "(Free)"
    star = "*" if marked else " "
    return f"{star}{blk.address:016x} size: {size:4x} previous size: {prev:4x}  {state:<11} {star}{tag_text(tag)}\n"


def _not_pool(addr: int) -> str:
    # families/pool/05: what kd prints for an address in no pool page it can read
    a = f"{addr:016x}"
    return (
        f"Pool page {a} region is Unknown\n"
        f"{a} is not a valid large pool allocation, checking large session pool...\n"
        "Unable to read large session pool table (Session data is not present in mini and kernel-only dumps)\n"
        f"{a} is not valid pool. Checking for freed (or corrupt) pool\n"
        f"Address {a} could not be read. It may be a freed, invalid or paged out page\n"
    )


@command("!pool", summary="pool page and the block holding an address")
def _pool(world: World, name: str, args: str) -> str | None:
    parts = args.split()
    if not parts:
        return None
    addr = world.evaluate(parts[0]) & ((1 << 64) - 1)
    flags = world.evaluate(parts[1]) if len(parts) > 1 else 0
    large = large_block(world, addr)
    if large is not None:
        # a whole-page allocation has no header: kd finds it in the big-page table (a Windows 10
        # "!pool rdx" on a vhdmp buffer: "*ffffc986cb6f2000 : large page allocation, tag is V2lg, ...")
        return (
            f"Pool page {addr:016x} region is Paged pool\n"
            f"*{large.address:016x} : large page allocation, tag is {large.tag}, size is {large.size:#x} bytes\n"
            + _description(large.tag)
        )
    view = page_view(world, addr)
    if view is None:
        return _not_pool(addr)
    out = [f"Pool page {addr:016x} region is {view.region}\n"]
    for blk in view.blocks:
        marked = blk.address <= addr < blk.address + blk.size
        if flags & 2 and not marked:
            continue  # flag 2: only the block holding the address (families/pool/12)
        out.append(_header_row(world, blk, marked))
        if marked:
            out.append(_description(blk.tag))
    return "".join(out)


# --------------------------------------------------------------------------- !poolfind


def _tag_value(tag: str) -> int:
    """The tag as the ULONG kd prints: ``Proc`` -> 0x636f7250 (its bytes, little-endian)."""
    return int.from_bytes(tag.encode("latin-1")[:4].ljust(4, b" "), "little")


def _tag_argument(arg: str) -> str:
    """The tag a ``!poolfind`` argument names. The "!poolfind" docs: "TagValue must begin with
    "0x", even if the default radix is 16. If this parameter begins with any other value
    (including "0X") it will be interpreted as an ASCII tag string" -- ``0x20707249`` is ``Irp ``
    (the tag's bytes, little-endian, as kd echoes it: "for tag 0x20707249 (Irp )")."""
    if arg.startswith("0x"):
        try:
            return (int(arg[2:], 16) & 0xFFFFFFFF).to_bytes(4, "little").decode("latin-1")
        except ValueError:
            pass
    return arg[:4]


def _tag_matches(tag: str, pattern: str) -> bool:
    """kd's tag patterns: ``*`` and ``?`` wildcards; a short tag is blank-padded (``Irp`` is ``Irp ``)."""
    if "*" in pattern or "?" in pattern:
        return fnmatch.fnmatchcase(tag, pattern)
    return tag.rstrip() == pattern.rstrip()


def _nonpaged(blk: PoolBlock) -> bool:
    return blk.pool_type != "Paged pool"


def _region(blk: PoolBlock) -> str:
    return "Nonpaged pool" if _nonpaged(blk) else "Paged pool"


@command("!poolfind", summary="pool blocks with a tag")
def _poolfind(world: World, name: str, args: str) -> str | None:
    parts = args.split()
    if not parts:
        return None
    tag = _tag_argument(parts[0])
    kind = parts[1].lower() if len(parts) > 1 else "0"
    searches: list[tuple[str, tuple[int, int], bool]] = []
    if kind in ("0", "-nonpaged"):
        searches.append(("nonpaged", NONPAGED_RANGE, True))
    elif kind in ("1", "-paged"):
        searches.append(("paged", _PAGED_RANGE, False))
    else:
        return None
    value = _tag_value(tag)
    shown = tag.ljust(4)
    # families/pool/07: the large-allocation table first, its rows the allocations themselves
    out = [
        "\n",
        f"Scanning large pool allocation table for tag 0x{value:08x} ({shown}) "
        f"({BIG_TABLE[0]:016x} : {BIG_TABLE[1]:016x})\n",
        "\n",
    ]
    large = [b for b in large_blocks(world) if _tag_matches(b.tag, tag) and _nonpaged(b) == searches[0][2]]
    for blk in large:
        out.append(f"{blk.address:016x} : tag {blk.tag}, size {f'{blk.size:#x}':>9}, {_region(blk)}\n")
    if large:
        out.append("\n")
    small = {b.address for b in large_blocks(world)}
    blocks = [b for b in all_blocks(world) if b.allocated and _tag_matches(b.tag, tag) and b.address not in small]
    for label, (lo, hi), nonpaged in searches:
        out += [f"Searching {label} pool ({lo:016x} : {hi:016x}) for tag 0x{value:08x} ({shown})\n", "\n"]
        for blk in blocks:
            if _nonpaged(blk) == nonpaged:
                size = f"0x{blk.size - 0x10:x}"
                out.append(f"{blk.address:016x} : tag {blk.tag}, size {size:>9}, {_region(blk)}\n")
        out.append("\n")
    return "".join(out)


# --------------------------------------------------------------------------- !poolused


def usage(world: World) -> dict[str, list[int]]:
    """tag -> [nonpaged allocs, nonpaged bytes, paged allocs, paged bytes], allocated blocks only."""
    table: dict[str, list[int]] = {}
    for blk in all_blocks(world):
        if not blk.allocated:
            continue
        row = table.setdefault(blk.tag, [0, 0, 0, 0])
        col = 0 if _nonpaged(blk) else 2
        row[col] += 1
        row[col + 1] += blk.size
    return table


def _usage_description(tag: str) -> str:
    # families/pool/06: "\tIo work items , Binary: nt!io", unknown tags ask for pooltag.txt
    known = TAGS.get(tag)
    if known is None:
        return f"UNKNOWN pooltag '{tag}', please update pooltag.txt"
    desc, binary = known
    return f"{desc} , Binary: {binary}" if binary else f"{desc} "


@command("!poolused", summary="pool use by tag")
def _poolused(world: World, name: str, args: str) -> str | None:
    parts = args.split()
    flags = world.evaluate(parts[0]) if parts else 0
    pattern = parts[1] if len(parts) > 1 else "*"
    table = usage(world)
    rows = sorted((t, v) for t, v in table.items() if _tag_matches(t, pattern))
    if flags & 2:
        rows.sort(key=lambda r: -r[1][1])
        order = "NonPaged Pool Consumed"
    elif flags & 4:
        rows.sort(key=lambda r: -r[1][3])
        order = "Paged Pool Consumed"
    else:
        order = "Tag"
    if flags & 1:
        return _poolused_verbose(order, rows)
    # families/pool/06 and 10: progress dots, the order, the two column groups; TOTAL at the
    # left margin, its numbers in the rows' columns (an HEVD write-up's "!poolused 2 Even")
    out = ["..\n", f" Sorting by {order}\n", "\n"]
    out.append("               NonPaged                  Paged\n")
    out.append(f" {'Tag':<4}{'Allocs':>10}{'Used':>13}{'Allocs':>11}{'Used':>13}\n")
    out.append("\n")
    for tag, (npa, npu, pa, pu) in rows:
        out.append(f" {tag:<4}{npa:>10}{npu:>13}{pa:>11}{pu:>13}\t{_usage_description(tag)}\n")
    totals = [sum(v[i] for _, v in rows) for i in range(4)]
    out.append(f"TOTAL{totals[0]:>10}{totals[1]:>13}{totals[2]:>11}{totals[3]:>13}\n")
    return "".join(out)


def _frees(tag: str, live: int) -> int:
    """How many of a tag's allocations were freed since boot: not in the world (its pool holds
    only what is allocated now), so a stable multiple of what is live, per tag."""
    return live * (zlib.crc32(tag.encode("latin-1")) % 6) if live else 0


def _poolused_verbose(order: str, rows: list[tuple[str, list[int]]]) -> str:
    """``!poolused 1``: allocations, frees and their difference per pool (Windows 10, an HEVD
    exploit's ``!poolused 1 Hack``: column ends 17, 29, 39, 52 | 65, 77, 87, 100); the
    difference is what is allocated now, the count the plain layout shows."""
    widths = (12, 12, 10, 13, 13, 12, 10, 13)

    def line(head: str, values: tuple[object, ...]) -> str:
        return head + "".join(f"{v:>{w}}" for v, w in zip(values, widths, strict=True))

    out = ["..\n", f" Sorting by {order}\n", "\n"]
    out.append("                            NonPaged                                         Paged\n")
    out.append(line(" Tag ", ("Allocs", "Frees", "Diff", "Used") * 2) + "\n")
    out.append("\n")
    totals = [0] * 8
    for tag, (npa, npu, pa, pu) in rows:
        npf, pf = _frees(tag, npa), _frees(tag, pa)
        values = (npa + npf, npf, npa, npu, pa + pf, pf, pa, pu)
        totals = [t + v for t, v in zip(totals, values, strict=True)]
        out.append(line(f" {tag:<4}", values) + f"\t{_usage_description(tag)}\n")
    out.append("\n")
    out.append(line("TOTAL", tuple(totals)) + "\n")
    return "".join(out)
