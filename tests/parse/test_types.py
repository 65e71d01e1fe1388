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


# --------------------------------------------------------------------------- family samples


def _ts_01(c: Corpus) -> None:
    # dt NT!_PEB 7ffd8000 -r: notepad on Windows 7 SP1 x86, three levels of nesting
    r = c.record("families/types_symbols/01.txt", "dt NT!_PEB 7ffd8000 -r")
    assert r.kind == "type_dump" and r.instance and r.type_name == "ntdll!_PEB"
    assert len(r.fields) == 220
    f = r.fields
    assert (f[12].name, f[12].value, f[12].type, f[12].depth) == ("Ldr", "0x77758880", "_PEB_LDR_DATA", 0)
    assert (f[13].name, f[13].value, f[13].depth) == ("Length", "0x30", 1)
    # an embedded _LIST_ENTRY: its type, the links dt prints on the line, its own links one deeper
    assert (f[16].name, f[16].type, f[16].value, f[16].preview) == (
        "InLoadOrderModuleList",
        "_LIST_ENTRY",
        None,
        "[ 0x471c98 - 0x47ee28 ]",
    )
    assert (f[17].name, f[17].value, f[17].type, f[17].depth) == ("Flink", "0x00471c98", "_LIST_ENTRY", 2)
    assert f[17].preview == "[ 0x471d18 - 0x7775888c ]"
    by_name = {x.name: x for x in f if x.depth == 0}
    assert by_name["BeingDebugged"].value == "0x1 ''"
    assert by_name["IsImageDynamicallyRelocated"].value == "0y1" and by_name["IsImageDynamicallyRelocated"].bitfield
    assert by_name["SubSystemData"].value == "(null)"
    # a pointer to a pointer: "0x7f6f0590  -> (null)", "0x77758500  -> 0x00470000 Void"
    assert (by_name["ReadOnlyStaticServerData"].value, by_name["ReadOnlyStaticServerData"].preview) == (
        "0x7f6f0590",
        "(null)",
    )
    assert (by_name["ProcessHeaps"].value, by_name["ProcessHeaps"].preview) == ("0x77758500", "0x00470000 Void")
    assert (by_name["CriticalSectionTimeout"].type, by_name["CriticalSectionTimeout"].value) == (
        "_LARGE_INTEGER",
        "0xffffe86d079b8000",
    )
    assert by_name["TlsBitmapBits"].value == "[2] 0x1ffffff"
    assert by_name["OSBuildNumber"].value == "0x1db1"
    assert (by_name["CSDVersion"].type, by_name["CSDVersion"].preview) == ("_UNICODE_STRING", "Service Pack 1")
    # ProcessParameters' ImagePathName and its Buffer, two and three levels down
    image = next(x for x in f if x.name == "ImagePathName")
    assert (image.depth, image.type, image.preview) == (1, "_UNICODE_STRING", "C:\\Windows\\system32\\notepad.exe")
    buffer = f[f.index(image) + 3]
    assert (buffer.name, buffer.depth, buffer.value, buffer.preview) == (
        "Buffer",
        2,
        "0x00471aac",
        "C:\\Windows\\system32\\notepad.exe",
    )
    locks = [x for x in f if x.name == "LockCount"]
    assert [(x.value, x.depth) for x in locks] == [("0n-1", 1), ("0n-1", 1)]
    assert f[-1].name == "SpareTracingBits" and f[-1].value == "0y000000000000000000000000000000 (0)"
    assert sum(1 for x in f if x.depth == 0) == 91


def _ts_02(c: Corpus) -> None:
    r = c.record("families/types_symbols/02.txt", "dt nt!_KIDTENTRY64")
    assert not r.instance and r.type_name == "nt!_KIDTENTRY64"  # dt printed no header line: the command names it
    assert [(x.offset, x.name) for x in r.fields][:3] == [
        ("0x000", "OffsetLow"),
        ("0x002", "Selector"),
        ("0x004", "IstIndex"),
    ]
    assert len(r.fields) == 11
    bits = [(x.name, x.type) for x in r.fields if x.bitfield]
    assert bits == [
        ("IstIndex", "Pos 0, 3 Bits"),
        ("Reserved0", "Pos 3, 5 Bits"),
        ("Type", "Pos 8, 5 Bits"),
        ("Dpl", "Pos 13, 2 Bits"),
        ("Present", "Pos 15, 1 Bit"),
    ]
    assert (r.fields[-1].offset, r.fields[-1].name, r.fields[-1].type) == ("0x000", "Alignment", "Uint8B")
    assert all(x.depth == 0 and x.value is None for x in r.fields)


