"""Per-sample checks, ``misc/`` and ``connect/`` families."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Corpus = Any  # the session fixture from conftest.py


def _kinds(record: Any) -> list[str]:
    return [e.kind for e in record.events]


def _misc_01(c: Corpus) -> None:
    r = c.record("misc/01.txt", ".sympath")
    assert r.kind == "symbol_path"
    assert r.path == "srv*"
    assert r.expanded_path == "SRV*C:\\Windows\\Symbols*https://msdl.microsoft.com/download/symbols"
    assert r.validation == [{"response": "Deferred", "location": "srv*"}]
    assert c.record("misc/01.txt", ".symfix C:\\Symbols").kind == "text"
    after = c.record("misc/01.txt", ".sympath", nth=1)
    assert after.expanded_path.startswith("SRV*C:\\Symbols*")


def _misc_02(c: Corpus) -> None:
    r = c.record("misc/02.txt", "ld *")
    assert r.kind == "symbol_load"
    assert r.modules == [
        "cmd",
        "kernel32",
        "USER32",
        "ntdll",
        "WINBRAND",
        "KERNELBASE",
        "LPK",
        "USP10",
        "msvcrt",
        "GDI32",
    ]
    assert c.record("misc/02.txt", "ld kernel32").modules == ["kernel32"]


def _misc_03(c: Corpus) -> None:
    r = c.record("misc/03.txt", ".formats rip")
    assert r.value == "0x000000007763cb60"
    assert r.decimal == 2003028832
    assert r.fields["Octal"] == "0000000000016730745540"
    assert r.fields["Chars"] == "....wc.`"


def _misc_04(c: Corpus) -> None:
    r = c.record("misc/04.txt", "version")
    assert r.kind == "target"
    assert (r.os, r.build, r.service_pack, r.arch) == ("Windows 7", 7601, "Service Pack 1", "x64")
    assert r.kernel is False and r.processors == 1 and r.multiprocessor is False
    assert r.product == "WinNt" and r.suite == "SingleUserTS"
    assert r.debugger_version == "10.0.10586.567"
    assert r.process_uptime == "0 days 0:50:52.286"
    assert r.uptime_seconds == 1 * 3600 + 50 * 60 + 3.438
    assert r.details["kernelbase.dll version"].startswith("6.1.7601.17514")


def _misc_05(c: Corpus) -> None:
    r = c.record("misc/05.txt", "g")
    assert _kinds(r) == ["module_load", "breakpoint"]
    assert r.events[0].name == r"C:\WINDOWS\System32\IMM32.DLL"
    assert r.events[0].start == "0x00007ff99cd70000"
    assert r.context.symbol == "notepad!wWinMain" and r.context.address == "0x00007ff68402c0f8"


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


def _misc_08(c: Corpus) -> None:
    r = c.record("misc/08.txt", ".reload")
    assert r.messages == ["Reloading current modules"]
    assert r.progress_dots == 16


def _misc_09(c: Corpus) -> None:
    r = c.record("misc/09.txt", "vertarget")
    assert (r.os, r.build, r.kernel, r.processors, r.build_type, r.arch) == (
        "Windows 10",
        9926,
        True,
        4,
        "Free",
        "x64",
    )
    assert r.kernel_base == "0xfffff8018d283000"
    assert r.loaded_module_list == "0xfffff8018d58aef0"
    assert r.build_lab == "9926.0.amd64fre.fbl_awesome1501.150119-1648"
    assert r.machine_name == ""
    assert r.uptime == "0 days 01:31:58.931"


def _misc_10(c: Corpus) -> None:
    ev = c.record("misc/10.txt", "? @$pcr")
    assert (ev.value, ev.decimal) == ("0xfffff80351148000", -8781847822336)
    pcr = c.record("misc/10.txt", "!pcr")
    assert pcr.address == "0xfffff80351148000" and pcr.fields["processor"] == "0"
    assert pcr.fields["NtTib.StackBase"] == "fffff803536de000"


def _misc_11(c: Corpus) -> None:
    r = c.record("misc/11.txt", "x /D /f FirstDriverSample!d*")
    assert [(s.address, s.name) for s in r.symbols] == [
        ("0xfffff80064521020", "FirstDriverSample!DriverEntry"),
        ("0xfffff800645210f7", "FirstDriverSample!DbgPrint"),
    ]
    assert r.symbols[0].signature == "(struct _DRIVER_OBJECT *, struct _UNICODE_STRING *)"


def _misc_14(c: Corpus) -> None:
    r = c.record("misc/14.txt", ".time")
    assert r.debug_session_time == "Mon Apr 07 19:10:50 2003"
    assert r.uptime_seconds == 4 * 86400 + 4 * 3600 + 53 * 60 + 56.461
    assert r.kernel_time == "0 days 0:00:00.015" and r.user_time == "0 days 0:00:00.015"


def _misc_15(c: Corpus) -> None:
    r = c.record("misc/15.txt", "vertarget")
    assert (r.os, r.build, r.processors, r.arch) == ("Windows XP", 2505, 1, "x86")
    assert r.kernel_base == "0x804d0000" and r.loaded_module_list == "0x80548748"
    assert r.uptime == "0 days 0:04:53"


def _connect_01(c: Corpus) -> None:
    (block,) = c.blocks("connect/01.txt")
    r = block.record
    assert _kinds(r)[:4] == ["banner", "transport", "transport", "waiting_to_reconnect"]
    assert "connection_established" in _kinds(r)
    target = [e for e in r.events if e.kind == "connected"]
    assert target[0].name == "169.182.1.1" and target[1].name == "Windows 10 16299"
    assert r.target.build == 16299 and r.target.processors == 4
    assert r.target.kernel_base == "0xfffff8009540d000"
    assert r.target.debugger_version == "10.0.17074.1002"


def _connect_02(c: Corpus) -> None:
    r = c.blocks("connect/02.txt")[0].record
    assert _kinds(r) == ["banner", "transport", "transport", "waiting_to_reconnect"]
    assert r.events[0].name == "1.0.1908.30002"


def _connect_03(c: Corpus) -> None:
    r = c.blocks("connect/03.txt")[0].record
    assert _kinds(r) == ["waiting", "waiting_to_reconnect"]
    assert r.events[0].name == r"pipe \\.\pipe\com1"


def _connect_04(c: Corpus) -> None:
    r = c.blocks("connect/04.txt")[0].record
    assert "refresh" in _kinds(r)
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


def _connect_06(c: Corpus) -> None:
    r = c.blocks("connect/06.txt")[0].record
    assert r.events[1].kind == "dump_open"
    assert r.events[2].name == "User Mini Dump File with Full Memory"
    assert (r.target.os, r.target.build, r.target.arch) == ("Windows Vista", 6000, "x86")
    assert r.target.process_uptime == "0 days 0:00:26.000"


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


def _connect_08(c: Corpus) -> None:
    pre = c.blocks("connect/08.txt")[0].record
    assert _kinds(pre) == ["pending_attach", "module_load", "exception", "initial_command"]
    assert pre.events[3].name == ".jdinfo 0x00000000003E0000"
    r = c.record("connect/08.txt", ".jdinfo 0x00000000003E0000")
    assert r.kind == "exception_record"
    assert r.thread == "0:15c8"
    assert r.code == "0xc0000005" and r.access == "write" and r.access_address == "0x0000000000000000"
    assert r.context.registers["rip"] == "0x00007ff791d81014"
    assert r.context.symbol == "CrashAV_x64!wmain+0x14"


def _connect_12(c: Corpus) -> None:
    r = c.blocks("connect/12.txt")[0].record
    assert "dump_open" in _kinds(r)
    (dt,) = [e for e in r.events if e.kind == "dump_type"]
    assert dt.name == "Mini Kernel Dump File"
    assert r.target.processors == 24 and r.target.build == 26100
    assert r.target.kernel_base == "0xfffff802bb400000"
    assert r.target.uptime_seconds is not None and r.target.uptime_seconds > 5 * 86400


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "misc/01.txt": _misc_01,
    "misc/02.txt": _misc_02,
    "misc/03.txt": _misc_03,
    "misc/04.txt": _misc_04,
    "misc/05.txt": _misc_05,
    "misc/06.txt": _misc_06,
    "misc/07.txt": _misc_07,
    "misc/08.txt": _misc_08,
    "misc/09.txt": _misc_09,
    "misc/10.txt": _misc_10,
    "misc/11.txt": _misc_11,
    "misc/14.txt": _misc_14,
    "misc/15.txt": _misc_15,
    "connect/01.txt": _connect_01,
    "connect/02.txt": _connect_02,
    "connect/03.txt": _connect_03,
    "connect/04.txt": _connect_04,
    "connect/05.txt": _connect_05,
    "connect/06.txt": _connect_06,
    "connect/07.txt": _connect_07,
    "connect/08.txt": _connect_08,
    "connect/12.txt": _connect_12,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)


def test_every_sample_has_a_check(corpus: Corpus) -> None:
    assert set(corpus.names("misc")) | set(corpus.names("connect")) == set(CHECKS)
