"""``kdmcp.parse.objects.system``: ``!irql``, ``!teb``, ``!peb``, ``!pcr``, ``!apic``,
``!address``, ``!vm``, ``!locks``, ``!lmi``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_lmi() -> None:
    # Microsoft docs, "Debugging performance-optimized code" (!lmi ntdll)
    out = (
        "Loaded Module Info: [ntdll]\n"
        "         Module: ntdll\n"
        "   Base Address: 77f80000\n"
        "     Image Name: ntdll.dll\n"
        "     Time Stamp: 394193d2 Fri Jun 09 18:03:14 2000\n"
        "    Symbol Type: DIA PDB  - Symbols loaded successfully from symbol server.\n"
        "                 c:\\symbols\\dll\\ntdll.pdb\n"
    )
    r = parse("!lmi ntdll", out)
    assert r.kind == "object" and r.object_type == "lmi"
    assert (r.name, r.address) == ("ntdll", "0x77f80000")
    assert r.fields["Image Name"] == "ntdll.dll"
    assert r.fields["Time Stamp"] == "394193d2 Fri Jun 09 18:03:14 2000"
    assert r.fields["Symbol Type"] == (
        "DIA PDB  - Symbols loaded successfully from symbol server.\nc:\\symbols\\dll\\ntdll.pdb"
    )
    assert "c" not in r.fields  # the drive letter's colon is not a key


def _memory_03(c: Corpus) -> None:
    r = c.record("memory/03.txt", "!address fffff80240d322f9")
    assert r.object_type == "address"
    assert r.fields["Usage"] == "Module"
    assert r.fields["Module name"] == "ntoskrnl.exe"
    assert r.address == "0xfffff80240ca8000"


def _kernel_objects_12(c: Corpus) -> None:
    r = c.record("kernel_objects/12.txt", "!vm 1")
    assert r.object_type == "vm"
    assert r.fields["Physical Memory"].startswith("16270")
    assert r.fields["Commit limit"].startswith("36256")
    assert r.fields["Page File"] == r"\??\E:\pagefile.sys"
    (page,) = r.page_files
    assert (page.current_kb, page.free_kb, page.minimum_kb, page.maximum_kb) == (98304, 61044, 98304, 196608)


def _kernel_objects_13(c: Corpus) -> None:
    r = c.record("kernel_objects/13.txt", "!locks")
    assert r.fields == {"total_locks": "2263", "held_locks": "3"}
    assert [e.resource for e in r.resources] == ["0x80e97620", "0x80e23f38", "0x80d8b0b0"]
    first = r.resources[0]
    assert (first.state, first.owners) == ("Shared", 4)
    assert [(t.thread, t.count, t.owner) for t in first.threads] == [
        ("0xff688da0", 1, True),
        ("0xff687da0", 1, True),
        ("0xff686da0", 1, True),
        ("0xff685da0", 1, True),
    ]
    assert [(t.thread, t.actual_thread) for t in r.resources[1].threads] == [("0x80ed0023", "0x80ed0020")]
    assert r.warnings == []


def _kernel_objects_15(c: Corpus) -> None:
    r0 = c.record("kernel_objects/15.txt", "!irql 0")
    assert r0.fields == {"processor": "0x0", "irql": "28", "irql_name": "CLOCK2_LEVEL"}
    assert c.record("kernel_objects/15.txt", "!irql 1").fields["irql_name"] == "LOW_LEVEL"


def _kernel_objects_16(c: Corpus) -> None:
    r = c.record("kernel_objects/16.txt", "!irql")
    assert (r.fields["irql"], r.fields["irql_name"]) == ("2", "DISPATCH_LEVEL")


def _kernel_objects_19(c: Corpus) -> None:
    r = c.record("kernel_objects/19.txt", "!apic")
    assert r.address == "0xc0009000"
    assert r.fields["ID"] == "d"
    assert r.fields["SpurVec"] == "df"
    assert r.fields["LogDesc"] == "28000000"
    assert r.fields["Timer.."] == "00000000`000300d1"


def _process_thread_09(c: Corpus) -> None:
    assert len(c.record("process_thread/09.txt", "~").threads) == 2
    teb = c.record("process_thread/09.txt", "!teb")
    assert teb.kind == "object" and teb.object_type == "teb"
    assert teb.address == "0x7ffdd000"
    assert teb.fields["ClientId"] == "324.48c"
    assert teb.fields["PEB Address"] == "7ffdf000"


def _process_thread_11(c: Corpus) -> None:
    r = c.record("process_thread/11.txt", "!peb")
    assert r.object_type == "peb" and r.address == "0x7ffdf000"
    assert r.fields["BeingDebugged"] == "Yes"
    assert r.fields["ImageBaseAddress"] == "00f70000"
    assert r.fields["Ldr"] == "77c08880"
    assert len(r.entries) == 25
    assert r.entries[0]["path"] == r"C:\Windows\system32\notepad.exe"
    assert r.fields["env.COMPUTERNAME"] == "DEBUG-WK86-7"


def _process_thread_13(c: Corpus) -> None:
    r = c.record("process_thread/13.txt", "!teb")
    assert r.address == "0x7ffde000"
    assert r.fields["StackBase"] == "00780000"
    assert r.fields["ClientId"] == "00000be0 . 00000f18"


def _families_modules_02(c: Corpus) -> None:
    r = c.record("families/modules/02.txt", "!lmi 00400000")
    assert (r.kind, r.object_type, r.name, r.address) == ("object", "lmi", "Prymes", "0x00400000")
    f = r.fields
    assert (f["Image Name"], f["Machine Type"], f["Size"], f["CheckSum"]) == ("Prymes.exe", "332 (I386)", "2d000", "0")
    assert f["Time Stamp"] == "3c76c346 Fri Feb 22 14:16:38 2002"
    assert f["Characteristics"] == "230e stripped"
    assert f["Debug Data Dirs"] == "Type Size     VA  Pointer\nMISC  110,     0,   77a00 [Data not mapped]"
    assert (f["Symbol Type"], f["Load Report"]) == ("EXPORT   - PDB not found", "export symbols")
def _kernel_state_01(c: Corpus) -> None:
    # "!locks -v": the resource, then its owner's THREAD block and stack
    r = c.record("families/kernel_state/01.txt", "!locks -v 80d8b0b0")
    (res,) = r.resources
    assert (res.resource, res.state, res.owners, res.contention_count) == ("0x80d8b0b0", "Shared", 1, None)
    (t,) = res.threads
    assert (t.thread, t.count, t.owner, t.actual_thread) == ("0x80ed0023", 1, True, "0x80ed0020")
    assert r.fields == {"total_locks": "1", "held_locks": "1"}
    assert r.warnings == ["GetUlongFromAddress: unable to read from 00000000"]
    assert [f.function for f in r.frames] == [
        "KiSwapContext",
        "KiSwapThread",
        "KeRemoveQueue",
        "ExpWorkerThread",
        "PspSystemThreadStartup",
        "KiThreadStartup",
    ]
    assert r.frames[0].child_ebp == "0xfafa3d30" and r.frames[0].return_address == "0x804fe997"


def _kernel_state_02(c: Corpus) -> None:
    # user-mode (ntsdexts) "!locks": critical sections, the Windows 2000-era layout
    r = c.record("families/kernel_state/02.txt", "!locks")
    assert r.kind == "object" and r.object_type == "locks" and r.resources == []
    first, second = r.critical_sections
    assert (first.symbol, first.address) == ("w3svc!g_pWamDictator+a0", "0x68c2c298")
    assert (first.lock_count, first.recursion_count, first.owning_thread) == (0, 1, "0xd1")
    assert (first.entry_count, first.contention_count, first.locked, first.waiter_woken) == (1, 0, True, None)
    assert (second.symbol, second.address, second.owning_thread) == ("SMTPSVC+66a30", "0x67906a30", "0xd0")


def _kernel_state_03(c: Corpus) -> None:
    # Windows 10 x64 "!locks": three held resources, kept apart (not merged into one)
    r = c.record("families/kernel_state/03.txt", "!locks")
    assert r.fields == {"total_locks": "27708", "held_locks": "3"}
    shared, exclusive, waited = r.resources
    assert (shared.resource, shared.state, shared.owners, shared.contention_count) == (
        "0xffff8b03516cae70",
        "Shared",
        1,
        39,
    )
    assert [(t.thread, t.owner) for t in shared.threads] == [("0xffff8b034f13e080", True)]
    assert (exclusive.resource, exclusive.state, exclusive.owners, exclusive.contention_count) == (
        "0xffff8b035731cea0",
        "Exclusively owned",
        None,
        None,
    )
    assert [t.thread for t in exclusive.threads] == ["0xffff8b034f13e080"]
    assert (waited.resource, waited.state, waited.contention_count, waited.exclusive_waiters) == (
        "0xffff8b0352014a90",
        "Exclusively owned",
        1,
        1,
    )
    assert [(t.thread, t.count, t.owner) for t in waited.threads] == [("0xffff8b0351756040", 1, True)]
    assert waited.waiting_exclusive == ["0xffff8b03515d5040"]
    assert r.warnings == [] and r.critical_sections == []


def _kernel_state_04(c: Corpus) -> None:
    r = c.record("families/kernel_state/04.txt", "!pcr 0")
    assert (r.object_type, r.address, r.fields["processor"]) == ("pcr", "0xffdff000", "0")
    assert (r.fields["major"], r.fields["minor"]) == ("1", "1")
    assert r.fields["NtTib.ExceptionList"] == "801626e0" and r.fields["Prcb"] == "ffdff120"
    assert (r.fields["Irql"], r.fields["IDT"], r.fields["TSS"]) == ("00000000", "80043400", "803cc000")
    assert (r.fields["CurrentThread"], r.fields["IdleThread"]) == ("8015e8a0", "8015e8a0")
    assert r.fields["DpcQueue"] == "0x80168ee0 0x80100d04 ntoskrnl!KiTimerExpiration"
    (dpc,) = r.dpc_queue
    assert (dpc.dpc, dpc.routine, dpc.type) == ("0x80168ee0", "0x80100d04", None)
    assert dpc.symbol == "ntoskrnl!KiTimerExpiration"


def _kernel_state_06(c: Corpus) -> None:
    # Windows 10/11 "!vm 1": page files first (one unnamed), alerts between the rows
    r = c.record("families/kernel_state/06.txt", "!vm 1")
    assert [(p.name, p.current_kb, p.free_kb, p.minimum_kb, p.maximum_kb) for p in r.page_files] == [
        ("\\??\\C:\\pagefile.sys", 12582912, 12527296, 12582912, 12582912),
        ("\\??\\C:\\swapfile.sys", 262144, 223824, 262144, 6289836),
        (None, 16776136, 16095604, 16776136, 16776136),
    ]
    assert r.fields["Physical Memory"] == "2844914 (   11379656 Kb)"
    assert r.fields["NonPagedPoolNx Usage"].startswith("33612 ")
    assert r.fields["Kernel Stacks"].startswith("14874 ")
    assert r.fields["Committed pages"].startswith("2355436 ") and r.fields["Commit limit"].startswith("5990642 ")
    assert r.warnings == [
        "73746 kernel stack PTE allocations have failed",
        "Sum of individual system commit + Process commit exceeds overall commit by 18446708908043898408 Kb ?",
    ]


def _kernel_state_07(c: Corpus) -> None:
    # user-mode "!locks" of a deadlocked IIS: the second and third sections wait on each other
    r = c.record("families/kernel_state/07.txt", "!locks")
    assert [(cs.symbol, cs.address, cs.owning_thread, cs.lock_count) for cs in r.critical_sections] == [
        ("ftpsvc2!g_csServiceEntryLock+0", "0x6833dd68", "0xa7", 0),
        ("isatq!AtqActiveContextList+a8", "0x68629100", "0xa3", 2),
        ("+24e750", "0x24e750", "0xa9", 6),
    ]
    assert [(cs.entry_count, cs.contention_count, cs.locked) for cs in r.critical_sections] == [
        (0, 0, True),
        (2, 2, True),
        (6, 6, True),
    ]
    assert r.resources == [] and r.warnings == []


def test_user_locks_with_waiter_woken() -> None:
    # DebugPrivilege's critical-section deadlock write-up (Windows 10 x64 cdb, "0:000> !locks"):
    # the XP-and-later layout with WaiterWoken and the "Scanned N critical sections" trailer
    out = (
        "\n"
        "CritSec Wait2!consoleCritSection+0 at 00007ff6492e5ad0\n"
        "WaiterWoken        No\n"
        "LockCount          1\n"
        "RecursionCount     1\n"
        "OwningThread       33bc\n"
        "EntryCount         0\n"
        "ContentionCount    1\n"
        "*** Locked\n"
        "\n"
        "CritSec Wait2!critSection+0 at 00007ff6492e5af8\n"
        "WaiterWoken        No\n"
        "LockCount          1\n"
        "RecursionCount     1\n"
        "OwningThread       2aa0\n"
        "EntryCount         0\n"
        "ContentionCount    1\n"
        "*** Locked\n"
        "\n"
        "Scanned 6 critical sections\n"
    )
    r = parse("!locks", out)
    assert [(cs.symbol, cs.address, cs.owning_thread) for cs in r.critical_sections] == [
        ("Wait2!consoleCritSection+0", "0x00007ff6492e5ad0", "0x33bc"),
        ("Wait2!critSection+0", "0x00007ff6492e5af8", "0x2aa0"),
    ]
    cs = r.critical_sections[0]
    assert (cs.waiter_woken, cs.lock_count, cs.recursion_count, cs.entry_count, cs.contention_count) == (
        "No",
        1,
        1,
        0,
        1,
    )
    assert cs.locked and r.fields == {"scanned_critical_sections": "6"}


def test_kernel_lock_with_a_symbol() -> None:
    # a Windows 11 !analyze -v of bugcheck 0xCA runs "!locks <LOCK_ADDRESS>"; the resource has a
    # symbol, printed before its address ("Resource @ nt!PiEngineLock (0xfffff8019cd8a380)")
    out = (
        "KD: Scanning for held locks......\n"
        "\n"
        "Resource @ nt!PiEngineLock (0xfffff8019cd8a380)    Exclusively owned\n"
        "    Contention Count = 23\n"
        "     Threads: ffffb986625ef040-01<*> \n"
        "1 total locks\n"
    )
    r = parse("!locks fffff8019cd8a380", out)
    (res,) = r.resources
    assert (res.symbol, res.resource, res.state, res.contention_count) == (
        "nt!PiEngineLock",
        "0xfffff8019cd8a380",
        "Exclusively owned",
        23,
    )
    assert [t.thread for t in res.threads] == ["0xffffb986625ef040"]
    assert r.fields == {"total_locks": "1"}


def _kernel_state_08(c: Corpus) -> None:
    # "4: kd> !irql 4" on a 0xD1 crash dump: the crashing CPU was at DISPATCH_LEVEL
    r = c.record("families/kernel_state/08.txt", "!irql 4")
    assert (r.object_type, r.fields) == ("irql", {"processor": "0x4", "irql": "2", "irql_name": "DISPATCH_LEVEL"})
    assert r.warnings == []


def _kernel_state_09(c: Corpus) -> None:
    # x64 "!pcr 4" (Windows 10/11): 16-digit fields after a tab, two DPCs, the second on its own line
    r = c.record("families/kernel_state/09.txt", "!pcr 4")
    assert (r.object_type, r.address, r.fields["processor"]) == ("pcr", "0xffffa001290c6000", "4")
    assert (r.fields["major"], r.fields["minor"]) == ("1", "1")
    assert r.fields["NtTib.ExceptionList"] == "ffffa001290d6fb0" and r.fields["NtTib.SelfTib"] == "0000003f66fd3000"
    assert (r.fields["Prcb"], r.fields["Irql"]) == ("ffffa001290c6180", "0000000000000000")
    assert (r.fields["CurrentThread"], r.fields["NextThread"], r.fields["IdleThread"]) == (
        "ffffc181ef7ea540",
        "ffffc181e90c3400",
        "ffffc181e8ec7080",
    )
    assert [(d.dpc, d.routine, d.type, d.symbol) for d in r.dpc_queue] == [
        ("0xffffc181e9baf728", "0xfffff8014da1cee0", "Normal", "tcpip!TcpPeriodicTimeoutHandler"),
        ("0xffffa001290ce5d8", "0xfffff8014941e4e0", "Normal", "nt!PpmPerfAction"),
    ]
    assert r.warnings == []


def _kernel_state_10(c: Corpus) -> None:
    # user-mode "!locks -v": four free sections (three named by an offset only), two locked ones
    r = c.record("families/kernel_state/10.txt", "!locks -v")
    assert [(cs.symbol, cs.address, cs.locked) for cs in r.critical_sections] == [
        ("ntdll!RtlpProcessHeapsListLock+0", "0x00007ff8e31d3000", False),
        ("+fb1802c0", "0x00000192fb1802c0", False),
        ("+faf902c0", "0x00000192faf902c0", False),
        ("+fb4402c0", "0x00000192fb4402c0", False),
        ("Wait2!consoleCritSection+0", "0x00007ff6492e5ad0", True),
        ("Wait2!critSection+0", "0x00007ff6492e5af8", True),
    ]
    free = r.critical_sections[0]
    # "LockCount          NOT LOCKED": no count, and no WaiterWoken line in a free section
    assert (free.lock_count, free.waiter_woken, free.recursion_count, free.owning_thread) == (None, None, 0, "0x0")
    held = r.critical_sections[4:]
    assert [(cs.waiter_woken, cs.lock_count, cs.owning_thread) for cs in held] == [
        ("No", 1, "0x33bc"),
        ("No", 1, "0x2aa0"),
    ]
    assert [(cs.entry_count, cs.contention_count) for cs in held] == [(0, 1), (0, 1)]
    assert r.fields == {"scanned_critical_sections": "6"} and r.resources == [] and r.warnings == []


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "memory/03.txt": _memory_03,
    "kernel_objects/12.txt": _kernel_objects_12,
    "kernel_objects/13.txt": _kernel_objects_13,
    "families/kernel_state/01.txt": _kernel_state_01,
    "families/kernel_state/02.txt": _kernel_state_02,
    "families/kernel_state/03.txt": _kernel_state_03,
    "families/kernel_state/04.txt": _kernel_state_04,
    "families/kernel_state/06.txt": _kernel_state_06,
    "families/kernel_state/07.txt": _kernel_state_07,
    "families/kernel_state/08.txt": _kernel_state_08,
    "families/kernel_state/09.txt": _kernel_state_09,
    "families/kernel_state/10.txt": _kernel_state_10,
    "kernel_objects/15.txt": _kernel_objects_15,
    "kernel_objects/16.txt": _kernel_objects_16,
    "kernel_objects/19.txt": _kernel_objects_19,
    "process_thread/09.txt": _process_thread_09,
    "process_thread/11.txt": _process_thread_11,
    "process_thread/13.txt": _process_thread_13,
    "families/modules/02.txt": _families_modules_02,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
