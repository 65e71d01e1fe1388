"""A real user-mode minidump behind the simulated ``cdb -z``: what cdb reports of it, read with
the ``minidump`` package (PyPI, MIT).

The simulator answered ``-z`` with one canned crash whatever the file held. Given a file that
is a minidump (it starts with ``MDMP``), the simulated cdb now reads it and answers from it:
the load banner (dump kind, OS line, the stored exception), ``lm`` (its module list), ``~``
(its threads, the event thread current) and ``.exr -1`` (its exception record), in the layouts
cdb prints (the shared corpus and the published samples in ``fixtures/corpus/families``):

- ``lm``: ``start    end        module name`` then ``00400000 0042d000   Prymes     (deferred)``
  (x86), ``00007ff7`863b0000 00007ff7`863d2000   WindowDemo   (deferred)`` (x64);
- ``~``: ``.  0  Id: 7a0.5ac Suspend: 1 Teb: 7ffdf000 Unfrozen``;
- ``.exr -1``: ``ExceptionAddress: 0090a6cd (crashme+0x0000a6cd)``, ``ExceptionCode: c0000005
  (Access violation)``, the flags, parameters and, for an access violation, ``Attempt to read
  from address 00000000``.

Symbols are not modelled: an address inside a module is named ``module+0xoffset``, as cdb
names it with no symbols loaded. The threads' register contexts (``r``, ``~Ns``, ``.ecxr``, ``k``)
are read and printed by :mod:`kdmcp.sim.minidump_context`; this module only locates them.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minidump.minidumpfile import MinidumpFile

    from kdmcp.sim.world.user_handles import UserHandle

__all__ = ["DumpModule", "DumpThread", "MemoryView", "MinidumpTarget", "duration", "is_minidump", "session_time"]

# cdb's names for the exception codes these dumps hold (".exr", the event line)
CODE_NAMES = {
    0xC0000005: "Access violation",
    0xC00000FD: "Stack overflow",
    0xC0000409: "Security check failure or stack buffer overrun",
    0x80000003: "Break instruction exception",
    0xC0000094: "Integer divide-by-zero",
    0xC000001D: "Illegal instruction",
}
# An access violation's first parameter: "Attempt to read from / write to address ..."
ACCESS = {0: "read from", 1: "write to", 8: "execute"}
_X86_LM_HEAD = "start    end        module name\n"
# MINIDUMP_HEADER (minidumpapiset.h): Signature, Version, NumberOfStreams, StreamDirectoryRva,
# CheckSum, TimeDateStamp (a time_t), Flags (ULONG64). The ``minidump`` package reads a
# "Reserved" ULONG before TimeDateStamp that the header does not have, so its TimeDateStamp is
# the low half of Flags: the time is read here, from offset 20.
_HEADER = struct.Struct("<4sIIIII")
_MISC_INFO_STREAM = 15  # MiscInfoStream
# MINIDUMP_MISC_INFO.Flags1 bits (minidumpapiset.h): which of its fields hold data
_MISC1_PROCESS_TIMES = 0x2
_MISC4_BUILDSTRING = 0x100
_MISC_BUILD_STRING = slice(232, 232 + 520)  # MINIDUMP_MISC_INFO_4.BuildString: WCHAR[260]
# SYSTEM_INFO's ProductType as vertarget names it ("Product: WinNt, suite: ...", "Product: Server")
_PRODUCTS = {1: "WinNt", 2: "LanManNt", 3: "Server"}
# SuiteMask bits (VER_SUITE_*, winnt.h) in bit order, as vertarget lists them: 0x190 prints
# "suite: TerminalServer DataCenter SingleUserTS" (cdb's version on Server 2019, rust-lang CI logs)
_SUITES = (
    "SmallBusiness", "Enterprise", "BackOffice", "CommunicationServer", "TerminalServer",
    "SmallBusinessRestricted", "EmbeddedNT", "DataCenter", "SingleUserTS", "Personal", "Blade",
    "EmbeddedRestricted", "SecurityAppliance", "StorageServer", "ComputeServer", "WHServer",
)  # fmt: skip
_DEFERRED = "(deferred)             "  # cdb pads the symbol column with blanks


def is_minidump(path: str) -> bool:
    """Whether ``path`` is a minidump file (``MINIDUMP_HEADER.Signature`` is ``MDMP``)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"MDMP"
    except OSError:
        return False


@dataclass(frozen=True)
class DumpModule:
    """One module of the dump's module list."""

    base: int
    end: int
    name: str  # cdb's module name: the file name without extension, odd characters as '_'
    path: str


