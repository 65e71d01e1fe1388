"""Layouts found in published debugger output the corpus lacks: the short ``!analyze`` and
dump-open header, ``Unknown bugcheck code``, banner-less user-mode analyses, ``.bugcheck``,
the old ``.lastevent``, ARM64 ``psr``, x86 ``.trap`` details.

Each excerpt is a few lines in the format as printed, with where it was seen.
"""

from __future__ import annotations

import pytest

from kdmcp.parse import parse, parse_transcript

# Short !analyze (no -v), as in a Chinese blog on a WSL crash ("遇到Windows蓝屏的解决思路", 2018).
SHORT_ANALYZE = """\
*******************************************************************************
*                        Bugcheck Analysis                                    *
*******************************************************************************

Use !analyze -v to get detailed debugging information.

BugCheck 139, {3, ffff84022caef450, ffff84022caef3a8, 0}

Probably caused by : LXCORE.SYS ( LXCORE!LxpFutexEvictWaitQueue+47 )

Followup:     MachineOwner
---------

nt!KeBugCheckEx:
fffff803`cb7780e0 48894c2408      mov     qword ptr [rsp+8],rcx ss:0018:ffff8402`2caef130=0000000000000139
"""


def test_short_analyze_reads_bugcheck_and_culprit() -> None:
    r = parse("!analyze", SHORT_ANALYZE)
    assert r.kind == "analysis" and r.mode == "kernel"
    assert r.bugcheck.code == "0x139"
    assert r.bugcheck.args == ["0x3", "0xffff84022caef450", "0xffff84022caef3a8", "0x0"]
    assert r.image_name == "LXCORE.SYS"
    assert r.symbol_name == "LXCORE!LxpFutexEvictWaitQueue+47"
    # the underline ends Followup: the current instruction after it is not part of the field
    assert r.fields == {"Followup": "MachineOwner"}


def test_short_analyze_pasted_alone_is_an_analysis() -> None:
    (block,) = parse_transcript(SHORT_ANALYZE)
    assert block.record.kind == "analysis"
    assert block.record.bugcheck.code == "0x139"


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


def test_unknown_bugcheck_code_header() -> None:
    # the same MS KB example, "kd> !analyze -v" on the XP minidump
    text = """\
*******************************************************************************
* Bugcheck Analysis *
*******************************************************************************

Unknown bugcheck code (c0000218)
Unknown bugcheck description
Arguments:
Arg1: e144c418
Arg2: 00000000
Arg3: 00000000
Arg4: 00000000

Debugging Details:
------------------

BUGCHECK_STR: 0xc0000218
"""
    r = parse("!analyze -v", text)
    assert r.bugcheck.code == "0xc0000218"
    assert r.bugcheck.args == ["0xe144c418", "0x00000000", "0x00000000", "0x00000000"]
    assert r.bugcheck.name is None and r.bugcheck.description is None


def test_unknown_bugcheck_code_pasted_alone() -> None:
    # MicrosoftDocs/windows-driver-docs issue #3195 (bugcheck 0x1AA missing from the docs)
    text = """\
Unknown bugcheck code (1aa)
Unknown bugcheck description
Arguments:
Arg1: 00000039d76edad0
Arg2: 0000000000000003
Arg3: ffffd680fd09e900
Arg4: fffffc03cd5b1598
"""
    r = parse("!analyze -v", text)
    assert r.kind == "analysis"
    assert r.bugcheck.code == "0x1aa"
    assert r.bugcheck.args[3] == "0xfffffc03cd5b1598"
    assert parse_transcript(text)[0].record.kind == "analysis"


@pytest.mark.parametrize(
    "text",
    [
        # cdb 6.9 log of the SEL ReadER32 PoC: no banner, old layout
        "EXCEPTION_RECORD:  ffffffff -- (.exr 0xffffffffffffffff)\n"
        "ExceptionAddress: 1000c6d0 (ReadER32!Readata_HighAccuracy+0x00000920)\n\n"
        "PROCESS_NAME:  SEL.ReadER32.exe\n\n"
        "BUGCHECK_STR:  APPLICATION_FAULT_STRING_DEREFERENCE_CODE_ADDRESS_MISMATCH\n\n"
        "STACK_COMMAND:  ~7s ; kb\n",
        # the same, the bucket alone
        "BUGCHECK_STR:  APPLICATION_FAULT_STRING_DEREFERENCE_CODE_ADDRESS_MISMATCH\n",
        # partial paste in a blog on wrong ntdll symbols (z4none): the code is the headline code
        "EXCEPTION_RECORD:  (.exr -1)\nExceptionAddress: 00007ff700837919 (test_symbol+0x0000000000017919)\n\n"
        "BUGCHECK_CODE:  70e69bad\n",
        # user-mode hang analysis (appi77 "WinDbg 사례"): a thread switch as the stack command
        "BUGCHECK_STR: HANG\n\nSTACK_COMMAND: ~14s ; kb\n",
        # the same: its bucket
        "BUGCHECK_STR: HANG\n\nDEFAULT_BUCKET_ID: APPLICATION_HANG\n",
    ],
)
def test_user_mode_analysis_without_banner(text: str) -> None:
    assert parse("!analyze -v", text).mode == "user"


