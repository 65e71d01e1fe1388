"""A dispatch routine written as kd prints ``uf``, for the IOCTL recovery tests.

Label lines, ``address bytes mnemonic operands``, branch targets as ``sym (address)``,
RIP-relative operands as ``[drv (address)]``, read by the parse layer as the tool reads kd; each
instruction is 4 bytes long, so an instruction's fall-through is the next one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kdmcp.parse.disasm import parse_disassembly
from kdmcp.parse.ioctl_recovery import Recovery
from kdmcp.parse.models import Instruction

BASE = 0xFFFFF80012340000  # drv's image base
ENTRY = BASE + 0x1000
HEAD = """
    mov     qword ptr [rsp+8],rbx
    sub     rsp,20h
    mov     rax,qword ptr [rdx+0B8h]
    mov     rdi,rdx
    mov     ecx,dword ptr [rax+18h]
"""
TAIL = """
Ldefault:
    mov     ebx,0C0000010h
    jmp     Ldone
Ldone:
    mov     eax,ebx
    add     rsp,20h
    ret
"""


def _fmt(a: int) -> str:
    return f"{a >> 32:08x}`{a & 0xFFFFFFFF:08x}"


LABELS: dict[str, int] = {}  # the last listing's labels -> addresses


def kd(asm: str, order: list[str] | None = None) -> list[Instruction]:
    """``asm`` (``L…:`` labels, branch operands naming them, ``[drv]`` for the image base) as kd's
    uf text, parsed; its labels' addresses in ``LABELS``. ``order``: the labels' blocks in this
    order (uf prints a routine's blocks out of line)."""
    lines = [ln.strip() for ln in asm.strip().splitlines() if ln.strip()]
    labels: dict[str, int] = {}
    at = ENTRY
    for ln in lines:
        if ln.endswith(":"):
            labels[ln[:-1]] = at
        else:
            at += 4

    def sym(a: int) -> str:
        return f"drv+{a - BASE:#x}"

    blocks: dict[str, list[str]] = {"": []}
    current, at = "", ENTRY
    for ln in lines:
        if ln.endswith(":"):
            current = ln[:-1]
            blocks[current] = [f"{sym(labels[current])}:"]
            continue
        mn, _, ops = ln.partition(" ")
        ops = ops.strip()
        ops = re.sub(r"\bL\w+\b", lambda m: f"{sym(labels[m.group()])} ({_fmt(labels[m.group()])})", ops)
        ops = ops.replace("[drv]", f"[drv ({_fmt(BASE)})]")
        blocks[current].append(f"{_fmt(at)} 90909090        {mn:<7} {ops}".rstrip())
        at += 4
    names = list(blocks) if order is None else ["", *order]
    text = "\n".join([f"{sym(ENTRY)}:"] + [ln for name in names for ln in blocks[name]]) + "\n"
    LABELS.clear()
    LABELS.update(labels)
    record = parse_disassembly("uf drv+0x1000", text)
    assert record is not None
    return record.instructions


def off(label: str) -> str:
    return f"drv+{LABELS[label] - BASE:#x}"


def table_reader(
    table: dict[int, list[int]], calls: list[tuple[int, int]] | None = None
) -> Callable[[int, int], list[int] | None]:
    def read(address: int, count: int) -> list[int] | None:
        if calls is not None:
            calls.append((address, count))
        words = table.get(address)
        return None if words is None else words[:count]

    return read


def no_memory(address: int, count: int) -> None:
    raise AssertionError(f"read {count} dwords at {address:#x}: no table here")


def codes(r: Recovery) -> dict[int, tuple[int, str]]:
    return {c.code: (c.handler - BASE, c.how) for c in r.codes}


def handler_offsets(r: Recovery) -> list[int]:
    return [c.handler - BASE for c in r.codes]