@dataclass(frozen=True)
class DumpThread:
    """One thread of the dump's thread list."""

    index: int
    tid: int
    suspend: int
    teb: int
    context: tuple[int, int] = (0, 0)  # its CONTEXT record: (rva, size) in the file
    stack: tuple[int, int] = (0, 0)  # its stack memory: [start, end)


class MinidumpTarget:
    """The dump as cdb sees it: system, modules, threads, the stored exception."""

    def __init__(self, path: str) -> None:
        # a third-party reader, loaded only for -z: some 7 ms of imports every other start would pay
        from minidump.minidumpfile import MinidumpFile

        # the package logs a traceback at ERROR when a dump holds no PEB (a small minidump
        # does not): not the debugger's output, so it is kept off the console
        previous = logging.root.manager.disable
        logging.disable(logging.CRITICAL)
        try:
            # read whole, then parsed from memory: ``parse(path)`` leaves its file open
            data = Path(path).read_bytes()
            dump = MinidumpFile.parse_bytes(data)
        finally:
            logging.disable(previous)
        self.path = path
        self.symbol_path = ["srv*"]  # the banner's, then .sympath's (kdmcp/sim/minidump_symbols.py)
        # MINIDUMP_HANDLE_DATA_STREAM's descriptors, for !handle; None: the dump has no such stream
        self.handles = _handles(dump)
        info = dump.sysinfo
        self.x64 = info.ProcessorArchitecture.name == "AMD64"
        self.build = int(info.BuildNumber)
        self.version = (int(info.MajorVersion), int(info.MinorVersion))
        self.processors = int(info.NumberOfProcessors)
        self.pid = int(dump.misc_info.ProcessId) if dump.misc_info is not None else 0
        self.service_pack = str(info.CSDVersion or "")
        self.product = int(getattr(info.ProductType, "value", info.ProductType) or 0)
        self.suite_mask = int(info.SuiteMask or 0)
        self.time_date_stamp = _HEADER.unpack_from(data)[5]
        self.process_create_time, self.build_string = _misc_times(data)
        self.full_memory = dump.memory_segments_64 is not None
        modules = dump.modules.modules if dump.modules is not None else []
        self.modules = sorted(
            (DumpModule(m.baseaddress, m.baseaddress + m.size, _module_name(m.name), m.name) for m in modules),
            key=lambda m: m.base,
        )
        threads = dump.threads.threads if dump.threads is not None else []
        self.threads = [
            DumpThread(
                i,
                t.ThreadId,
                t.SuspendCount,
                t.Teb,
                (t.ThreadContext.Rva, t.ThreadContext.DataSize),
                (t.Stack.StartOfMemoryRange, t.Stack.StartOfMemoryRange + t.Stack.DataSize),
            )
            for i, t in enumerate(threads)
        ]
        # the memory the dump holds: (start, end, file offset) of each range, and the file's bytes
        self.data: bytes = data
        ranges = dump.memory_segments.memory_segments if dump.memory_segments is not None else []
        self.ranges: list[tuple[int, int, int]] = sorted(
            (r.start_virtual_address, r.start_virtual_address + r.size, r.start_file_address) for r in ranges
        )
        self.image = modules[0].name if modules else ""
        self.exception = None
        if dump.exception is not None and dump.exception.exception_records:
            self.exception = dump.exception.exception_records[0]
        # the exception stream's own CONTEXT (what .ecxr shows), and the thread .ecxr set it on
        self.exception_context: tuple[int, int] | None = None
        if self.exception is not None:
            self.exception_context = (self.exception.ThreadContext.Rva, self.exception.ThreadContext.DataSize)
        self.ecxr_thread: int | None = None
        self.event_index = 0
        if self.exception is not None:
            for t in self.threads:
                if t.tid == self.exception.ThreadId:
                    self.event_index = t.index

    # ------------------------------------------------------------------ helpers

    def addr(self, value: int, tick: bool = True) -> str:
        if not self.x64:
            return f"{value:08x}"
        text = f"{value:016x}"
        return f"{text[:8]}`{text[8:]}" if tick else text

    def _where(self, address: int) -> str:
        for m in self.modules:
            if m.base <= address < m.end:
                width = 16 if self.x64 else 8
                return f"{m.name}+0x{address - m.base:0{width}x}"
        return self.addr(address, tick=False)

    def os_name(self) -> str:
        """``Windows 7``: the name vertarget's OS line starts with, by the system's version."""
        names = {(5, 1): "XP", (5, 2): "Server 2003", (6, 0): "Vista", (6, 1): "7", (6, 2): "8", (6, 3): "8.1"}
        return "Windows " + names.get(self.version, "10")

    def _os_line(self) -> str:
        """``Windows 7 Version 7601 (Service Pack 1) MP (4 procs) Free x86 compatible``; a
        uniprocessor target is ``UP`` with no count (``Windows 7 Version 7601 (Service Pack 1) UP
        Free x64``, a published ``version``; corpus misc/15 ``Windows XP Kernel Version 2505 UP Free``)."""
        arch = "x64" if self.x64 else "x86 compatible"
        mp = f"MP ({self.processors} procs)" if self.processors > 1 else "UP"
        sp = f" ({self.service_pack})" if self.service_pack else ""
        return f"{self.os_name()} Version {self.build}{sp} {mp} Free {arch}\n"

    def system_block(self) -> str:
        """What ``vertarget`` prints for the dump, and cdb's load banner after the search paths.

        Published user-minidump loads (cdb 10.0.19041.685, pjsip's crash triage; a Windows 7
        notepad++ minidump)::

            Windows 10 Version 19045 MP (4 procs) Free x86 compatible
            Product: WinNt, suite: SingleUserTS
            19041.1.amd64fre.vb_release.191206-1406
            Machine Name:
            Debug session time: Tue Feb  4 09:51:15.000 2025 (UTC + 7:00)
            System Uptime: not available
            Process Uptime: 0 days 0:00:06.000

        The build lab comes from ``MINIDUMP_MISC_INFO_4.BuildString`` (current cdb labels it
        ``Edition build lab:``, as its ``version`` does); no line without one. dbgeng's
        ``OutputTime`` prints the session time only when the target has one (the header's
        TimeDateStamp), and "not available" for an uptime it cannot compute: a minidump records
        no boot time, and the process uptime is the dump's time less
        ``MINIDUMP_MISC_INFO.ProcessCreateTime`` (when Flags1 says the process times are there).
        The session time is printed in the simulated host's zone, UTC.
        """
        suites = " ".join(name for bit, name in enumerate(_SUITES) if self.suite_mask >> bit & 1)
        product = _PRODUCTS.get(self.product, "WinNt")
        lines = [self._os_line(), f"Product: {product}, suite: {suites}".rstrip() + "\n"]
        if self.build_string:
            lines.append(f"Edition build lab: {self.build_string}\n")
        lines.append("Machine Name:\n")
        if self.time_date_stamp:
            lines.append(f"Debug session time: {session_time(self.time_date_stamp)}\n")
        lines.append("System Uptime: not available\n")
        uptime = self.time_date_stamp - self.process_create_time if self.process_create_time else 0
        if self.time_date_stamp and uptime > 0:
            lines.append(f"Process Uptime: {duration(uptime * 1000)}\n")
        else:
            lines.append("Process Uptime: not available\n")
        return "".join(lines)

    # ------------------------------------------------------------------ what cdb prints

    def banner(self, version_banner: str, symbol_path: str | None) -> str:
        """From ``Loading Dump File`` to the stored exception's event line."""
        kind = (
            "User Mini Dump File with Full Memory: Only application data is available"
            if self.full_memory
            else "User Mini Dump File: Only registers, stack and portions of memory are available"
        )
        self.symbol_path = [p for p in (symbol_path or "srv*").split(";") if p]
        text = (
            version_banner
            + f"\nLoading Dump File [{self.path}]\n{kind}\n\n"
            + f"Symbol search path is: {symbol_path or 'srv*'}\nExecutable search path is: \n"
            + self.system_block()
        )
        if self.exception is None:
            return text
        record = self.exception.ExceptionRecord
        code = record.ExceptionCode_raw
        name = CODE_NAMES.get(code, "Unknown exception")
        return (
            text
            + "This dump file has an exception of interest stored in it.\n"
            + "The stored exception information can be accessed via .ecxr.\n"
            + f"({self.pid:x}.{self.exception.ThreadId:x}): {name} - code {code:08x} "
            + "(first/second chance not available)\n"
        )

    def lm(self) -> str:
        """``lm``: every module, by address, symbols deferred."""
        head = "start             end                 module name\n" if self.x64 else _X86_LM_HEAD
        rows = [f"{self.addr(m.base)} {self.addr(m.end)}   {m.name:<8}   {_DEFERRED}\n" for m in self.modules]
        return head + "".join(rows)

    def thread_list(self, current: int) -> str:
        """``~``: each thread with its id, suspend count and TEB; ``.`` marks the current one,
        ``#`` the event thread when it is another."""
        lines = []
        for t in self.threads:
            mark = "." if t.index == current else "#" if t.index == self.event_index else " "
            ids = f"{self.pid:x}.{t.tid:x}"
            lines.append(f"{mark}{t.index:>3}  Id: {ids} Suspend: {t.suspend} Teb: {self.addr(t.teb)} Unfrozen\n")
        return "".join(lines)

    def process_list(self) -> str:
        """``|``: the dump's one process, as cdb lists a dump's (tab-separated, "examine")."""
        return f".  0\tid: {self.pid:x}\texamine\tname: {self.image}\n"

    def exception_record(self) -> str:
        """``.exr -1``: the stored exception; cdb's complaint when the dump holds none."""
        if self.exception is None:
            return "Last event was not an exception\n"
        r = self.exception.ExceptionRecord
        code = r.ExceptionCode_raw
        params = list(r.ExceptionInformation)[: r.NumberParameters]
        lines = [
            f"ExceptionAddress: {self.addr(r.ExceptionAddress, tick=False)} ({self._where(r.ExceptionAddress)})\n",
            f"   ExceptionCode: {code:08x} ({CODE_NAMES.get(code, 'Unknown exception')})\n",
            f"  ExceptionFlags: {r.ExceptionFlags:08x}\n",
            f"NumberParameters: {r.NumberParameters}\n",
        ]
        lines += [f"   Parameter[{i}]: {self.addr(p, tick=False)}\n" for i, p in enumerate(params)]
        if code == 0xC0000005 and len(params) >= 2 and params[0] in ACCESS:
            lines.append(f"Attempt to {ACCESS[params[0]]} address {self.addr(params[1], tick=False)}\n")
        return "".join(lines)