def _ts_03(c: Corpus) -> None:
    # the author cut rows ("   ....") and annotated one ("//256 pointers max as noted earlier")
    r = c.record("families/types_symbols/03.txt", "dt _KPRCB")
    assert r.type_name == "ntdll!_KPRCB" and not r.instance
    assert [x.name for x in r.fields] == ["MxCsr", "LegacyNumber", "ReservedMustBeZero", "InterruptObject"]
    last = r.fields[-1]
    assert (last.offset, last.type) == ("0x2e80", "[256] Ptr64 Void")


def _ts_04(c: Corpus) -> None:
    r = c.record("families/types_symbols/04.txt", "dt foo!Common::ConfigEntry<Common::TimeSpan>")
    assert not r.instance
    assert [(x.name, x.type) for x in r.fields] == [
        ("__VFN_table", "Ptr64"),
        ("componentConfig_", "Ptr64 Common::ComponentConfig"),
        ("section_", "std::basic_string<wchar_t,std::char_traits<wchar_t>,std::allocator<wchar_t> >"),
        ("key_", "std::basic_string<wchar_t,std::char_traits<wchar_t>,std::allocator<wchar_t> >"),
    ]
    assert [x.offset for x in r.fields] == ["0x000", "0x008", "0x010", "0x038"]


def _ts_05(c: Corpus) -> None:
    r = c.record("families/types_symbols/05.txt", "dt foo!MyClass")
    assert [(x.offset, x.name, x.type) for x in r.fields] == [
        ("0x000", "IntMemberVariable", "Int4B"),
        ("0x004", "FloatMemberVariable", "Float"),
        ("0x008", "BoolMemberVariable", "Bool"),
        ("0x00c", "PtrMemberVariable", "Ptr32 MyClass"),
    ]


def _ts_13(c: Corpus) -> None:
    # dt nt!* lists the module's types, one "ntkrnlmp!" row each (1039 rows, repeats as printed)
    r = c.record("families/types_symbols/13.txt", "dt nt!*")
    assert r.kind == "type_dump" and r.fields == [] and r.type_name is None
    names = [t.name for t in r.types]
    assert len(names) == 1039
    assert names[:3] == ["ntkrnlmp!LIST_ENTRY64", "ntkrnlmp!LIST_ENTRY32", "ntkrnlmp!_KSYSTEM_TIME"]
    assert names[-1] == "ntkrnlmp!_KTRANSACTION_HISTORY"
    assert all(n.startswith("ntkrnlmp!") for n in names)
    assert "ntkrnlmp!_EPROCESS" in names and "ntkrnlmp!<unnamed-tag>" in names
    assert names.count("ntkrnlmp!_QUAD") == 3
    assert all(t.address is None and t.size is None for t in r.types)


def _ts_14(c: Corpus) -> None:
    # globals carry their address, types none (dt page: "those prefixed with an address are
    # actual instances; those without addresses are type definitions")
    r = c.record("families/types_symbols/14.txt", "dt thismodule!MY*")
    assert [(t.name, t.address) for t in r.types] == [
        ("thismodule!myglobal1", "0x010029b8"),
        ("thismodule!myglobal2", "0x01002990"),
        ("thismodule!MYCLASS1", None),
        ("thismodule!MYCLASS2", None),
        ("thismodule!MYCLASS3", None),
        ("thismodule!MYTYPE3::u", None),
        ("thismodule!MYTYPE1", None),
        ("thismodule!MYTYPE3", None),
        ("thismodule!MYTYPE3", None),
        ("thismodule!MYFLAGS", None),
    ]


def _ts_15(c: Corpus) -> None:
    r = c.record("families/types_symbols/15.txt", "dt -s 2 -v thismodule!*")
    assert r.kind == "type_dump" and len(r.types) == 9
    assert {t.size for t in r.types} == {"002"}
    assert [t.name for t in r.types if t.address is None] == [
        "thismodule!wchar_t",
        "thismodule!WORD",
        "thismodule!USHORT",
        "thismodule!SHORT",
        "thismodule!u_short",
        "thismodule!WCHAR",
    ]
    assert [(t.address, t.name) for t in r.types if t.address] == [
        ("0x00427a34", "thismodule!numberOfShips"),
        ("0x00427a32", "thismodule!numberOfPlanes"),
        ("0x00427a30", "thismodule!totalNumberOfItems"),
    ]


