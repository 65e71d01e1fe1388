"""Handle tables: each process's handles, generated on demand and the same every run.

A default world has some 20 000 handles (System alone has 2651): far too many to build at
start-up for the few sessions that ask. So a table is a function, not a list: handle ``4*i``
of a table is made from the seed, the table's address and ``i`` alone (its own SplitMix64
stream), so ``!handle 44`` and the 0x11th row of ``!handle`` agree without either having made
the other; the Idle process, which shares System's table, shows System's handles. The entry
count is the process's ``HandleCount`` (``!process 0 0``); values run 4, 8, 0xc... with no
gaps, and the table's pages of 256 entries (4 KiB of 16-byte entries, entry 0 reserved) sit in
paged pool at addresses derived from the table.

What a handle refers to is real where the world has it: Process and Thread handles point at
the world's EPROCESS/ETHREAD bodies, a process's Token handle at its own token, and the test
client's handle to ``\\Device\\Myfault`` at the FILE_OBJECT its pending IRP carries.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Process

__all__ = [
    "ROOT_DIRECTORY",
    "TYPE_OBJECTS",
    "HandleInfo",
    "decode_entry",
    "encode_entry",
    "entry_address",
    "handle",
    "lay_tables",
    "table_allocations",
    "table_pages",
]

OBJECT_HEADER = 0x30
T = TypeVar("T")
ENTRIES_PER_PAGE = 256  # a 4 KiB table page of 16-byte HANDLE_TABLE_ENTRYs
TABLE_PAGES = 0xFFFFB28D64000000  # the tables' pages: 64 KiB per table, in paged pool
ROOT_DIRECTORY = 0xFFFFB28D4B815E40  # "\" (ObpRootDirectoryObject's object)
_BASE_NAMED = {None: 0xFFFFB28D4B8F3A20, 0: 0xFFFFB28D4B8F3A20, 1: 0xFFFFB28D4D40C960}  # by session
# the OBJECT_TYPE of each kind (Type: (ffffe70f28a96d20) Event)
_TYPE_NAMES = ("Directory", "Token", "Process", "Thread", "Event", "Mutant", "Section", "Key", "File", "ALPC Port")
TYPE_OBJECTS: dict[str, int] = {name: 0xFFFFE70F28A96000 + 0x1A0 * i for i, name in enumerate(_TYPE_NAMES)}
# type -> (weight, granted access masks)
_KINDS: dict[str, tuple[int, tuple[int, ...]]] = {
    "Event": (26, (0x1F0003, 0x100002, 0x1F0003)),
    "File": (16, (0x100001, 0x12019F, 0x100020, 0x120089)),
    "Key": (14, (0x20019, 0xF003F, 0x20019, 0x1)),
    "ALPC Port": (8, (0x1F0001,)),
    "Section": (6, (0x4, 0xF0007, 0x6)),
    "Mutant": (6, (0x1F0001, 0x100000)),
    "Thread": (9, (0x1FFFFF, 0x1402, 0x101000)),
    "Process": (4, (0x1FFFFF, 0x1478, 0x101000)),
    "Directory": (4, (0x3, 0xF)),
    "Token": (3, (0x8, 0xF01FF, 0xA)),
}
# each kind repeated by its weight: one draw picks a kind with its odds
_KIND_DRAW = tuple(name for name, (weight, _) in _KINDS.items() for _ in range(weight))
_FIRST = {4: "Event", 8: "Directory", 0xC: "File", 0x10: "Key", 0x24: "Process"}
_FILES = (
    "\\Windows\\System32 {HarddiskVolume3}",
    "\\Windows\\System32\\en-US\\KernelBase.dll.mui {HarddiskVolume3}",
    "\\Windows\\System32\\en-US\\user32.dll.mui {HarddiskVolume3}",
    "\\Windows\\Fonts\\StaticCache.dat {HarddiskVolume3}",
    "\\Windows\\Registration\\R000000000006.clb {HarddiskVolume3}",
    "\\ProgramData\\Microsoft\\Windows\\Caches\\cversions.2.db {HarddiskVolume3}",
    "\\Windows\\System32\\config\\systemprofile\\AppData\\Local\\Microsoft\\Windows\\Caches {HarddiskVolume3}",
    "\\Endpoint {AFD}",
    "\\Reference {ConDrv}",
    "\\Connect {ConDrv}",
    "\\Input {ConDrv}",
    "\\Output {ConDrv}",
    "\\Windows\\WinSxS\\amd64_microsoft.windows.common-controls_6595b64144ccf1df_6.0.19041.1110_none {HarddiskVolume3}",
)
_KEYS = (
    "\\REGISTRY\\MACHINE",
    "\\REGISTRY\\MACHINE\\SYSTEM\\ControlSet001\\Control\\Nls\\Sorting\\Versions",
    "\\REGISTRY\\MACHINE\\SYSTEM\\ControlSet001\\Control\\Session Manager",
    "\\REGISTRY\\MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Image File Execution Options",
    "\\REGISTRY\\MACHINE\\SOFTWARE\\Microsoft\\Ole",
    "\\REGISTRY\\MACHINE\\SOFTWARE\\Classes",
    "\\REGISTRY\\USER\\.DEFAULT\\Software\\Classes\\Local Settings\\Software\\Microsoft",
    "\\REGISTRY\\MACHINE\\SYSTEM\\ControlSet001\\Services\\WinSock2\\Parameters\\Protocol_Catalog9",
    "\\REGISTRY\\MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Explorer\\FolderDescriptions",
)
_NAMED = (
    "CTF.TimListCache.FMPDefaultS-1-5-21",
    "MSCTF.Shared.MUTEX.IL",
    "Local\\SM0:1264:304:WilStaging_02",
    "TermSrvReadyEvent",
    "ShellReadyEvent",
    "__ComCatalogCache__",
    "MicrosoftWindows.Mutex.DiagTrack",
)


_M64 = (1 << 64) - 1


class _Rng:
    """SplitMix64 over the key's integers: a handle's numbers in a few microseconds (a
    ``random.Random`` costs more to seed than the handle to make, and !poolused makes 20 000)."""

    def __init__(self, *key: int) -> None:
        state = 0x9E3779B97F4A7C15
        for k in key:
            state = self._mix(state ^ (k & _M64))
        self.state = state

    @staticmethod
    def _mix(z: int) -> int:
        z = (z + 0x9E3779B97F4A7C15) & _M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        self.state = self._mix(self.state)
        return self.state % n

    def random(self) -> float:
        return self.below(1 << 53) / (1 << 53)

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]


@dataclass(frozen=True)
class HandleInfo:
    """One handle as kd's ``!handle`` shows it, entry and object block."""

    value: int
    object: int
    type: str
    access: int
    attributes: tuple[str, ...]  # "Protected", "Inherit", "Audit"
    entry: int
    handle_count: int
    pointer_count: int
    directory: int | None = None  # None: no name line (an unnamed object)
    name: str = ""

    @property
    def header(self) -> int:
        return self.object - OBJECT_HEADER