_DUMP_RE = re.compile(r"d(?P<unit>[bdqpau])\s+(?P<addr>\S+)(?:\s+[Ll]\s*(?P<count>(?:0x)?[0-9a-fA-F]+))?\s*$")
# da / du: 32 characters a line, to the terminating NUL; what the dump lacks reads "?" and does
# not end the string -- a 32-bit dump's "da 56454aec+8" published on Stack Overflow (question
# 9095898) shows 12 lines of 32 "?" each, the length used here when no "L" count is given
_STRING_ROW = 32
_STRING_ROWS = 12
_ROWS = 8  # cdb's default display: 8 lines (128 bytes of db, 32 dwords of dd, 16 qwords of dq)


class MemoryView:
    """``db``/``dd``/``dq``/``dp`` over the memory a dump holds: what is absent reads ``??``.

    cdb prints "????????" for each cell it cannot read (a minidump keeps only stacks and a few
    ranges) and an address expression it cannot evaluate is "Couldn't resolve error at '...'".
    """

    def __init__(self, target: MinidumpTarget, registers: dict[str, int] | None = None) -> None:
        self.t = target
        # the current register context, for "dd esp" / "db @rsp+10" (MASM reads a register by name)
        self.registers = registers or {}

    def byte(self, address: int) -> int | None:
        for start, end, offset in self.t.ranges:
            if start <= address < end:
                return self.t.data[offset + address - start]
            if start > address:
                break
        return None

    def resolve(self, text: str) -> int | None:
        """A hex address (``0x`` and a backtick allowed), a register, or ``module`` / ``module+offset``."""
        name, _, offset = text.replace("`", "").partition("+")
        register = name.lower().removeprefix("@")
        try:
            base = self.registers[register] if register in self.registers else int(name, 16)
        except ValueError:
            found = [m.base for m in self.t.modules if m.name.lower() == name.lower()]
            if not found:
                return None
            base = found[0]
        try:
            return base + (int(offset, 16) if offset else 0)
        except ValueError:
            return None

    def display(self, command: str) -> str | None:
        """The dump of a ``d*`` command; ``None``: not one this view answers."""
        m = _DUMP_RE.fullmatch(command.strip())
        if m is None:
            return None
        unit = m.group("unit")
        if unit in "au":
            return self._strings(m.group("addr"), 2 if unit == "u" else 1, m.group("count"))
        size = {"b": 1, "d": 4, "q": 8, "p": 8 if self.t.x64 else 4}[unit]
        address = self.resolve(m.group("addr"))
        if address is None:
            return f"Couldn't resolve error at '{m.group('addr')}'\n"
        per_row = 16 // size if size > 1 else 16
        count = int(m.group("count"), 16) if m.group("count") else _ROWS * per_row
        rows = []
        for first in range(0, count, per_row):
            n = min(per_row, count - first)
            at = address + first * size
            cells = [self._cell(at + i * size, size) for i in range(n)]
            if size == 1:
                rows.append(self._byte_row(at, cells))
            else:
                rows.append(f"{self.t.addr(at)}  {' '.join(cells)}\n")
        return "".join(rows)

    def _strings(self, where: str, width: int, count: str | None) -> str:
        """``da`` (``width`` 1) / ``du`` (2): ``address  "text"`` lines, nonprintable characters as ``.``."""
        address = self.resolve(where)
        if address is None:
            return f"Couldn't resolve error at '{where}'\n"
        limit = int(count, 16) if count else _STRING_ROW * _STRING_ROWS
        chars: list[str] = []
        for i in range(limit):
            raw = [self.byte(address + i * width + k) for k in range(width)]
            if any(b is None for b in raw):
                chars.append("?")
                continue
            code = int.from_bytes(bytes(b for b in raw if b is not None), "little")
            if code == 0:
                break
            chars.append(chr(code) if 0x20 <= code < 0x7F or (width == 2 and code > 0xA0) else ".")
        rows = [chars[i : i + _STRING_ROW] for i in range(0, len(chars), _STRING_ROW)] or [[]]
        step = _STRING_ROW * width
        return "".join(f'{self.t.addr(address + n * step)}  "{"".join(row)}"\n' for n, row in enumerate(rows))

    def _cell(self, address: int, size: int) -> str:
        raw = [self.byte(address + i) for i in range(size)]
        if any(b is None for b in raw):
            return "??" if size == 1 else "????????`????????" if size == 8 else "?" * (2 * size)
        value = int.from_bytes(bytes(b for b in raw if b is not None), "little")
        if size == 8:
            text = f"{value:016x}"
            return f"{text[:8]}`{text[8:]}"
        return f"{value:0{2 * size}x}"

    def _byte_row(self, address: int, cells: list[str]) -> str:
        hexes = " ".join(cells[:8]) + ("-" + " ".join(cells[8:]) if len(cells) > 8 else "")
        chars = "".join("?" if c == "??" else chr(int(c, 16)) if 0x20 <= int(c, 16) < 0x7F else "." for c in cells)
        return f"{self.t.addr(address)}  {hexes:<47}  {chars}\n"


