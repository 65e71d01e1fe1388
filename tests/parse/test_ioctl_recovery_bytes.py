"""IOCTL recovery on real x64 bytes: a sparse switch as MSVC lays it out, encoded with iced-x86 and
printed as kd prints it (the simulator's formatter, kdmcp/sim/world/code.py), then parsed.

Why beside the kd-style listings of test_ioctl_recovery.py: there each instruction's text is
written by hand; here the encoder picks the forms (``sub eax,4`` as an imm8, ``lea eax,[rcx-…]``
with a negative displacement, rel32 branches) and the formatter spells them, so the walk is
checked against what a disassembler really prints. The routine mixes a binary split, a
subtract cascade and MSVC's two-level jump table (a byte per index naming the case, then a
dword table of case offsets: ``movzx eax,byte ptr [rdx+rax+RVA]`` /
``mov ecx,dword ptr [rdx+rax*4+RVA]``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from iced_x86 import Code, Encoder, Instruction, MemoryOperand, Register

from kdmcp.parse.disasm import parse_disassembly
from kdmcp.parse.ioctl_recovery import recover
from kdmcp.sim.world.code import decode, fmt_addr

BASE = 0xFFFFF80012340000
ENTRY = BASE + 0x1000
BYTES = 0x3000  # the index table: one byte per code offset 0..0x3c
TABLE = 0x3100  # the case table: rva per case

Item = str | Callable[[dict[str, int]], Instruction]


def _assemble(items: list[Item]) -> tuple[bytes, dict[str, int]]:
    """Two passes: label addresses first (every form used has a fixed length), then the bytes."""
    labels: dict[str, int] = {}
    for _ in range(2):
        out = bytearray()
        for item in items:
            if isinstance(item, str):
                labels[item] = ENTRY + len(out)
                continue
            enc = Encoder(64)
            enc.encode(item(labels), ENTRY + len(out))
            out += enc.take_buffer()
    return bytes(out), labels


def _kd(code: bytes, labels: dict[str, int]) -> str:
    def symbolize(a: int) -> str:
        return f"drv+{a - BASE:#x}" if a != BASE else "drv"

    lines, at = [f"drv+{ENTRY - BASE:#x}:"], 0
    targets = set(labels.values())
    while at < len(code):
        d = decode(code[at:], ENTRY + at, symbolize)
        assert d is not None
        if ENTRY + at in targets and at:
            lines.append(f"{symbolize(ENTRY + at)}:")
        lines.append(f"{fmt_addr(ENTRY + at)} {d.data.hex():<15} {d.text}")
        at += len(d.data)
    return "\n".join(lines) + "\n"


def _m(base: int, displ: int = 0, index: int = Register.NONE, scale: int = 1) -> MemoryOperand:
    size = 1 if -0x80 <= displ <= 0x7F else 8
    return MemoryOperand(base, index, scale, displ, size if displ else 0)  # type: ignore[arg-type]


def _jcc(code: int, label: str) -> Callable[[dict[str, int]], Instruction]:
    return lambda labels: Instruction.create_branch(code, labels.get(label, ENTRY))  # type: ignore[arg-type]


def _fixed(instr: Instruction) -> Callable[[dict[str, int]], Instruction]:
    return lambda _labels: instr


def _ret(label: str) -> list[Item]:
    return [label, _fixed(Instruction.create(Code.RETNQ))]


ROUTINE: list[Item] = [
    _fixed(Instruction.create_reg_mem(Code.MOV_R64_RM64, Register.RAX, _m(Register.RDX, 0xB8))),
    _fixed(Instruction.create_reg_mem(Code.MOV_R32_RM32, Register.ECX, _m(Register.RAX, 0x18))),
    _fixed(Instruction.create_reg_u32(Code.CMP_RM32_IMM32, Register.ECX, 0x222010)),
    _jcc(Code.JA_REL32_64, "high"),
    _jcc(Code.JE_REL32_64, "c10"),
    _fixed(Instruction.create_reg_reg(Code.MOV_R32_RM32, Register.EAX, Register.ECX)),
    _fixed(Instruction.create_reg_u32(Code.SUB_RM32_IMM32, Register.EAX, 0x222000)),
    _jcc(Code.JE_REL32_64, "c00"),
    _fixed(Instruction.create_reg_i32(Code.SUB_RM32_IMM8, Register.EAX, 4)),
    _jcc(Code.JE_REL32_64, "c04"),
    _jcc(Code.JMP_REL32_64, "default"),
    "high",
    # lea eax,[rcx-222040h]: the bias; cmp eax,3Ch / ja: the bound
    _fixed(Instruction.create_reg_mem(Code.LEA_R32_M, Register.EAX, _m(Register.RCX, -0x222040))),
    _fixed(Instruction.create_reg_u32(Code.CMP_RM32_IMM8, Register.EAX, 0x3C)),
    _jcc(Code.JA_REL32_64, "default"),
    _fixed(
        Instruction.create_reg_mem(
            Code.LEA_R64_M, Register.RDX, MemoryOperand.ctor_u64(Register.RIP, Register.NONE, 1, BASE, 8)
        )
    ),
    _fixed(Instruction.create_reg_mem(Code.MOVZX_R32_RM8, Register.EAX, _m(Register.RDX, BYTES, Register.RAX, 1))),
    _fixed(Instruction.create_reg_mem(Code.MOV_R32_RM32, Register.ECX, _m(Register.RDX, TABLE, Register.RAX, 4))),
    _fixed(Instruction.create_reg_reg(Code.ADD_R64_RM64, Register.RCX, Register.RDX)),
    _fixed(Instruction.create_reg(Code.JMP_RM64, Register.RCX)),
    *_ret("c10"),
    *_ret("c00"),
    *_ret("c04"),
    "default",
    _fixed(Instruction.create_reg_u32(Code.MOV_R32_IMM32, Register.EAX, 0xC0000010)),
    _fixed(Instruction.create(Code.RETNQ)),
]


def test_a_sparse_msvc_switch_in_real_bytes() -> None:
    code, labels = _assemble(ROUTINE)
    text = _kd(code, labels)
    assert "sub     eax,4\n" in text and "lea     eax,[rcx-222040h]" in text  # as kd spells them
    assert "movzx   eax,byte ptr [rdx+rax+3000h]" in text
    record = parse_disassembly("uf drv+0x1000", text)
    assert record is not None
    # the index table: code offsets 0, 8 and 0x3c are cases 0, 1, 2; every other byte is case 3,
    # the default (so 0x222044, an unaligned 0x222041… are not handled codes)
    index = [3] * 0x3D
    index[0x0], index[0x8], index[0x3C] = 0, 1, 2
    default_rva = labels["default"] - BASE
    memory = {
        BASE + BYTES: list(struct.unpack("<16I", bytes(index).ljust(64, b"\3"))),
        BASE + TABLE: [0x2000, 0x2010, 0x2020, default_rva],
    }
    reads: list[tuple[int, int]] = []

    def read(address: int, count: int) -> list[int] | None:
        reads.append((address, count))
        return memory[address][:count]

    r = recover(record.instructions, read)
    got = {c.code: (c.handler - BASE, c.how) for c in r.codes}
    assert got == {
        0x222010: (labels["c10"] - BASE, "binary_search"),
        0x222000: (labels["c00"] - BASE, "subtract_chain"),
        0x222004: (labels["c04"] - BASE, "subtract_chain"),
        0x222040: (0x2000, "jump_table"),
        0x222048: (0x2010, "jump_table"),
        0x22207C: (0x2020, "jump_table"),
    }
    assert reads == [(BASE + BYTES, 16), (BASE + TABLE, 4)]
    assert r.defaults == [labels["default"]] and not r.unresolved
