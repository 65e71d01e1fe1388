"""``kdmcp.parse.disasm``: ``u``, ``ub``, ``uf``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_uf_branch_note_is_not_an_operand() -> None:
    # uf without symbols (a hook's trampoline), wlsgjd.github.io post on PspProcessOpen
    out = "ffff9d01`69ff0014 741c            je      ffff9d01`69ff0032  Branch\n"
    (ins,) = parse("uf ffff9d01`69ff0000", out).instructions
    assert (ins.mnemonic, ins.operands, ins.target) == ("je", "ffff9d01`69ff0032", "0xffff9d0169ff0032")


def test_memory_operand_target_before_another_operand() -> None:
    # u ntdll!NtCreateFile, user-mode WinDbg exercise (windev_training series)
    out = "00007ff8`9f45cb58 f604250803fe7f01 test    byte ptr [SharedUserData+0x308 (00000000`7ffe0308)],1\n"
    (ins,) = parse("u", out).instructions
    assert ins.target == "0x000000007ffe0308"


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
