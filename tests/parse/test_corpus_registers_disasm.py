"""Per-sample checks, ``registers/`` and ``disasm/`` families."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Corpus = Any  # the session fixture from conftest.py

X86_FLAGS = ["nv", "up", "ei", "pl", "zr", "na", "pe", "nc"]


def _registers_01(c: Corpus) -> None:
    r = c.record("registers/01.txt", "r")
    assert r.kind == "registers"
    assert r.registers["eax"] == "0x7ffde000"
    assert r.registers["edx"] == "0x76fcec3b"
    assert r.registers["eip"] == "0x76f63bec"
    assert r.registers["efl"] == "0x00000246"
    assert r.flags == X86_FLAGS
    assert r.segments == {
        "cs": "0x001b",
        "ss": "0x0023",
        "ds": "0x0023",
        "es": "0x0023",
        "fs": "0x003b",
        "gs": "0x0000",
    }
    assert (r.symbol, r.address, r.bytes, r.mnemonic, r.operands) == (
        "ntdll!DbgBreakPoint",
        "0x76f63bec",
        "cc",
        "int",
        "3",
    )


def _registers_02(c: Corpus) -> None:
    r = c.record("registers/02.txt", "rM 0x04")
    assert r.raw_values["fpcw"] == "027F: rn 53 puozdi"
    assert r.raw_values["st0"] == "0.000000000000000000000e+0000"
    assert sorted(k for k in r.raw_values if k.startswith("st")) == [f"st{i}" for i in range(8)]
    assert r.registers["fptw"] == "0xffff"
    assert r.symbol == "ntdll!DbgBreakPoint"


def _registers_03(c: Corpus) -> None:
    r = c.record("registers/03.txt", "rX")
    assert {k: v for k, v in r.raw_values.items()} == {f"xmm{i}": "0 0 0 0" for i in range(8)}
    assert r.mnemonic == "int"


def _registers_04(c: Corpus) -> None:
    r = c.record("registers/04.txt", "~0s")
    assert r.registers["eip"] == "0x76f76bb4"
    assert r.registers["esi"] == "0x000dfb20"
    assert r.symbol == "ntdll!KiFastSystemCallRet"
    assert r.mnemonic == "ret" and r.operands == ""
    t = c.record("registers/04.txt", "~")
    assert t.kind == "threads"
    assert [(x.index, x.current, x.event_thread) for x in t.threads] == [(0, True, False), (1, False, True)]
    assert c.block("registers/04.txt", "~").prompt.thread == 0


def _registers_05(c: Corpus) -> None:
    r = c.record("registers/05.txt", "r")
    assert r.notes == ["Last set context:"]
    assert r.registers["rax"] == "0xffffffff00000080"
    assert r.registers["r8"] == "0xffffffffffffffff"
    assert r.registers["rip"] == "0xfffff80240d322f9"
    assert r.flags == ["nv", "up", "ei", "ng", "nz", "na", "pe", "nc"]
    assert r.segments["cs"] == "0x0010"
    assert r.symbol == "nt!RtlSubtreePredecessor+0x9"
    assert r.operands == "rcx,qword ptr [rax+10h]"
    assert r.memory_reference is not None
    assert r.memory_reference.segment == "ds"
    assert r.memory_reference.address == "0xffffffff00000090"
    assert r.memory_reference.value == "????????????????"


def _registers_06(c: Corpus) -> None:
    r = c.record("registers/06.txt", ".trap ffffd48f`77af97e0")
    assert r.notes[0].startswith("NOTE: The trap frame does not contain all registers.")
    assert r.registers["rip"] == "0xfffff80060da1981"
    assert r.registers["rbx"] == "0x0000000000000000"
    assert "cs" not in r.segments  # a trap frame shows no segment line
    assert r.symbol == "myfault+0x1981"
    assert r.mnemonic == "mov" and r.operands == "eax,dword ptr [rbx]"
    assert r.memory_reference is not None and r.memory_reference.address == "0x0000000000000000"


def _registers_07(c: Corpus) -> None:
    r = c.record("registers/07.txt", "r")
    assert len([k for k in r.registers if k.startswith("r")]) == 16 + 1  # rax..r15 + rip
    assert r.registers["rcx"] == "0x0000000000000001"
    assert r.registers["efl"] == "0x00000202"
    assert r.symbol == "nt!DbgBreakPointWithStatus"
    assert r.address == "0xfffff803bb757020"


def _disasm_01(c: Corpus) -> None:
    r = c.record("disasm/01.txt", "u fffff80240d322f9")
    assert r.kind == "disassembly"
    assert len(r.instructions) == 8
    i0 = r.instructions[0]
    assert (i0.address, i0.bytes, i0.mnemonic, i0.operands) == (
        "0xfffff80240d322f9",
        "488b4810",
        "mov",
        "rcx,qword ptr [rax+10h]",
    )
    assert i0.symbol == "nt!RtlSubtreePredecessor+0x9"
    assert r.instructions[1].target == "0xfffff80240d32306"
    assert r.instructions[-1].mnemonic == "ret"


def _disasm_02(c: Corpus) -> None:
    r = c.record("disasm/02.txt", "ub fffff8016470c14c")
    assert len(r.instructions) == 8
    assert r.labels == ["nvlddmkm+0x84c132"]
    assert [i.mnemonic for i in r.instructions].count("int") == 5
    jmp = r.instructions[2]
    assert jmp.operands == "qword ptr [nvlddmkm+0x6eee88 (fffff801`645aee88)]"
    assert jmp.target == "0xfffff801645aee88"


def _disasm_03(c: Corpus) -> None:
    r = c.record("disasm/03.txt", "u KiServiceTable + (0xfd9007c4 >>> 4)")
    assert [i.mnemonic for i in r.instructions] == ["mov", "sub", "mov", "xor"]
    assert r.instructions[2].bytes == "488b8424a8000000"
    assert all(i.symbol == "nt!NtAccessCheck" for i in r.instructions)


def _disasm_04(c: Corpus) -> None:
    r = c.record("disasm/04.txt", "uf FirstDriverSample!DriverEntry")
    assert len(r.instructions) == 27
    assert r.instructions[0].line_number == 13
    assert r.instructions[-1].line_number == 27 and r.instructions[-1].mnemonic == "ret"
    assert r.instructions[0].symbol == "FirstDriverSample!DriverEntry"
    assert r.instructions[0].source_line == 13
    calls = [i for i in r.instructions if i.mnemonic == "call"]
    assert len(calls) == 4
    assert calls[1].target == "0xfffff800645210f7"


def _disasm_05(c: Corpus) -> None:
    r = c.record("disasm/05.txt", "u COMCTL32!Header_Draw")
    assert r.labels == ["COMCTL32!Header_Draw"]
    assert len(r.instructions) == 8
    assert r.instructions[2].operands == "esp,0x58"
    assert r.instructions[0].address == "0x71a1d625"


def _disasm_06(c: Corpus) -> None:
    r = c.record("disasm/06.txt", "u 00007ffc`0f1d48fa L3")
    assert [i.mnemonic for i in r.instructions] == ["outs", "je", "ins"]
    assert r.instructions[1].target == "0x00007ffc0f1d4961"
    assert r.instructions[0].symbol == "ntdll!`string'+0xa"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "registers/01.txt": _registers_01,
    "registers/02.txt": _registers_02,
    "registers/03.txt": _registers_03,
    "registers/04.txt": _registers_04,
    "registers/05.txt": _registers_05,
    "registers/06.txt": _registers_06,
    "registers/07.txt": _registers_07,
    "disasm/01.txt": _disasm_01,
    "disasm/02.txt": _disasm_02,
    "disasm/03.txt": _disasm_03,
    "disasm/04.txt": _disasm_04,
    "disasm/05.txt": _disasm_05,
    "disasm/06.txt": _disasm_06,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)


def test_every_sample_has_a_check(corpus: Corpus) -> None:
    assert set(corpus.names("registers")) | set(corpus.names("disasm")) == set(CHECKS)