def _ts_16(c: Corpus) -> None:
    # dt -l walks ActiveProcessLinks; -o drops the offsets, -i the indent; the author cut at "...."
    r = c.record(
        "families/types_symbols/16.txt", "dt nt!_EPROCESS -l ActiveProcessLinks.Flink -y Ima -yoi Uni 814856f0"
    )
    assert r.kind == "type_dump" and r.instance and r.fields == []
    assert [(e.link, e.address) for e in r.list_entries] == [
        ("ActiveProcessLinks.Flink", "0x814856f0"),
        ("ActiveProcessLinks.Flink", "0x8138a030"),
        ("ActiveProcessLinks.Flink", "0x81372368"),
        ("ActiveProcessLinks.Flink", "0x81369930"),
    ]
    assert [(f.name, f.value) for f in r.list_entries[0].fields] == [
        ("UniqueProcessId", "0x00000008"),
        ("ImageFileName", '[16] "System"'),
    ]
    assert [e.fields[0].value for e in r.list_entries] == ["0x00000008", "0x00000084", "0x000000a0", "0x000000b4"]
    assert [e.fields[1].value for e in r.list_entries][-1] == '[16] "winlogon.exe"'
    assert all(f.offset == "" and f.depth == 0 for e in r.list_entries for f in e.fields)


def _ts_17(c: Corpus) -> None:
    r = c.record("families/types_symbols/17.txt", "dt nt!_PEB Ldr Ldr. 7ffdf000")
    assert [(f.name, f.depth) for f in r.fields][:2] == [("Ldr", 0), ("Length", 1)]
    assert (r.fields[0].value, r.fields[0].type) == ("0x00191ea0", None)
    assert len(r.fields) == 8 and all(f.depth == 1 for f in r.fields[1:])
    lists = [(f.name, f.type, f.preview) for f in r.fields if f.type == "_LIST_ENTRY"]
    assert lists == [
        ("InLoadOrderModuleList", "_LIST_ENTRY", "[ 0x191ee0 - 0x192848 ]"),
        ("InMemoryOrderModuleList", "_LIST_ENTRY", "[ 0x191ee8 - 0x192850 ]"),
        ("InInitializationOrderModuleList", "_LIST_ENTRY", "[ 0x191f58 - 0x192858 ]"),
    ]
    assert r.fields[-1].name == "EntryInProgress" and r.fields[-1].value == "(null)"


def _ts_18(c: Corpus) -> None:
    r = c.record("families/types_symbols/18.txt", "dt nt!_PEB CriticalSectionTimeout.. 7ffdf000")
    assert [(f.name, f.value, f.depth) for f in r.fields] == [
        ("CriticalSectionTimeout", "0xffffe86d079b8000", 0),
        ("LowPart", "0x79b8000", 1),
        ("HighPart", "-6035", 1),
        ("u", None, 1),
        ("LowPart", "0x79b8000", 2),
        ("HighPart", "-6035", 2),
        ("QuadPart", "-25920000000000", 1),
    ]


def _ts_19(c: Corpus) -> None:
    r = c.record("families/types_symbols/19.txt", "dt mcl1 m_t1.")
    assert r.instance
    assert [(f.offset, f.name, f.value, f.depth) for f in r.fields][:3] == [
        ("0x070", "m_t1", None, 0),
        ("0x000", "a", "0", 1),
        ("0x004", "b", "0 '", 1),
    ]
    assert r.fields[5].name == "gn" and r.fields[5].value == "[6] 0x0"
    assert len(r.fields) == 7


def _ts_20(c: Corpus) -> None:
    r = c.record("families/types_symbols/20.txt", "dt nt!_ERESOURCE -b 0x8154f040")
    assert len(r.fields) == 23
    assert r.fields[0].value == "[ 0x815bb388 - 0x816cd478 ]"
    markers = [(i, f.name, f.depth) for i, f in enumerate(r.fields) if f.offset == ""]
    assert markers == [(9, "[00]", 1), (13, "[01]", 1)]
    assert (r.fields[14].name, r.fields[14].value, r.fields[14].depth) == ("OwnerThread", "0x8167f563", 2)
    assert (r.fields[-1].offset, r.fields[-1].name, r.fields[-1].value) == ("0x034", "SpinLock", "0")


def _ts_21(c: Corpus) -> None:
    r = c.record("families/types_symbols/21.txt", "dt -ca4 . 01002d00")
    assert r.type_name == "ULONG"  # "Using sym ULONG"
    assert [(f.name, f.value) for f in r.fields] == [
        ("[0]", "0x12"),
        ("[1]", "0x4ac"),
        ("[2]", "0xbadfeed"),
        ("[3]", "0x2"),
    ]


