"""What kind of dump a file is, by its header, and what the debugger says of a file that is none.

dbgeng opens a crash dump by asking each of its dump targets in turn whether it knows the
file's header (``IdentifyDump``); when none does it prints (dbgeng's dump.cpp, and the corrupt
dump of Microsoft's DumpChk page)::

    Loading Dump File [c:\\mydir\\dumpfile2.dmp]
    Could not match Dump File signature - invalid file format
    Could not open dump file [c:\\mydir\\dumpfile2.dmp], HRESULT 0x80004002
        "No such interface supported"

The headers: a kernel dump starts with ``DUMP_HEADER64`` (``PAGE`` then ``DU64``) or
``DUMP_HEADER32`` (``PAGE`` then ``DUMP``); a user-mode minidump with ``MINIDUMP_HEADER``
(``MDMP``). Both front ends share that engine, so ``kd -z`` and ``cdb -z`` refuse the same files
and open the same ones (a kernel dump under cdb is a kernel target).

:func:`kernel_header` writes the header of the simulated machine's D1 crash in the
``DUMP_HEADER64`` layout (rekall's crashdump overlay, as 0vercl0k's kdmp-parser restates it:
``BugCheckCodeParameter`` at 0x40, ``KdDebuggerDataBlock`` 0x80, ``PhysicalMemoryBlockBuffer``
0x88, ``ContextRecord`` 0x348, ``Exception`` 0xF00, ``DumpType`` 0xF98, ``SystemTime`` 0xFA8,
``SystemUpTime`` 0x1030, ``ProductType`` 0x1040, ``SuiteMask`` 0x1044; the bitmap header at 0x2000
follows it): ``fixtures/dumps/kernel-header-only.dmp`` is its output.
"""

from __future__ import annotations

import datetime as dt
import struct
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from kdmcp.sim.world.machine import World

__all__ = ["HEADER64_SIZE", "DumpKind", "dump_kind", "kernel_header", "open_error"]

DumpKind = Literal["kernel", "user"]

HEADER64_SIZE = 0x2000  # DUMP_HEADER64: the bitmap dump's BMP header starts at 0x2000
# kd fills the header with "PAGE" before it writes the fields: what no field overwrites reads
# PAGE (kdmp-parser's PHYSMEM_DESC::LooksGood takes NumberOfRuns == 'PAGE' as "not present")
_FILL = b"PAGE"
_BMP_DUMP = 5  # DumpType: a bitmap dump ("Kernel Bitmap Dump File"; 1 full, 2 kernel)
_CONTEXT = 0x348  # ContextRecord: an AMD64 CONTEXT
_CONTEXT_FULL = 0x10001F  # CONTEXT_AMD64 | CONTROL | INTEGER | SEGMENTS | FLOATING_POINT | DEBUG_REGISTERS
# CONTEXT (winnt.h, AMD64): the general registers from Rax at 0x78, in this order, then Rip
_CONTEXT_REGS = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                 "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip")  # fmt: skip
_FILETIME_EPOCH = dt.datetime(1601, 1, 1, tzinfo=dt.timezone.utc)
_SYSTEM_DIRBASE = 0x1AD002  # the System process's DirBase in the world (catalog.CANNED_PROCESSES)


