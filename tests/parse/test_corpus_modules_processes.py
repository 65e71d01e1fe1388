"""Per-sample checks, ``modules/`` and ``process_thread/`` families."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Corpus = Any  # the session fixture from conftest.py


def _modules_01(c: Corpus) -> None:
    r = c.record("modules/01.txt", "lmi")
    assert r.kind == "modules"
    assert [m.name for m in r.modules] == [
        "cmd", "kernel32", "USER32", "ntdll", "WINBRAND", "KERNELBASE", "LPK", "USP10", "msvcrt", "GDI32",
    ]  # fmt: skip
    nt = r.modules[3]
    assert (nt.start, nt.end) == ("0x0000000077590000", "0x0000000077739000")
    assert nt.symbol_status == "pdb symbols"
    assert nt.symbol_file == r"C:\Windows\SYSTEM32\ntdll.dll"
    assert r.modules[-1].symbol_status == "deferred"  # last line has no trailing padding


def _modules_02(c: Corpus) -> None:
    r = c.record("modules/02.txt", "lm m k*")
    assert [m.name for m in r.modules] == ["kernel32", "KERNELBASE"]
    assert r.modules[1].start == "0x000007fefd840000"


def _modules_03(c: Corpus) -> None:
    r = c.record("modules/03.txt", "lm")
    assert len(r.modules) == 17
    assert r.modules[0].name == "notepad" and r.modules[0].symbol_status == "pdb symbols"
    assert r.modules[0].symbol_file is not None and r.modules[0].symbol_file.endswith(r"notepad.pdb")
    assert sum(m.symbol_status == "deferred" for m in r.modules) == 15


def _modules_04(c: Corpus) -> None:
    r = c.record("modules/04.txt", "lmDvmSecondDriver")
    (m,) = r.modules
    assert m.name == "SecondDriver" and m.symbol_status == "deferred"
    assert m.image_path == r"\??\C:\Driver\SecondDriver\SecondDriver.sys"
    assert m.image_name == "SecondDriver.sys"
    assert m.timestamp == "Sat Jan 29 20:08:51 2022 (61F52043)"
    assert m.checksum == "0x0000eb8d"
    assert m.image_size == "0x00007000"
    assert m.details["Translations"].startswith("0000.04b0")


def _modules_05(c: Corpus) -> None:
    r = c.record("modules/05.txt", "lm v m tcpip")
    (m,) = r.modules
    assert m.symbol_status == "no symbols"
    assert m.loaded_image_file == "tcpip.sys"
    assert m.image_path == r"\SystemRoot\System32\drivers\tcpip.sys"
    assert r.warnings == ["Unable to enumerate user-mode unloaded modules, Win32 error 0n30"]
    assert c.block("modules/05.txt", "lm v m tcpip").prompt.processor == 0  # "0: Kd>" as published


def _modules_06(c: Corpus) -> None:
    assert c.record("modules/06.txt", ".reload /f mmcss.sys").kind == "text"  # printed nothing
    r = c.record("modules/06.txt", "lm m mmcss")
    (m,) = r.modules
    assert m.symbol_status == "pdb symbols"
    assert m.symbol_file == r"c:\symbols\mmcss.pdb\9E36707273FDF82AB362DBA6ACCC09671\mmcss.pdb"
    assert c.block("modules/06.txt", "lm m mmcss").prompt.mode == "local_kernel"


def _modules_07(c: Corpus) -> None:
    (m,) = c.record("modules/07.txt", "lm m mmcss").modules
    assert (m.name, m.symbol_status, m.symbol_file) == ("mmcss", "deferred", None)
    assert m.end == "0xfffff80528456000"


def _modules_08(c: Corpus) -> None:
    (m,) = c.record("modules/08.txt", "lmvm nvlddmkm").modules
    assert m.marker == "T"
    assert m.symbol_status == "no symbols"
    assert m.image_path == r"\SystemRoot\system32\DRIVERS\nvlddmkm.sys"
    assert m.checksum == "0x00aa7491"


def _modules_09(c: Corpus) -> None:
    r = c.record("modules/09.txt", "lm")
    assert [m.name for m in r.modules] == ["FirstDriverSample", "nt"]
    assert [u.name for u in r.unloaded] == [
        "dump_storport.sys", "dump_storahci.sys", "dump_dumpfve.sys", "dam.sys", "WdBoot.sys", "hwpolicy.sys",
    ]  # fmt: skip
    assert r.unloaded[0].start == "0xfffff80062c80000"


def _process_01(c: Corpus) -> None:
    r = c.record("process_thread/01.txt", "!process ffff9189527e9080 7")
    (p,) = r.processes
    assert p.address == "0xffff9189527e9080"
    assert (p.session_id, p.cid, p.peb, p.parent_cid) == ("2", "0x1e90", "0xbb6f2ac000", "0x15e8")
    assert p.dir_base == "0x1d822d000" and p.object_table == "0xffffd80249eb8040"
    assert p.handle_count == 817 and p.image == "notepad.exe"
    assert p.details["ElapsedTime"] == "00:00:47.378"
    assert p.details["Working Set Sizes (now,min,max)"].startswith("(11788, 50, 345)")
    (t,) = p.threads
    assert t.address == "0xffff91895309d080" and t.cid == "1e90.1e94"
    assert t.state == "WAIT" and t.wait_reason == "UserRequest" and t.wait_mode == "UserMode"
    assert t.alertable is False
    assert [w.type for w in t.wait_objects] == ["SynchronizationEvent", "QueueObject"]
    assert t.owning_process == "0xffff9189527e9080"
    assert t.start_address == "0x00007ff7e2e85a30"
    assert (t.priority, t.base_priority) == (10, 8)
    assert len(t.frames) == 10
    assert t.frames[0].call_site == "nt!KiSwapContext+0x76"
    malformed = t.frames[7]  # published without its Child-SP column
    assert malformed.child_sp is None and malformed.return_address == "0xfffff80062a08bb5"
    assert malformed.function == "NtUserMsgWaitForMultipleObjectsEx"


def _process_02(c: Corpus) -> None:
    (p,) = c.record("process_thread/02.txt", "!process 0 0 CPUSTRES.exe").processes
    assert (p.image, p.cid, p.handle_count) == ("CPUSTRES.EXE", "0x2064", 196)
    assert p.threads == []
    (p4,) = c.record("process_thread/02.txt", "!process ffffd888702d3080 4").processes
    assert len(p4.threads) == 5
    running = p4.threads[1]
    assert running.state == "RUNNING" and running.processor == 5
    assert running.cid == "2064.1a00"
    assert [t.state for t in p4.threads].count("WAIT") == 4


def _process_03(c: Corpus) -> None:
    (p,) = c.record("process_thread/03.txt", "!process").processes
    assert p.image == "WindowsInspector.Controller.exe"
    assert p.handle_count == 33
    assert p.dir_base == "0x72810002"
    (t,) = p.threads
    assert t.state == "RUNNING" and t.processor == 0


def _process_04(c: Corpus) -> None:
    r = c.record("process_thread/04.txt", "!thread -t 1e10")
    assert r.kind == "threads"
    (t,) = r.threads
    assert t.address == "0xffffac819fb18080" and t.thread_id == "0x1e10"
    assert t.wait_reason == "WrUserRequest"
    assert t.image == "CPUSTRES.EXE"
    assert t.priority == 15
    assert t.frames == []  # elided by the author


def _process_05(c: Corpus) -> None:
    r = c.record("process_thread/05.txt", "~")
    assert len(r.threads) == 7
    assert r.threads[4].id == "2064.bb8" and r.threads[4].suspend_count == 2
    cur = [t for t in r.threads if t.current]
    assert [t.index for t in cur] == [6]
    assert r.threads[6].teb == "0x00eef000"


def _process_06(c: Corpus) -> None:
    r = c.record("process_thread/06.txt", "~")
    assert len(r.threads) == 14
    assert r.threads[11].current and r.threads[11].thread_id == "0x898"
    assert r.threads[0].teb == "0x000000555f35c000"


def _process_07(c: Corpus) -> None:
    r = c.record("process_thread/07.txt", "~")
    assert len(r.threads) == 25
    assert r.threads[6].details["comment"] == "this thread owns the second critical section"
    assert r.threads[24].teb == "0x7ff5d000"
    assert all(t.suspend_count is None for t in r.threads)  # old format has no Suspend column


def _process_08(c: Corpus) -> None:
    r = c.record("process_thread/08.txt", "|")
    assert r.kind == "processes"
    assert [(p.index, p.cid, p.image) for p in r.processes] == [
        (0, "0x224", "myprog.exe"),
        (1, "0x228", "onechild.exe"),
        (2, "0x22c", "anotherchild.exe"),
    ]
    assert r.processes[0].event_process and r.processes[2].current


def _process_09(c: Corpus) -> None:
    assert len(c.record("process_thread/09.txt", "~").threads) == 2
    teb = c.record("process_thread/09.txt", "!teb")
    assert teb.kind == "object" and teb.object_type == "teb"
    assert teb.address == "0x7ffdd000"
    assert teb.fields["ClientId"] == "324.48c"
    assert teb.fields["PEB Address"] == "7ffdf000"


def _process_10(c: Corpus) -> None:
    r = c.record("process_thread/10.txt", "!process 0 0")
    assert [p.image for p in r.processes] == [
        "System", "smss.exe", "csrss.exe", "winlogon.exe", "services.exe", "lsass.exe", "SPOOLSS.EXE",
    ]  # fmt: skip
    assert r.processes[0].cid == "0x0002" and r.processes[0].table_size == 150
    assert r.processes[1].handle_count == 38


def _process_11(c: Corpus) -> None:
    r = c.record("process_thread/11.txt", "!peb")
    assert r.object_type == "peb" and r.address == "0x7ffdf000"
    assert r.fields["BeingDebugged"] == "Yes"
    assert r.fields["ImageBaseAddress"] == "00f70000"
    assert r.fields["Ldr"] == "77c08880"
    assert len(r.entries) == 25
    assert r.entries[0]["path"] == r"C:\Windows\system32\notepad.exe"
    assert r.fields["env.COMPUTERNAME"] == "DEBUG-WK86-7"


def _process_12(c: Corpus) -> None:
    assert [t.current for t in c.record("process_thread/12.txt", "~").threads] == [False, True]
    all_threads = c.record("process_thread/12.txt", "~*").threads
    assert all_threads[0].start_symbol == "notepad!WinMainCRTStartup"
    assert all_threads[0].start_address == "0x00e131c9"
    assert all_threads[1].priority_class == 32
    (cur,) = c.record("process_thread/12.txt", "~.").threads
    assert cur.index == 1 and cur.start_symbol == "ntdll!DbgUiRemoteBreakin"


def _process_13(c: Corpus) -> None:
    r = c.record("process_thread/13.txt", "!teb")
    assert r.address == "0x7ffde000"
    assert r.fields["StackBase"] == "00780000"
    assert r.fields["ClientId"] == "00000be0 . 00000f18"


def _process_14(c: Corpus) -> None:
    r = c.record("process_thread/14.txt", "!runaway")
    assert len(r.threads) == 13
    top = r.threads[0]
    assert (top.index, top.thread_id, top.user_time) == (8, "0x21dc", "0 days 0:00:07.000")


def _process_15(c: Corpus) -> None:
    (t8,) = c.record("process_thread/15.txt", "~8").threads
    assert t8.name == "High priority thread #1" and t8.current
    assert t8.start_symbol == "coreclr!ThreadNative::KickOffThread"
    (t10,) = c.record("process_thread/15.txt", "~10").threads
    assert t10.priority == -2 and t10.name == "Low priority thread"


def _process_16(c: Corpus) -> None:
    r = c.record("process_thread/16.txt", "!runaway 7")
    assert len(r.threads) == 7
    t1 = next(t for t in r.threads if t.index == 1)
    assert t1.user_time == "0 days 0:00:00.531"
    assert t1.kernel_time == "0 days 0:00:00.015"
    assert t1.elapsed_time == "0 days 0:32:07.369"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "modules/01.txt": _modules_01,
    "modules/02.txt": _modules_02,
    "modules/03.txt": _modules_03,
    "modules/04.txt": _modules_04,
    "modules/05.txt": _modules_05,
    "modules/06.txt": _modules_06,
    "modules/07.txt": _modules_07,
    "modules/08.txt": _modules_08,
    "modules/09.txt": _modules_09,
    "process_thread/01.txt": _process_01,
    "process_thread/02.txt": _process_02,
    "process_thread/03.txt": _process_03,
    "process_thread/04.txt": _process_04,
    "process_thread/05.txt": _process_05,
    "process_thread/06.txt": _process_06,
    "process_thread/07.txt": _process_07,
    "process_thread/08.txt": _process_08,
    "process_thread/09.txt": _process_09,
    "process_thread/10.txt": _process_10,
    "process_thread/11.txt": _process_11,
    "process_thread/12.txt": _process_12,
    "process_thread/13.txt": _process_13,
    "process_thread/14.txt": _process_14,
    "process_thread/15.txt": _process_15,
    "process_thread/16.txt": _process_16,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)


def test_every_sample_has_a_check(corpus: Corpus) -> None:
    assert set(corpus.names("modules")) | set(corpus.names("process_thread")) == set(CHECKS)
