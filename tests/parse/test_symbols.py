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
    assert (r.symbols[0].symbol, r.symbols[0].offset) == ("KiPageFault", "0x469")
    assert r.symbols[2].address is None  # no neighbour was printed at displacement 0


def test_ln_dml_links_and_the_exact_match_address() -> None:
    # ln with DML (Browse module / Set bu breakpoint), as a Windows 8.1 x64 syscall write-up
    # printed it for "ln fffff800`2a492200": the exact match is the left neighbour, offset 0
    out = (
        "Browse module\n"
        "Set bu breakpoint\n"
        "\n"
        "(fffff800`2a492200)   nt!KiSystemCall64   |  (fffff800`2a492348)   nt!KiSystemServiceStart\n"
        "Exact matches:\n"
        "    nt!KiSystemCall64 (<no parameter info>)\n"
    )
    r = parse("ln fffff800`2a492200", out)
    assert [(s.name, s.address, s.exact) for s in r.symbols] == [
        ("nt!KiSystemCall64", "0xfffff8002a492200", False),
        ("nt!KiSystemServiceStart", "0xfffff8002a492348", False),
        ("nt!KiSystemCall64", "0xfffff8002a492200", True),
    ]
    assert r.symbols[2].signature == "(<no parameter info>)" and r.symbols[0].offset is None
    # with no exact match ("Exact matches:" and nothing under it) only the neighbours come back
    r = parse("ln fffff804`74a1a2c0", out.rsplit("\n", 2)[0] + "\n")
    assert [s.exact for s in r.symbols] == [False, False]


def test_ln_names_with_blanks_and_data_exact_matches() -> None:
    # a compiler-made name holds blanks, as x nt!* prints it (nixawk's nt-FUNCTIONS-windows_7_x64.md:
    # "nt! ?? ::FNODOBFM::`string'"); a data symbol's exact match is printed as x prints data,
    # "nt!Name = <no type information>"
    out = (
        "(fffff800`02ac1940)   nt! ?? ::FNODOBFM::`string'+0x10   |  (fffff800`02ac1a00)   nt!KiSetPriorityThread\n"
        "(fffff800`02ab1840)   nt!KeServiceDescriptorTable   |  "
        "(fffff800`02ab1880)   nt!KeServiceDescriptorTableShadow\n"
        "Exact matches:\n"
        "    nt!KeServiceDescriptorTable = <no type information>\n"
    )
    r = parse("ln KeServiceDescriptorTable", out)
    assert [(s.name, s.offset) for s in r.symbols[:2]] == [
        ("nt! ?? ::FNODOBFM::`string'+0x10", "0x10"),
        ("nt!KiSetPriorityThread", None),
    ]
    assert r.symbols[0].symbol == " ?? ::FNODOBFM::`string'"
    last = r.symbols[-1]
    assert (last.name, last.exact, last.value, last.address) == (
        "nt!KeServiceDescriptorTable",
        True,
        "<no type information>",
        "0xfffff80002ab1840",
    )
    assert len(r.symbols) == 5


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


# --------------------------------------------------------------------------- family samples


def _ts_06(c: Corpus) -> None:
    r = c.record("families/types_symbols/06.txt", "x /f /v notepad!*main*")
    assert [(s.kind, s.address, s.size, s.name) for s in r.symbols] == [
        ("prv func", "0x0000000100003340", "249", "notepad!WinMain"),
        ("prv func", "0x000000010000a7b0", "1c", "notepad!WinMainCRTStartup$filt$0"),
        ("prv func", "0x000000010000a540", "268", "notepad!WinMainCRTStartup"),
    ]
    assert r.symbols[0].signature == "(struct HINSTANCE__ *, struct HINSTANCE__ *, char *, int)"
    assert r.symbols[2].signature == "(void)" and r.symbols[2].type is None


def _ts_07(c: Corpus) -> None:
    r = c.record("families/types_symbols/07.txt", "x /v nt!CmType*")
    assert r.kind == "symbols" and len(r.symbols) == 5
    assert {s.kind for s in r.symbols} == {"global"}
    assert [(s.address, s.size, s.symbol, s.type) for s in r.symbols] == [
        ("0x806c9e68", "0", "CmTypeName", "struct _UNICODE_STRING []"),
        ("0x806c9e68", "150", "CmTypeName", "struct _UNICODE_STRING [42]"),
        ("0x806c9e68", "0", "CmTypeName", "struct _UNICODE_STRING []"),
        ("0x805bd7b0", "0", "CmTypeString", "unsigned short *[]"),
        ("0x805bd7b0", "a8", "CmTypeString", "unsigned short *[42]"),
    ]
    assert all(s.value is None and s.module == "nt" for s in r.symbols)


