"""``kdmcp.parse.stack``: ``k`` in all its spellings, and ``~*k``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from kdmcp.parse.stack import parse_stack
from tests.parse.samples.corpus import Corpus


def test_kP_parameters_on_following_lines_are_joined() -> None:
    out = (
        " # ChildEBP RetAddr  \n"
        "00 0012fe80 0040150e MyApp!main(\n"
        "\t\t\tint argc = 0n1, \n"
        "\t\t\tchar ** argv = 0x00342fb8)+0x1d [c:\\myapp\\main.cpp @ 12]\n"
        "01 0012ffc0 7c817077 MyApp!mainCRTStartup+0x12f\n"
    )
    r = parse("kP", out)
    assert r.kind == "stack"
    assert len(r.frames) == 2
    f = r.frames[0]
    # the parameter list is no part of the function's name (issue 29: "_efree(void * ptr = 0x030bf1e0)")
    assert (f.function, f.params) == ("main", ("int argc = 0n1", "char ** argv = 0x00342fb8"))
    assert (f.offset, f.source_line) == ("0x1d", 12)
    assert r.frames[1].index == 1


def test_kc_call_sites_only() -> None:
    r = parse("kc", " # Call Site\n00 ntdll!NtWaitForSingleObject\n01 KERNELBASE!WaitForSingleObjectEx+0x8f\n")
    assert [f.call_site for f in r.frames] == ["ntdll!NtWaitForSingleObject", "KERNELBASE!WaitForSingleObjectEx+0x8f"]
    assert r.frames[0].child_sp is None and r.frames[0].return_address is None


def test_stack_with_only_an_error_is_an_error() -> None:
    r = parse("k", "Unable to get program counter\n")
    assert r.kind == "error" and r.category == "context"


def test_stack_thread_headers_without_prefix() -> None:
    out = (
        "\n   0  Id: 7a0.5ac Suspend: 1 Teb: 7ffdf000 Unfrozen\n"
        " # ChildEBP RetAddr  \n"
        "00 0012fe80 0040150e ntdll!KiFastSystemCallRet\n"
    )
    r = parse_stack("kb", out)
    assert r is not None and len(r.threads) == 1 and len(r.threads[0].frames) == 1


@pytest.mark.parametrize(
    ("command", "out", "address"),
    [
        # Chromium issue 40082661 (x86 kP, 2010): unknown code right after a use-after-free
        ("kP", "ChildEBP RetAddr  \n001ce460 6bf6fc2f 0x1c\n", "0x1c"),
        # HEVD stack-overflow GS write-up (Windows 7 x86 kp)
        ("kp", " # ChildEBP RetAddr  \n00 8fb7f128 83e905f4 0xfa1075\n", "0xfa1075"),
        # NotMyFaultEither.mdmp dead-lock talk (XP, ~* kv)
        (
            "kv",
            "ChildEBP RetAddr  Args to Child              \n0012fb30 7e3799d8 0000800a 0012fbc8 7e375ba2 0x2d0036\n",
            "0x2d0036",
        ),
        # Microsoft sysvad lab, x64 k and kb (frame 0x11)
        (
            "k",
            " # Child-SP          RetAddr           Call Site\n11 000000ee`6d37c580 00000000`00000000 0x12e\n",
            "0x12e",
        ),
        (
            "kb",
            " # RetAddr           : Args to Child                                       : Call Site\n"
            "11 00000000`00000000 : 00000000`00000000 00000000`00000000 00000000`00000080 00000000`00000000 : 0x12e\n",
            "0x12e",
        ),
        # RosUmd notes, Windows 10 ARM64 kc
        ("kc", " # Call Site\n00 0x0\n", "0x0"),
    ],
)
def test_short_bare_address_call_site_is_an_address(command: str, out: str, address: str) -> None:
    (frame,) = parse(command, out).frames
    assert frame.address == address and frame.call_site == address
    assert frame.module is None and frame.function is None


def test_glued_symbol_warning_is_cut_from_the_frame() -> None:
    # dotnet/coreclr#27184 (cdb on Windows ARM32, k)
    out = (
        "*** WARNING: Unable to verify checksum for CoreRun.exe\n"
        " # Child-SP RetAddr  Call Site\n"
        "00 00a03004 0cc400f0 CoreCLR!JIT_StackProbe+0x10 [D:\\git\\coreclr3\\src\\vm\\arm\\asmhelpers.asm @ 6589] \n"
        "01 00a13f68 0f1621f4 GitHub_21061_StackOverflowInFuncletProlog!"
        "GitHub_21061._00159000.AllocLocal_DivideByZero()+0xbc*** WARNING: Unable to verify checksum for "
        "C:\\echesako\\coreclr\\GitHub_21061_StackOverflowInFuncletProlog.exe\n"
        "\n"
        "02 00a13f80 0f1d4740 CoreCLR!CallEHFunclet+0x15\n"
    )
    r = parse("k", out)
    glued = r.frames[1]
    exe = "C:\\echesako\\coreclr\\GitHub_21061_StackOverflowInFuncletProlog.exe"
    assert glued.call_site.endswith("AllocLocal_DivideByZero()+0xbc")
    assert (glued.function, glued.offset) == ("GitHub_21061._00159000.AllocLocal_DivideByZero()", "0xbc")
    assert r.warnings == [
        "*** WARNING: Unable to verify checksum for CoreRun.exe",
        "*** WARNING: Unable to verify checksum for " + exe,
    ]
    assert len(r.frames) == 3


def test_child_sp_header_names_the_column_of_8_digit_values() -> None:
    # dotnet/coreclr#27184 (cdb on Windows ARM32, k): 32-bit stack pointers under Child-SP
    arm = parse("k", " # Child-SP RetAddr  Call Site\n00 00a03004 0cc400f0 CoreCLR!JIT_StackProbe+0x10\n")
    assert (arm.frames[0].child_sp, arm.frames[0].child_ebp) == ("0x00a03004", None)
    # x86 names the same column ChildEBP
    x86 = parse("k", "ChildEBP RetAddr  \n0012fb30 7e3799d8 USER32!GetMessageW+0x6e\n")
    assert (x86.frames[0].child_sp, x86.frames[0].child_ebp) == (None, "0x0012fb30")


def test_x86_kb_row_without_a_call_site_keeps_its_third_argument() -> None:
    # Microsoft docs, bug check 0xA example: kb/kv rows with no call site after the arguments
    out = (
        "ChildEBP RetAddr  Args to Child\n"
        "8013ed5c 801263ba 00000000 00000000 e12ab000\n"
        "8013ed84 8013eee8 00000000 80128c7b 00000000 nt!KiTrap0E+0x2d4\n"
    )
    for command in ("kb", "kv"):
        record = parse(command, out)
        assert record.kind == "stack"
        first, second = record.frames
        assert first.child_ebp == "0x8013ed5c" and first.return_address == "0x801263ba"
        assert first.args == ("0x00000000", "0x00000000", "0xe12ab000")
        assert first.call_site == "" and first.module is None
        assert second.module == "nt" and second.function == "KiTrap0E" and len(second.args) == 3


def _exceptions_errors_19(c: Corpus) -> None:
    r = c.record("exceptions_errors/19.txt", "kb")
    assert len(r.frames) == 5
    assert r.warnings == ["*** ERROR: Symbols could not be loaded for glintmp.sys"]
    last = r.frames[4]
    assert last.call_site == "glintMP+0x1411" and last.annotations == ("[No function listed.]",)
    assert r.frames[0].child_ebp == "0xf29bf1b0"


def _exceptions_errors_20(c: Corpus) -> None:
    block = c.block("exceptions_errors/20.txt", "kb")  # "[Local 9:50 AM]" timestamp dropped
    r = block.record
    assert len(r.frames) == 4
    assert len(r.warnings) == 3
    assert r.frames[0].module == "agpCPQ" and r.frames[0].offset == "0x125b"
    assert c.blocks("exceptions_errors/20.txt")[0].command == ""  # the empty prompt line


def _stack_01(c: Corpus) -> None:
    r = c.record("stack/01.txt", "kb")
    assert r.kind == "stack"
    assert len(r.frames) == 4
    f0 = r.frames[0]
    assert f0.index == 0
    assert f0.child_sp is None  # this kb layout has no Child-SP column
    assert f0.return_address == "0x0000000077732ef5"
    assert f0.args == ("0x0000000000000000", "0x00000000777d5468", "0x0000000000000000", "0x0000000000000004")
    assert (f0.module, f0.function, f0.offset) == ("ntdll", "LdrpDoDebuggerBreak", "0x30")
    assert r.frames[2].function == "?? ::FNODOBFM::`string'"
    assert r.frames[2].offset == "0x29220"


def _stack_02(c: Corpus) -> None:
    r = c.record("stack/02.txt", "kp")
    assert [f.index for f in r.frames] == [0, 1, 2, 3]
    assert r.frames[0].child_sp == "0x000000000015eed0"
    assert r.frames[0].return_address == "0x0000000077732ef5"
    assert r.frames[3].call_site == "ntdll!LdrInitializeThunk+0xe"


def _stack_03(c: Corpus) -> None:
    r = c.record("stack/03.txt", "kv")
    assert len(r.frames) == 9
    assert r.notes == ["*** Stack trace for last set context - .thread/.cxr resets it"]
    assert r.frames[0].call_site == "myfault+0x1981"
    assert r.frames[0].module == "myfault" and r.frames[0].function is None
    assert len(r.frames[0].args) == 4
    assert r.frames[7].trap_frame == "0xffffd48f77af9e40"
    assert r.frames[7].function == "KiSystemServiceCopyEnd"
    assert r.frames[8].address == "0x00007ff8f16ece54"


def _stack_04(c: Corpus) -> None:
    r = c.record("stack/04.txt", "k")
    assert len(r.frames) == 16
    assert r.frames[0].call_site == "ntdll!NtWriteFile"
    assert r.frames[0].offset is None
    assert r.frames[15].call_site == "MPR!MprOpenEnumConnect+0x176"
    assert r.frames[3].function == "OSF_CCONNECTION::TransSendReceive"


def _stack_06(c: Corpus) -> None:
    r = c.record("stack/06.txt", "k")
    assert [f.call_site for f in r.frames] == [
        "notepad!wWinMain",
        "notepad!__scrt_common_main_seh+0x106",
        "KERNEL32!BaseThreadInitThunk+0x14",
        "ntdll!RtlUserThreadStart+0x21",
    ]
    assert r.frames[3].return_address == "0x0000000000000000"


def _stack_07(c: Corpus) -> None:
    assert c.record("stack/07.txt", "bp AddValues1").kind == "text"
    go = c.record("stack/07.txt", "g")
    assert go.kind == "events"
    assert go.events[0].kind == "breakpoint" and go.events[0].breakpoint_id == 0
    assert go.context.registers["eip"] == "0x008910c0"
    assert go.context.symbol == "Project1!AddValues1"
    r = c.record("stack/07.txt", "kv")
    assert len(r.frames) == 11
    f0 = r.frames[0]
    assert f0.child_ebp == "0x0133fb7c" and f0.child_sp is None
    assert f0.args == ("0x00000001", "0x00000004", "0x0133fd4c")
    assert f0.annotations == ("(FPO: [Non-Fpo])", "(CONV: cdecl)")
    assert r.frames[5].source_line == 288
    assert r.frames[5].source_file is not None and r.frames[5].source_file.endswith("exe_common.inl")
    assert r.frames[9].annotations == ("(FPO: [SEH])",)


def _stack_08(c: Corpus) -> None:
    r = c.record("stack/08.txt", "kn")
    assert len(r.frames) == 6
    inline = r.frames[1]
    assert inline.inline and inline.child_sp is None and inline.return_address is None
    assert inline.function == "FxDriverDeviceAdd::Invoke"
    assert inline.source_line == 61
    assert r.frames[0].source_file == r"c:\Samples\kmdf echo sample\c++\driver\autosync\driver.c"
    assert r.frames[0].source_line == 138


def _stack_09(c: Corpus) -> None:
    r = c.record("stack/09.txt", "k")
    assert len(r.frames) == 4
    assert r.notes
    assert r.frames[3].function == "KeWaitForSingleObject"
    assert r.frames[3].source_line == 683


def _stack_10(c: Corpus) -> None:
    r = c.record("stack/10.txt", "~*k")
    assert r.frames == []
    assert [t.index for t in r.threads] == [0, 1, 2, 3]
    assert [t.id for t in r.threads] == ["570.574", "570.590", "570.598", "570.760"]
    current = r.threads[2]
    assert current.current
    assert len(current.frames) == 1
    assert current.frames[0].child_ebp == "0x009fdd0c"
    assert current.frames[0].call_site == "COMCTL32!_chkstk+0x25"
    assert r.threads[0].frames == []  # elided by the author ('.....')


def _stack_11(c: Corpus) -> None:
    r = c.record("stack/11.txt", "k")
    assert len(r.frames) == 9
    assert r.frames[0].call_site == "nt!KeBugCheckEx"
    assert r.frames[0].source_line == 122
    assert all(f.source_file for f in r.frames)
    assert r.frames[2].function == "ADAPTER_RENDER::Reset"


def _stack_12(c: Corpus) -> None:
    r = c.record("stack/12.txt", "kb")
    assert len(r.frames) == 14
    f = r.frames[0]
    assert f.index == 0x0E
    assert f.child_ebp == "0x010049b0"
    assert f.args == ("0x01004b88", "0x00d81023", "0x00ff5000")
    assert f.function == "Loop2Big" and f.offset == "0x57"
    assert f.source_file == r"C:\StackOverFlow1\StackOverFlow1.cpp" and f.source_line == 13


def _stack_15(c: Corpus) -> None:
    step = c.record("stack/15.txt", "p")
    assert step.kind == "events"
    assert step.context.symbol == "MyApp!func1+0x7"
    assert step.context.mnemonic == "lea"
    r = c.record("stack/15.txt", "knL")
    assert len(r.frames) == 5
    assert r.frames[0].inline and r.frames[0].return_address is None
    assert r.frames[0].call_site == "MyApp!func1+0x7"
    assert r.frames[1].child_sp == "0x000000000050fc90"
    locs = c.record("stack/15.txt", "dv -v")
    assert locs.kind == "locals"
    assert [(v.name, v.value) for v in locs.locals] == [
        ("num1", "0n0"),
        ("num2", "0n0"),
        ("num3", "<value unavailable>"),
    ]
    assert locs.locals[2].location == "<unavailable>"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "exceptions_errors/19.txt": _exceptions_errors_19,
    "exceptions_errors/20.txt": _exceptions_errors_20,
    "stack/01.txt": _stack_01,
    "stack/02.txt": _stack_02,
    "stack/03.txt": _stack_03,
    "stack/04.txt": _stack_04,
    "stack/06.txt": _stack_06,
    "stack/07.txt": _stack_07,
    "stack/08.txt": _stack_08,
    "stack/09.txt": _stack_09,
    "stack/10.txt": _stack_10,
    "stack/11.txt": _stack_11,
    "stack/12.txt": _stack_12,
    "stack/15.txt": _stack_15,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
