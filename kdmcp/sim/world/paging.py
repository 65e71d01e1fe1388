"""The world's page tables: x64 four-level paging derived from what its memory maps.

kd's ``!pte`` finds a VA's PXE/PPE/PDE/PTE through the page-table self-map: one PML4 slot
points at the PML4 itself, so every paging entry has a virtual address computed from the VA
alone. Windows 10 randomises that slot per boot; this machine's is 0x1EC (``PXE at
FFFFF67B3D9ECF80`` for ``fffff800`62a05c20``), and every entry address below follows from it.

What an entry *contains* is derived, not stored: an entry is valid when the memory of the
world maps a page under it (a module image, a pool page, a kernel stack, a process's user
page), and its page frame number is a function of the VA (and the process's DirBase for the
user half), so the same VA always shows the same PFN. Kernel image pages are global and
executable, pool and stacks are no-execute data (as families/pte/03 shows pool), the user
half is user-mode. A VA nothing maps shows the first level that is not valid, as kd prints it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import KERNEL_SPACE, PAGE, Memory
from kdmcp.sim.world.model import Process

__all__ = ["LEVELS", "SELF_MAP", "Entry", "entry_addresses", "flags_text", "mapped_by", "walk"]

SELF_MAP = 0x1EC
PTE_BASE = 0xFFFF_0000_0000_0000 | SELF_MAP << 39
PDE_BASE = PTE_BASE + (SELF_MAP << 30)
PPE_BASE = PDE_BASE + (SELF_MAP << 21)
PXE_BASE = PPE_BASE + (SELF_MAP << 12)
LEVELS = ("PXE", "PPE", "PDE", "PTE")
_SHIFTS = (39, 30, 21, 12)
_BASES = (PXE_BASE, PPE_BASE, PDE_BASE, PTE_BASE)
_VA_MASK = (1 << 48) - 1
# entry bits: V W U PWT PCD A D PS G, bit 9 copy-on-write (software), bit 63 NX
_V, _W, _U, _T, _N, _A, _D, _L, _G, _C = (1 << b for b in range(10))
_NX = 1 << 63
_PFN_MASK = 0xF_FFFF_FFFF_F000
_TABLE_KERNEL = _V | _W | _A | _D  # 0x063 (the brief's "contains 0000000004F09063")
_TABLE_USER = _TABLE_KERNEL | _U  # 0x867 in families/pte/09, without the software bits


@dataclass(frozen=True)
class Entry:
    """One paging entry: its level, where it lives (in the self-map), what it holds."""

    level: str
    address: int
    value: int

    @property
    def valid(self) -> bool:
        return bool(self.value & _V)

    @property
    def pfn(self) -> int:
        return (self.value & _PFN_MASK) >> 12


def entry_addresses(va: int) -> list[int]:
    """The PXE, PPE, PDE and PTE addresses of ``va``, from the self-map alone."""
    return [_address_of(base, va, shift) for base, shift in zip(_BASES, _SHIFTS, strict=True)]


def mapped_by(address: int) -> int | None:
    """The VA a PTE address maps (kd: an argument in the PTE range is a PTE, not a VA); ``None``
    for an address outside the PTEs (the PDE, PPE and PXE ranges inside them are left as VAs)."""
    if not PTE_BASE <= address < PTE_BASE + (1 << 39) or PDE_BASE <= address < PDE_BASE + (1 << 30):
        return None
    va = ((address - PTE_BASE) >> 3) << 12
    return va | (0xFFFF_0000_0000_0000 if va >> 47 else 0)  # canonical: bit 47 extended


def _address_of(base: int, va: int, shift: int) -> int:
    return base + (((va & _VA_MASK) >> shift) << 3)


def flags_text(value: int) -> str:
    """kd's eleven flag columns: C G L D A N T K/U W/R E V (families/pte/03: ``-G-DA--KW-V``)."""
    return "".join(
        (
            "C" if value & _C else "-",
            "G" if value & _G else "-",
            "L" if value & _L else "-",
            "D" if value & _D else "-",
            "A" if value & _A else "-",
            "N" if value & _N else "-",
            "T" if value & _T else "-",
            "U" if value & _U else "K",
            "W" if value & _W else "R",
            "-" if value & _NX else "E",
            "V" if value & _V else "-",
        )
    )


def _pfn(*key: int) -> int:
    """A page frame number for ``key``, stable across runs, inside 5 GB of RAM."""
    return 0x1000 + zlib.crc32(repr(key).encode()) % 0x13E000


def _mapped(mem: Memory) -> tuple[set[int], list[tuple[int, int]]]:
    return set(mem.pages), [(lo, hi) for lo, hi, _fill in mem.zero]


def _covers(pages: set[int], ranges: list[tuple[int, int]], lo: int, hi: int) -> bool:
    """Whether any mapped page lies in ``[lo, hi)``."""
    if any(a < hi and lo < b for a, b in ranges):
        return True
    if hi - lo <= 16 * PAGE:
        return any(p in pages for p in range(lo, hi, PAGE))
    return any(lo <= p < hi for p in pages)


def walk(world: World, va: int, process: Process | None = None) -> list[Entry]:
    """The entries kd reads for ``va`` (kernel half: shared; user half: ``process``'s), top
    down, ending at the PTE or at the first entry that is not valid."""
    va &= (1 << 64) - 1
    proc = process or world.current_process()
    user = va < KERNEL_SPACE
    mem = world.space(proc).user if user else world.kernel
    pages, ranges = _mapped(mem)
    if user and proc.peb:  # the system DLLs are mapped in every process with a user half
        ranges += [(m.base, m.end) for m in world.user_modules]
    image = next((m for m in (world.user_modules if user else world.modules) if m.base <= va < m.end), None)
    out: list[Entry] = []
    for depth, (level, shift, base) in enumerate(zip(LEVELS, _SHIFTS, _BASES, strict=True)):
        region = 1 << shift
        start = va & ~(region - 1)
        covered = _covers(pages, ranges, start, start + region)
        at = _address_of(base, va, shift)
        if not covered:
            out.append(Entry(level, at, 0))
            break
        index = (va & _VA_MASK) >> shift
        if level != "PTE":
            if not user and level == "PXE":
                pfn = 0x4D19 + (index & 0x1FF)  # PML4 slot 0x1f0 (nt's) -> pfn 4f09
            else:
                pfn = _pfn(proc.dirbase if user else 0, depth, index)
            out.append(Entry(level, at, pfn << 12 | (_TABLE_USER if user else _TABLE_KERNEL)))
            continue
        if image is not None:
            # an image page: physically contiguous from the image's first frame, executable
            pfn = _pfn(image.base, 9) + ((va - image.base) >> 12)
            bits = _V | _A | (_U if user else _G)
        else:
            pfn = _pfn(proc.dirbase if user else 0, depth, index)
            bits = _V | _W | _A | _D | _NX | (_U if user else _G)
        out.append(Entry(level, at, pfn << 12 | bits))
    return out
