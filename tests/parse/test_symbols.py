"""``kdmcp.parse.symbols``: ``x``, ``ln``, ``.sympath``, ``.reload``, ``ld``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_ln_neighbours_and_exact_match() -> None:
    out = (
        "(fffff801`5f9a3a10)   nt!KiPageFault+0x469   |  (fffff801`5f9a3f00)   nt!KiRaiseSecurityCheckFailure\n"
        "Exact matches:\n"
        "    nt!KiPageFault (<no parameter info>)\n"
    )
    r = parse("ln rip", out)
    assert [s.name for s in r.symbols] == ["nt!KiPageFault+0x469", "nt!KiRaiseSecurityCheckFailure", "nt!KiPageFault"]
    assert r.symbols[2].exact and r.symbols[0].address == "0xfffff8015f9a3a10"


def _exceptions_errors_11(c: Corpus) -> None:
    r = c.record("exceptions_errors/11.txt", "x /D /f DisplayGreeting!*")
    assert r.kind == "symbols"
    assert len(r.symbols) == 7
    assert r.warnings == ["*** WARNING: Unable to verify timestamp for DisplayGreeting"]
    s = r.symbols[2]
    assert s.name == "DisplayGreeting!std::__array_traits<wchar_t, 50>::_S_ptr"
    assert s.signature == "(wchar_t (*)[50])"
    assert r.symbols[5].address == "0x000056517935b225" and r.symbols[5].symbol == "main"


def _misc_01(c: Corpus) -> None:
    r = c.record("misc/01.txt", ".sympath")
    assert r.kind == "symbol_path"
    assert r.path == "srv*"
    assert r.expanded_path == "SRV*C:\\Windows\\Symbols*https://msdl.microsoft.com/download/symbols"
    assert r.validation == [{"response": "Deferred", "location": "srv*"}]
    assert c.record("misc/01.txt", ".symfix C:\\Symbols").kind == "text"
    after = c.record("misc/01.txt", ".sympath", nth=1)
    assert after.expanded_path.startswith("SRV*C:\\Symbols*")


def _misc_02(c: Corpus) -> None:
    r = c.record("misc/02.txt", "ld *")
    assert r.kind == "symbol_load"
    assert r.modules == [
        "cmd",
        "kernel32",
        "USER32",
        "ntdll",
        "WINBRAND",
        "KERNELBASE",
        "LPK",
        "USP10",
        "msvcrt",
        "GDI32",
    ]
    assert c.record("misc/02.txt", "ld kernel32").modules == ["kernel32"]


def _misc_08(c: Corpus) -> None:
    r = c.record("misc/08.txt", ".reload")
    assert r.messages == ["Reloading current modules"]
    assert r.progress_dots == 16


def _misc_11(c: Corpus) -> None:
    r = c.record("misc/11.txt", "x /D /f FirstDriverSample!d*")
    assert [(s.address, s.name) for s in r.symbols] == [
        ("0xfffff80064521020", "FirstDriverSample!DriverEntry"),
        ("0xfffff800645210f7", "FirstDriverSample!DbgPrint"),
    ]
    assert r.symbols[0].signature == "(struct _DRIVER_OBJECT *, struct _UNICODE_STRING *)"


def _modules_06(c: Corpus) -> None:
    assert c.record("modules/06.txt", ".reload /f mmcss.sys").kind == "text"  # printed nothing
    r = c.record("modules/06.txt", "lm m mmcss")
    (m,) = r.modules
    assert m.symbol_status == "pdb symbols"
    assert m.symbol_file == r"c:\symbols\mmcss.pdb\9E36707273FDF82AB362DBA6ACCC09671\mmcss.pdb"
    assert c.block("modules/06.txt", "lm m mmcss").prompt.mode == "local_kernel"


def _modules_07(c: Corpus) -> None:
    (m,) = c.record("modules/07.txt", "lm m mmcss").modules
    assert (m.name, m.symbol_status, m.symbol_file) == ("mmcss", "deferred", None)
    assert m.end == "0xfffff80528456000"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "exceptions_errors/11.txt": _exceptions_errors_11,
    "misc/01.txt": _misc_01,
    "misc/02.txt": _misc_02,
    "misc/08.txt": _misc_08,
    "misc/11.txt": _misc_11,
    "modules/06.txt": _modules_06,
    "modules/07.txt": _modules_07,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
