"""The objects behind generated handles, in pool and in memory, so ``!pool`` agrees with ``!handle``.

A handle to an Event the world does not model still names an object address; kd's ``!pool``
on it finds the object's pool block (``*Even``), and ``dt nt!_OBJECT_HEADER`` at
``ObjectHeader:`` shows the counts ``!handle`` printed. Each such object sits in its handle's
slot (:func:`~kdmcp.sim.world.handles.slot_object`): a pool page of those regions holds the
blocks of eight consecutive handles of one table, so a page is described without generating
any other table. The regions are laid into memory lazily, one region per table and pool, the
bytes made on the first read (as the builder lays module images).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from kdmcp.sim.world.handles import (
    OBJECT_HEADER,
    OBJECT_REGIONS,
    PAGED_TYPES,
    REGION_SIZE,
    SLOT,
    HandleInfo,
    handle,
)
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import PAGE
from kdmcp.sim.world.model import PoolBlock, Process

__all__ = ["BODY_SIZES", "POOL_TAGS", "all_object_blocks", "lay_objects", "object_blocks_in_page"]

# each kind's body size and pool tag (pooltag.txt: Even, Muta, Sect, Key , File, AlPo, Dire)
BODY_SIZES = {"Event": 0x18, "Mutant": 0x38, "Section": 0x38, "Key": 0x48, "File": 0xD8, "ALPC Port": 0x1A0}
BODY_SIZES["Directory"] = 0x150
POOL_TAGS = {"Event": "Even", "Mutant": "Muta", "Section": "Sect", "Key": "Key ", "File": "File"}
POOL_TAGS |= {"ALPC Port": "AlPo", "Directory": "Dire"}
_POOL_HEADER = 0x10
_SLOTS_PER_PAGE = PAGE // SLOT


def _tables(world: World) -> list[Process]:
    """One process per table, in table-index order (System for the table Idle shares)."""
    seen: dict[int, Process] = {}
    for p in world.processes:
        seen.setdefault(p.object_table, p)
    return list(seen.values())


def _block(h: HandleInfo) -> PoolBlock | None:
    """The pool block of the object in ``h``'s slot; ``None`` if the object is not a slot's
    (a process, thread or token the world has, the client's FILE_OBJECT)."""
    size = BODY_SIZES.get(h.type)
    paged = h.type in PAGED_TYPES
    start = h.object - OBJECT_HEADER - _POOL_HEADER
    if size is None or not OBJECT_REGIONS[paged] <= start < OBJECT_REGIONS[paged] + REGION_SIZE * 64:
        return None
    kind: Literal["Paged pool", "NonPagedNx pool"] = "Paged pool" if paged else "NonPagedNx pool"
    total = (_POOL_HEADER + OBJECT_HEADER + size + 0xF) & ~0xF
    return PoolBlock(start, total, POOL_TAGS[h.type], kind, True, h.object)


def _locate(world: World, addr: int) -> tuple[Process, bool, int] | None:
    """(the table's process, paged, first slot's handle value) for an address in a slot region."""
    for paged, base in OBJECT_REGIONS.items():
        offset = addr - base
        tables = _tables(world)
        if 0 <= offset < REGION_SIZE * len(tables):
            slot = (offset % REGION_SIZE) // SLOT
            return tables[offset // REGION_SIZE], paged, 4 * slot
    return None


def object_blocks_in_page(world: World, page: int) -> tuple[list[PoolBlock], bool] | None:
    """The handle objects' blocks in a page of the slot regions (and whether it is paged pool);
    ``None`` if the page is in no slot region or holds no object."""
    found = _locate(world, page)
    if found is None:
        return None
    proc, paged, first = found
    blocks = []
    for k in range(_SLOTS_PER_PAGE):
        h = handle(world, proc, first + 4 * k)
        blk = _block(h) if h is not None and (h.type in PAGED_TYPES) == paged else None
        if blk is not None:
            blocks.append(blk)
    return (blocks, paged) if blocks else None


@dataclass
class _Objects:
    """What the handle objects derive from a world once (its ``state_of``)."""

    blocks: list[PoolBlock] | None = None  # every handle object's block
    laid: bool = False  # the slot regions are mapped (lay_objects)


def all_object_blocks(world: World) -> list[PoolBlock]:
    """Every handle object's block, every table (what ``!poolused`` and ``!poolfind`` count)."""
    objects = world.state_of(_Objects)
    if objects.blocks is None:
        objects.blocks = []
        for proc in _tables(world):
            for value in range(4, 4 * (proc.handle_count + 1), 4):
                h = handle(world, proc, value)
                blk = _block(h) if h is not None else None
                if blk is not None:
                    objects.blocks.append(blk)
    return objects.blocks


def _region_maker(world: World, proc: Process, paged: bool) -> Callable[[], bytes]:
    def make() -> bytes:
        data = bytearray(REGION_SIZE)
        base = OBJECT_REGIONS[paged] + REGION_SIZE * _tables(world).index(proc)
        for value in range(4, 4 * (proc.handle_count + 1), 4):
            h = handle(world, proc, value)
            blk = _block(h) if h is not None else None
            if h is None or blk is None or (h.type in PAGED_TYPES) != paged:
                continue
            at = blk.address - base
            # the builder's _POOL_HEADER encoding (BlockSize at bits 16-23, PoolType at 24-31)
            head = (blk.size // 16) << 16 | (1 if paged else 3) << 24
            data[at : at + 8] = struct.pack("<I4s", head, blk.tag.encode("latin-1"))
            # _OBJECT_HEADER: PointerCount, HandleCount, as !handle prints them
            data[at + 0x10 : at + 0x20] = struct.pack("<qq", h.pointer_count, h.handle_count)
        return bytes(data)

    return make


def lay_objects(world: World) -> None:
    """Map the slot regions, each made on its first read. Once per world."""
    objects = world.state_of(_Objects)
    if objects.laid:
        return
    objects.laid = True
    for i, proc in enumerate(_tables(world)):
        for paged, base in OBJECT_REGIONS.items():
            world.kernel.defer(base + REGION_SIZE * i, REGION_SIZE, _region_maker(world, proc, paged))
