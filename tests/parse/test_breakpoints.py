"""``kdmcp.parse.breakpoints``: ``bl`` rows and what ``bp``/``bu``/``bm`` print.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_bl_deferred_data_and_command() -> None:
    out = (
        " 0 e Disable Clear  fffff803`52c4a2fc     0001 (0001) nt!MmCreateProcessAddressSpace\n"
        " 1 eu                                      0001 (0001) (foo!bar)\n"
        " 2 d Enable Clear  fffff803`11112222 w 4 0002 (0004) nt!KiFoo\n"
        '     "r rax; g"\n'
    )
    r = parse("bl", out)
    b0, b1, b2 = r.breakpoints
    assert b0.enabled and b0.address == "0xfffff80352c4a2fc"
    assert b1.unresolved and b1.address is None and b1.symbol == "foo!bar"
    assert (b2.enabled, b2.access, b2.size, b2.pass_count, b2.initial_pass_count) == (False, "w", 4, 2, 4)
    assert b2.command == "r rax; g"


def test_bm_lists_what_it_set() -> None:
    r = parse("bm nt!MmCreate*", '  1: fffff803`52c4a2fc @!"nt!MmCreateProcessAddressSpace"\n')
    assert r.breakpoints[0].symbol == "nt!MmCreateProcessAddressSpace"


def test_dml_bl_deferred_row() -> None:
    # current WinDbg (DML) bl of a deferred breakpoint, VBS/Secure Kernel debugging notes
    out = "     0 e Disable Clear u                      0001 (0001) (securekernel!IumInvokeSecureService)\n"
    (bp,) = parse("bl", out).breakpoints
    assert (bp.id, bp.enabled, bp.unresolved, bp.address) == (0, True, True, None)
    assert bp.symbol == "securekernel!IumInvokeSecureService"
    assert (bp.pass_count, bp.initial_pass_count) == (1, 1)


def test_deferred_bp_is_set_with_a_warning() -> None:
    # the same notes: bp on a module not loaded yet
    out = "Bp expression 'securekernel!IumInvokeSecureService' could not be resolved, adding deferred bp\n"
    r = parse("bp0 securekernel!IumInvokeSecureService", out)
    assert r.kind == "breakpoints" and r.breakpoints == []
    assert r.warnings == [out.rstrip("\n")]


def test_bl_printing_nothing_lists_no_breakpoints() -> None:
    # the same notes: bl after bc 0 prints an empty line
    for out in ("", "\n"):
        r = parse("bl", out)
        assert r.kind == "breakpoints" and r.breakpoints == []


def test_thread_column_ending_the_row_is_the_thread_not_the_symbol() -> None:
    # a data breakpoint with no symbol: the row ends at "0:****" (published Hakuoki notes,
    # trailing blank stripped); the row after it keeps its own symbol
    out = (
        "14 d Enable Clear  1cfb5000 w 4 0001 (0001)  0:****\n"
        "15 e Disable Clear  00e777ad     0001 (0001)  0:**** HakuokiWin+0x77ad\n"
    )
    a, b = parse("bl", out).breakpoints
    assert (a.id, a.enabled, a.access, a.size, a.thread, a.symbol) == (14, False, "w", 4, "0:****", None)
    assert (b.id, b.thread, b.symbol) == (15, "0:****", "HakuokiWin+0x77ad")


def test_command_on_the_row_is_split_from_the_symbol() -> None:
    # kd bl after bp nt!NtTerminateProcess "dx ...; .if ..." (published x86 kernel notes)
    out = (
        "     0 e Disable Clear  840b8a51     0001 (0001) nt!NtTerminateProcess "
        '"dx Debugger.State.Scripts.auto.Contents.IsNeedBreak(); .if (@$t0 == 1) {} .else {gc}"\n'
    )
    (bp,) = parse("bl", out).breakpoints
    assert (bp.address, bp.symbol) == ("0x840b8a51", "nt!NtTerminateProcess")
    assert bp.command == "dx Debugger.State.Scripts.auto.Contents.IsNeedBreak(); .if (@$t0 == 1) {} .else {gc}"


def test_source_row_with_a_command_then_a_data_row_ending_in_the_thread() -> None:
    # published TTD investigation notes (MegaEngineLibWin32AppTest): the first row has
    # [file @ line] and its command on the row; the second, a ba row, ends with "0:**** " - the
    # old reader dropped the first row and took "0:****" for the second one's symbol
    out = (
        "     0 d Enable Clear  00007ff7`dc3f3f50  [C:\\dev\\Codeberg\\MegaProject\\Tests\\MegaEngineLibWin32AppTest\\"
        'DrawableDemo.cpp @ 520]     0001 (0001)  0:**** MegaEngineLibWin32AppTest!SceneUpdate+0x30 "dx SceneDemo->'
        "ThreadPool->m_ActiveTaskCount; .for (r $t0=0; @$t0 < 7; r $t0=@$t0+1) { dx SceneDemo->UpdateTasks->"
        'm_Tasks[@$t0].Done }"\n'
        "     1 d Enable Clear  0000021c`d17ca980 w 4 0001 (0001)  0:**** \n"
    )
    a, b = parse("bl", out).breakpoints
    assert (a.id, a.enabled, a.address, a.line, a.thread) == (0, False, "0x00007ff7dc3f3f50", 520, "0:****")
    assert a.file is not None and a.file.endswith("\\DrawableDemo.cpp")
    assert a.symbol == "MegaEngineLibWin32AppTest!SceneUpdate+0x30"
    assert a.command is not None and a.command.startswith("dx SceneDemo->ThreadPool->m_ActiveTaskCount; .for")
    assert (b.id, b.enabled, b.address, b.access, b.size, b.thread, b.symbol) == (
        1,
        False,
        "0x0000021cd17ca980",
        "w",
        4,
        "0:****",
        None,
    )


def test_kernel_rows_with_a_source_location() -> None:
    # kernel bl prints no process:thread column; rows with [file @ line] must not be dropped.
    # x64: kash1064/Kaeru-no-Himitsukichi, content/WinDriver/2022-01-29-windows-windriver-002-irp.md;
    # x86 (with the DBGHELP note the debugger printed before it): published TCPServer kernel notes
    x64 = (
        "     0 e Disable Clear  fffff801`18391040  [G:\\Try2WinDbg\\drivers\\SecondDriverSample\\SecondDriver\\"
        "SecondDriver.cpp @ 18]     0001 (0001) SecondDriver!SecondDriverDeviceControl\n"
    )
    (bp,) = parse("bl", x64).breakpoints
    assert (bp.id, bp.address, bp.line, bp.thread) == (0, "0xfffff80118391040", 18, None)
    assert bp.file is not None and bp.file.endswith("\\SecondDriver.cpp")
    assert bp.symbol == "SecondDriver!SecondDriverDeviceControl"
    x86 = (
        "DBGHELP: TCPServer is not source indexed\n"
        "     0 e Disable Clear  00059c8a  [C:\\Users\\刘海龙\\Desktop\\TCPServer\\TCPServer.cpp @ 47]     0001 (0001) "
        "TCPServer!main+0x12a\n"
        "     4 e Disable Clear  7715fa50     0001 (0001) ntdll!NtDeviceIoControlFile\n"
    )
    r = parse("bl", x86)
    assert [(b.id, b.address, b.line, b.symbol) for b in r.breakpoints] == [
        (0, "0x00059c8a", 47, "TCPServer!main+0x12a"),
        (4, "0x7715fa50", None, "ntdll!NtDeviceIoControlFile"),
    ]


def _misc_06(c: Corpus) -> None:
    r = c.record("misc/06.txt", "bl")
    assert r.kind == "breakpoints"
    assert [(b.id, b.enabled, b.address, b.symbol) for b in r.breakpoints] == [
        (0, True, "0x00007ff68402c0f8", "notepad!wWinMain"),
        (1, True, "0x00007ff99d32ce60", "ntdll!NtWriteFile"),
    ]
    assert r.breakpoints[0].thread == "0:****"
    assert (r.breakpoints[0].pass_count, r.breakpoints[0].initial_pass_count) == (1, 1)


def _misc_07(c: Corpus) -> None:
    (bp,) = c.record("misc/07.txt", "bl").breakpoints
    assert (bp.id, bp.address, bp.symbol, bp.thread) == (
        0,
        "0xfffff80352c4a2fc",
        "nt!MmCreateProcessAddressSpace",
        None,
    )


def _bp_01(c: Corpus) -> None:
    # the bl reference page: classic layout, no Disable/Clear links
    (bp,) = c.record("families/breakpoints/01.txt", "bl").breakpoints
    assert (bp.id, bp.enabled, bp.unresolved, bp.address) == (0, True, False, "0x010049e0")
    assert (bp.pass_count, bp.initial_pass_count, bp.thread, bp.symbol) == (1, 1, "0:****", "stst!main")
    assert (bp.file, bp.line, bp.group, bp.parent) == (None, None, None, None)


def _bp_02(c: Corpus) -> None:
    # old kernel bl: no process:thread column
    r = c.record("families/breakpoints/02.txt", "bl")
    assert [(b.id, b.enabled, b.address, b.thread, b.symbol) for b in r.breakpoints] == [
        (0, True, "0xf8640ca6", None, "tcpip!IPTransmit"),
        (1, True, "0xf8672660", None, "tcpip!IPFragment"),
    ]


def _bp_03(c: Corpus) -> None:
    name = "families/breakpoints/03.txt"
    bm = c.record(name, "bm simple!MoreCalculate")
    assert [(b.id, b.address, b.symbol) for b in bm.breakpoints] == [
        (2, "0x00000000ff6e1455", "simple!MoreCalculate"),
        (4, "0x00000000ff6e1528", "simple!MoreCalculate"),
    ]
    first = c.record(name, "bl", 0).breakpoints
    assert [(b.id, b.enabled, b.address, b.line, b.group, b.parent) for b in first] == [
        (0, True, "0x00000000ff6e13c8", 52, None, None),
        (3, True, None, None, "inline function", None),
        (2, True, "0x00000000ff6e1455", 58, None, 3),
        (4, True, "0x00000000ff6e1528", 72, None, 3),
    ]
    assert first[0].file == "n:\\win7\\simple\\simple.cpp" and first[0].symbol == "simple!wmain"
    assert first[1].symbol == "simple!MoreCalculate" and first[1].thread == "0:****"
    assert (first[2].symbol, first[2].inline_function) == ("simple!wmain+0x8d", "simple!MoreCalculate")
    assert (first[3].symbol, first[3].inline_function) == ("simple!wmain+0x160", "simple!MoreCalculate")
    # after bd 3 / be 2: the container and member 4 are disabled, member 2 stays enabled
    second = c.record(name, "bl", 1).breakpoints
    assert [(b.id, b.enabled) for b in second] == [(0, True), (3, False), (2, True), (4, False)]
    # after bc 3 only breakpoint 0 is left
    (last,) = c.record(name, "bl", 2).breakpoints
    assert (last.id, last.line, last.symbol) == (0, 52, "simple!wmain")


def _bp_04(c: Corpus) -> None:
    # current WinDbg on a Linux target: a DWARF source location between address and counts
    (bp,) = c.record("families/breakpoints/04.txt", "bl").breakpoints
    assert (bp.id, bp.enabled, bp.address) == (0, True, "0x0000555555555225")
    assert (bp.file, bp.line) == ("/mnt/c/Users/bob/DisplayGreeting.cpp", 14)
    assert (bp.pass_count, bp.initial_pass_count, bp.thread, bp.symbol) == (1, 1, "0:****", "DisplayGreeting!main")


def _bp_05(c: Corpus) -> None:
    # a hierarchical breakpoint (id 2) owning breakpoints 0 and 1
    r = c.record("families/breakpoints/05.txt", "bl")
    assert [(b.id, b.address, b.file, b.line, b.group, b.parent) for b in r.breakpoints] == [
        (2, None, None, None, "hierarchical breakpoint", None),
        (0, "0x00007ff6c6f52200", "C:\\BikeCatalog\\BikeCatalog.cpp", 13, None, 2),
        (1, "0x00007ff6c6f522a0", "C:\\BikeCatalog\\BikeCatalog.cpp", 9, None, 2),
    ]
    assert {b.symbol for b in r.breakpoints} == {"BikeCatalog!BikeCatalog::GetNumberOfBikes"}
    assert all(b.enabled and b.thread == "0:****" for b in r.breakpoints)


def _bp_06(c: Corpus) -> None:
    # ba w 8: a data breakpoint with no symbol, the row ending in the thread column
    (bp,) = c.record("families/breakpoints/06.txt", "bl").breakpoints
    assert (bp.id, bp.enabled, bp.address, bp.access, bp.size) == (0, True, "0x00000061887cf898", "w", 8)
    assert (bp.pass_count, bp.initial_pass_count, bp.thread, bp.symbol) == (1, 1, "0:****", None)


def _bp_07(c: Corpus) -> None:
    # kernel bl (no process:thread column) of a bu on the author's own driver, with its source line
    (bp,) = c.record("families/breakpoints/07.txt", "bl").breakpoints
    assert (bp.id, bp.enabled, bp.unresolved, bp.address) == (0, True, False, "0xfffff80118391040")
    path = "G:\\Try2WinDbg\\drivers\\SecondDriverSample\\SecondDriver\\SecondDriver.cpp"
    assert (bp.file, bp.line) == (path, 18)
    assert (bp.pass_count, bp.initial_pass_count, bp.thread) == (1, 1, None)
    assert bp.symbol == "SecondDriver!SecondDriverDeviceControl"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "misc/06.txt": _misc_06,
    "misc/07.txt": _misc_07,
    "families/breakpoints/01.txt": _bp_01,
    "families/breakpoints/02.txt": _bp_02,
    "families/breakpoints/03.txt": _bp_03,
    "families/breakpoints/04.txt": _bp_04,
    "families/breakpoints/05.txt": _bp_05,
    "families/breakpoints/06.txt": _bp_06,
    "families/breakpoints/07.txt": _bp_07,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
