"""``kdmcp.parse.types``: ``dt`` layouts and instances.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_dt_a_array_elements_under_their_field() -> None:
    # dt page, MS docs: "dt mt1 -a gn"
    out = "   +0x00c gn : \n    [00] 0x1\n    [01] 0x2\n"
    r = parse("dt mt1 -a gn", out)
    assert r.instance
    assert [(f.name, f.value, f.depth) for f in r.fields] == [("gn", None, 0), ("[00]", "0x1", 1), ("[01]", "0x2", 1)]


def test_dt_ca_rows_without_fields() -> None:
    # dt page, MS docs: "dt -ca10 ULONG 01002be0"
    r = parse("dt -ca10 ULONG 01002be0", "[0] 0x1001098\n[1] 0x1\n[2] 0xdead\n")
    assert r.kind == "type_dump" and r.instance
    assert [(f.name, f.value) for f in r.fields] == [("[0]", "0x1001098"), ("[1]", "0x1"), ("[2]", "0xdead")]


def test_dt_b_element_markers_hold_their_fields() -> None:
    # dt page, MS docs: "dt nt!_ERESOURCE -b 0x8154f040"
    out = (
        "   +0x018 OwnerThreads     :\n"
        "    [00]\n"
        "      +0x000 OwnerThread      : 0\n"
        "    [01]\n"
        "      +0x000 OwnerThread      : 0x8167f563\n"
        "   +0x028 ContentionCount  : 0\n"
    )
    r = parse("dt nt!_ERESOURCE -b 0x8154f040", out)
    assert [(f.name, f.value, f.depth) for f in r.fields] == [
        ("OwnerThreads", None, 0),
        ("[00]", None, 1),
        ("OwnerThread", "0", 2),
        ("[01]", None, 1),
        ("OwnerThread", "0x8167f563", 2),
        ("ContentionCount", "0", 0),
    ]


def test_dt_value_after_two_blanks_has_no_leading_blank() -> None:
    # dt page, MS docs: "dt nt!_PEB CriticalSectionTimeout.." and the -b example
    out = (
        "   +0x070 CriticalSectionTimeout   :  0xffffe86d`079b8000\n"
        "   +0x000 SystemResourcesList :  [ 0x815bb388 - 0x816cd478 ]\n"
    )
    r = parse("dt nt!_PEB CriticalSectionTimeout.. 7ffdf000", out)
    assert [f.value for f in r.fields] == ["0xffffe86d079b8000", "[ 0x815bb388 - 0x816cd478 ]"]


def test_dt_pointer_then_type_then_what_it_points_at() -> None:
    # bug check 0x9F page, MS docs ("dt nt!TRIAGE_9F_POWER"), and "Exploring the Windows
    # Executive - Part 1" (dt nt!_OBJECT_TYPE -r1): a list entry's links, a function's symbol
    out = (
        "   +0x008 IrpList          : 0xfffff800`01c78bd0 _LIST_ENTRY [ 0xfffffa80`09f43620 - 0xfffffa80`0ad00170 ]\n"
        "   +0x03c DeleteProcedure  : 0x827fa2b4        void  nt!IopDeleteDevice+0\n"
    )
    r = parse("dt nt!TRIAGE_9F_POWER fffff8000386c3d8", out)
    assert [(f.value, f.type) for f in r.fields] == [("0xfffff80001c78bd0", "_LIST_ENTRY"), ("0x827fa2b4", "void")]


def test_dt_r1_children_are_one_level_down() -> None:
    # "Exploring the Windows Executive - Part 1": dt -r1 indents children 10 blanks
    out = (
        "   +0x028 TypeInfo         : _OBJECT_TYPE_INITIALIZER\n"
        "          +0x000 Length           : 0x50\n"
        "   +0x078 TypeLock         : _EX_PUSH_LOCK\n"
        "      +0x000 Locked           : 0y0\n"
    )
    r = parse("dt nt!_OBJECT_TYPE 852cd040 -r1", out)
    assert [(f.name, f.depth) for f in r.fields] == [("TypeInfo", 0), ("Length", 1), ("TypeLock", 0), ("Locked", 1)]


def _memory_06(c: Corpus) -> None:
    r = c.record("memory/06.txt", "dt _kidtentry64 (idtr + (0xa0*0x10))")
    assert r.kind == "type_dump" and r.instance
    assert r.type_name == "ntdll!_KIDTENTRY64"
    assert len(r.fields) == 11
    by_name = {f.name: f for f in r.fields}
    assert by_name["OffsetLow"].value == "0xe700"
    assert by_name["Type"].value == "0y01110 (0xe)" and by_name["Type"].bitfield
    assert by_name["Alignment"].value == "0x51568e000010e700"


def _memory_07(c: Corpus) -> None:
    r = c.record("memory/07.txt", "dt _KPCR")
    assert not r.instance
    assert r.fields[0].name == "NtTib" and r.fields[0].type == "_NT_TIB"
    assert r.fields[-1].offset == "0x180" and r.fields[-1].name == "Prcb"
    assert all(f.value is None for f in r.fields)


def _memory_09(c: Corpus) -> None:
    r = c.record("memory/09.txt", "dt _UNICODE_STRING 0x00000000`002a1f40+70")
    assert r.preview == '"C:\\Windows\\system32\\cmd.exe" '
    assert [(f.name, f.value) for f in r.fields[:2]] == [("Length", "0x3c"), ("MaximumLength", "0x3e")]


def _memory_12(c: Corpus) -> None:
    r = c.record("memory/12.txt", "dt nt!_PEB 7ffdf000")
    assert r.instance and r.type_name == "ntdll!_PEB"
    by_name = {f.name: f for f in r.fields}
    assert by_name["BeingDebugged"].value == "0x1 ''"
    assert (by_name["Ldr"].value, by_name["Ldr"].type) == ("0x77c08880", "_PEB_LDR_DATA")
    assert by_name["SubSystemData"].value == "(null)"
    assert by_name["NumberOfProcessors"].value == "1"
    assert by_name["ImageUsesLargePages"].bitfield


def _memory_15(c: Corpus) -> None:
    r = c.record("memory/15.txt", "dt dxgkrnl!_TDR_RECOVERY_CONTEXT ffffe000c2c404c0")
    by_name = {f.name: f for f in r.fields}
    assert by_name["TimeoutReason"].value == "9 ( TdrEngineTimeoutPromotedToAdapterReset )"
    assert (by_name["Tick"].type, by_name["Tick"].value) == ("_ULARGE_INTEGER", "0xb2")
    assert by_name["ReferenceCount"].value == "0n1"
    assert by_name["DbgOwnerTag"].value == "0xfffff8016470c14c"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "memory/06.txt": _memory_06,
    "memory/07.txt": _memory_07,
    "memory/09.txt": _memory_09,
    "memory/12.txt": _memory_12,
    "memory/15.txt": _memory_15,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
