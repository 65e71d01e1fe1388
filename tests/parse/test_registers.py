"""``kdmcp.parse.registers``: ``r`` and friends, ``.trap``/``.cxr``, the current instruction.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from kdmcp.parse.registers import parse_registers
from tests.parse.samples.corpus import Corpus


def test_single_register_and_pseudo_register() -> None:
    assert parse("r rip", "rip=fffff80240d322f9\n").registers == {"rip": "0xfffff80240d322f9"}
    assert parse("r $t0", "$t0=0000000000000000\n").registers == {"$t0": "0x0000000000000000"}


def test_arm64_register_names_are_generic() -> None:
    out = " x0=0000000000000000   x1=000000d7a1bfe760   x2=0000000000000000   x3=000000d7a1bfe6f0\n"
    r = parse_registers("r", out)
    assert r is not None and r.registers["x1"] == "0x000000d7a1bfe760"


def test_bad_register() -> None:
    r = parse("r zz", "        ^ Bad register error in 'r zz'\n")
    assert (r.kind, r.category, r.message) == ("error", "bad_register", "Bad register error in 'r zz'")


def test_rep_prefix_and_selector_in_current_instruction() -> None:
    out = (
        "ntdll!RtlCompareMemory+0x36:\n"
        "0033:00007ffe`eeed19b6 f348a7          repe cmps qword ptr [rsi],qword ptr [rdi]\n"
    )
    r = parse("p", out)
    assert r.context.mnemonic == "repe cmps"
    assert r.context.operands == "qword ptr [rsi],qword ptr [rdi]"


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


X86_FLAGS = ["nv", "up", "ei", "pl", "zr", "na", "pe", "nc"]


def _registers_01(c: Corpus) -> None:
    r = c.record("registers/01.txt", "r")
    assert r.kind == "registers"
    assert r.registers["eax"] == "0x7ffde000"
    assert r.registers["edx"] == "0x76fcec3b"
    assert r.registers["eip"] == "0x76f63bec"
    assert r.registers["efl"] == "0x00000246"
    assert r.flags == X86_FLAGS
    assert r.segments == {
        "cs": "0x001b",
        "ss": "0x0023",
        "ds": "0x0023",
        "es": "0x0023",
        "fs": "0x003b",
        "gs": "0x0000",
    }
    assert (r.symbol, r.address, r.bytes, r.mnemonic, r.operands) == (
        "ntdll!DbgBreakPoint",
        "0x76f63bec",
        "cc",
        "int",
        "3",
    )


def _registers_02(c: Corpus) -> None:
    r = c.record("registers/02.txt", "rM 0x04")
    assert r.raw_values["fpcw"] == "027F: rn 53 puozdi"
    assert r.raw_values["st0"] == "0.000000000000000000000e+0000"
    assert sorted(k for k in r.raw_values if k.startswith("st")) == [f"st{i}" for i in range(8)]
    assert r.registers["fptw"] == "0xffff"
    assert r.symbol == "ntdll!DbgBreakPoint"


def _registers_03(c: Corpus) -> None:
    r = c.record("registers/03.txt", "rX")
    assert {k: v for k, v in r.raw_values.items()} == {f"xmm{i}": "0 0 0 0" for i in range(8)}
    assert r.mnemonic == "int"


def _registers_04(c: Corpus) -> None:
    r = c.record("registers/04.txt", "~0s")
    assert r.registers["eip"] == "0x76f76bb4"
    assert r.registers["esi"] == "0x000dfb20"
    assert r.symbol == "ntdll!KiFastSystemCallRet"
    assert r.mnemonic == "ret" and r.operands == ""
    t = c.record("registers/04.txt", "~")
    assert t.kind == "threads"
    assert [(x.index, x.current, x.event_thread) for x in t.threads] == [(0, True, False), (1, False, True)]
    assert c.block("registers/04.txt", "~").prompt.thread == 0


def _registers_05(c: Corpus) -> None:
    r = c.record("registers/05.txt", "r")
    assert r.notes == ["Last set context:"]
    assert r.registers["rax"] == "0xffffffff00000080"
    assert r.registers["r8"] == "0xffffffffffffffff"
    assert r.registers["rip"] == "0xfffff80240d322f9"
    assert r.flags == ["nv", "up", "ei", "ng", "nz", "na", "pe", "nc"]
    assert r.segments["cs"] == "0x0010"
    assert r.symbol == "nt!RtlSubtreePredecessor+0x9"
    assert r.operands == "rcx,qword ptr [rax+10h]"
    assert r.memory_reference is not None
    assert r.memory_reference.segment == "ds"
    assert r.memory_reference.address == "0xffffffff00000090"
    assert r.memory_reference.value == "????????????????"


def _registers_06(c: Corpus) -> None:
    r = c.record("registers/06.txt", ".trap ffffd48f`77af97e0")
    assert r.notes[0].startswith("NOTE: The trap frame does not contain all registers.")
    assert r.registers["rip"] == "0xfffff80060da1981"
    assert r.registers["rbx"] == "0x0000000000000000"
    assert "cs" not in r.segments  # a trap frame shows no segment line
    assert r.symbol == "myfault+0x1981"
    assert r.mnemonic == "mov" and r.operands == "eax,dword ptr [rbx]"
    assert r.memory_reference is not None and r.memory_reference.address == "0x0000000000000000"


def _registers_07(c: Corpus) -> None:
    r = c.record("registers/07.txt", "r")
    assert len([k for k in r.registers if k.startswith("r")]) == 16 + 1  # rax..r15 + rip
    assert r.registers["rcx"] == "0x0000000000000001"
    assert r.registers["efl"] == "0x00000202"
    assert r.symbol == "nt!DbgBreakPointWithStatus"
    assert r.address == "0xfffff803bb757020"


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


def _exceptions_05(c: Corpus) -> None:
    # .ecxr (cdb 6.12, x86 minidump): the exception's context, a checksum warning before the
    # symbol line, two symbol-load errors after the instruction
    r = c.record("families/exceptions/05.txt", ".ecxr")
    assert r.kind == "registers"
    assert (r.registers["eax"], r.registers["ecx"], r.registers["eip"]) == ("0x09bfff01", "0x2b2b2b2b", "0x00d44c59")
    assert r.registers["efl"] == "0x00010202" and r.segments["fs"] == "0x0053"
    assert r.symbol == "js_32_dm_windows_62f79d676e0e!JSObject::allocKindForTenure+0x9"
    assert (r.address, r.mnemonic, r.operands) == ("0x00d44c59", "mov", "edi,dword ptr [ecx]")
    assert r.memory_reference.address == "0x2b2b2b2b" and r.memory_reference.value == "????????"
    assert r.warnings == [
        "*** WARNING: Unable to verify checksum for js-32-dm-windows-62f79d676e0e.exe",
        "*** ERROR: Symbol file could not be found.  Defaulted to export symbols for ntdll.dll -",
        "*** ERROR: Symbol file could not be found.  Defaulted to export symbols for kernel32.dll -",
    ]


def _exceptions_06(c: Corpus) -> None:
    # cdb 10.0.10586: the checksum warning first, an inlined frame's label
    r = c.record("families/exceptions/06.txt", ".ecxr")
    assert (r.registers["eax"], r.registers["esp"], r.registers["eip"]) == ("0x02efff01", "0x016fdc2c", "0x00404c59")
    assert r.flags == ["nv", "up", "ei", "pl", "nz", "na", "po", "nc"]
    assert r.symbol == "js_32_dm_windows_62f79d676e0e!JSObject::is+0x2"
    assert (r.address, r.bytes, r.mnemonic) == ("0x00404c59", "8b39", "mov")
    assert r.warnings == ["*** WARNING: Unable to verify checksum for js-32-dm-windows-62f79d676e0e.exe"]


def _exceptions_07(c: Corpus) -> None:
    # a breakpoint in no module: no symbol line; four symbol-load lines after the instruction
    r = c.record("families/exceptions/07.txt", ".ecxr")
    assert (r.registers["esi"], r.registers["eip"], r.registers["efl"]) == ("0xffffff8c", "0x0f2bb4f3", "0x00000247")
    assert r.symbol is None
    assert (r.address, r.bytes, r.mnemonic, r.operands) == ("0x0f2bb4f3", "cc", "int", "3")
    assert len(r.warnings) == 4 and r.warnings[3] == (
        "*** ERROR: Module load completed but symbols could not be loaded for kernel32.dll"
    )


def _exceptions_09(c: Corpus) -> None:
    # FuzzManager cdb-5b: the x64 .ecxr layout; " r8=" starts with a blank; no selector in "ds:…"
    r = c.record("families/exceptions/09.txt", ".ecxr")
    assert r.kind == "registers" and r.warnings == []
    assert (r.registers["rax"], r.registers["rcx"], r.registers["rip"]) == (
        "0x0000000000000001", "0xfffe2b2b2b2fffe8", "0x00007ff71dcf75db",
    )  # fmt: skip
    assert (r.registers["r8"], r.registers["r9"], r.registers["r15"]) == (
        "0x0000021699633200", "0x00007ff71effa590", "0x00007ff71effa590",
    )  # fmt: skip
    assert len([k for k in r.registers if k.startswith("r")]) == 17  # rax..r15
    assert r.registers["efl"] == "0x00010284" and r.segments["cs"] == "0x0033"
    assert r.flags == ["nv", "up", "ei", "ng", "nz", "na", "po", "nc"]
    assert r.symbol == "js_dbg_64_dm_windows_62f79d676e0e!js::gc::IsInsideNursery+0x1b"
    assert (r.address, r.bytes, r.mnemonic, r.operands) == ("0x00007ff71dcf75db", "8b11", "mov", "edx,dword ptr [rcx]")
    m = r.memory_reference
    assert (m.segment, m.selector, m.address, m.value) == ("ds", None, "0xfffe2b2b2b2fffe8", "????????")


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "registers/01.txt": _registers_01,
    "registers/02.txt": _registers_02,
    "registers/03.txt": _registers_03,
    "registers/04.txt": _registers_04,
    "registers/05.txt": _registers_05,
    "registers/06.txt": _registers_06,
    "registers/07.txt": _registers_07,
    "stack/05.txt": _stack_05,
    "families/exceptions/05.txt": _exceptions_05,
    "families/exceptions/06.txt": _exceptions_06,
    "families/exceptions/07.txt": _exceptions_07,
    "families/exceptions/09.txt": _exceptions_09,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
