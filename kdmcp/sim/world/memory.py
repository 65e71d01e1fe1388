"""The simulated machine's memory: sparse pages, one kernel space and one user space per process.

Every command that shows bytes (``db``/``dq``, ``u``, ``dt``, ``dps``, ``!pool``) reads them
from here, and ``e*`` writes here, so two commands at one address can never disagree: that is
the whole point of the world (issue: "``db``, ``dq`` and ``u`` at one address show the same
bytes", "``eb`` then ``db`` shows the change").

Pages are 4 KiB, as on x64 Windows. A page that was never mapped is unreadable: kd shows it as
``??`` cells (``db``) and ``Memory access error at '...'`` (``e*``, ``dt``). Large regions
(module images, long routines) are filled lazily -- the bytes are produced on the first read of
a page -- so the simulator starts in well under its 0.3 s budget.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["KERNEL_SPACE", "PAGE", "AddressSpace", "Memory"]

PAGE = 0x1000
# x64: the kernel half of the address space (canonical addresses from 0xffff8000`00000000)
KERNEL_SPACE = 0xFFFF_8000_0000_0000
_MASK = (1 << 64) - 1

Filler = Callable[[], bytes]
Hook = Callable[[], None]


@dataclass
class _Lazy:
    """A region whose bytes are made on first use (a module image, a routine's code), or a hook
    that lays them itself (a pool page's other blocks)."""

    start: int
    size: int
    make: Filler | None = None
    hook: Hook | None = None
    done: bool = False  # settled (a region is listed under every page it touches)


@dataclass
class Memory:
    """One address space's pages; lazy regions materialise the pages they cover on first touch."""

    pages: dict[int, bytearray] = field(default_factory=dict)
    # page -> the lazy regions touching it: a read looks at its own pages' regions only (every
    # command reads memory, and the world defers hundreds of routines, stacks and pool pages)
    lazy: dict[int, list[_Lazy]] = field(default_factory=dict)
    # mapped, never written: (start, end, fill byte) -- zeros, or int 3 between routines
    zero: list[tuple[int, int, int]] = field(default_factory=list)

    def _fill(self, page: int) -> int | None:
        """The fill byte of the first range holding ``page``, ``None`` if none does."""
        return next((fill for lo, hi, fill in self.zero if lo <= page < hi), None)

    def map(self, addr: int, size: int, fill: int = 0) -> None:
        """Make ``[addr, addr+size)`` readable (zero-filled where nothing was written).

        Large ranges (a 16 MB kernel image) are kept as a range, not as pages, until written."""
        first, last = addr & ~(PAGE - 1), (addr + max(size, 1) - 1) & ~(PAGE - 1)
        if last - first >= 16 * PAGE or fill:
            self.zero.append((first, last + PAGE, fill))
            return
        for page in range(first, last + PAGE, PAGE):
            if page not in self.pages and self._fill(page) is None:  # a filled range makes its own
                self.pages[page] = bytearray(PAGE)

    def _page(self, page: int) -> bytearray | None:
        data = self.pages.get(page)
        if data is None and (fill := self._fill(page)) is not None:
            data = self.pages[page] = bytearray([fill]) * PAGE
        return data

    def load(self, addr: int, data: bytes) -> None:
        """Map and write: how the builder lays objects and code into memory."""
        self._put(addr, data)  # _put makes the pages it writes

    def defer(self, addr: int, size: int, make: Filler) -> None:
        """Map ``[addr, addr+size)`` now, write ``make()`` there when a page of it is first read."""
        self.map(addr, size)
        self._index(_Lazy(addr, size, make=make))

    def on_first_read(self, addr: int, size: int, hook: Hook) -> None:
        """Call ``hook`` (which writes what it must) the first time ``[addr, addr+size)`` is read."""
        self._index(_Lazy(addr, size, hook=hook))

    def absorb(self, other: Memory) -> None:
        """Take in another space's pages, ranges and lazy regions (a launch's images mapping in)."""
        self.pages.update(other.pages)
        self.zero.extend(other.zero)
        for page, regions in other.lazy.items():
            self.lazy.setdefault(page, []).extend(regions)

    def _index(self, region: _Lazy) -> None:
        first = region.start & ~(PAGE - 1)
        for page in range(first, region.start + max(region.size, 1), PAGE):
            self.lazy.setdefault(page, []).append(region)

    def _settle(self, addr: int, size: int) -> None:
        if not self.lazy:
            return
        end = addr + size
        for page in range(addr & ~(PAGE - 1), end, PAGE):
            regions = self.lazy.get(page)
            if not regions:
                continue
            for region in [r for r in regions if not r.done and r.start < end and addr < r.start + r.size]:
                region.done = True
                if region.hook is not None:
                    region.hook()
                elif region.make is not None:
                    self._put(region.start, region.make()[: region.size])
            remaining = [r for r in self.lazy.get(page, []) if not r.done]
            if remaining:
                self.lazy[page] = remaining
            else:
                self.lazy.pop(page, None)

    def _put(self, addr: int, data: bytes) -> None:
        pos = 0
        while pos < len(data):
            page, off = (addr + pos) & ~(PAGE - 1), (addr + pos) & (PAGE - 1)
            chunk = data[pos : pos + PAGE - off]
            target = self._page(page)
            if target is None:
                target = self.pages[page] = bytearray(PAGE)
            target[off : off + len(chunk)] = chunk
            pos += len(chunk)

    def readable(self, addr: int) -> bool:
        page = addr & ~(PAGE - 1)
        return page in self.pages or self._fill(page) is not None

    def cells(self, addr: int, size: int) -> list[int | None]:
        """Each byte of the range, ``None`` where the page is not mapped (kd's ``??``)."""
        self._settle(addr, size)
        out: list[int | None] = []
        pos = 0
        while pos < size:
            a = (addr + pos) & _MASK
            page, off = a & ~(PAGE - 1), a & (PAGE - 1)
            take = min(PAGE - off, size - pos)
            data = self.pages.get(page)
            if data is None and self.zero and (fill := self._fill(page)) is not None:
                data = bytearray([fill]) * PAGE  # read, not stored
            out.extend(data[off : off + take] if data is not None else [None] * take)
            pos += take
        return out

    def read(self, addr: int, size: int) -> bytes | None:
        """The bytes, or ``None`` if any of them is unreadable."""
        got = self.cells(addr, size)
        return None if None in got else bytes(b for b in got if b is not None)

    def write(self, addr: int, data: bytes) -> bool:
        """Write into mapped pages only (``e*``); ``False``, nothing written, where any is unmapped."""
        self._settle(addr, len(data))
        last = addr + max(len(data), 1) - 1
        if not all(self.readable(page) for page in range(addr & ~(PAGE - 1), last + 1, PAGE)):
            return False
        self._put(addr, data)
        return True


@dataclass
class AddressSpace:
    """What one process context sees: the shared kernel half and its own user half."""

    kernel: Memory
    user: Memory

    def _mem(self, addr: int) -> Memory:
        return self.kernel if addr >= KERNEL_SPACE else self.user

    def cells(self, addr: int, size: int) -> list[int | None]:
        if addr < KERNEL_SPACE <= addr + size - 1:  # a range across the halves
            cut = KERNEL_SPACE - addr
            return self.user.cells(addr, cut) + self.kernel.cells(KERNEL_SPACE, size - cut)
        return self._mem(addr).cells(addr, size)

    def read(self, addr: int, size: int) -> bytes | None:
        got = self.cells(addr, size)
        return None if None in got else bytes(b for b in got if b is not None)

    def write(self, addr: int, data: bytes) -> bool:
        return self._mem(addr).write(addr, data)

    def readable(self, addr: int) -> bool:
        return self._mem(addr).readable(addr)

    def u8(self, addr: int) -> int | None:
        return self._unpack("<B", addr, 1)

    def u16(self, addr: int) -> int | None:
        return self._unpack("<H", addr, 2)

    def u32(self, addr: int) -> int | None:
        return self._unpack("<I", addr, 4)

    def u64(self, addr: int) -> int | None:
        return self._unpack("<Q", addr, 8)

    def _unpack(self, fmt: str, addr: int, size: int) -> int | None:
        data = self.read(addr, size)
        return None if data is None else int(struct.unpack(fmt, data)[0])
