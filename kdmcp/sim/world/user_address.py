"""``!address ADDR`` in the user world: the region holding an address, from the world's map.

The map is what the world laid: each image (its header page read-only, its code
execute-read, the rest read-only: MEM_IMAGE), each thread's stack and TEB, the PEB, the heaps'
committed ranges (MEM_PRIVATE, read-write), and free space between them. The text follows
published cdb output (a notepad session's ``!address 00007ffb`f6b9cb50`` in ntdll's code: the
Usage/Base/End/Region Size lines, State/Protect/Type with their names in a column, the image's
paths and ``More info:`` lines, then ``Content source: 1 (target), length: …`` -- the bytes from
the address to the region's end; a free region: "Content source: 0 (invalid)").
"""

from __future__ import annotations

from dataclasses import dataclass

from kdmcp.sim.world import user_catalog as cat
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Module

__all__ = ["Region", "address_text", "region_at"]

_TOP = 0x00007FFF_FFFF0000  # the highest user address a region can end at
_PROTECT = {0x01: "PAGE_NOACCESS", 0x02: "PAGE_READONLY", 0x04: "PAGE_READWRITE", 0x20: "PAGE_EXECUTE_READ",
            0x80: "PAGE_EXECUTE_WRITECOPY"}  # fmt: skip


@dataclass(frozen=True)
class Region:
    """One region as ``!address`` describes it."""

    usage: str  # Image, Stack, TEB, PEB, Heap, Free
    base: int
    end: int
    protect: int
    kind: int  # MEM_IMAGE 0x1000000, MEM_PRIVATE 0x20000; 0 for free
    allocation_base: int = 0
    allocation_protect: int = 0
    module: Module | None = None
    more: tuple[str, ...] = ()


def _regions(world: World) -> list[Region]:
    out: list[Region] = []
    for m in world.modules:
        code_end = max((s.address + s.size for s in m.symbols if s.kind == "code"), default=m.base + 0x1000)
        code_end = min(m.end, (code_end + 0xFFF) & ~0xFFF)
        parts = [(m.base, m.base + 0x1000, 0x02), (m.base + 0x1000, code_end, 0x20), (code_end, m.end, 0x02)]
        for lo, hi, prot in parts:
            if lo < hi:
                out.append(Region("Image", lo, hi, prot, 0x1000000, m.base, 0x80, m))
    for i, t in enumerate(world.processes[0].threads):
        out.append(Region("Stack", t.stack_limit, t.stack_base, 0x04, 0x20000, t.stack_limit, 0x04, more=(f"~{i}k",)))
        out.append(Region("TEB", t.teb, t.teb + 0x2000, 0x04, 0x20000, t.teb, 0x04, more=(f"~{i}s; !teb",)))
    out.append(Region("PEB", cat.PEB, cat.PEB + 0x1000, 0x04, 0x20000, cat.PEB, 0x04, more=("!peb",)))
    for h in cat.HEAPS:
        end = h.address + h.commit_kb * 1024
        out.append(Region("Heap", h.address, end, 0x04, 0x20000, h.address, 0x04,
                          more=(f"heap owning the address: !heap -s -h 0x{h.address:x}",)))  # fmt: skip
    return sorted(out, key=lambda r: r.base)


def region_at(world: World, addr: int) -> Region:
    """The region holding ``addr``; a free region between the neighbours where nothing is."""
    regions = _regions(world)
    for r in regions:
        if r.base <= addr < r.end:
            return r
    below = max((r.end for r in regions if r.end <= addr), default=0x10000)
    above = min((r.base for r in regions if r.base > addr), default=_TOP)
    return Region("Free", below, above, 0x01, 0)


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20)):
        if n >= scale:
            return f"{n / scale:8.3f} {unit}"
    return f"{n / 1024:8.3f} kB"


def address_text(world: World, addr: int) -> str:
    r = region_at(world, addr)
    states = {0: ("00010000", "MEM_FREE")}
    state, state_name = states.get(r.kind, ("00001000", "MEM_COMMIT"))
    out = f"\nUsage:                  {r.usage}\n"
    out += f"Base Address:           {fmt_addr(r.base)}\n"
    out += f"End Address:            {fmt_addr(r.end)}\n"
    out += f"Region Size:            {fmt_addr(r.end - r.base)} ({_size(r.end - r.base)})\n"
    out += f"State:                  {state}          {state_name}\n"
    out += f"Protect:                {r.protect:08x}          {_PROTECT[r.protect]}\n"
    if r.kind == 0:
        out += "Type:                   <info not present at the target>\n"
        return out + f"\n\nContent source: 0 (invalid), length: {r.end - addr:x}\n"
    kind_name = "MEM_IMAGE" if r.kind == 0x1000000 else "MEM_PRIVATE"
    out += f"Type:                   {r.kind:08x}          {kind_name}\n"
    out += f"Allocation Base:        {fmt_addr(r.allocation_base)}\n"
    out += f"Allocation Protect:     {r.allocation_protect:08x}          {_PROTECT[r.allocation_protect]}\n"
    if r.module is not None:
        m = r.module
        out += f"Image Path:             {m.image}\n"
        out += f"Module Name:            {m.name}\n"
        out += f"Loaded Image Name:      {m.path}\n"
        out += "Mapped Image Name:      \n"
        more: tuple[str, ...] = (f"lmv m {m.name}", f"!lmi {m.name}", f"ln 0x{addr:x}", f"!dh 0x{m.base:x}")
    else:
        more = r.more
    out += "".join(f"More info:              {line}\n" for line in more)
    return out + f"\n\nContent source: 1 (target), length: {r.end - addr:x}\n"
