"""Per-sample checks, ``exceptions_errors/`` and ``kernel_objects/`` families."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Corpus = Any  # the session fixture from conftest.py


def _exc_01(c: Corpus) -> None:
    r = c.record("exceptions_errors/01.txt", ".exr -1")
    assert r.kind == "exception_record"
    assert r.code == "0x80000003" and r.description == "Break instruction exception"
    assert r.address == "0x000000007777cb60"
    assert r.symbol == "ntdll!LdrpDoDebuggerBreak+0x0000000000000030"
    assert r.parameters == ["0x0000000000000000"]
    assert len(c.record("exceptions_errors/01.txt", "kv").frames) == 4


def _exc_02(c: Corpus) -> None:
    first = c.record("exceptions_errors/02.txt", "db rip")
    assert first.rows[0].values[:4] == ["cc", "eb", "00", "48"]
    assert first.rows[0].ascii == "...H..8........."
    err = c.record("exceptions_errors/02.txt", "ea eip helloworld")
    assert err.kind == "error" and err.category == "syntax"
    assert err.message == "Quotes required in 'ea eip helloworld'"
    after = c.record("exceptions_errors/02.txt", "db rip", nth=1)
    assert after.rows[0].ascii == "helloworld......"
    assert after.rows[5].ascii == ".r..t$4;.s......"


def _exc_03(c: Corpus) -> None:
    (block,) = c.blocks("exceptions_errors/03.txt")
    r = block.record
    exc = [e for e in r.events if e.kind == "exception"]
    assert [(e.code, e.first_chance) for e in exc] == [("0xc0000005", True), ("0xc0000005", False)]
    assert exc[0].process_id is None  # old engine: no (pid.tid) prefix
    assert [e.name for e in r.events if e.kind == "module_load"] == ["kernel32.dll", "MSVCRT.dll"]
    assert r.context.registers["eip"] == "0x01001398"
    assert r.context.memory_reference.selector == "0023"
    assert r.context.memory_reference.value == "??"


def _exc_04(c: Corpus) -> None:
    initial = c.blocks("exceptions_errors/04.txt")[0].record
    assert initial.events[0].code == "0x80000003"
    assert initial.events[0].process_id == "0x336c" and initial.events[0].thread_id == "0x264c"
    assert initial.context.symbol == "ntdll!LdrpDoDebuggerBreak+0x2b"
    go = c.record("exceptions_errors/04.txt", "g")
    (ev,) = go.events
    assert (ev.kind, ev.description, ev.code, ev.first_chance) == ("exception", "Stack overflow", "0xc00000fd", True)


def _exc_05(c: Corpus) -> None:
    r = c.blocks("exceptions_errors/05.txt")[0].record
    assert r.events[0].description == "Integer divide-by-zero" and r.events[0].code == "0xc0000094"
    assert r.context.mnemonic == "idiv"
    assert r.context.memory_reference.segment == "ss"


def _exc_06(c: Corpus) -> None:
    (block,) = c.blocks("exceptions_errors/06.txt")  # "C:\Debuggers>" is a shell, not a debugger prompt
    r = block.record
    assert r.kind == "events"
    errors = [e for e in r.events if e.kind == "error"]
    assert [e.description for e in errors] == ["file", "file", "file"]
    assert any("HRESULT 0x80004002" in e.text for e in errors)
    assert [e.name for e in r.events if e.kind == "dump_open"] == [r"C:\mydir\dumpfile2.dmp"]


def _exc_07(c: Corpus) -> None:
    ok = c.record("exceptions_errors/07.txt", '? $spat( "c:\\dir\\name.txt", "*name*" )')
    assert ok.kind == "expression" and ok.value == "0x00000000" and ok.decimal == 0
    bad = c.record("exceptions_errors/07.txt", '? $spat( "c:\\dir\\", "*filename*" )')
    assert bad.kind == "error" and bad.category == "syntax"
    assert bad.message.startswith("Syntax error at '(")


def _exc_08(c: Corpus) -> None:
    r = c.record("exceptions_errors/08.txt", r".scriptload C:\WinDbg\Scripts\TestScript.js")
    # the error landed on the next prompt line; it is attributed to .scriptload
    assert r.kind == "error" and r.category == "script"
    assert [e.category for e in r.errors] == ["script", "script"]
    assert c.block("exceptions_errors/08.txt", r".scriptload C:\WinDbg\Scripts\TestScript.js").prompt.machine == "x86"


def _exc_09(c: Corpus) -> None:
    r = c.record("exceptions_errors/09.txt", "!error 2")
    assert (r.facility, r.code, r.decimal) == ("Win32", "0x2", 2)
    assert r.message == "The system cannot find the file specified."
    nt = c.record("exceptions_errors/09.txt", "!error 2 1")
    assert (nt.facility, nt.message) == ("NTSTATUS", "STATUS_WAIT_2")


def _exc_10(c: Corpus) -> None:
    r = c.record("exceptions_errors/10.txt", "!error 00000000c0000005")
    assert r.code == "0xc0000005" and r.decimal == 3221225477
    assert r.message.startswith("The instruction at 0x%p")


def _exc_11(c: Corpus) -> None:
    r = c.record("exceptions_errors/11.txt", "x /D /f DisplayGreeting!*")
    assert r.kind == "symbols"
    assert len(r.symbols) == 7
    assert r.warnings == ["*** WARNING: Unable to verify timestamp for DisplayGreeting"]
    s = r.symbols[2]
    assert s.name == "DisplayGreeting!std::__array_traits<wchar_t, 50>::_S_ptr"
    assert s.signature == "(wchar_t (*)[50])"
    assert r.symbols[5].address == "0x000056517935b225" and r.symbols[5].symbol == "main"


def _exc_12(c: Corpus) -> None:
    r = c.record("exceptions_errors/12.txt", "dx -r1 Debugger.Sessions[0].Processes[1428].Threads")
    assert len(r.children) == 5
    assert r.children[0].value == "<Unable to get stack trace>" and r.children[0].links == ["Switch To"]
    assert r.children[2].value == "nt!KiSwapContext+0x76 (fffff806`4466a186)"


def _exc_16(c: Corpus) -> None:
    r = c.record("exceptions_errors/16.txt", "g")
    assert [e.kind for e in r.events] == ["module_load"] * 3 + ["exception"]
    assert r.events[0].start == "0x10000000" and r.events[0].end == "0x107df000"
    assert r.events[3].process_id == "0x2714" and r.events[3].code == "0xc0000005"
    assert r.context.registers["eax"] == "0x06700ff8"
    assert r.context.memory_reference.address == "0x06700ff8"
    assert len(r.warnings) == 1


def _exc_17(c: Corpus) -> None:
    r = c.record("exceptions_errors/17.txt", "g")
    stop = r.events[0]
    assert (stop.kind, stop.code, stop.process_id) == ("verifier_stop", "0x00000007", "0x1974")
    assert stop.description == "block already freed"
    assert r.events[1].code == "0x80000003"
    assert r.context.symbol == "verifier!VerifierBreakin+0x42"


def _exc_18(c: Corpus) -> None:
    go = c.record("exceptions_errors/18.txt", "g")
    assert go.context.registers["edx"] == "0x41414141"
    u = c.record("exceptions_errors/18.txt", "u")
    assert u.instructions[0].source_line == 40
    assert u.instructions[0].symbol == "type_confusion_examples!main+0xa6"
    assert u.instructions[4].target == "0x00e72a5e"
    assert u.instructions[6].operands == "offset type_confusion_examples!__xt_z+0x11c (00ecde64)"


def _exc_19(c: Corpus) -> None:
    r = c.record("exceptions_errors/19.txt", "kb")
    assert len(r.frames) == 5
    assert r.warnings == ["*** ERROR: Symbols could not be loaded for glintmp.sys"]
    last = r.frames[4]
    assert last.call_site == "glintMP+0x1411" and last.annotations == ("[No function listed.]",)
    assert r.frames[0].child_ebp == "0xf29bf1b0"


def _exc_20(c: Corpus) -> None:
    block = c.block("exceptions_errors/20.txt", "kb")  # "[Local 9:50 AM]" timestamp dropped
    r = block.record
    assert len(r.frames) == 4
    assert len(r.warnings) == 3
    assert r.frames[0].module == "agpCPQ" and r.frames[0].offset == "0x125b"
    assert c.blocks("exceptions_errors/20.txt")[0].command == ""  # the empty prompt line


def _kobj_01(c: Corpus) -> None:
    r = c.record("kernel_objects/01.txt", "!irp 0x831f4a00")
    assert r.object_type == "irp"
    assert r.fields["stack_count"] == "8" and r.fields["current_location"] == "5"
    assert r.fields["mdl"] == "0x82b020d8" and r.fields["thread"] == "0x8c622118"
    assert len(r.irp_stack) == 8
    cur = [i for i, s in enumerate(r.irp_stack) if s.current]
    assert cur == [4]
    loc = r.irp_stack[4]
    assert (loc.major, loc.minor, loc.device) == ("3", "34", "0x828517a8")
    assert loc.pending and loc.invoke_on == ["Success", "Error", "Cancel"]
    assert (loc.driver, loc.completion_symbol) == (r"\Driver\disk", "partmgr!PmReadWriteCompletion")
    assert loc.args == ["0x00007000", "0x00000000", "0xfe084e00", "0x00000004"]


def _kobj_02(c: Corpus) -> None:
    r = c.record("kernel_objects/02.txt", "!irp 81183468")
    assert "mdl" not in r.fields and r.fields["thread"] == "0x00000000"
    assert len(r.irp_stack) == 2
    assert r.irp_stack[1].current and r.irp_stack[1].major == "16"
    assert r.irp_stack[1].completion_symbol == "ntoskrnl!PopCompleteSystemPowerIrp"


def _kobj_03(c: Corpus) -> None:
    r = c.record("kernel_objects/03.txt", r"!drvobj \Driver\sysvad_tabletaudiosample 2")
    assert r.address == "0xffffe0008834f670"
    assert r.name == r"\Driver\sysvad_tabletaudiosample"
    assert r.fields["driver_entry_symbol"] == "tabletaudiosample!FxDriverEntry"
    assert r.fields["driver_start_io"] == "0x00000000"
    assert len(r.dispatch_routines) == 28
    assert r.dispatch_routines[0].name == "IRP_MJ_CREATE" and r.dispatch_routines[0].symbol == "portcls!DispatchCreate"
    assert r.dispatch_routines[27].index == 0x1B and r.dispatch_routines[27].name == "IRP_MJ_PNP"


def _kobj_04(c: Corpus) -> None:
    r = c.record("kernel_objects/04.txt", "!devobj 0xffffe0007b71a960")
    assert r.address == "0xffffe0007b71a960"
    assert r.fields["driver"] == r"\Driver\PnpManager"
    assert r.fields["driver_object"] == "0xffffe0007b727e60"
    assert r.fields["Flags"] == "00001040"
    assert r.fields["DevNode"] == "ffffe0007b71a630"
    assert r.fields["Characteristics_names"] == "FILE_AUTOGENERATED_DEVICE_NAME, FILE_DEVICE_SECURE_OPEN"
    assert r.fields["attached_device"] == "0xffffe000801fee20"
    assert r.fields["attached_device_driver"] == r"\Driver\ECHO"


def _kobj_05(c: Corpus) -> None:
    r = c.record("kernel_objects/05.txt", "!devstack 0xffffe00089c575a0")
    assert [d.driver for d in r.devices] == [
        r"\Driver\ksthunk",
        r"\Driver\sysvad_tabletaudiosample",
        r"\Driver\PnpManager",
    ]
    # driver name printed without a blank before DevExt
    assert r.devices[1].extension == "0xffffe00088386ba0" and r.devices[1].name == "0000007a"
    assert r.devices[2].current and r.devices[2].extension == "0x00000000"
    assert r.fields["ServiceName"] == "sysvad_tabletaudiosample"
    assert r.fields["devnode"] == "0xffffe00086e68190"


def _kobj_06(c: Corpus) -> None:
    r = c.record("kernel_objects/06.txt", "!poolused")
    assert r.fields["sorting"] == "Tag"
    assert r.fields["total_nonpaged_used"] == "209120008"
    by_tag = {e["tag"]: e for e in r.entries}
    assert by_tag["1394"]["nonpaged_used"] == "520"
    assert by_tag["Wmit"]["paged_used"] == "49480"
    # description glued to the number and itself starting with digits
    assert by_tag["ohci"]["paged_used"] == "0"
    assert by_tag["ohci"]["description"] == "1394 OHCI host controller driver"
    assert by_tag["hibr"]["paged_used"] == "24576"


def _kobj_07(c: Corpus) -> None:
    r = c.record("kernel_objects/07.txt", "!running -it")
    assert r.kind == "threads"
    assert [t.processor for t in r.threads] == [0, 1, 2, 3]
    assert r.threads[0].prcb == "0xffdff120" and r.threads[0].address == "0x805495a0"
    assert len(r.threads[0].frames) == 3
    assert r.threads[3].frames[0].call_site == "nt!KiIdleLoop+0x14"
    assert r.fields["all_idle"] == "true"


def _kobj_08(c: Corpus) -> None:
    r = c.record("kernel_objects/08.txt", r"!object \Device")
    assert r.address == "0xffffc00b074166a0"
    assert r.fields["type"] == "Directory" and r.fields["PointerCount"] == "224"
    assert r.name == "Device"
    assert len(r.directory) == 7
    assert r.directory[0].hash == "00" and r.directory[0].name == "00000044"
    assert r.directory[4].name == "USBPDO-8"


def _kobj_09(c: Corpus) -> None:
    r = c.record("kernel_objects/09.txt", "!handle 0 4")
    assert r.fields["image"] == "Idle" and r.fields["entries_in_use"] == "380"
    assert len(r.entries) == 9
    assert r.entries[0] == {"handle": "0x0000", "free": "true"}
    assert r.entries[1]["object"] == "0x80ed5238" and r.entries[1]["granted_access"] == "0x001f0fff"
    assert r.entries[5]["attributes"] == "Protected"


def _kobj_10(c: Corpus) -> None:
    r = c.record("kernel_objects/10.txt", "!pool e1001050 1")
    assert [b.tag for b in r.pool_blocks] == ["MmDT", "Mm", "ObDi", "ObDi"]
    marked = [b for b in r.pool_blocks if b.contains_address]
    assert [b.address for b in marked] == ["0xe1001050"]
    assert r.pool_blocks[1].state == "Free"
    assert r.pool_blocks[0].size == "0x40"


def _kobj_11(c: Corpus) -> None:
    r0 = c.record("kernel_objects/11.txt", "!poolfind SeSd 0")
    assert r0.fields["tag"] == "SeSd"
    assert len(r0.pool_blocks) == 19
    assert sum(b.state == "Free" for b in r0.pool_blocks) == 2
    r1 = c.record("kernel_objects/11.txt", "!poolfind SeSd 1")
    assert len(r1.pool_blocks) == 4
    assert c.blocks("kernel_objects/11.txt")[-1].command == ""  # trailing empty "kd> " prompt


def _kobj_12(c: Corpus) -> None:
    r = c.record("kernel_objects/12.txt", "!vm 1")
    assert r.object_type == "vm"
    assert r.fields["Physical Memory"].startswith("16270")
    assert r.fields["Commit limit"].startswith("36256")
    assert r.fields["Page File"] == r"\??\E:\pagefile.sys"


def _kobj_13(c: Corpus) -> None:
    r = c.record("kernel_objects/13.txt", "!locks")
    assert r.fields == {"total_locks": "2263", "held_locks": "3"}
    assert [e["resource"] for e in r.entries] == ["0x80e97620", "0x80e23f38", "0x80d8b0b0"]
    assert r.entries[0]["owners"] == "4" and r.entries[0]["mode"] == "Shared"


def _kobj_14(c: Corpus) -> None:
    r = c.record("kernel_objects/14.txt", "!pte 801544f4")
    assert r.address == "0x801544f4"
    assert [(p.level, p.address, p.contains, p.pfn, p.flags) for p in r.pte_levels] == [
        ("PDE", "0xc0300800", "0x0003b163", "0x3b", "G-DA--KWV"),
        ("PTE", "0xc0200550", "0x00154121", "0x154", "G--A--KRV"),
    ]


def _kobj_15(c: Corpus) -> None:
    r0 = c.record("kernel_objects/15.txt", "!irql 0")
    assert r0.fields == {"processor": "0x0", "irql": "28", "irql_name": "CLOCK2_LEVEL"}
    assert c.record("kernel_objects/15.txt", "!irql 1").fields["irql_name"] == "LOW_LEVEL"


def _kobj_16(c: Corpus) -> None:
    r = c.record("kernel_objects/16.txt", "!irql")
    assert (r.fields["irql"], r.fields["irql_name"]) == ("2", "DISPATCH_LEVEL")


def _kobj_17(c: Corpus) -> None:
    r = c.record("kernel_objects/17.txt", "!stacks 1")
    assert r.kind == "threads" and len(r.threads) == 11
    t0 = r.threads[0]
    assert (t0.process_id, t0.thread_id, t0.address, t0.state, t0.image) == (
        "0x4",
        "0x8",
        "0x827d0030",
        "Blocked",
        "System",
    )
    assert t0.frames[0].call_site == "ntoskrnl!MmZeroPageThread+0x66"
    assert r.threads[2].details["blocker"] == "Stack paged out" and r.threads[2].frames == []
    assert r.threads[-1].image == "csrss.exe"
    r2 = c.record("kernel_objects/17.txt", "!stacks 2")
    assert len(r2.threads[0].frames) == 7
    assert r2.threads[0].frames[5].function == "CreateSystemRootLink"


def _kobj_18(c: Corpus) -> None:
    r = c.record("kernel_objects/18.txt", r"!drvobj \Driver\MMCSS")
    assert r.address == "0xffffac819f21fe30" and r.name == r"\Driver\MMCSS"
    assert r.entries == [{"device": "0xffffac819f7e9df0"}]
    dt = c.record("kernel_objects/18.txt", "dt nt!_DRIVER_OBJECT ffffac819f21fe30 DriverStart")
    (f,) = dt.fields
    assert (f.offset, f.name, f.value, f.type) == ("0x018", "DriverStart", "0xfffff80050950000", "Void")


def _kobj_19(c: Corpus) -> None:
    r = c.record("kernel_objects/19.txt", "!apic")
    assert r.address == "0xc0009000"
    assert r.fields["ID"] == "d"
    assert r.fields["SpurVec"] == "df"
    assert r.fields["LogDesc"] == "28000000"
    assert r.fields["Timer.."] == "00000000`000300d1"


def _kobj_20(c: Corpus) -> None:
    brk = c.record("kernel_objects/20.txt", ".breakin")
    assert brk.kind == "events"
    assert brk.events[0].code == "0x80000003" and brk.events[0].first_chance
    assert brk.context.symbol == "ntoskrnl!_DbgBreakPointWithStatus+4"
    vm = c.record("kernel_objects/20.txt", "!vm")
    assert vm.fields["Total Private"].startswith("33309")
    blocks = c.blocks("kernel_objects/20.txt")
    assert [b.prompt.mode for b in blocks] == ["user", "kernel"]


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "exceptions_errors/01.txt": _exc_01,
    "exceptions_errors/02.txt": _exc_02,
    "exceptions_errors/03.txt": _exc_03,
    "exceptions_errors/04.txt": _exc_04,
    "exceptions_errors/05.txt": _exc_05,
    "exceptions_errors/06.txt": _exc_06,
    "exceptions_errors/07.txt": _exc_07,
    "exceptions_errors/08.txt": _exc_08,
    "exceptions_errors/09.txt": _exc_09,
    "exceptions_errors/10.txt": _exc_10,
    "exceptions_errors/11.txt": _exc_11,
    "exceptions_errors/12.txt": _exc_12,
    "exceptions_errors/16.txt": _exc_16,
    "exceptions_errors/17.txt": _exc_17,
    "exceptions_errors/18.txt": _exc_18,
    "exceptions_errors/19.txt": _exc_19,
    "exceptions_errors/20.txt": _exc_20,
    "kernel_objects/01.txt": _kobj_01,
    "kernel_objects/02.txt": _kobj_02,
    "kernel_objects/03.txt": _kobj_03,
    "kernel_objects/04.txt": _kobj_04,
    "kernel_objects/05.txt": _kobj_05,
    "kernel_objects/06.txt": _kobj_06,
    "kernel_objects/07.txt": _kobj_07,
    "kernel_objects/08.txt": _kobj_08,
    "kernel_objects/09.txt": _kobj_09,
    "kernel_objects/10.txt": _kobj_10,
    "kernel_objects/11.txt": _kobj_11,
    "kernel_objects/12.txt": _kobj_12,
    "kernel_objects/13.txt": _kobj_13,
    "kernel_objects/14.txt": _kobj_14,
    "kernel_objects/15.txt": _kobj_15,
    "kernel_objects/16.txt": _kobj_16,
    "kernel_objects/17.txt": _kobj_17,
    "kernel_objects/18.txt": _kobj_18,
    "kernel_objects/19.txt": _kobj_19,
    "kernel_objects/20.txt": _kobj_20,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)


def test_every_sample_has_a_check(corpus: Corpus) -> None:
    assert set(corpus.names("exceptions_errors")) | set(corpus.names("kernel_objects")) == set(CHECKS)
