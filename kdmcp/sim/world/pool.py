"""The pool around the world's objects: full pages, as ``!pool`` walks them, and tag facts.

The builder allocates a pool block for each object it lays (``PoolBlock``s in
``world.pool``), but a real pool page is never that empty: the objects at fixed (canned)
addresses sit alone in their pages, and the packed region ends each page with the part
that did not fit. kd's ``!pool`` walks a page from its first header to its end, so a page
here reads full: the gaps are filled with blocks generated from the page address and the
world's seed (``random.Random`` seeded with text is stable across runs and interpreters),
and their headers are laid into memory the first time a page is looked at, where nothing
else was written -- so ``dt nt!_POOL_HEADER`` at a filler agrees with ``!pool``.

Fillers never use a tag the world's own objects or the handle objects use, so ``!poolused``'s
count for ``Proc`` is the number of processes' blocks in ``world.pool``, which ``!pool`` on each
process shows, and its count for ``Even`` the number of event objects the handles name.
"""

from __future__ import annotations

import functools
import random
import struct
from dataclasses import dataclass, field
from typing import Literal

from kdmcp.sim.world.handle_objects import all_object_blocks, lay_objects, object_blocks_in_page
from kdmcp.sim.world.handles import table_allocations
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import PAGE
from kdmcp.sim.world.model import PoolBlock

__all__ = ["TAGS", "PageView", "all_blocks", "large_block", "large_blocks", "lay_fillers", "page_view", "tag_text"]

# tag -> (description, binary): pooltag.txt's words, as kd prints them ("Pooltag MmSt : Mm
# section object prototype ptes, Binary : nt!mm", families/pool/03); "" binary: none known
TAGS: dict[str, tuple[str, str]] = {
    "Proc": ("Process objects", "nt!ps"),
    "Thre": ("Thread objects", "nt!ps"),
    "Toke": ("Token objects", "nt!se"),
    "ObNm": ("object names", "nt!ob"),
    "MmLd": ("Mm load module database", "nt!mm"),
    "Obtb": ("object tables via EX handle.c", "nt!ob"),
    "Devi": ("Device objects", ""),
    "Driv": ("Driver objects", ""),
    "Irp ": ("Io, IRP packets", "nt!io"),
    "File": ("File objects", "nt!io"),
    "Even": ("Event objects", ""),  # "\tEvent objects " (an HEVD write-up's !poolused 2 Even)
    "Muta": ("Mutant objects", "nt!ob"),
    "Sema": ("Semaphore objects", "nt!ob"),
    "IoCo": ("Io completion", "nt!io"),
    "Mdl ": ("Io, Mdls", "nt!io"),
    "MmCa": ("Mm control areas for mapped files", "nt!mm"),
    "MmSt": ("Mm section object prototype ptes", "nt!mm"),
    "Vad ": ("Mm virtual address descriptors", "nt!mm"),
    "Ntfx": ("General Allocation", "ntfs.sys"),
    "Ntff": ("FCB_DATA", "ntfs.sys"),
    "EtwB": ("Etw Buffer", "nt!etw"),
    "CM31": ("Internal Configuration manager allocations", "nt!cm"),
    "SeSd": ("Security Descriptor", "nt!se"),
    "ReTa": ("Reparse point tag", "nt!io"),
    "IoWI": ("Io work items", "nt!io"),
    "FMsl": ("STREAM_LIST_CTRL structure", "fltmgr.sys"),
    "Key ": ("Key objects", "nt!cm"),
    "AlIn": ("ALPC port handle table", "nt!alpc"),
    "AlPo": ("ALPC port objects", "nt!alpc"),
    "Sect": ("Section objects", "nt!mm"),
    "Dire": ("Directory objects", "nt!ob"),
}
# what fills the gaps, by the page's pool: never a tag the builder gives the world's objects or
# the handle objects have (Proc, File, Even, Key ...), so !poolused counts those exactly
_FILL_NONPAGED = ("IoCo", "Mdl ", "MmCa", "Vad ", "Ntfx", "EtwB", "ReTa", "IoWI", "FMsl", "Sema")
_FILL_PAGED = ("CM31", "MmSt", "Ntff", "SeSd", "AlIn", "MmCa")
_SIZES = (0x40, 0x60, 0x80, 0xA0, 0xC0, 0x100, 0x140, 0x1A0, 0x250, 0x330)
_POOL_HEADER = 0x10


@dataclass(frozen=True)
class PageView:
    """One pool page as ``!pool`` walks it: its region and its blocks, the world's and fillers."""

    page: int
    region: str  # "Nonpaged pool" / "Paged pool"
    blocks: list[PoolBlock]


@dataclass
class _PoolIndex:
    """What the pool derives from a world once (its ``state_of``): the builder's blocks by page,
    the pages made full so far, the large allocations."""

    pages: dict[int, list[PoolBlock]] | None = None
    views: dict[int, PageView] = field(default_factory=dict)
    large: list[PoolBlock] | None = None


