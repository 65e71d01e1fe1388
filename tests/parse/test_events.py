"""``kdmcp.parse.events``: go/step output, ``.breakin``, connect and dump-open banners.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse, parse_transcript
from tests.parse.samples.corpus import Corpus, event_kinds


def test_fatal_system_error_event() -> None:
    out = (
        "*** Fatal System Error: 0x000000d1\n"
        "                       (0x0000000000000008,0x0000000000000002,0x0000000000000000,0xFFFFF8024E50C688)\n\n"
        "Break instruction exception - code 80000003 (first chance)\n"
    )
    r = parse("g", out)
    assert r.events[0].kind == "bugcheck" and r.events[0].code == "0x000000d1"
    assert "0xFFFFF8024E50C688" in r.events[0].details["args"]
    assert r.events[1].code == "0x80000003"


def test_running_target_gives_empty_events() -> None:
    assert parse("g", "").kind == "text"
    assert parse("g", "       ^ No runnable debuggees error in 'g'\n").category == "no_target"


def test_dump_open_header_keeps_target_and_reads_bugcheck_event() -> None:
    # MS KB "read the small memory dump" example (kd -z on an XP minidump, banner box collapsed)
    text = """\
Symbol search path is: srv*
Windows XP Kernel Version 2600 (Service Pack 1) UP Free x86 compatible
Kernel base = 0x804d4000 PsLoadedModuleList = 0x80543530
*******************************************************************************
* Bugcheck Analysis *
*******************************************************************************

Use !analyze -v to get detailed debugging information.

BugCheck C0000218, {e144c418, 0, 0, 0}

Probably caused by : ntoskrnl.exe ( nt!ExRaiseHardError+13c )

Followup: MachineOwner
---------

kd> """
    r = parse_transcript(text)[0].record
    assert r.kind == "events"
    assert r.target.build == 2600 and r.target.kernel_base == "0x804d4000"
    (bugcheck,) = [e for e in r.events if e.kind == "bugcheck"]
    assert bugcheck.code == "0xc0000218"
    assert bugcheck.details == {
        "args": "e144c418, 0, 0, 0",
        "image_name": "ntoskrnl.exe",
        "symbol_name": "nt!ExRaiseHardError+13c",
    }


def test_break_in_on_bugcheck_keeps_events_and_current_instruction() -> None:
    # Win7 x86 kd log after a special-pool crash (Trigger.exe / win32k.sys)
    text = """\
*** Fatal System Error: 0x000000d5
                       (0xFAB22C50,0x00000000,0x911DB830,0x00000000)

Break instruction exception - code 80000003 (first chance)
*******************************************************************************
*                        Bugcheck Analysis                                    *
*******************************************************************************

Use !analyze -v to get detailed debugging information.

BugCheck D5, {fab22c50, 0, 911db830, 0}

Probably caused by : win32k.sys ( win32k!hbmSelectBitmap+ca )

Followup: MachineOwner
---------

