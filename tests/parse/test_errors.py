"""``kdmcp.parse.errors``: the debugger's own complaints, classified; errors alone, warnings alongside a record.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


@pytest.mark.parametrize(
    ("command", "output", "category"),
    [
        ("u bad", "       ^ Syntax error in 'u bad'", "syntax"),
        ("r rip rip", "          ^ Extra character error in 'r rip rip'", "syntax"),
        ("db 0 L-1", "        ^ Range error in 'db 0 L-1'", "invalid_argument"),
        (
            "dd KiGlobalTimerResolutionRequests L1",
            "Couldn't resolve error at 'KiGlobalTimerResolutionRequests '",
            "unresolved_symbol",
        ),
        ("dt nt!_FOO", "Symbol nt!_FOO not found.", "unresolved_symbol"),
        ("!foo", "No export foo found", "no_export"),
        (
            ".reload foo.sys",
            "*** ERROR: Module load completed but symbols could not be loaded for foo.sys",
            "symbol_load",
        ),
        (
            ".dump c:\\x.dmp",
            "          ^ Operation not supported in current debug session '.dump c:\\x.dmp'",
            "not_supported",
        ),
        (
            "!load foo",
            'The call to LoadLibrary(foo) failed, Win32 error 0n2\n    "The system cannot find the file specified."',
            "extension_load",
        ),
        ("bp 0", "Unable to insert breakpoint 0 at 00000000`00000000, Win32 error 0n998", "breakpoint"),
    ],
)
def test_error_categories(command: str, output: str, category: str) -> None:
    r = parse(command, output + "\n")
    assert r.kind == "error" and r.category == category, r
    assert r.raw == output + "\n"


def test_warnings_ride_along_with_a_successful_record() -> None:
    out = (
        "*** ERROR: Symbol file could not be found.  Defaulted to export symbols for ntdll.dll - \n"
        " # Child-SP          RetAddr           Call Site\n"
        "00 00000000`0015eed0 00000000`77732ef5 ntdll!DbgBreakPoint\n"
    )
    r = parse("k", out)
    assert r.kind == "stack" and len(r.frames) == 1
    assert r.warnings == ["*** ERROR: Symbol file could not be found.  Defaulted to export symbols for ntdll.dll -"]


def _exceptions_errors_02(c: Corpus) -> None:
    first = c.record("exceptions_errors/02.txt", "db rip")
    assert first.rows[0].values[:4] == ["cc", "eb", "00", "48"]
    assert first.rows[0].ascii == "...H..8........."
    err = c.record("exceptions_errors/02.txt", "ea eip helloworld")
    assert err.kind == "error" and err.category == "syntax"
    assert err.message == "Quotes required in 'ea eip helloworld'"
    after = c.record("exceptions_errors/02.txt", "db rip", nth=1)
    assert after.rows[0].ascii == "helloworld......"
    assert after.rows[5].ascii == ".r..t$4;.s......"


def _exceptions_errors_06(c: Corpus) -> None:
    (block,) = c.blocks("exceptions_errors/06.txt")  # "C:\Debuggers>" is a shell, not a debugger prompt
    r = block.record
    assert r.kind == "events"
    errors = [e for e in r.events if e.kind == "error"]
    assert [e.description for e in errors] == ["file", "file", "file"]
    assert any("HRESULT 0x80004002" in e.text for e in errors)
    assert [e.name for e in r.events if e.kind == "dump_open"] == [r"C:\mydir\dumpfile2.dmp"]


def _exceptions_errors_08(c: Corpus) -> None:
    r = c.record("exceptions_errors/08.txt", r".scriptload C:\WinDbg\Scripts\TestScript.js")
    # the error landed on the next prompt line; it is attributed to .scriptload
    assert r.kind == "error" and r.category == "script"
    assert [e.category for e in r.errors] == ["script", "script"]
    assert c.block("exceptions_errors/08.txt", r".scriptload C:\WinDbg\Scripts\TestScript.js").prompt.machine == "x86"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "exceptions_errors/02.txt": _exceptions_errors_02,
    "exceptions_errors/06.txt": _exceptions_errors_06,
    "exceptions_errors/08.txt": _exceptions_errors_08,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
