"""``kdmcp.parse.processes``: ``!process`` (every flag) and user-mode ``|``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_modern_process_list() -> None:
    out = (
        "**** NT ACTIVE PROCESS DUMP ****\n"
        "PROCESS ffffe0002a277840\n"
        "    SessionId: none  Cid: 0004    Peb: 00000000  ParentCid: 0000\n"
        "    DirBase: 001aa000  ObjectTable: ffffc00021a03000  HandleCount: <Data Not Accessible>\n"
        "    Image: System\n\n"
        "PROCESS ffffe0002c8b6080\n"
        "    SessionId: 1  Cid: 0f3c    Peb: 7ff5ffd6c000  ParentCid: 0e3c\n"
        "    DirBase: 6b6c7000  ObjectTable: ffffc00025d7b880  HandleCount: 1243.\n"
        "    Image: explorer.exe\n"
    )
    r = parse("!process 0 0", out)
    assert [p.image for p in r.processes] == ["System", "explorer.exe"]
    assert r.processes[0].session_id == "none" and r.processes[0].handle_count is None
    assert r.processes[1].handle_count == 1243 and r.processes[1].peb == "0x7ff5ffd6c000"


def test_short_bare_address_in_a_process_thread_stack() -> None:
    # Microsoft sysvad lab (!process, x64): a stack of Child-SP rows only, read in bulk
    out = (
        "PROCESS ffffe001d147c840\n"
        "    Image: audiodg.exe\n"
        "\n"
        "        THREAD ffffe001d3a27040  Cid 10f0.17f4  Teb: 000000ee6cf9d000 Win32Thread: 0000000000000000 "
        "WAIT: (WrQueue) UserMode Alertable\n"
        "        Child-SP          RetAddr               Call Site\n"
        "        000000ee`6d37c570 0000029b`00000003     0x00007fff`487484e6\n"
        "        000000ee`6d37c580 00000000`00000000     0x12e\n"
    )
    (thread,) = parse("!process 0 7", out).processes[0].threads
    assert [(f.address, f.module) for f in thread.frames] == [("0x00007fff487484e6", None), ("0x12e", None)]


def test_kernel_stack_not_resident_is_one_fact() -> None:
    # Microsoft sysvad lab (!process <addr>, dump): the last line of most threads of a dump
    out = (
        "PROCESS ffffe001d147c840\n"
        "    Image: audiodg.exe\n"
        "\n"
        "        THREAD ffffe001d115c080  Cid 10f0.15b4  Teb: 000000ee6cf9b000 Win32Thread: 0000000000000000 "
        "WAIT: (WrQueue) UserMode Alertable\n"
        "            ffffe001d0bf0640  QueueObject\n"
        "        Priority 8 BasePriority 8 UnusualBoost 0 ForegroundBoost 0 IoPriority 2 PagePriority 5\n"
        "        Kernel stack not resident.\n"
    )
    (thread,) = parse("!process ffffe001d147c840", out).processes[0].threads
    assert "Kernel stack not resident" in thread.details
    assert "Kernel" not in thread.details
    assert thread.frames == []


def test_irp_list_in_process_listing_matches_thread_reading() -> None:
    # the same lines inside !process (the bulk THREAD-body reader), two IRPs
    body = (
        "            ffffe001d16c4dd0  NotificationEvent\n"
        "        IRP List:\n"
        "            ffffe001d429e580: (0006,02c8) Flags: 000008b4  Mdl: 00000000\n"
        "            ffffe001d429e9a0: (0006,02c8) Flags: 00000884  Mdl: 00000000\n"
        "        Not impersonating\n"
    )
    header = (
        "        THREAD ffffe001d3a27040  Cid 10f0.17f4  Teb: 000000ee6cf9d000 Win32Thread: 0000000000000000 "
        "WAIT: (WrQueue) UserMode Alertable\n"
    )
    (t,) = (
        parse("!process 0 7", "PROCESS ffffe001d147c840\n    Image: audiodg.exe\n\n" + header + body)
        .processes[0]
        .threads
    )
    assert t.details["IRP List"].split("\n") == [
        "ffffe001d429e580: (0006,02c8) Flags: 000008b4  Mdl: 00000000",
        "ffffe001d429e9a0: (0006,02c8) Flags: 00000884  Mdl: 00000000",
    ]
    assert t.details["Impersonation"] == "Not impersonating" and len(t.wait_objects) == 1


def test_complaints_in_a_process_listing_thread_are_warnings() -> None:
    # the XP "!locks -v" docs' THREAD block lines inside !process (the bulk THREAD-body reader)
    out = (
        "PROCESS 80ed5238  SessionId: none  Cid: 0004    Peb: 00000000  ParentCid: 0000\n"
        "    Image: System\n\n"
        "        THREAD 80ed0020  Cid 4.2c  Teb: 00000000 Win32Thread: 00000000 "
        "WAIT: (WrQueue) KernelMode Non-Alertable\n"
        "            8055e100  Unknown\n"
        "        Not impersonating\n"
        "GetUlongFromAddress: unable to read from 00000000\n"
        "        Owning Process 80ed5238\n"
    )
    r = parse("!process 0 7", out)
    assert r.warnings == ["GetUlongFromAddress: unable to read from 00000000"]
    (t,) = r.processes[0].threads
    assert "GetUlongFromAddress" not in t.details and t.owning_process == "0x80ed5238"


def test_xp_thread_keeps_both_start_addresses() -> None:
    # 软件调试 (2nd ed.) notes, Windows XP local kernel debugging (!process <addr>)
    out = (
        "PROCESS 86a7d030  SessionId: 0  Cid: 0f20    Peb: 7ffdf000  ParentCid: 0d98\n"
        "    Image: notepad.exe\n"
        "\n"
        "    THREAD 861fe030  Cid 0f20.0f90  Teb: 7ffde000 Win32Thread: e1d1d650 WAIT: (WrUserRequest) UserMode "
        "Non-Alertable\n"
        "            86f45030  SynchronizationEvent\n"
        "        Start Address kernel32!BaseProcessStartThunk (0x77e813f2)\n"
        "        Win32 Start Address WinDBG!`string' (0x01006ae0)\n"
        "        Kernel stack not resident.\n"
    )
    (t,) = parse("!process 86a7d030", out).processes[0].threads
    # the thread's own routine, as later !thread versions print it alone
    assert (t.start_symbol, t.start_address) == ("WinDBG!`string'", "0x01006ae0")
    assert t.details["Start Address"] == "kernel32!BaseProcessStartThunk (0x77e813f2)"
    assert "Kernel stack not resident" in t.details


def test_nt4_process_detail_keys_of_more_than_one_word() -> None:
    # Microsoft docs, !process (NT4-era "!process fb667a00 7" example)
    out = (
        "PROCESS fb667a00 Cid: 0002  Peb: 00000000 ParentCid: 0000\n"
        "  DirBase: 00030000 ObjectTable: e1000f88 TableSize: 112.\n"
        "  Image: System\n"
        "  FB667BBC MutantState Signalled OwningThread 0\n"
        "Working Set Sizes (now,min,max) (3, 50, 345)\n"
        "  PeakWorkingSetSize        118\n"
        "\n"
        "    THREAD fb667780 Cid 2.1 Teb: 00000000 Win32Thread: 80144900 WAIT: (WrFreePage) KernelMode Non-Alertable\n"
        "    80144fc0 SynchronizationEvent\n"
        "    Owning Process fb667a00\n"
        "    Start Address Phase1Initialization (0x801aab44)\n"
        "    Initial Sp fb26f000 Current Sp fb26ed00\n"
    )
    (proc,) = parse("!process fb667a00 7", out).processes
    assert proc.details["Working Set Sizes (now,min,max)"] == "(3, 50, 345)"
    assert (proc.details["Mutant"], proc.details["MutantState"], proc.details["OwningThread"]) == (
        "FB667BBC",
        "Signalled",
        "0",
    )
    assert not {"Working", "FB667BBC"} & proc.details.keys()
    (t,) = proc.threads
    assert t.owning_process == "0xfb667a00"
    assert (t.start_symbol, t.start_address) == ("Phase1Initialization", "0x801aab44")
    assert t.details["Initial Sp"] == "fb26f000" and "Owning" not in t.details


def _process_thread_01(c: Corpus) -> None:
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


def _process_thread_02(c: Corpus) -> None:
    (p,) = c.record("process_thread/02.txt", "!process 0 0 CPUSTRES.exe").processes
    assert (p.image, p.cid, p.handle_count) == ("CPUSTRES.EXE", "0x2064", 196)
    assert p.threads == []
    (p4,) = c.record("process_thread/02.txt", "!process ffffd888702d3080 4").processes
    assert len(p4.threads) == 5
    running = p4.threads[1]
    assert running.state == "RUNNING" and running.processor == 5
    assert running.cid == "2064.1a00"
    assert [t.state for t in p4.threads].count("WAIT") == 4


def _process_thread_03(c: Corpus) -> None:
    (p,) = c.record("process_thread/03.txt", "!process").processes
    assert p.image == "WindowsInspector.Controller.exe"
    assert p.handle_count == 33
    assert p.dir_base == "0x72810002"
    (t,) = p.threads
    assert t.state == "RUNNING" and t.processor == 0


def _process_thread_08(c: Corpus) -> None:
    r = c.record("process_thread/08.txt", "|")
    assert r.kind == "processes"
    assert [(p.index, p.cid, p.image) for p in r.processes] == [
        (0, "0x224", "myprog.exe"),
        (1, "0x228", "onechild.exe"),
        (2, "0x22c", "anotherchild.exe"),
    ]
    assert r.processes[0].event_process and r.processes[2].current


def _process_thread_10(c: Corpus) -> None:
    r = c.record("process_thread/10.txt", "!process 0 0")
    assert [p.image for p in r.processes] == [
        "System", "smss.exe", "csrss.exe", "winlogon.exe", "services.exe", "lsass.exe", "SPOOLSS.EXE",
    ]  # fmt: skip
    assert r.processes[0].cid == "0x0002" and r.processes[0].table_size == 150
    assert r.processes[1].handle_count == 38


def _threads_09(c: Corpus) -> None:
    # lowleveldesign: "|" on a dump, tab-separated, the attach kind "examine"
    r = c.record("families/threads/09.txt", "|")
    (p,) = r.processes
    assert (p.index, p.cid, p.image) == (0, "0x24ac", "c:\\Windows\\System32\\inetsrv\\w3wp.exe")
    assert (p.current, p.event_process, p.details) == (True, False, {"how": "examine"})
    assert r.warnings == []


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "process_thread/01.txt": _process_thread_01,
    "process_thread/02.txt": _process_thread_02,
    "process_thread/03.txt": _process_thread_03,
    "process_thread/08.txt": _process_thread_08,
    "process_thread/10.txt": _process_thread_10,
    "families/threads/09.txt": _threads_09,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
