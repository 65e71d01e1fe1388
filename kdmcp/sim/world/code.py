"""Machine code for the world's routines, assembled and disassembled with ``iced-x86``.

The issue asks that ``db``, ``dq`` and ``u`` at one address show the same bytes and that a
kept disassembler decodes them ("never a hand-written one"). So routines are real x64 code:
encoded here with iced-x86's ``Encoder`` (a prologue, plausible body instructions, an epilogue,
``int 3`` padding as MSVC pads functions) and placed in module images in memory; ``u``, ``uf``
and ``r``'s instruction line decode those bytes with iced-x86's ``Decoder``.

A routine also carries the calls that the world's stacks rely on: when a stack says
``nt!KiCommitThreadWait+0x14f`` returns into ``nt!KeWaitForSingleObject``, the five bytes
before that return address are a ``call nt!KiCommitThreadWait`` -- so ``ub`` at any return
address in any ``k`` shows the call, as it would on a real machine.

kd's disassembly line, as the shared corpus shows it (disasm/01):
``fffff800`62a05c20 cc              int     3`` -- the address, the instruction bytes padded
to 16 columns, the mnemonic padded to 8; branch targets are ``symbol (address)``:
``call    nt!KiSwapContext (fffff800`629f3a40)``.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from iced_x86 import (
    Code,
    Decoder,
    Encoder,
    Formatter,
    FormatterSyntax,
    Instruction,
    MemoryOperand,
    MemorySizeOptions,
    Mnemonic,
    OpKind,
    Register,
)

__all__ = ["Decoded", "Routine", "assemble", "decode", "fmt_addr", "pad"]

_CC = 0xCC


def fmt_addr(value: int) -> str:
    """kd's 64-bit address: ``fffff800`62a05c20``."""
    value &= (1 << 64) - 1
    return f"{value >> 32:08x}`{value & 0xFFFFFFFF:08x}"


@dataclass
class Routine:
    """A routine to assemble: where it lives, how long it is, and the calls its body must make.

    ``calls`` maps a return offset (the offset just after the call) to the callee's address.
    ``body`` replaces the generated code with given instructions (the break routines, the test
    driver's dispatch routine), which are then padded with ``int 3`` to ``size``.
    """

    name: str
    address: int
    size: int
    calls: dict[int, int] = field(default_factory=dict)
    body: Callable[[int], bytes] | None = None
    fixed: dict[int, bytes] = field(default_factory=dict)  # bytes a sample shows at an offset


def _enc(instr: Instruction, ip: int) -> bytes:
    encoder = Encoder(64)
    encoder.encode(instr, ip)
    return bytes(encoder.take_buffer())


def _mem(base: int, displ: int) -> MemoryOperand:
    return MemoryOperand(base, displ=displ, displ_size=1)  # type: ignore[arg-type]  # iced's stubs type registers as a module


def _fillers() -> list[Instruction]:
    """Body instructions MSVC emits everywhere: moves, tests, leas, compares."""
    return [
        Instruction.create_reg_reg(Code.MOV_R64_RM64, Register.RBX, Register.RCX),
        Instruction.create_reg_reg(Code.TEST_RM32_R32, Register.EAX, Register.EAX),
        Instruction.create_reg_mem(Code.MOV_R32_RM32, Register.EAX, _mem(Register.RCX, 0x18)),
        Instruction.create_reg_mem(Code.LEA_R64_M, Register.RDX, _mem(Register.RSP, 0x30)),
        Instruction.create_reg_reg(Code.XOR_R32_RM32, Register.ECX, Register.ECX),
        Instruction.create_reg_u32(Code.MOV_R32_IMM32, Register.R8D, 1),
        Instruction.create_mem_i32(Code.CMP_RM32_IMM8, _mem(Register.RBX, 0x10), 0),
        Instruction.create_reg_mem(Code.MOVZX_R32_RM8, Register.EAX, _mem(Register.RDX, 1)),
        Instruction.create_reg_i32(Code.AND_RM32_IMM8, Register.EAX, 0xF),
        Instruction.create_reg_reg(Code.MOV_R64_RM64, Register.RCX, Register.RDI),
        Instruction.create_reg_mem(Code.MOV_R64_RM64, Register.RAX, _mem(Register.RBX, 0x8)),
        Instruction.create_mem_reg(Code.MOV_RM64_R64, _mem(Register.RSP, 0x20), Register.RAX),
    ]


_PROLOGUE = [
    Instruction.create_mem_reg(Code.MOV_RM64_R64, _mem(Register.RSP, 8), Register.RBX),
    Instruction.create_reg(Code.PUSH_R64, Register.RDI),
    Instruction.create_reg_i32(Code.SUB_RM64_IMM8, Register.RSP, 0x20),
]
_EPILOGUE = [
    Instruction.create_reg_mem(Code.MOV_R64_RM64, Register.RBX, _mem(Register.RSP, 0x30)),
    Instruction.create_reg_i32(Code.ADD_RM64_IMM8, Register.RSP, 0x20),
    Instruction.create_reg(Code.POP_R64, Register.RDI),
    Instruction.create(Code.RETNQ),
]
# Multi-byte NOPs (Intel SDM "Recommended Multi-Byte Sequence of NOP Instruction")
_NOPS = {1: b"\x90", 2: b"\x66\x90", 3: b"\x0f\x1f\x00", 4: b"\x0f\x1f\x40\x00", 5: b"\x0f\x1f\x44\x00\x00"}


