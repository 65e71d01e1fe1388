"""What a register or stack slot holds while IOCTL recovery walks a dispatch routine.

Why its own module: the walk (``ioctl_recovery``) decides where paths go; this says what an
operand is worth on one -- the IRP (rdx at entry, x64), its current stack location
(``[Irp+0b8h]``, wdm.h's ``Tail.Overlay.CurrentStackLocation``), the control code
(``[stack location+18h]``, ``Parameters.DeviceIoControl.IoControlCode``) and what a switch
computes from it: a biased or scaled copy, an image base (``lea rdx,[mydrv (…)]``), a jump
table's entry and the address it makes.
"""

from __future__ import annotations

from dataclasses import dataclass

from kdmcp.parse import ioctl_domain as dom
from kdmcp.parse.ioctl_operands import Imm, Mem, Reg
from kdmcp.parse.register_names import X64_FRAME_POINTER, X64_STACK_POINTER

__all__ = [
    "Addr",
    "CaseIndex",
    "Code",
    "Derived",
    "Entry",
    "Irp",
    "Isl",
    "Target",
    "Val",
    "clobber",
    "frozen",
    "lea",
    "read_operand",
    "slot",
    "write",
]


@dataclass(frozen=True)
class Irp:
    pass


@dataclass(frozen=True)
class Isl:  # the current IO_STACK_LOCATION
    pass


@dataclass(frozen=True)
class Code:
    lin: dom.Lin
    spilled: bool = False  # went through a stack slot


@dataclass(frozen=True)
class Derived:  # computed from the code in a way not modelled: compares on it are unresolved
    what: str


@dataclass(frozen=True)
class Addr:
    value: int
    name: str | None


@dataclass(frozen=True)
class CaseIndex:  # a byte read from a switch's index table (MSVC's two-level tables): a case number
    table: int
    index: dom.Lin


@dataclass(frozen=True)
class Entry:  # a jump table's dword entry, read with an index derived from the code
    table: int
    index: dom.Lin
    signed: bool = False  # movsxd
    via: int | None = None  # the byte table the index went through first


@dataclass(frozen=True)
class Target:  # an entry plus the image base: where the jmp goes
    entry: Entry
    base: Addr


Val = Irp | Isl | Code | Derived | Addr | CaseIndex | Entry | Target


def slot(m: Mem) -> str | None:
    if m.base in (X64_STACK_POINTER, X64_FRAME_POINTER) and m.index is None:
        return f"{m.base}{m.disp:+#x}"
    return None


def read_operand(op: Reg | Imm | Mem, regs: dict[str, Val], slots: dict[str, Val]) -> Val | None:
    if isinstance(op, Imm):
        return None
    if isinstance(op, Reg):
        val = regs.get(op.family)
        if isinstance(val, Code) and op.width < 32:
            return Derived(f"the low {op.width} bits of the code")
        return val
    base = regs.get(op.base) if op.base else None
    index = regs.get(op.index) if op.index else None
    if op.index is None and isinstance(base, Irp) and op.disp == 0xB8 and op.size in (8, None):
        return Isl()
    if op.index is None and isinstance(base, Isl) and op.disp == 0x18 and op.size in (4, None):
        return Code(dom.Lin())
    if isinstance(base, Addr) and isinstance(index, Code) and op.scale == 4 and op.size in (4, None):
        return Entry(base.value + op.disp, index.lin)
    if isinstance(base, Addr) and isinstance(index, Code) and op.scale == 1 and op.size == 1:
        return CaseIndex(base.value + op.disp, index.lin)  # movzx eax,byte ptr [rdx+rax+RVA]
    if isinstance(base, Addr) and isinstance(index, CaseIndex) and op.scale == 4 and op.size in (4, None):
        return Entry(base.value + op.disp, index.index, via=index.table)
    key = slot(op)
    if key is not None:
        val = slots.get(key)
        return Code(val.lin, True) if isinstance(val, Code) else val
    return None


def lea(m: Mem, regs: dict[str, Val]) -> Val | None:
    if m.absolute is not None and m.base is None:
        return Addr(m.absolute, m.symbol)
    base = regs.get(m.base) if m.base else None
    if isinstance(base, Code) and m.index is None:
        return Code(base.lin.add(m.disp), base.spilled)
    if isinstance(base, (Code, Derived)) or (m.index and isinstance(regs.get(m.index), (Code, Derived))):
        return Derived(f"lea {m.text}")
    return None


def write(dst: Reg | Imm | Mem, val: Val | None, regs: dict[str, Val], slots: dict[str, Val], what: str) -> None:
    if isinstance(dst, Reg):
        if dst.width < 32:
            clobber(regs, dst.family, regs.get(dst.family), what)
        elif val is None:
            regs.pop(dst.family, None)
        else:
            regs[dst.family] = val
    elif isinstance(dst, Mem):
        key = slot(dst)
        if key is not None:
            if val is None:
                slots.pop(key, None)
            else:
                slots[key] = val


def clobber(regs: dict[str, Val], family: str, old: Val | None, what: str) -> None:
    if isinstance(old, (Code, Derived)):
        regs[family] = Derived(what)
    else:
        regs.pop(family, None)


def frozen(d: dict[str, Val]) -> tuple[tuple[str, Val], ...]:
    return tuple(sorted(d.items()))