def dump_kind(path: str) -> DumpKind | None:
    """``"kernel"`` (``PAGEDU64``/``PAGEDUMP``), ``"user"`` (``MDMP``), or ``None``: no dump, or
    no file to read."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return None
    if head in (b"PAGEDU64", b"PAGEDUMP"):
        return "kernel"
    if head[:4] == b"MDMP":
        return "user"
    return None


def open_error(path: str) -> str | None:
    """What the debugger prints after its version banner before it ends, for a file that is no
    dump it knows; ``None`` for a dump (and for a missing file, whose error is another)."""
    try:
        with open(path, "rb"):
            pass
    except OSError:
        return None
    if dump_kind(path) is not None:
        return None
    return (
        f"\nLoading Dump File [{path}]\n"
        "Could not match Dump File signature - invalid file format\n"
        f"Could not open dump file [{path}], HRESULT 0x80004002\n"
        '    "No such interface supported"\n'
    )


def _filetime(when: dt.datetime) -> int:
    return (when - _FILETIME_EPOCH) // dt.timedelta(microseconds=1) * 10


def kernel_header(world: World) -> bytes:
    """The ``DUMP_HEADER64`` of ``world`` in its D1 bugcheck (the caller's :func:`.cmd_report.crash`):
    build 19041 (``MajorVersion`` 0xF, a free build), its processors, ``PsLoadedModuleList`` and
    ``PsActiveProcessHead`` from nt's symbols, ``MmPfnDatabase``'s value, the System process's
    DirBase, the bugcheck and its four parameters, processor 0's context in ``KeBugCheckEx``,
    the breakpoint exception KeBugCheckEx raises, the session's time and uptime. Fields the
    world does not model (``KdDebuggerDataBlock``, the physical memory runs, the comment) keep
    the ``PAGE`` fill."""
    if world.bugcheck is None or world.bugcheck[0] != 0xD1:
        raise ValueError("the world is not in its D1 bugcheck: cmd_report.crash(world) first")
    code, args = world.bugcheck
    header = bytearray(_FILL * (HEADER64_SIZE // len(_FILL)))
    symbol = world.symbols.lookup
    modules, processes, pfn = (
        symbol(n) for n in ("nt!PsLoadedModuleList", "nt!PsActiveProcessHead", "nt!MmPfnDatabase")
    )
    assert modules is not None and processes is not None and pfn is not None
    pfn_base = world.space().u64(pfn.address) or 0
    struct.pack_into("<4s4sII", header, 0, b"PAGE", b"DU64", 0xF, 19041)
    struct.pack_into("<QQQQ", header, 0x10, _SYSTEM_DIRBASE, pfn_base, modules.address, processes.address)
    struct.pack_into("<IIII", header, 0x30, 0x8664, len(world.processors), code, 0)
    struct.pack_into("<4Q", header, 0x40, *args)
    # processor 0's context: the thread stopped in nt!KeBugCheckEx
    thread = world.current_thread()
    regs = world.registers(thread)
    header[_CONTEXT : _CONTEXT + 0x4D0] = bytes(0x4D0)
    struct.pack_into("<II", header, _CONTEXT + 0x30, _CONTEXT_FULL, 0x1F80)  # ContextFlags, MxCsr
    struct.pack_into("<6HI", header, _CONTEXT + 0x38, 0x10, 0x2B, 0x2B, 0x53, 0x2B, 0x18, regs.get("efl", 0x282))
    struct.pack_into(f"<{len(_CONTEXT_REGS)}Q", header, _CONTEXT + 0x78, *(regs.get(r, 0) for r in _CONTEXT_REGS))
    struct.pack_into("<I", header, _CONTEXT + 0x118, 0x1F80)  # FltSave.MxCsr, equal to MxCsr
    # Exception: KeBugCheckEx's breakpoint, at its first instruction
    header[0xF00 : 0xF00 + 0x98] = bytes(0x98)
    struct.pack_into("<IIQQI", header, 0xF00, 0x80000003, 0, 0, regs.get("rip", 0), 0)
    struct.pack_into("<II", header, 0xF98, _BMP_DUMP, 0)
    head, _, _zone = world.session_epoch.partition(" (")
    when = dt.datetime.strptime(" ".join(head.split()), "%a %b %d %H:%M:%S.%f %Y").replace(tzinfo=dt.timezone.utc)
    struct.pack_into("<QQ", header, 0xFA0, HEADER64_SIZE, _filetime(when))  # RequiredDumpSpace, SystemTime
    struct.pack_into("<QII", header, 0x1030, world.uptime_ms * 10_000, 0, 0)  # SystemUpTime, fields, state
    # ProductType WinNt, SuiteMask TerminalServer | SingleUserTS ("Product: WinNt, suite:
    # TerminalServer SingleUserTS", the world's vertarget), WriterStatus, the unused bytes
    struct.pack_into("<IIIBB2s", header, 0x1040, 1, 0x110, 0, 0, 0, b"\0\0")
    return bytes(header)
