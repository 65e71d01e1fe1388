"""``kdmcp.parse.exceptions``: ``.exr``, ``.lastevent``, ``.jdinfo``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus, event_kinds


def test_lastevent() -> None:
    out = "Last event: 1450.1424: Integer divide-by-zero - code c0000094 (first chance)\n  debugger time: Mon Apr 7\n"
    r = parse(".lastevent", out)
    assert (r.thread, r.code, r.first_chance) == ("1450.1424", "0xc0000094", True)


def test_old_lastevent_form() -> None:
    # MS docs debugging-a-stack-overflow.md
    r = parse(".lastevent", "Last event: Exception C00000FD, second chance \n")
    assert r.code == "0xc00000fd"
    assert r.first_chance is False


def _exceptions_errors_01(c: Corpus) -> None:
    r = c.record("exceptions_errors/01.txt", ".exr -1")
    assert r.kind == "exception_record"
    assert r.code == "0x80000003" and r.description == "Break instruction exception"
    assert r.address == "0x000000007777cb60"
    assert r.symbol == "ntdll!LdrpDoDebuggerBreak+0x0000000000000030"
    assert r.parameters == ["0x0000000000000000"]
    assert len(c.record("exceptions_errors/01.txt", "kv").frames) == 4


def _connect_08(c: Corpus) -> None:
    pre = c.blocks("connect/08.txt")[0].record
    assert event_kinds(pre) == ["pending_attach", "module_load", "exception", "initial_command"]
    assert pre.events[3].name == ".jdinfo 0x00000000003E0000"
    r = c.record("connect/08.txt", ".jdinfo 0x00000000003E0000")
    assert r.kind == "exception_record"
    assert r.thread == "0:15c8"
    assert r.code == "0xc0000005" and r.access == "write" and r.access_address == "0x0000000000000000"
    assert r.context.registers["rip"] == "0x00007ff791d81014"
    assert r.context.symbol == "CrashAV_x64!wmain+0x14"


def _exceptions_01(c: Corpus) -> None:
    # a dump: "(first/second chance not available)" is neither chance
    r = c.output_record("families/exceptions/01.txt")
    assert r.kind == "exception_record"
    assert (r.thread, r.code, r.description) == ("15ae8.133b4", "0xe0434f4d", "CLR exception")
    assert r.first_chance is None
    assert r.debugger_time == "Thu Jul 30 19:23:53.169 2015 (UTC + 2:00)"


def _exceptions_02(c: Corpus) -> None:
    r = c.output_record("families/exceptions/02.txt")
    assert (r.address, r.symbol, r.code, r.description) == ("0x000007fe9b17f963", None, "0xe0434f4d", "CLR exception")
    assert r.flags == "0x00000000" and r.parameter_count == 0 and r.parameters == []


def _exceptions_03(c: Corpus) -> None:
    # NT4-era kernel layout: a header with the record's address, "Chained Record", a hex count
    r = c.record("families/exceptions/03.txt", ".exr fe40cd88             first DWORD is the exception record")
    assert (r.record_address, r.code, r.flags, r.chained_record) == (
        "0xfe40cd88",
        "0xc0000005",
        "0x00000000",
        "0x00000000",
    )
    assert r.address == "0x8013cd0a" and r.description is None
    assert r.parameter_count == 2 and r.parameters == ["0x00000000", "0x0362cfff"]


def _exceptions_04(c: Corpus) -> None:
    r = c.record("families/exceptions/04.txt", ".lastevent")
    assert (r.code, r.first_chance, r.thread, r.debugger_time) == ("0xc00000fd", False, None, None)


def _exceptions_08(c: Corpus) -> None:
    # 5h4rrk: x64, a divide-by-zero with no parameters; the symbol keeps its 16-digit offset
    r = c.record("families/exceptions/08.txt", ".exr -1")
    assert (r.address, r.code, r.description) == ("0x00007ff7c2929e47", "0xc0000094", "Integer divide-by-zero")
    assert r.symbol == "DebugApplication!hDoRemaining+0x00000000000000f7"
    assert (r.flags, r.parameter_count, r.parameters) == ("0x00000000", 0, [])
    assert (r.access, r.access_address, r.first_chance) == (None, None, None)


def _exceptions_10(c: Corpus) -> None:
    # InsightEngineering: x64 read access violation; the second parameter is the address read
    r = c.output_record("families/exceptions/10.txt")
    assert (r.address, r.code, r.description) == ("0x00007ff8329aa826", "0xc0000005", "Access violation")
    assert r.symbol == "ntdll!RtlInitUnicodeStringEx+0x0000000000000016"
    assert (r.parameter_count, r.parameters) == (2, ["0x0000000000000000", "0x00005db157c7b535"])
    assert (r.access, r.access_address) == ("read", "0x00005db157c7b535")


def _exceptions_11(c: Corpus) -> None:
    # InsightEngineering: kernel ".exr <Arg3>" of a 0x7E dump on processor 3
    b = c.block("families/exceptions/11.txt", ".exr 0xffffa1088a4aebf8")
    assert b.prompt is not None and (b.prompt.mode, b.prompt.processor) == ("kernel", 3)
    r = b.record
    assert (r.address, r.code, r.flags) == ("0xfffff8076624f3d4", "0xc0000005", "0x00000000")
    assert r.symbol == "nt!RtlpHpVsFreeChunkInsert+0x00000000000001b4"
    assert r.parameters == ["0x0000000000000000", "0xffffffffffffffff"]
    assert (r.access, r.access_address, r.record_address) == ("read", "0xffffffffffffffff", None)


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "exceptions_errors/01.txt": _exceptions_errors_01,
    "connect/08.txt": _connect_08,
    "families/exceptions/01.txt": _exceptions_01,
    "families/exceptions/02.txt": _exceptions_02,
    "families/exceptions/03.txt": _exceptions_03,
    "families/exceptions/04.txt": _exceptions_04,
    "families/exceptions/08.txt": _exceptions_08,
    "families/exceptions/10.txt": _exceptions_10,
    "families/exceptions/11.txt": _exceptions_11,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
