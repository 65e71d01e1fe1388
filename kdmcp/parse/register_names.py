"""The x86 and x64 register names kd prints and reads: one list for the parse layer, the engine and the server.

kd spells registers in lower case, as its ``r`` command prints them (``rax=... rbx=...``,
``r8=...``, ``iopl=0  nv up ei ...``, ``cs=0010 ss=0018 ... efl=00000246``; x86
``eax=... eip=...``) and as its disassembler writes operands (``mov ecx,dword ptr [rdx+0B8h]``,
``test al,3``). Every module that needs to know a name by what it *is* -- a segment, the flags,
a general-purpose register or one of its narrower views -- takes it from here, so the reader
of a register block, the reader of an operand and the server's rollback of a context cannot
disagree about which names there are.

What is here is what the code needs, not every register a processor has: no x87, SSE/AVX,
debug or control registers (kd prints those as it prints any ``name=value``, and the readers
keep them without knowing their names).

Pure: stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

__all__ = [
    "ARM_STATUS_REGISTERS",
    "FLAGS_REGISTER",
    "INTEGER_CONTEXT",
    "IOPL",
    "SEGMENT_REGISTERS",
    "X64_ARGUMENTS",
    "X64_FRAME_POINTER",
    "X64_GENERAL",
    "X64_GPR_VIEWS",
    "X64_INSTRUCTION_POINTER",
    "X64_STACK_POINTER",
    "X64_VOLATILE",
    "X86_GENERAL",
    "X86_INSTRUCTION_POINTER",
    "GprView",
]

# x64's sixteen general-purpose registers ("The x64 architecture provides for 16 general-purpose
# registers", x64 software conventions, "Register Usage"): the eight legacy ones widened to 64
# bits, then r8-r15.
X64_GENERAL: tuple[str, ...] = (
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
    "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
)
# x86's eight, as the 32-bit views of the legacy registers.
X86_GENERAL: tuple[str, ...] = ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp")
X64_INSTRUCTION_POINTER = "rip"
X86_INSTRUCTION_POINTER = "eip"
# "RSP: Stack pointer", "RBP: May be used as a frame pointer" (x64 "Register Usage"): what a
# stack slot is addressed from.
X64_STACK_POINTER = "rsp"
X64_FRAME_POINTER = "rbp"
# The flags register as kd prints it in ``r`` (``efl=00000246``), x86 and x64 alike.
FLAGS_REGISTER = "efl"
# The I/O privilege level field kd prints before the flag mnemonics (``iopl=0  nv up ei pl zr``).
IOPL = "iopl"
# The segment registers of ``r``'s last line (``cs=0010  ss=0018  ds=002b  es=002b  fs=0053  gs=002b``).
SEGMENT_REGISTERS: frozenset[str] = frozenset({"cs", "ss", "ds", "es", "fs", "gs"})
# Not x86: ARM's status registers, which kd prints with their decoded flags after the value
# (``psr=60000000 -ZC- EL0`` on ARM64; ``cpsr`` on 32-bit ARM).
ARM_STATUS_REGISTERS: frozenset[str] = frozenset({"psr", "cpsr"})

# A thread's integer context as ``r`` sets it, x64 then x86: the general registers, the
# instruction pointer and the flags (no segments, no x87/SSE state).
INTEGER_CONTEXT: tuple[str, ...] = (
    *X64_GENERAL, X64_INSTRUCTION_POINTER, *X86_GENERAL, X86_INSTRUCTION_POINTER, FLAGS_REGISTER,
)

# "The registers RAX, RCX, RDX, R8, R9, R10, R11 are considered volatile and must be considered
# destroyed on function calls" (Microsoft x64 calling convention, "Caller/Callee Saved Registers").
X64_VOLATILE: tuple[str, ...] = ("rax", "rcx", "rdx", "r8", "r9", "r10", "r11")
# "RCX: First integer argument", "RDX: Second integer argument", then R8 and R9 ("Register Usage").
X64_ARGUMENTS: tuple[str, ...] = ("rcx", "rdx", "r8", "r9")


class GprView(NamedTuple):
    """What one general-purpose register name is on x64: which register, how many bits, which byte.

    ``ecx``, ``cx``, ``cl`` and ``ch`` are views of ``rcx`` (32, 16 and 8 bits; ``ch`` is the
    high byte of ``cx``); ``r9d``/``r9w``/``r9b`` of ``r9``.
    """

    family: str
    width: int
    high: bool = False


def _views() -> dict[str, GprView]:
    views: dict[str, GprView] = {}
    legacy = [name[1:] for name in X64_GENERAL[:8]]  # "ax", "bx", ... "sp"
    for short in legacy:
        family = "r" + short
        views[family] = GprView(family, 64)
        views["e" + short] = GprView(family, 32)
        views[short] = GprView(family, 16)
    for short in ("ax", "bx", "cx", "dx"):  # al/ah ... dl/dh: the low and high bytes
        views[short[0] + "l"] = GprView("r" + short, 8)
        views[short[0] + "h"] = GprView("r" + short, 8, high=True)
    for short in ("si", "di", "bp", "sp"):  # sil, dil, bpl, spl: the low byte, x64 only
        views[short + "l"] = GprView("r" + short, 8)
    for family in X64_GENERAL[8:]:  # r8d, r8w, r8b ... r15b
        views[family] = GprView(family, 64)
        views[family + "d"] = GprView(family, 32)
        views[family + "w"] = GprView(family, 16)
        views[family + "b"] = GprView(family, 8)
    return views


# Every x64 general-purpose register name kd's disassembler writes, to the register it views.
X64_GPR_VIEWS: Mapping[str, GprView] = _views()