def pad(n: int) -> bytes:
    """``n`` bytes of NOPs, in the recommended multi-byte forms."""
    out = b""
    while n > 0:
        take = min(n, 5)
        out += _NOPS[take]
        n -= take
    return out


def assemble(r: Routine) -> bytes:
    """The routine's bytes, exactly ``r.size`` long (longer if its calls need more room)."""
    if r.body is not None:
        code = r.body(r.address)
        return code + bytes([_CC]) * max(0, r.size - len(code))
    rng = random.Random(zlib.crc32(r.name.encode()))
    fillers = _fillers()
    out = bytearray()

    def emit(instrs: Iterable[Instruction]) -> None:
        for instr in instrs:
            out.extend(_enc(instr, r.address + len(out)))

    # anchors: (start offset, bytes or a call target), in address order
    anchors: list[tuple[int, bytes | int]] = [(off - 5, target) for off, target in r.calls.items()]
    anchors += list(r.fixed.items())
    anchors.sort(key=lambda a: a[0])
    if (anchors[0][0] if anchors else r.size) >= 10:  # room for the prologue before the first
        emit(_PROLOGUE)
    for start, what in anchors:
        while True:
            nxt = _enc(rng.choice(fillers), r.address + len(out))
            if len(out) + len(nxt) > start:
                break
            out.extend(nxt)
        out.extend(pad(start - len(out)))
        if len(out) != start:  # an earlier anchor ends past this one: the tables disagree
            raise ValueError(f"{r.name}: the code at +{start:#x} overlaps the previous anchor")
        if isinstance(what, bytes):
            out.extend(what)
        else:
            emit([Instruction.create_branch(Code.CALL_REL32_64, what)])
    # the body runs on to near the routine's end, so every offset a stack names is code
    epilogue = sum(len(_enc(i, 0)) for i in _EPILOGUE)
    for _ in range(2):
        emit([rng.choice(fillers)])
    while len(out) + 8 + epilogue <= r.size:
        emit([rng.choice(fillers)])
    if len(out) >= 10 or anchors:
        emit(_EPILOGUE)
    else:
        emit([Instruction.create(Code.RETNQ)])
    return bytes(out) + bytes([_CC]) * max(0, r.size - len(out))


@dataclass(frozen=True)
class Decoded:
    """One decoded instruction: its bytes, and kd's text for it (operands symbolised)."""

    address: int
    data: bytes
    text: str
    branch_target: int | None = None
    is_call: bool = False
    is_return: bool = False
    is_jump: bool = False  # an unconditional jmp (uf follows it, stops after an indirect one)
    is_conditional: bool = False
    code: int = 0  # iced Code value (ioctl_map reads compares and jump tables by it)
    immediate: int | None = None  # the instruction's immediate, when it has one


_FORMATTER = Formatter(FormatterSyntax.MASM)
_FORMATTER.first_operand_char_index = 8
_FORMATTER.space_after_operand_separator = False
_FORMATTER.masm_add_ds_prefix32 = False
_FORMATTER.rip_relative_addresses = False
_FORMATTER.memory_size_options = MemorySizeOptions.ALWAYS  # kd: "qword ptr [rbx+8]"


def decode(data: bytes, address: int, symbolize: Callable[[int], str]) -> Decoded | None:
    """Decode the first instruction of ``data`` at ``address``; ``None`` where it is not one."""
    decoder = Decoder(64, data, ip=address)
    instr = decoder.decode()
    if instr.code == Code.INVALID or instr.len == 0:
        return None
    text = _FORMATTER.format(instr)
    target: int | None = None
    if instr.is_call_near or instr.is_jmp_near or instr.is_jmp_short or instr.is_jcc_short_or_near:
        target = instr.near_branch_target
        mnemonic = text.split()[0]
        text = f"{mnemonic:<8}{symbolize(target)} ({fmt_addr(target)})"
    elif instr.is_ip_rel_memory_operand:
        target = instr.ip_rel_memory_address
        head, _, rest = text.partition("[")
        _, _, tail = rest.partition("]")
        text = f"{head}[{symbolize(target)} ({fmt_addr(target)})]{tail}"
    imm: int | None = None
    try:
        for op in range(instr.op_count):
            if instr.op_kind(op) in _IMMEDIATE_KINDS:
                imm = instr.immediate(op)
    except ValueError:
        imm = None
    return Decoded(
        address=address,
        data=bytes(data[: instr.len]),
        text=text.rstrip(),
        branch_target=target,
        is_call=instr.is_call_near or instr.is_call_near_indirect,
        is_return=instr.mnemonic in _RET_MNEMONICS,
        is_jump=instr.is_jmp_near or instr.is_jmp_short or instr.is_jmp_near_indirect,
        is_conditional=instr.is_jcc_short_or_near,
        code=instr.code,
        immediate=imm,
    )


_IMMEDIATE_KINDS: frozenset[int] = frozenset(
    {
        OpKind.IMMEDIATE8,
        OpKind.IMMEDIATE16,
        OpKind.IMMEDIATE32,
        OpKind.IMMEDIATE64,
        OpKind.IMMEDIATE8TO32,
        OpKind.IMMEDIATE8TO64,
        OpKind.IMMEDIATE32TO64,
    }
)
_RET_MNEMONICS: frozenset[int] = frozenset({Mnemonic.RET, Mnemonic.IRET, Mnemonic.IRETQ})