@pytest.mark.parametrize(
    ("text", "code", "args"),
    [
        # DebugPrivilege/InsightEngineering 0x139 write-up
        (
            "Bugcheck code 00000139\n"
            "Arguments 00000000`0000001d ffffb88f`1487ec30 ffffb88f`1487eb88 00000000`00000000\n",
            "0x139",
            ["0x000000000000001d", "0xffffb88f1487ec30", "0xffffb88f1487eb88", "0x0000000000000000"],
        ),
        # a 0x9F write-up: the code in upper case
        (
            "Bugcheck code 0000009F\n"
            "Arguments 00000000`00000003 ffff948f`e9be4060 ffffe381`3d0ef040 ffff948f`ee90eba0\n",
            "0x9f",
            ["0x0000000000000003", "0xffff948fe9be4060", "0xffffe3813d0ef040", "0xffff948fee90eba0"],
        ),
        # MS docs bug-check-0xa page, x86
        (
            "Bugcheck code 0000000a\nArguments 00000000 0000001c 00000000 00000000\n",
            "0xa",
            ["0x00000000", "0x0000001c", "0x00000000", "0x00000000"],
        ),
    ],
)
def test_dot_bugcheck(text: str, code: str, args: list[str]) -> None:
    r = parse(".bugcheck", text)
    assert r.kind == "analysis" and r.mode == "kernel"
    assert r.bugcheck.code == code
    assert r.bugcheck.args == args


def test_old_lastevent_form() -> None:
    # MS docs debugging-a-stack-overflow.md
    r = parse(".lastevent", "Last event: Exception C00000FD, second chance \n")
    assert r.code == "0xc00000fd"
    assert r.first_chance is False


def test_arm64_psr_is_a_register_with_flags() -> None:
    # WinDbg ARM64 "r" quoted in gef-extras' windbg.py
    text = (
        "x28=0000000000000000   fp=000000293a8ffc10   lr=00007ffea80f7388   sp=000000293a8ff9e0\n"
        " pc=00007ffea80e30f4  psr=60000000 -ZC- EL0\n"
    )
    r = parse("r", text)
    assert r.registers["psr"] == "0x60000000"
    assert r.registers["pc"] == "0x00007ffea80e30f4"
    assert r.flags == ["-ZC-", "EL0"]
    assert "psr" not in r.raw_values


def test_faulting_ip_with_unterminated_source_bracket() -> None:
    # MS Learn stop-code troubleshooting, example 2 (x86 0x50, WinDbg 10.0.18248)
    text = """\
FAULTING_IP:
nt!memcpy+33 [minkernel\\crts\\crtw32\\string\\i386\\memcpy.asm @ 213
82154573 f3a5            rep movs dword ptr es:[edi],dword ptr [esi]
MM_INTERNAL_CODE:  0
"""
    ip = parse("!analyze -v", text).faulting_ip
    assert ip.symbol == "nt!memcpy+33"
    assert ip.source_line == 213
    assert ip.address == "0x82154573"


def test_complaint_after_analysis_is_a_warning() -> None:
    # the same example's last lines
    text = """\
*** WARNING: Unable to verify timestamp for WwanUsbMp.sys
FAILURE_ID_HASH:  {31e4d053-0758-e43a-06a7-55f69b072cb3}

Followup:     MachineOwner
---------

ReadVirtual: 812d1248 not properly sign extended
"""
    r = parse("!analyze -v", text)
    assert r.fields["Followup"] == "MachineOwner"
    assert r.warnings == [
        "*** WARNING: Unable to verify timestamp for WwanUsbMp.sys",
        "ReadVirtual: 812d1248 not properly sign extended",
    ]


def test_x86_trap_with_null_eip() -> None:
    # MS docs bug-check-0xa page, ".trap 8013eee8"
    text = """\
eax=dec80201 ebx=ffdff420 ecx=8013c71c edx=000003f8 esi=00000000 edi=87038e10
eip=00000000 esp=8013ef5c ebp=8013ef64 iopl=0         nv up ei pl nz na pe nc
cs=0008  ss=0010  ds=0023  es=0023  fs=0030  gs=0000             efl=00010202
ErrCode = 00000000
00000000 ???????????????
"""
    r = parse(".trap 8013eee8", text)
    assert r.address == "0x00000000"
    assert r.registers["errcode"] == "0x00000000"
    assert r.registers["eip"] == "0x00000000"


def test_gle_reads_last_error_and_status() -> None:
    # !gle as RE notes and the Microsoft docs print it
    record = parse(
        "!gle",
        "LastErrorValue: (Win32) 0x2 (2) - The system cannot find the file specified.\n"
        "LastStatusValue: (NTSTATUS) 0xc0000034 - Object Name not found.\n",
    )
    assert record.kind == "error_code"
    assert (record.facility, record.code, record.decimal) == ("Win32", "0x2", 2)
    assert record.message == "The system cannot find the file specified."
    assert (record.last_status, record.last_status_message) == ("0xc0000034", "Object Name not found.")
    ok = parse("!gle", "LastErrorValue: (Win32) 0 (0) - The operation completed successfully.\n"
               "LastStatusValue: (NTSTATUS) 0 - STATUS_SUCCESS\n")
    assert (ok.code, ok.decimal, ok.last_status) == ("0x0", 0, "0x0")
