"""``kdmcp.parse.analyze``: ``!analyze -v`` (kernel and user mode, both layouts) and ``.bugcheck``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse, parse_transcript
from tests.parse.samples.corpus import Corpus

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
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