def session_time(stamp: int) -> str:
    """``Tue Feb  4 09:51:15.000 2025 (UTC + 0:00)``: dbgeng's ``TimeToStr`` of a time_t, in UTC."""
    t = dt.datetime.fromtimestamp(stamp, tz=dt.timezone.utc)
    return f"{t:%a %b} {t.day:2d} {t:%H:%M:%S}.000 {t.year} (UTC + 0:00)"


def duration(ms: int) -> str:
    """``0 days 0:00:06.000``: dbgeng's ``DurationToStr``."""
    days, rest = divmod(ms, 86_400_000)
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{days} days {hours}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def _misc_times(data: bytes) -> tuple[int, str]:
    """(ProcessCreateTime or 0, BuildString or "") of the dump's MiscInfoStream, read by the
    layout (the package does not read Flags1, which says which fields hold data)."""
    _sig, _version, count, directory, _sum, _stamp = _HEADER.unpack_from(data)
    for i in range(count):
        kind, size, rva = struct.unpack_from("<III", data, directory + 12 * i)
        if kind != _MISC_INFO_STREAM or size < 24:
            continue
        flags, _pid, created = struct.unpack_from("<III", data, rva + 4)
        build = ""
        if flags & _MISC4_BUILDSTRING and size >= _MISC_BUILD_STRING.stop:
            raw = data[rva:][_MISC_BUILD_STRING]
            build = raw.decode("utf-16-le", errors="replace").split("\0", 1)[0]
        return (created if flags & _MISC1_PROCESS_TIMES else 0), build
    return 0, ""


def _handles(dump: MinidumpFile) -> list[UserHandle] | None:
    """The dump's handle descriptors as the debug engine's handle data reports them."""
    if dump.handles is None:
        return None
    # imported here: kdmcp.sim.world's package builds the world's imports, which -z never needs
    from kdmcp.sim.world.user_handles import UserHandle

    return [
        UserHandle(int(h.Handle), h.TypeName or "", int(h.GrantedAccess), int(h.Attributes), int(h.HandleCount),
                   int(h.PointerCount), h.ObjectName or "")
        for h in dump.handles.handles
    ]


def _module_name(path: str) -> str:
    """cdb's module name for an image path: the file name without its extension, characters
    other than letters, digits and ``_`` as ``_`` (``tiny-exe.exe`` is ``tiny_exe``)."""
    stem = Path(path.replace("\\", "/")).name
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    return re.sub(r"\W", "_", stem)