def _ts_23(c: Corpus) -> None:
    # the author's "// callback address" notes stay out of the types (nohuto's windbg-notes)
    r = c.record("families/types_symbols/23.txt", "dt nt!_KDPC")
    assert len(r.fields) == 11 and not r.instance
    by_name = {f.name: f for f in r.fields}
    assert by_name["DeferredRoutine"].type == "Ptr64     void"
    assert by_name["DeferredContext"].type == "Ptr64 Void"
    assert by_name["SystemArgument2"].type == "Ptr64 Void"
    assert [(f.offset, f.name) for f in r.fields][:2] == [("0x000", "TargetInfoAsUlong"), ("0x000", "Type")]
    assert r.fields[-1].offset == "0x038" and r.fields[-1].name == "DpcData"


def _ts_24(c: Corpus) -> None:
    r = c.record("families/types_symbols/24.txt", "dt nt!_KDPC_DATA")
    assert [(f.offset, f.name, f.type) for f in r.fields] == [
        ("0x000", "DpcList", "_KDPC_LIST"),
        ("0x010", "DpcLock", "Uint8B"),
        ("0x018", "DpcQueueDepth", "Int4B"),
        ("0x01c", "DpcCount", "Uint4B"),
        ("0x020", "ActiveDpc", "Ptr64 _KDPC"),
        ("0x028", "LongDpcPresent", "Uint4B"),
        ("0x02c", "Padding", "Uint4B"),
    ]


def _ts_25(c: Corpus) -> None:
    name = "families/types_symbols/25.txt"
    first = c.record(name, "dt nt!_KPRCB fffff80065eb2180 ClockOwner ThreadDpcEnable MHz")
    assert first.instance
    assert [(f.offset, f.name, f.value) for f in first.fields] == [
        ("0x021", "ClockOwner", "0x1 ''"),
        ("0x044", "MHz", "0xe74"),  # "// 3700" is the author's
        ("0x33b8", "ThreadDpcEnable", "0x1 ''"),
    ]
    second = c.record(
        name, "dt nt!_KPRCB ffffa68161edc180 ClockOwner ThreadDpcEnable MHz // PRCB address of processor 1"
    )
    assert [f.value for f in second.fields] == ["0 ''", "0xe74", "0x1 ''"]


def _ts_26(c: Corpus) -> None:
    # a function pointer: value, return type "unsigned char", then the target with no symbol
    r = c.record(
        "families/types_symbols/26.txt",
        "dt nt!_KINTERRUPT ffff970022900500 Vector Irql SynchronizeIrql ServiceRoutine ServiceContext",
    )
    routine, context, vector, irql, sync = r.fields
    assert (routine.name, routine.value, routine.type, routine.preview) == (
        "ServiceRoutine",
        "0xfffff8032fea9100",
        "unsigned char",
        "+fffff8032fea9100",
    )
    assert (context.value, context.type, context.preview) == ("0xffffe60b68e89c00", "Void", None)
    assert (vector.offset, vector.value) == ("0x058", "0x70")
    assert irql.value == "0x7 ''" and sync.value == "0x7 ''"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "families/types_symbols/01.txt": _ts_01,
    "families/types_symbols/02.txt": _ts_02,
    "families/types_symbols/03.txt": _ts_03,
    "families/types_symbols/04.txt": _ts_04,
    "families/types_symbols/05.txt": _ts_05,
    "families/types_symbols/13.txt": _ts_13,
    "families/types_symbols/14.txt": _ts_14,
    "families/types_symbols/15.txt": _ts_15,
    "families/types_symbols/16.txt": _ts_16,
    "families/types_symbols/17.txt": _ts_17,
    "families/types_symbols/18.txt": _ts_18,
    "families/types_symbols/19.txt": _ts_19,
    "families/types_symbols/20.txt": _ts_20,
    "families/types_symbols/21.txt": _ts_21,
    "families/types_symbols/23.txt": _ts_23,
    "families/types_symbols/24.txt": _ts_24,
    "families/types_symbols/25.txt": _ts_25,
    "families/types_symbols/26.txt": _ts_26,
    "memory/06.txt": _memory_06,
    "memory/07.txt": _memory_07,
    "memory/09.txt": _memory_09,
    "memory/12.txt": _memory_12,
    "memory/15.txt": _memory_15,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