def _ts_08(c: Corpus) -> None:
    plain = c.record("families/types_symbols/08.txt", "x prymes!__n*")
    typed = c.record("families/types_symbols/08.txt", "x /t prymes!__n*")
    for r in (plain, typed):
        assert r.kind == "symbols"
        assert r.warnings == ["Type information missing error for _nh_malloc"]
        assert [(s.address, s.name) for s in r.symbols] == [
            ("0x00427d84", "myModule!__nullstring"),
            ("0x0042a3c0", "myModule!_nstream"),
            ("0x004021c1", "myModule!MyStructInstance"),
            ("0x00427d14", "myModule!_NLG_Destination"),
        ]
        assert [s.value for s in r.symbols] == [
            '0x00425de8 "(null)"',
            "512",
            "struct MyStruct",
            "<no type information>",
        ]
    assert [s.type for s in plain.symbols] == [None] * 4
    assert [s.type for s in typed.symbols] == ["char *", "int", "struct MyStruct", "<NoType>"]


def _ts_09(c: Corpus) -> None:
    r = c.record("families/types_symbols/09.txt", "x Fabric!Common::ConfigEntry*TimeSpan?")
    assert [(s.address, s.module, s.signature) for s in r.symbols] == [
        ("0x000007f6466a2f9c", "Fabric", "(void)"),
        ("0x000007f6466a3020", "Fabric", "(void)"),
    ]
    assert r.symbols[1].symbol == "Common::ConfigEntry<Common::TimeSpan>::~ConfigEntry<Common::TimeSpan>"


def _ts_10(c: Corpus) -> None:
    # x /0 prints addresses only, /1 names only, /2 both (under the WOW64 prompt 0:000:x86>)
    only_addresses = c.record("families/types_symbols/10.txt", "x /0 MyApp!Add*")
    assert [(s.address, s.name) for s in only_addresses.symbols] == [("0x00b51410", None), ("0x00b513d0", None)]
    only_names = c.record("families/types_symbols/10.txt", "x /1 MyApp!Add*")
    assert [(s.address, s.name) for s in only_names.symbols] == [
        (None, "MyApp!AddThreeIntegers"),
        (None, "MyApp!AddTwoIntegers"),
    ]
    both = c.record("families/types_symbols/10.txt", "x /2 MyApp!Add*")
    assert [(s.address, s.symbol) for s in both.symbols] == [
        ("0x00b51410", "AddThreeIntegers"),
        ("0x00b513d0", "AddTwoIntegers"),
    ]
    assert c.block("families/types_symbols/10.txt", "x /2 MyApp!Add*").prompt.text.strip() == "0:000:x86>"


def _ts_11(c: Corpus) -> None:
    r = c.record("families/types_symbols/11.txt", "x /t mmcss!CiSystemResponsiveness")
    (s,) = r.symbols
    assert (s.address, s.type, s.name, s.value) == (
        "0xfffff805284482f8",
        "<NoType>",
        "mmcss!CiSystemResponsiveness",
        "<no type information>",
    )


def _ts_22(c: Corpus) -> None:
    # 14 ln commands of a manual stack walk (NT 4-era kd): each prints the symbol before the
    # address (+displacement) and the next one (-distance), whatever the blanks around "|"
    name = "families/types_symbols/22.txt"
    blocks = [b for b in c.blocks(name) if b.command.startswith("ln ")]
    assert len(blocks) == 14
    assert all(b.record.kind == "symbols" and len(b.record.symbols) == 2 for b in blocks)
    first = c.record(name, "ln 80136039").symbols
    assert [(s.address, s.module, s.symbol, s.offset) for s in first] == [
        ("0x80136039", "NT", "_KiServiceExit", "0x1e"),
        ("0x80136039", "NT", "_KiServiceExit2", "-0x177"),
    ]
    # no blank between the address and the right-hand name
    glued = c.record(name, "ln fe6b2c04").symbols[1]
    assert (glued.name, glued.symbol, glued.offset) == ("rdr!_RdrReferenceServer-0x20", "_RdrReferenceServer", "-0x20")
    # a pair wrapped onto a second, indented line
    wrapped = c.record(name, "ln fe68f57a").symbols
    assert [s.name for s in wrapped] == [
        "rdr!_RdrDereferenceDiscardableCode+0xb4",
        "rdr!_RdrUninitializeDiscardableCode-0xa",
    ]
    exact = c.record(name, "ln 801036fe").symbols[0]
    assert (exact.symbol, exact.offset, exact.exact) == ("_KeWaitForSingleObject", None, False)
    assert [b.record.symbols[0].address for b in blocks][-1] == "0xfe682050"
    assert all(s.address == "0x" + b.command.split()[1] for b in blocks for s in b.record.symbols)


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "families/types_symbols/22.txt": _ts_22,
    "families/types_symbols/06.txt": _ts_06,
    "families/types_symbols/07.txt": _ts_07,
    "families/types_symbols/08.txt": _ts_08,
    "families/types_symbols/09.txt": _ts_09,
    "families/types_symbols/10.txt": _ts_10,
    "families/types_symbols/11.txt": _ts_11,
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
