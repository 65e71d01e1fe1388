"""Per-sample checks, ``stack/`` family: fields a person verified by reading each sample."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Corpus = Any  # the session fixture from conftest.py


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


def _stack_05(c: Corpus) -> None:
    switch = c.record("stack/05.txt", "~0s")
    assert switch.kind == "registers"
    assert switch.symbol == "win32u!NtGdiGetCharABCWidthsW+0x14"
    assert switch.mnemonic == "ret"
    r = c.record("stack/05.txt", "k")
    assert len(r.frames) == 19
    assert r.frames[0].call_site == "win32u!NtGdiGetCharABCWidthsW+0x14"
    assert r.frames[18].function == "DirectUI::Element::_UpdateDesiredSize"
    assert c.block("stack/05.txt", "k").prompt.thread == 0


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
    "stack/01.txt": _stack_01,
    "stack/02.txt": _stack_02,
    "stack/03.txt": _stack_03,
    "stack/04.txt": _stack_04,
    "stack/05.txt": _stack_05,
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


def test_every_sample_has_a_check(corpus: Corpus) -> None:
    assert set(corpus.names("stack")) == set(CHECKS)