def tag_text(tag: str) -> str:
    """The tag as kd prints it: unprintable bytes as dots (families/pool/03's ``.r."``)."""
    return "".join(c if 0x20 <= ord(c) < 0x7F else "." for c in tag)


def _by_page(world: World) -> dict[int, list[PoolBlock]]:
    index = world.state_of(_PoolIndex)
    if index.pages is None:
        index.pages = {}
        for blk in world.pool:
            index.pages.setdefault(blk.address & ~(PAGE - 1), []).append(blk)
    return index.pages


def _fill(rng: random.Random, start: int, size: int, paged: bool) -> list[PoolBlock]:
    out: list[PoolBlock] = []
    tags = _FILL_PAGED if paged else _FILL_NONPAGED
    kind: Literal["Paged pool", "NonPagedNx pool"] = "Paged pool" if paged else "NonPagedNx pool"
    while size > 0:
        take = rng.choice([s for s in _SIZES if s <= size] or [size])
        if size - take < 0x40:
            take = size  # a remainder too small for a block joins this one
        free = rng.random() < 0.25
        out.append(PoolBlock(start, take, rng.choice(tags), kind, not free))
        start, size = start + take, size - take
    return out


def page_view(world: World, addr: int) -> PageView | None:
    """The pool page holding ``addr``, full; ``None`` if the world has no pool there."""
    page = addr & ~(PAGE - 1)
    views = world.state_of(_PoolIndex).views
    if page in views:
        return views[page]
    own = _by_page(world).get(page)
    if own:
        paged = own[0].pool_type == "Paged pool"
    else:  # a page of the handle objects' slots, if any object is there
        found = object_blocks_in_page(world, page)
        if found is None:
            return None
        lay_objects(world)
        own, paged = found
    rng = random.Random(f"pool:{world.seed}:{page:x}")
    blocks: list[PoolBlock] = []
    cursor = page
    for blk in sorted(own, key=lambda b: b.address):
        blocks += _fill(rng, cursor, blk.address - cursor, paged)
        blocks.append(blk)
        cursor = blk.address + blk.size
    blocks += _fill(rng, cursor, page + PAGE - cursor, paged)
    mine = {id(b) for b in own}
    for blk in blocks:
        if id(blk) not in mine:
            _lay_header(world, blk, paged)
    view = PageView(page, "Paged pool" if paged else "Nonpaged pool", blocks)
    views[page] = view
    return view


def _lay_header(world: World, blk: PoolBlock, paged: bool) -> None:
    """A filler's _POOL_HEADER (the builder's encoding: BlockSize in 16-byte units at bits
    16-23, PoolType at 24-31, 0 for a free block), only where memory holds nothing yet."""
    space = world.space()
    if space.read(blk.address, _POOL_HEADER) != bytes(_POOL_HEADER):
        return
    pool_type = 0 if not blk.allocated else (1 if paged else 3)
    head = (min(blk.size // 16, 0xFF) << 16) | (pool_type << 24)
    world.kernel.load(blk.address, struct.pack("<I4s", head, blk.tag.encode("latin-1")))


def all_blocks(world: World) -> list[PoolBlock]:
    """Every block of every pool page the world has, fillers included, then every handle
    object's block (:mod:`~kdmcp.sim.world.handle_objects`)."""
    out: list[PoolBlock] = []
    for page in sorted(_by_page(world)):
        view = page_view(world, page)
        if view is not None:
            out += view.blocks
    # the handle objects' blocks, without their pages' fillers (nothing counts a free block)
    return out + all_object_blocks(world) + large_blocks(world)


def large_blocks(world: World) -> list[PoolBlock]:
    """The large (whole-page, header-less) allocations: the handle tables' pages, tag Obtb."""
    index = world.state_of(_PoolIndex)
    if index.large is None:
        index.large = [PoolBlock(page, PAGE, "Obtb", "Paged pool") for page in table_allocations(world)]
    return index.large


def large_block(world: World, addr: int) -> PoolBlock | None:
    """The large allocation holding ``addr``, if any."""
    return next((b for b in large_blocks(world) if b.address <= addr < b.address + b.size), None)


def defer_fillers(world: World) -> None:
    """Each pool page's other blocks appear the first time anything reads the page (``db`` in a
    gap shows their headers, as ``!pool`` lists them), without building every page at start."""
    def hook(page: int) -> None:
        page_view(world, page)

    for page in _by_page(world):
        world.kernel.on_first_read(page, PAGE, functools.partial(hook, page))


def lay_fillers(world: World) -> None:
    """Lay every page's filler headers now (the builder may call this once the world is made,
    so ``db`` in a gap shows a header even before any pool command looked at its page)."""
    all_blocks(world)