nt!RtlpBreakWithStatusInstruction:
82864d00 cc              int     3
kd> """
    r = parse_transcript(text)[0].record
    assert r.kind == "events"
    assert [(e.kind, e.code) for e in r.events] == [
        ("bugcheck", "0x000000d5"),
        ("exception", "0x80000003"),
        ("bugcheck", "0xd5"),
    ]
    assert r.events[2].details["symbol_name"] == "win32k!hbmSelectBitmap+ca"
    assert r.context.address == "0x82864d00"
    assert r.context.symbol == "nt!RtlpBreakWithStatusInstruction"


def test_arm64_banner_and_connect_lines_name_the_machine() -> None:
    # an ARM64 KDNET/COM break-in as published in ARM64 driver bring-up notes
    out = (
        "Connected to Windows 10 21337 ARM 64-bit (AArch64) target at (Mon Mar 22 10:01:02.123 2021 (UTC + 8:00)), "
        "ptr64 TRUE\n"
        "Kernel Debugger connection established.\n"
        "Windows 10 Kernel Version 21337 MP (4 procs) Free ARM 64-bit (AArch64)\n"
    )
    record = parse("", out)
    assert record.kind == "events"
    assert record.target is not None and record.target.arch == "ARM64" and record.target.processors == 4
    assert any(e.kind == "connected" and e.name == "Windows 10 21337" for e in record.events)


def test_connect_line_of_an_x86_compatible_target() -> None:
    # a Windows 7 x86 kd log: "x86 compatible" between the build and "target"
    out = (
        "Connected to Windows 7 7601 x86 compatible target at (Sat Jan 11 08:12:40.433 2014 (UTC + 8:00)), "
        "ptr64 FALSE\n"
    )
    record = parse("", out)
    assert record.kind == "events"
    assert record.target is not None and record.target.arch == "x86" and record.target.build == 7601
    assert any(e.kind == "connected" for e in record.events)


def _exceptions_errors_03(c: Corpus) -> None:
    (block,) = c.blocks("exceptions_errors/03.txt")
    r = block.record
    exc = [e for e in r.events if e.kind == "exception"]
    assert [(e.code, e.first_chance) for e in exc] == [("0xc0000005", True), ("0xc0000005", False)]
    assert exc[0].process_id is None  # old engine: no (pid.tid) prefix
    assert [e.name for e in r.events if e.kind == "module_load"] == ["kernel32.dll", "MSVCRT.dll"]
    assert r.context.registers["eip"] == "0x01001398"
    assert r.context.memory_reference.selector == "0023"
    assert r.context.memory_reference.value == "??"


def _exceptions_errors_04(c: Corpus) -> None:
    initial = c.blocks("exceptions_errors/04.txt")[0].record
    assert initial.events[0].code == "0x80000003"
    assert initial.events[0].process_id == "0x336c" and initial.events[0].thread_id == "0x264c"
    assert initial.context.symbol == "ntdll!LdrpDoDebuggerBreak+0x2b"
    go = c.record("exceptions_errors/04.txt", "g")
    (ev,) = go.events
    assert (ev.kind, ev.description, ev.code, ev.first_chance) == ("exception", "Stack overflow", "0xc00000fd", True)


def _exceptions_errors_05(c: Corpus) -> None:
    r = c.blocks("exceptions_errors/05.txt")[0].record
    assert r.events[0].description == "Integer divide-by-zero" and r.events[0].code == "0xc0000094"
    assert r.context.mnemonic == "idiv"
    assert r.context.memory_reference.segment == "ss"


def _exceptions_errors_16(c: Corpus) -> None:
    r = c.record("exceptions_errors/16.txt", "g")
    assert [e.kind for e in r.events] == ["module_load"] * 3 + ["exception"]
    assert r.events[0].start == "0x10000000" and r.events[0].end == "0x107df000"
    assert r.events[3].process_id == "0x2714" and r.events[3].code == "0xc0000005"
    assert r.context.registers["eax"] == "0x06700ff8"
    assert r.context.memory_reference.address == "0x06700ff8"
    assert len(r.warnings) == 1


def _exceptions_errors_17(c: Corpus) -> None:
    r = c.record("exceptions_errors/17.txt", "g")
    stop = r.events[0]
    assert (stop.kind, stop.code, stop.process_id) == ("verifier_stop", "0x00000007", "0x1974")
    assert stop.description == "block already freed"
    assert r.events[1].code == "0x80000003"
    assert r.context.symbol == "verifier!VerifierBreakin+0x42"


def _exceptions_errors_18(c: Corpus) -> None:
    go = c.record("exceptions_errors/18.txt", "g")
    assert go.context.registers["edx"] == "0x41414141"
    u = c.record("exceptions_errors/18.txt", "u")
    assert u.instructions[0].source_line == 40
    assert u.instructions[0].symbol == "type_confusion_examples!main+0xa6"
    assert u.instructions[4].target == "0x00e72a5e"
    assert u.instructions[6].operands == "offset type_confusion_examples!__xt_z+0x11c (00ecde64)"


def _kernel_objects_20(c: Corpus) -> None:
    brk = c.record("kernel_objects/20.txt", ".breakin")
    assert brk.kind == "events"
    assert brk.events[0].code == "0x80000003" and brk.events[0].first_chance
    assert brk.context.symbol == "ntoskrnl!_DbgBreakPointWithStatus+4"
    vm = c.record("kernel_objects/20.txt", "!vm")
    assert vm.fields["Total Private"].startswith("33309")
    blocks = c.blocks("kernel_objects/20.txt")
    assert [b.prompt.mode for b in blocks] == ["user", "kernel"]


def _connect_01(c: Corpus) -> None:
    (block,) = c.blocks("connect/01.txt")
    r = block.record
    assert event_kinds(r)[:4] == ["banner", "transport", "transport", "waiting_to_reconnect"]
    assert "connection_established" in event_kinds(r)
    target = [e for e in r.events if e.kind == "connected"]
    assert target[0].name == "169.182.1.1" and target[1].name == "Windows 10 16299"
    assert r.target.build == 16299 and r.target.processors == 4
    assert r.target.kernel_base == "0xfffff8009540d000"
    assert r.target.debugger_version == "10.0.17074.1002"


def _connect_02(c: Corpus) -> None:
    r = c.blocks("connect/02.txt")[0].record
    assert event_kinds(r) == ["banner", "transport", "transport", "waiting_to_reconnect"]
    assert r.events[0].name == "1.0.1908.30002"


def _connect_03(c: Corpus) -> None:
    r = c.blocks("connect/03.txt")[0].record
    assert event_kinds(r) == ["waiting", "waiting_to_reconnect"]
    assert r.events[0].name == r"pipe \\.\pipe\com1"


def _connect_04(c: Corpus) -> None:
    r = c.blocks("connect/04.txt")[0].record
    assert "refresh" in event_kinds(r)
    (exc,) = [e for e in r.events if e.kind == "exception"]
    assert exc.code == "0x80000003" and exc.description == "Break instruction exception"
    assert r.target.build == 10586 and r.target.build_lab == "10586.162.amd64fre.th2_release_sec.160223-1728"
    assert r.context.symbol == "nt!DbgBreakPointWithStatus"
    assert r.context.address == "0xfffff80352952eb0"


def _connect_05(c: Corpus) -> None:
    r = c.blocks("connect/05.txt")[0].record
    assert r.events[0].kind == "dump_open" and r.events[0].name == r"C:\Windows\MEMORY.DMP"
    assert r.events[1].kind == "dump_type" and r.events[1].name == "Kernel Bitmap Dump File"
    assert r.target.processors == 3 and r.target.build == 19041
    assert r.target.uptime == "0 days 0:00:54.755"


def _connect_07(c: Corpus) -> None:
    blocks = c.blocks("connect/07.txt")
    r = blocks[0].record
    loads = [e for e in r.events if e.kind == "module_load"]
    assert len(loads) == 10
    assert loads[0].name == "cmd.exe" and loads[0].start == "0x000000004a1e0000"
    assert r.events[1].kind == "process_start" and r.events[1].name == r"C:\Windows\System32\cmd.exe"
    assert r.events[-1].kind == "exception" and r.events[-1].process_id == "0xbb0"
    assert r.context.symbol == "ntdll!LdrpDoDebuggerBreak+0x30"
    assert [b.command for b in blocks[1:]] == [".load pykd", "!pykd.load", "!py SimpleHTTPServer"]


def _connect_12(c: Corpus) -> None:
    r = c.blocks("connect/12.txt")[0].record
    assert "dump_open" in event_kinds(r)
    (dt,) = [e for e in r.events if e.kind == "dump_type"]
    assert dt.name == "Mini Kernel Dump File"
    assert r.target.processors == 24 and r.target.build == 26100
    assert r.target.kernel_base == "0xfffff802bb400000"
    assert r.target.uptime_seconds is not None and r.target.uptime_seconds > 5 * 86400


def _misc_05(c: Corpus) -> None:
    r = c.record("misc/05.txt", "g")
    assert event_kinds(r) == ["module_load", "breakpoint"]
    assert r.events[0].name == r"C:\WINDOWS\System32\IMM32.DLL"
    assert r.events[0].start == "0x00007ff99cd70000"
    assert r.context.symbol == "notepad!wWinMain" and r.context.address == "0x00007ff68402c0f8"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "exceptions_errors/03.txt": _exceptions_errors_03,
    "exceptions_errors/04.txt": _exceptions_errors_04,
    "exceptions_errors/05.txt": _exceptions_errors_05,
    "exceptions_errors/16.txt": _exceptions_errors_16,
    "exceptions_errors/17.txt": _exceptions_errors_17,
    "exceptions_errors/18.txt": _exceptions_errors_18,
    "kernel_objects/20.txt": _kernel_objects_20,
    "connect/01.txt": _connect_01,
    "connect/02.txt": _connect_02,
    "connect/03.txt": _connect_03,
    "connect/04.txt": _connect_04,
    "connect/05.txt": _connect_05,
    "connect/07.txt": _connect_07,
    "connect/12.txt": _connect_12,
    "misc/05.txt": _misc_05,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
