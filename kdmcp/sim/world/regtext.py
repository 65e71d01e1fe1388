"""The register display and the instruction at an address, as dbgeng prints them for x64.

kd and cdb share one engine, so ``r``, a step's stop, a breakpoint's stop, ``~Ns``, a trap
frame in ``!analyze -v`` and cdb's exception banner all print a thread's state the same way:
three registers a line (`` r8=`` right-aligned), the ``iopl=`` flags line, the segment line
with ``efl``, then where the thread is -- ``module!symbol+0xoff:`` and the instruction there,
decoded from the world's memory, with the effective-address note for a memory operand.

The note follows the shared corpus's x64 samples: one blank after the instruction (the line
padded to 53 columns), the segment, its selector unless it is the flat ``002b`` (kernel
``ss:0018:ffffcf06`53b5f6e0=000000000000000a``; kernel and user ``ds:00000000`00000000=????????``,
user ``ss:00000063`2036f808=00000000``), the address, and the value or ``?`` cells.
"""

from __future__ import annotations

from iced_x86 import Decoder, MemorySizeInfo, Mnemonic, OpKind, Register, RegisterInfo

from kdmcp.sim.world.code import decode, fmt_addr
from kdmcp.sim.world.machine import World

__all__ = ["SEGMENTS", "flags_text", "instruction_line", "location", "pc_location", "register_block"]

# (bit, set, clear) in the order r prints them: of df if sf zf af pf cf
_FLAGS = ((11, "ov", "nv"), (10, "dn", "up"), (9, "ei", "di"), (7, "ng", "pl"), (6, "zr", "nz"),
          (4, "ac", "na"), (2, "pe", "po"), (0, "cy", "nc"))  # fmt: skip
_ROWS = (("rax", "rbx", "rcx"), ("rdx", "rsi", "rdi"), ("rip", "rsp", "rbp"), ("r8", "r9", "r10"),
         ("r11", "r12", "r13"), ("r14", "r15"))  # fmt: skip
SEGMENTS = ("cs", "ss", "ds", "es", "fs", "gs")
_FLAT = (0, 0x2B)  # x64's flat data selector: dbgeng leaves it out of the note
_NOTE_COLUMN = 53


def _register_names() -> dict[int, str]:
    return {getattr(Register, n): n.lower() for n in dir(Register) if n.isupper()}


_REGISTER_NAMES = _register_names()


def flags_text(efl: int) -> str:
    """``iopl=0         nv up ei pl zr na pe nc`` (iopl in a 10-column field)."""
    return f"iopl={(efl >> 12) & 3:<10}" + " ".join(on if efl >> bit & 1 else off for bit, on, off in _FLAGS)


def register_block(regs: dict[str, int], *, segments: bool = True) -> str:
    """The ``r`` block of a register set, without the location (``segments=False``: a trap
    frame's, which kd prints without the segment line, corpus analyze/02)."""
    block = "".join(" ".join(f"{n:>3}={regs.get(n, 0):016x}" for n in row) + "\n" for row in _ROWS)
    efl = regs.get("efl", 0x246)
    block += flags_text(efl) + "\n"
    if segments:
        block += "  ".join(f"{s}={regs.get(s, 0):04x}" for s in SEGMENTS) + f"             efl={efl:08x}\n"
    return block


def _memory_note(world: World, regs: dict[str, int], data: bytes, address: int) -> str:
    """``ss:0018:ffffcf06`53b5f6e0=000000000000000a``: a memory operand's segment, address and
    what it holds; none for ``lea`` and ``nop`` (no access) or an operand wider than a qword."""
    instr = Decoder(64, data, ip=address).decode()
    if instr.mnemonic in (Mnemonic.LEA, Mnemonic.NOP) or not any(
        instr.op_kind(k) == OpKind.MEMORY for k in range(instr.op_count)
    ):
        return ""
    size = MemorySizeInfo(instr.memory_size).size
    if size not in (1, 2, 4, 8):
        return ""
    if instr.is_ip_rel_memory_operand:
        ea = instr.ip_rel_memory_address
    else:
        ea = instr.memory_displacement
        for reg, scale in ((instr.memory_base, 1), (instr.memory_index, instr.memory_index_scale)):
            if reg != Register.NONE:
                ea += regs.get(_REGISTER_NAMES[RegisterInfo(reg).full_register], 0) * scale
    ea &= (1 << 64) - 1
    value = world.space().read(ea, size)
    shown = "?" * 2 * size if value is None else f"{int.from_bytes(value, 'little'):0{2 * size}x}"
    seg = _REGISTER_NAMES.get(instr.memory_segment, "ds")
    selector = regs.get(seg, 0)
    return f"{seg}:{fmt_addr(ea)}={shown}" if selector in _FLAT else f"{seg}:{selector:04x}:{fmt_addr(ea)}={shown}"


def instruction_line(world: World, address: int, regs: dict[str, int] | None = None, *, note: bool = True) -> str:
    """``u``'s line for the instruction at ``address`` (bytes in 16 columns, disasm/01), with the
    memory note for the registers ``regs`` (the current thread's by default; ``note=False``:
    none, as a breakpoint's stop line is printed); ``??  ???`` where the memory is unreadable,
    the byte and ``???`` where it holds no instruction."""
    space = world.space()
    if space.read(address, 1) is None:
        return f"{fmt_addr(address)} ??              ???\n"
    data = bytes(b or 0 for b in space.cells(address, 16))
    got = decode(data, address, world.name)
    if got is None:
        return f"{fmt_addr(address)} {data[:1].hex():<15} ???\n"
    line = f"{fmt_addr(address)} {got.data.hex():<15} {got.text}"
    text = _memory_note(world, regs if regs is not None else world.registers(), data, address) if note else ""
    return (f"{line:<{_NOTE_COLUMN}} {text}" if text else line) + "\n"


def location(world: World, address: int, regs: dict[str, int] | None = None, *, note: bool = True) -> str:
    """Where a thread is: ``nt!DbgBreakPointWithStatus:`` (when a module holds the address) and
    the instruction there (registers/07, misc/05)."""
    name = world.name(address)
    head = f"{name}:\n" if name != fmt_addr(address) else ""
    return head + instruction_line(world, address, regs, note=note)


def pc_location(world: World, regs: dict[str, int]) -> str:
    """Where the thread these registers belong to is: :func:`location` at its ``rip``."""
    return location(world, regs.get("rip", 0), regs)
