"""Per-sample checks, ``analyze/`` and ``memory/`` families."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Corpus = Any  # the session fixture from conftest.py


def _analyze_01(c: Corpus) -> None:
    r = c.record("analyze/01.txt", "!analyze -v")
    assert r.kind == "analysis" and r.mode == "kernel"
    assert r.bugcheck.code == "0xd1"
    assert r.bugcheck.name == "DRIVER_IRQL_NOT_LESS_OR_EQUAL"
    assert r.bugcheck.args == [
        "0xffffd8024aaa8010",
        "0x0000000000000002",
        "0x0000000000000000",
        "0xfffff80060da1981",
    ]
    assert r.bugcheck.arg_descriptions[0] == "memory referenced"
    assert r.bugcheck.description.startswith("An attempt was made to access a pageable")


def _analyze_02(c: Corpus) -> None:
    # continuation pasted without its prompt line: recognised as an analysis anyway
    (block,) = c.blocks("analyze/02.txt")
    r = block.record
    assert r.kind == "analysis" and r.mode == "kernel"
    assert r.process_name == "notmyfault64.exe"
    assert r.module_name == "myfault" and r.image_name == "myfault.sys"
    assert r.symbol_name == "myfault+1981"
    assert r.failure_bucket_id == "AV_myfault!unknown_function"
    assert r.failure_id_hash == "{9745090a-9bce-ccba-c096-ca6e9ca04c64}"
    assert len(r.stack) == 12
    assert r.stack[0].call_site == "nt!KeBugCheckEx"
    assert r.stack[0].args[0] == "0x000000000000000a"
    assert r.trap_frame.registers["rip"] == "0xfffff80060da1981"
    assert r.faulting_ip.address == "0xfffff80060da1981"  # from the trap frame
    assert r.fields["OSNAME"] == "Windows 10"
    assert r.fields["Followup"] == "MachineOwner"


def _analyze_03(c: Corpus) -> None:
    r = c.record("analyze/03.txt", "!analyze -v")
    assert r.bugcheck.code == "0x50" and r.bugcheck.name == "PAGE_FAULT_IN_NONPAGED_AREA"
    assert r.bugcheck.args[2] == "0xfffff80240d322f9"
    # Arg3's description continues on a tab-indented line
    assert r.bugcheck.arg_descriptions[2].endswith("which referenced the bad memory address.")


def _analyze_04(c: Corpus) -> None:
    r = c.record("analyze/04.txt", "!analyze -v")
    assert r.bugcheck.code == "0xc4"
    assert r.bugcheck.name == "DRIVER_VERIFIER_DETECTED_VIOLATION"
    assert r.bugcheck.args[0] == "0x0000000000020005"
    assert r.fields["BUGCHECK_STR"] == "0xc4_IrqlExApcLte1_XDV"
    assert r.fields["DV_RULE_INFO"] == "!ruleinfo 0x20005"
    assert r.process_name == "TiWorker.exe"
    assert r.fields["CURRENT_IRQL"] == "9"


def _analyze_05(c: Corpus) -> None:
    (block,) = c.blocks("analyze/05.txt")
    r = block.record
    assert r.kind == "analysis"
    assert len(r.stack) == 12  # addresses redacted to "..." in the docs
    assert r.stack[0].call_site == "nt!DbgBreakPointWithStatus"
    assert r.stack[9].call_site == "MyDriver!OnInterrupt+0x69"
    assert r.followup_ip.address == "0xfffff88016306649"
    assert r.followup_ip.mnemonic == "lea"
    assert r.faulting_source_line == 26
    assert r.module_name == "MyDriver" and r.image_name == "MyDriver.sys"
    assert r.failure_bucket_id == "0xc4_IrqlExApcLte1_XDV_VRF_MyDriver!OnInterrupt"


def _analyze_06(c: Corpus) -> None:
    r = c.record("analyze/06.txt", "!analyze -v")
    assert r.bugcheck.code == "0x133" and r.bugcheck.name == "DPC_WATCHDOG_VIOLATION"
    assert r.bugcheck.args[1] == "0x0000000000000501"
    assert "component can usually be identified" in r.bugcheck.arg_descriptions[0]
    assert r.bugcheck.arg_descriptions[3] == ""
    assert r.image_name == "BthA2DP.sys"


def _analyze_07(c: Corpus) -> None:
    (block,) = c.blocks("analyze/07.txt")
    r = block.record
    assert r.kind == "analysis"
    assert r.faulting_ip.symbol == "MyApp!MyFunction+44"
    assert r.faulting_ip.mnemonic == "idiv"
    assert r.faulting_ip.source_line == 7
    assert r.exception.code == "0xc0000094"
    assert r.exception.description == "Integer divide-by-zero"
    assert r.exception.address == "0x00007ff63be11064"
    assert len(r.stack) == 6 and r.stack[0].args == ()  # args elided as "..."
    assert r.faulting_source_file == r"c:\myapp\myapp\myapp.cpp"


def _analyze_08(c: Corpus) -> None:
    r = c.record("analyze/08.txt", "!analyze -v")
    assert r.bugcheck.code == "0x116" and r.bugcheck.name == "VIDEO_TDR_FAILURE"
    assert r.bugcheck.args == [
        "0xffffe000c2c404c0",
        "0xfffff8016470c14c",
        "0xffffffffc000009a",
        "0x0000000000000004",
    ]


def _analyze_10(c: Corpus) -> None:
    r = c.record("analyze/10.txt", "!analyze -v")
    assert r.mode == "user"
    assert r.bugcheck is None
    assert r.exception.code == "0xc0000005" and r.exception.description == "Access violation"
    assert r.exception.access == "read" and r.exception.access_address == "0x06700ff8"
    assert r.key_values["Failure.Bucket"] == "INVALID_POINTER_READ_AVRF_c0000005_FreeImaged.dll!FreeImage_HasPixels"
    assert r.key_values["Analysis.Version.DbgEng"] == "10.0.29482.1003"
    assert len(r.stack) == 12
    inline = [f for f in r.stack if f.inline]
    assert [f.call_site for f in inline] == ["Freeimage_test!FreeImage_test+0x13", "Freeimage_test!invoke_main+0x1c"]
    assert r.faulting_ip.address == "0x1000caf5"  # from IP_IN_PAGED_CODE
    assert r.faulting_source_line == 820
    assert r.failure_id_hash == "{259a0c43-5140-5e12-e7c1-08b76d9f11b2}"
    assert len(r.warnings) == 2  # both "Unable to verify checksum" lines, one glued to reload dots


def _analyze_11(c: Corpus) -> None:
    r = c.record("analyze/11.txt", "!analyze -v")
    assert r.mode == "user"
    assert r.bugcheck.name == "APPLICATION_VERIFIER_HEAPS_DOUBLE_FREE" and r.bugcheck.code == "0x7"
    assert r.bugcheck.args == ["0x007a1000", "0x076e230c", "0x00000400", "0x00000000"]
    assert r.exception.code == "0x80000003"
    assert r.faulting_ip.symbol == "verifier!VerifierBreakin+42"
    assert len(r.stack) == 19
    assert r.stack[11].call_site == "image009e0000+0x7417"
    assert r.failure_bucket_id == "BREAKPOINT_AVRF_80000003_image009e0000!Unknown"
    assert r.fields["PRIMARY_PROBLEM_CLASS"] == "BREAKPOINT"
    assert "Timeline" in r.fields and r.fields["Timeline"].count("Name: <blank>") == 4
    assert r.key_values == {"Timeline.OS.Boot.DeltaSec": "1895", "Timeline.Process.Start.DeltaSec": "13"}


def _analyze_12(c: Corpus) -> None:
    r = c.record("analyze/12.txt", "!analyze -v")
    assert c.block("analyze/12.txt", "!analyze -v").prompt.processor == 13
    assert r.bugcheck.code == "0xd1"
    assert r.bugcheck.args[3] == "0xfffff8024e50c688"
    assert r.fields["BUGCHECK_P4"] == "fffff8024e50c688"
    assert r.fields["TAG_NOT_DEFINED_202b"] == "*** Unknown TAG in analysis list 202b"
    assert r.key_values["Bugcheck.Code.LegacyAPI"] == "0xd1"
    assert r.process_name == "ManicTime.exe"
    assert r.module_name == "NETIO" and r.image_name == "NETIO.SYS"
    assert len(r.stack) == 11
    assert r.stack[3].function == "StreamInvokeCalloutAndNormalizeAction"
    assert r.faulting_ip.address == "0xfffff8024e50c688"  # Failure.Exception.IP.Address
    assert r.fields["READ_ADDRESS"].startswith("fffff802bc3c44c0: Unable to get MiVisibleState")


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


def _memory_03(c: Corpus) -> None:
    r = c.record("memory/03.txt", "!address fffff80240d322f9")
    assert r.object_type == "address"
    assert r.fields["Usage"] == "Module"
    assert r.fields["Module name"] == "ntoskrnl.exe"
    assert r.address == "0xfffff80240ca8000"


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


def _memory_08(c: Corpus) -> None:
    dd = c.record("memory/08.txt", "dd 0x00000000`002a1f40+70+8 L2")
    assert dd.rows[0].values == ["002a283c", "00000000"]
    du = c.record("memory/08.txt", "du 00000000002a283c")
    assert du.unit == "unicode"
    assert du.rows[0].text == '"C:\\Windows\\system32\\cmd.exe" '


def _memory_09(c: Corpus) -> None:
    r = c.record("memory/09.txt", "dt _UNICODE_STRING 0x00000000`002a1f40+70")
    assert r.preview == '"C:\\Windows\\system32\\cmd.exe" '
    assert [(f.name, f.value) for f in r.fields[:2]] == [("Length", "0x3c"), ("MaximumLength", "0x3e")]


def _memory_10(c: Corpus) -> None:
    r = c.record("memory/10.txt", "dl 0x00000000`002a2980 6")
    assert len(r.rows) == 12
    assert r.rows[0].values == ["00000000002a2a70", "00000000774ed660"]


def _memory_11(c: Corpus) -> None:
    assert c.record("memory/11.txt", "da 00000000`031e92c8").rows[0].text == "Reflective Dll Injection"
    r = c.record("memory/11.txt", "da 00000000`031e92e8")
    assert r.unit == "ascii" and r.rows[0].text == "Hello from DllMain!"


def _memory_12(c: Corpus) -> None:
    r = c.record("memory/12.txt", "dt nt!_PEB 7ffdf000")
    assert r.instance and r.type_name == "ntdll!_PEB"
    by_name = {f.name: f for f in r.fields}
    assert by_name["BeingDebugged"].value == "0x1 ''"
    assert (by_name["Ldr"].value, by_name["Ldr"].type) == ("0x77c08880", "_PEB_LDR_DATA")
    assert by_name["SubSystemData"].value == "(null)"
    assert by_name["NumberOfProcessors"].value == "1"
    assert by_name["ImageUsesLargePages"].bitfield


def _memory_13(c: Corpus) -> None:
    assert c.block("memory/13.txt", "dx @$curprocess.COM").prompt.machine == "x86"
    r = c.record("memory/13.txt", "dx @$curprocess.COM.GlobalObjects")
    assert r.kind == "data_model"
    assert r.expression == "@$curprocess.COM.GlobalObjects"
    assert len(r.children) == 10
    assert (r.children[0].name, r.children[0].value, r.children[0].type) == ("[0x100]", "0x12f4fb0", "IUnknown *")


def _memory_14(c: Corpus) -> None:
    r = c.record("memory/14.txt", "dx -r1 @$curprocess.TTD.Events")
    assert len(r.children) == 17
    assert r.children[8].value == "Exception 0xC0000005 of type Hardware at PC: 0X52005400200045"


def _memory_15(c: Corpus) -> None:
    r = c.record("memory/15.txt", "dt dxgkrnl!_TDR_RECOVERY_CONTEXT ffffe000c2c404c0")
    by_name = {f.name: f for f in r.fields}
    assert by_name["TimeoutReason"].value == "9 ( TdrEngineTimeoutPromotedToAdapterReset )"
    assert (by_name["Tick"].type, by_name["Tick"].value) == ("_ULARGE_INTEGER", "0xb2")
    assert by_name["ReferenceCount"].value == "0n1"
    assert by_name["DbgOwnerTag"].value == "0xfffff8016470c14c"


def _memory_16(c: Corpus) -> None:
    r = c.record("memory/16.txt", "!heap -p -a 0000015da8026b50")
    assert r.object_type == "heap" and r.address == "0x0000015da8026b50"
    (entry,) = r.entries
    assert entry["user_pointer"] == "0x0000015da8026b80" and entry["state"] == "busy"
    assert len(r.frames) == 8
    assert r.frames[0].function == "RtlpAllocateHeapInternal" and r.frames[0].offset == "0x96b87"


def _memory_17(c: Corpus) -> None:
    r = c.record("memory/17.txt", "!heap -flt s 28")
    assert len(r.entries) == 4
    assert {e["user_size"] for e in r.entries} == {"0x00028"}


def _memory_18(c: Corpus) -> None:
    r = c.record("memory/18.txt", "!heap -p -a 06724ff8")
    assert r.fields["state"] == "free-ed"
    assert r.entries[0]["virt_addr"] == "0x6724000"
    assert len(r.frames) == 21
    assert r.frames[5].source_line == 105


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "analyze/01.txt": _analyze_01,
    "analyze/02.txt": _analyze_02,
    "analyze/03.txt": _analyze_03,
    "analyze/04.txt": _analyze_04,
    "analyze/05.txt": _analyze_05,
    "analyze/06.txt": _analyze_06,
    "analyze/07.txt": _analyze_07,
    "analyze/08.txt": _analyze_08,
    "analyze/10.txt": _analyze_10,
    "analyze/11.txt": _analyze_11,
    "analyze/12.txt": _analyze_12,
    "memory/01.txt": _memory_01,
    "memory/02.txt": _memory_02,
    "memory/03.txt": _memory_03,
    "memory/04.txt": _memory_04,
    "memory/05.txt": _memory_05,
    "memory/06.txt": _memory_06,
    "memory/07.txt": _memory_07,
    "memory/08.txt": _memory_08,
    "memory/09.txt": _memory_09,
    "memory/10.txt": _memory_10,
    "memory/11.txt": _memory_11,
    "memory/12.txt": _memory_12,
    "memory/13.txt": _memory_13,
    "memory/14.txt": _memory_14,
    "memory/15.txt": _memory_15,
    "memory/16.txt": _memory_16,
    "memory/17.txt": _memory_17,
    "memory/18.txt": _memory_18,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)


def test_every_sample_has_a_check(corpus: Corpus) -> None:
    assert set(corpus.names("analyze")) | set(corpus.names("memory")) == set(CHECKS)
