"""``kdmcp.parse.memory``: the ``d*`` dumps.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from kdmcp.parse.memory import parse_memory
from tests.parse.samples.corpus import Corpus


def test_dqs_symbols() -> None:
    out = "fffff801`5f9a3a10  fffff801`5f89c4e0 nt!KiSystemServiceCopyEnd+0x25\nfffff801`5f9a3a18  00000000`00000000\n"
    r = parse("dqs rsp L2", out)
    assert r.unit == "qword"
    assert r.rows[0].symbols == ["nt!KiSystemServiceCopyEnd+0x25"] and r.rows[1].symbols == [None]


def test_partial_db_row_and_dc_and_dw() -> None:
    db = parse_memory("db x L5", "00000000`7777cb60  68 65 6c 6c 6f                                   hello\n")
    assert db is not None and db.rows[0].values == ["68", "65", "6c", "6c", "6f"] and db.rows[0].ascii == "hello"
    dc = parse("dc x", "00400000  00905a4d 00000003 00000004 0000ffff  MZ..............\n")
    assert dc.rows[0].values[0] == "00905a4d" and dc.rows[0].ascii == "MZ.............."
    dw = parse("dw x", "00400000  5a4d 0090 0003 0000 0004 0000 ffff 0000\n")
    assert dw.unit == "word" and len(dw.rows[0].values) == 8


def test_physical_memory_rows() -> None:
    r = parse("!db 1000", "#    1000 00 00 00 00 00 00 00 00-00 00 00 00 00 00 00 00 ................\n")
    assert r.kind == "memory" and r.rows[0].address == "0x1000"


def test_unreadable_memory_is_an_error() -> None:
    r = parse("dd 0", "00000000  ???????? ???????? ???????? ????????\n")
    assert r.kind == "memory" and r.rows[0].values == ["????????"] * 4
    err = parse("dd nosuch", "Couldn't resolve error at 'nosuch'\n")
    assert (err.kind, err.category) == ("error", "unresolved_symbol")
    mem = parse("dd 0 L1", "       ^ Memory access error in 'dd 0 L1'\n")
    assert mem.category == "memory_access"


def test_dc_character_column_keeps_its_blanks() -> None:
    # lkd dc /c5 of an import directory, alipasaturhan.github.io PE post: the first byte of
    # the second row is 0x20; the short last row pads its missing cells with blanks
    out = (
        "00007ff6`8d0ed0d4  0002d320 00000000 00000000 0002e342 00026800   ...........B....h..\n"
        "00007ff6`8d0ed138  0002d8a0 00000000                             ........\n"
    )
    r = parse("dc /c5 00007ff68d0c0000+2d0c0", out)
    assert [row.ascii for row in r.rows] == [" ...........B....h..", "........"]


def _memory_01(c: Corpus) -> None:
    r = c.record("memory/01.txt", "dd fs:[0x30]")
    assert r.kind == "memory" and r.unit == "dword"
    assert len(r.rows) == 8
    assert r.rows[0].segment == "003b" and r.rows[0].address == "0x00000030"
    assert r.rows[0].values == ["7ffdf000", "00000000", "00000000", "00000000"]


def _memory_02(c: Corpus) -> None:
    r = c.record("memory/02.txt", "db ffffffff00000090")
    assert r.unit == "byte" and len(r.rows) == 8
    assert r.rows[0].values == ["??"] * 16
    assert r.rows[0].ascii == "?" * 16
    assert r.rows[-1].address == "0xffffffff00000100"


def _memory_04(c: Corpus) -> None:
    r = c.record("memory/04.txt", "dps nt!keservicedescriptortable L4")
    assert len(r.rows) == 4
    assert r.rows[0].values == ["fffff8019203b470"] and r.rows[0].symbols == ["nt!KiServiceTable"]
    assert r.rows[1].symbols == [None]
    assert r.rows[3].symbols == ["nt!KiArgumentTable"]


def _memory_05(c: Corpus) -> None:
    r = c.record("memory/05.txt", "dd /c1 KiServiceTable L2")
    assert [(row.address, row.values) for row in r.rows] == [
        ("0xfffff8019203b470", ["fd9007c4"]),
        ("0xfffff8019203b474", ["fcb485c0"]),
    ]


def _memory_08(c: Corpus) -> None:
    dd = c.record("memory/08.txt", "dd 0x00000000`002a1f40+70+8 L2")
    assert dd.rows[0].values == ["002a283c", "00000000"]
    du = c.record("memory/08.txt", "du 00000000002a283c")
    assert du.unit == "unicode"
    assert du.rows[0].text == '"C:\\Windows\\system32\\cmd.exe" '


def _memory_10(c: Corpus) -> None:
    r = c.record("memory/10.txt", "dl 0x00000000`002a2980 6")
    assert len(r.rows) == 12
    assert r.rows[0].values == ["00000000002a2a70", "00000000774ed660"]


def _memory_11(c: Corpus) -> None:
    assert c.record("memory/11.txt", "da 00000000`031e92c8").rows[0].text == "Reflective Dll Injection"
    r = c.record("memory/11.txt", "da 00000000`031e92e8")
    assert r.unit == "ascii" and r.rows[0].text == "Hello from DllMain!"


def _ts_12(c: Corpus) -> None:
    # dps over Driver Verifier's LAST_CALL_STACK, 32-bit kernel: every pointer has a symbol+offset
    r = c.record("families/types_symbols/12.txt", "dps 0x9C1F3480 + 0x10")
    assert r.kind == "memory" and r.unit == "pointer" and len(r.rows) == 8
    assert (r.rows[0].address, r.rows[0].values) == ("0x9c1f3490", ["850e1e37"])
    assert r.rows[0].symbols == ["ndis!ndisMInvokeOidRequest+0x16641"]
    assert [row.address for row in r.rows][-1] == "0x9c1f34ac"
    assert r.rows[-1].symbols == ["ndis!ndisMInitializeAdapter+0xad7"]
    assert all(len(row.symbols) == 1 and row.symbols[0].startswith("ndis!") for row in r.rows)


def _ts_27(c: Corpus) -> None:
    # x64 user dqs rsp with source line loading on: "[file @ line]" is kept out of the symbol
    r = c.record("families/types_symbols/27.txt", "dqs rsp")
    assert r.unit == "qword" and len(r.rows) == 7
    ret = r.rows[0]
    assert (ret.address, ret.values, ret.symbols) == (
        "0x000000e8f6f9f568",
        ["00007ff68ce51997"],
        ["x64_calling_conventions!main+0x67"],
    )
    path = "C:\\Users\\John\\source\\repos\\x64-calling-conventions\\x64-calling-conventions\\"
    assert (ret.source_file, ret.source_line) == (path + "x64-calling-conventions.cpp", 11)
    perf = r.rows[1]
    assert perf.symbols == ["x64_calling_conventions!_NULL_IMPORT_DESCRIPTOR <PERF> (x64_calling_conventions+0x220f4)"]
    assert (perf.source_file, perf.source_line) == (None, None)
    # shadow space and the fifth/sixth parameters: no symbol
    assert [row.symbols for row in r.rows[2:4]] == [[None], [None]]
    crt = r.rows[4]
    assert crt.symbols == ["ucrtbased!__crt_scoped_get_last_error_reset::~__crt_scoped_get_last_error_reset+0x16"]
    assert (crt.source_file, crt.source_line) == ("minkernel\\crts\\ucrt\\inc\\corecrt_internal.h", 2056)
    assert [(row.values, row.symbols) for row in r.rows[5:]] == [
        (["4545454545454545"], [None]),
        (["4646464646464646"], [None]),
    ]


def _ts_28(c: Corpus) -> None:
    # x64 kernel IDT through the KPCR: symbol rows alternate with symbol-less halves of the entries
    r = c.output_record("families/types_symbols/28.txt")
    assert r.unit == "qword" and len(r.rows) == 16
    assert r.rows[0].address == "0xfffff80235d8b004" and r.rows[-1].address == "0xfffff80235d8b07c"
    assert [row.symbols[0] is None for row in r.rows] == [False, True] * 8
    assert r.rows[1].values == ["00102a4000000000"]
    assert r.rows[2].symbols == ["nt!KiDebugServiceTrap+0x44"]
    assert r.rows[6].values == ["fffff8023944ee00"]
    assert r.rows[6].symbols == ["nt! ?? ::FNODOBFM::`string'+0x10"]


def _ts_29(c: Corpus) -> None:
    # dps over a user thread's KTHREAD, cut by the author with "..." lines (not rows)
    r = c.output_record("families/types_symbols/29.txt")
    assert r.unit == "pointer" and len(r.rows) == 11
    assert r.rows[0].address == "0xffffe70e57dee0c0" and r.rows[3].address == "0xffffe70e57dee350"
    named = [(row.address, row.symbols[0]) for row in r.rows if row.symbols[0] is not None]
    assert named == [
        ("0xffffe70e57dee368", "nt!EmpCheckErrataList"),
        ("0xffffe70e57dee370", "nt!EmpCheckErrataList"),
        ("0xffffe70e57dee378", "nt!KiSchedulerApc"),
    ]
    assert r.rows[-1].values == ["0000000000000000"] and r.warnings == []


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "families/types_symbols/12.txt": _ts_12,
    "families/types_symbols/27.txt": _ts_27,
    "families/types_symbols/28.txt": _ts_28,
    "families/types_symbols/29.txt": _ts_29,
    "memory/01.txt": _memory_01,
    "memory/02.txt": _memory_02,
    "memory/04.txt": _memory_04,
    "memory/05.txt": _memory_05,
    "memory/08.txt": _memory_08,
    "memory/10.txt": _memory_10,
    "memory/11.txt": _memory_11,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