def table_pages(world: World, proc: Process) -> list[int]:
    """The addresses of the process's table pages (level 0), enough for its HandleCount: 64 KiB
    of paged pool per table, by the table's index (so no two tables share a page)."""
    count = (proc.handle_count + 1 + ENTRIES_PER_PAGE - 1) // ENTRIES_PER_PAGE or 1
    # keyed by the table, not the process: the Idle process shares System's table
    base = TABLE_PAGES + 0x10000 * table_index(world, proc.object_table)
    return [base + 0x1000 * k for k in range(count)]


def entry_address(world: World, proc: Process, value: int) -> int:
    """Where handle ``value``'s 16-byte entry is: its page of 256, then its place in it."""
    index = value // 4
    pages = table_pages(world, proc)
    return pages[min(index // ENTRIES_PER_PAGE, len(pages) - 1)] + 16 * (index % ENTRIES_PER_PAGE)


# Objects the world does not model (events, files, keys...) live in slots: each table has a 2 MB
# region of 0x200-byte slots in each pool, one per handle value, the object's pool block at the
# slot's start (_POOL_HEADER, _OBJECT_HEADER, then the body) -- so the object of handle 0x44 of
# a table, and the pool block !pool finds around it, follow from the two numbers alone.
OBJECT_REGIONS = {False: 0xFFFFE70F38000000, True: 0xFFFFB28D58000000}  # by paged
REGION_SIZE, SLOT = 0x200000, 0x200
PAGED_TYPES = frozenset({"Key", "Section", "Directory", "Token"})


@dataclass
class _Tables:
    """What the handle tables derive from a world once (its ``state_of``)."""

    index: dict[int, int] | None = None  # each table's place among the world's tables
    laid: bool = False  # the tables are in memory (lay_tables)


def table_index(world: World, table: int) -> int:
    """The table's place among the world's tables (the Idle process shares System's)."""
    tables = world.state_of(_Tables)
    if tables.index is None:
        tables.index = {}
        for p in world.processes:
            tables.index.setdefault(p.object_table, len(tables.index))
    return tables.index.get(table, 0)


def slot_object(world: World, table: int, value: int, paged: bool) -> int:
    """The body address of the object in handle ``value``'s slot of ``table``."""
    base = OBJECT_REGIONS[paged] + REGION_SIZE * table_index(world, table)
    return base + SLOT * (value // 4) + 0x10 + OBJECT_HEADER


def handle(world: World, proc: Process, value: int) -> HandleInfo | None:
    """Handle ``value`` of ``proc``, or ``None`` if the table has no such entry in use."""
    if value <= 0 or value % 4 or value // 4 > proc.handle_count:
        return None
    return _make(world, proc.address, value)


def _make(world: World, proc_addr: int, value: int) -> HandleInfo:
    proc = world.process(proc_addr)
    assert proc is not None
    r = _Rng(world.seed, proc.object_table, value)
    # the handles every process opens first (an event, \\KnownDlls, its current directory...)
    kind = _FIRST.get(value) or r.choice(_KIND_DRAW)
    access = r.choice(_KINDS[kind][1])
    attributes = tuple(a for a, p in (("Protected", 0.04), ("Inherit", 0.08), ("Audit", 0.02)) if r.random() < p)
    handles = 1 + (r.random() < 0.3) + (r.random() < 0.1)
    pointers = handles * 32768 - r.below(64)
    directory: int | None = None
    name = ""
    obj = slot_object(world, proc.object_table, value, kind in PAGED_TYPES)
    if kind == "Process":
        obj = r.choice(world.processes).address if value != 4 * 9 else proc.address
    elif kind == "Thread":
        pool = proc.threads or world.idle_process.threads
        obj = r.choice(pool).address
    elif kind == "Token":
        obj = proc.token & ~0xF
    elif kind == "File":
        directory, name = 0, r.choice(_FILES)
        client = _client_file(world, proc, value)
        if client is not None:
            obj, name = client, "\\ {Myfault}"
    elif kind == "Key":
        directory, name = 0, r.choice(_KEYS)
    elif kind == "Directory":
        if value == 8:
            directory, name = ROOT_DIRECTORY, "KnownDlls"
        else:
            directory, name = ROOT_DIRECTORY, "BaseNamedObjects" if proc.session in (None, 0) else "Sessions"
    elif kind in ("Event", "Mutant", "Section") and r.random() < 0.3:
        directory, name = _BASE_NAMED.get(proc.session, _BASE_NAMED[1]), r.choice(_NAMED)
    return HandleInfo(
        value, obj, kind, access, attributes, entry_address(world, proc, value), handles, pointers, directory, name
    )


def _client_file(world: World, proc: Process, value: int) -> int | None:
    """The test client's handle to \\Device\\Myfault: the FILE_OBJECT its pending IRP names."""
    if value != 0xC or not world.irps:
        return None
    irp = world.irps[0]
    owner = world.thread(irp.thread)
    if owner is None or owner.process != proc.address:
        return None
    return irp.stacks[0].file


# --------------------------------------------------------------------------- the tables in memory
#
# Windows 10's HANDLE_TABLE_ENTRY (x64, 16 bytes): the low quadword is Unlocked (bit 0), RefCnt
# (bits 1-16), Attributes (17-19) and ObjectPointerBits (20-63: the OBJECT_HEADER's address
# without its low 4 and high 16 bits); the high quadword's low 25 bits are GrantedAccessBits.
# A free entry holds the next free handle in its high quadword. HANDLE_TABLE.TableCode is the
# level-0 page itself, or a level-1 page of pointers to them with 1 in its low bits.

_ATTRIBUTE_BITS = {"Protected": 1, "Inherit": 2, "Audit": 4}
_LEVEL1 = 0xF000  # the level-1 page, after at most 15 level-0 pages


def encode_entry(h: HandleInfo) -> bytes:
    attributes = sum(_ATTRIBUTE_BITS[a] for a in h.attributes)
    low = (((h.header & 0xFFFF_FFFF_FFFF) >> 4) << 20) | attributes << 17 | 1
    return struct.pack("<QQ", low, h.access & 0x1FFFFFF)


def decode_entry(data: bytes) -> tuple[int, int] | None:
    """(object header, granted access) of an entry in use; ``None`` for a free one."""
    low, high = struct.unpack("<QQ", data[:16])
    if not low & 1 and not low >> 20:
        return None
    return ((low >> 20) << 4) | 0xFFFF_0000_0000_0000, high & 0x1FFFFFF


def _page_maker(world: World, proc: Process, k: int) -> Callable[[], bytes]:
    def make() -> bytes:
        out = bytearray(0x1000)
        last = len(table_pages(world, proc)) * ENTRIES_PER_PAGE * 4
        for i in range(ENTRIES_PER_PAGE):
            value = 4 * (k * ENTRIES_PER_PAGE + i)
            h = handle(world, proc, value)
            if h is not None:
                out[16 * i : 16 * i + 16] = encode_entry(h)
            elif value:  # entry 0 stays reserved (all zero)
                out[16 * i + 8 : 16 * i + 16] = struct.pack("<Q", value + 4 if value + 4 < last else 0)
        return bytes(out)

    return make


def table_allocations(world: World) -> list[int]:
    """Every table's pages (level 0, and the level-1 page of a two-level table): each one a
    4 KiB large-pool allocation, as ``!pool`` and ``!poolfind Obtb`` report them."""
    out: list[int] = []
    seen: set[int] = set()
    for proc in world.processes:
        if proc.object_table in seen:
            continue
        seen.add(proc.object_table)
        pages = table_pages(world, proc)
        out += pages
        if len(pages) > 1:
            out.append((pages[0] & ~0xFFFF) + _LEVEL1)
    return out


def lay_tables(world: World) -> None:
    """Put every process's handle table into memory: the HANDLE_TABLE fields ``dt`` shows and
    the entry pages, made when first read. Once per world; the builder may call it at build."""
    tables = world.state_of(_Tables)
    if tables.laid:
        return
    tables.laid = True
    done: set[int] = set()
    for proc in world.processes:  # the Idle process shares System's table
        if proc.object_table in done:
            continue
        done.add(proc.object_table)
        pages = table_pages(world, proc)
        code = pages[0]
        if len(pages) > 1:
            code = (pages[0] & ~0xFFFF) + _LEVEL1
            world.kernel.load(code, struct.pack(f"<{len(pages)}Q", *pages))
            code |= 1
        fields = struct.pack("<IiQQ", len(pages) * ENTRIES_PER_PAGE * 4, 0, code, proc.address if proc.pid != 4 else 0)
        world.kernel.load(proc.object_table, fields)
        world.kernel.load(proc.object_table + 0x28, struct.pack("<I", proc.pid))
        for k, page in enumerate(pages):
            world.kernel.defer(page, 0x1000, _page_maker(world, proc, k))
