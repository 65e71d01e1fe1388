"""``kdmcp.parse.threads`` and ``kdmcp.parse.kernel_thread``: ``~``, ``!thread``, ``!ready``,
``!running``, ``!runaway``, ``!stacks``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from kdmcp.parse.threads import parse_threads
from tests.parse.samples.corpus import Corpus


def test_ready_threads() -> None:
    out = (
        "Processor 0: Ready Threads at priority 8\n"
        "    THREAD ffffa80e1d1c5080  Cid 0c3c.0c40  Teb: 0000000000000000 Win32Thread: 0000000000000000 READY on processor 0\n"  # noqa: E501 - real output line, kept whole
    )
    r = parse_threads("!ready", out)
    assert r is not None
    (t,) = r.threads
    assert (t.state, t.processor, t.cid) == ("READY", 0, "0c3c.0c40")


def test_nt4_thread_owning_process_stack_pointers_and_irp_list() -> None:
    # Microsoft docs, "Resource time-outs" (NT4-era !thread)
    out = (
        "THREAD ffaf5410  Cid e7.e8  Teb: 7ffde000 WAIT: (Executive) KernelMode Non-Alertable\n"
        "    feecf698  SynchronizationEvent\n"
        "IRP List:\n"
        "    fef29208: (0006,00b8) Flags: 00000884  Mdl: feed8328\n"
        "Not impersonating\n"
        "Owning Process ffaf5690\n"
        "Start Address 0x77f04644\n"
        "Initial Sp fec6c000 Current Sp fec6b938\n"
        "Priority 11 BasePriority 7 PriorityDecrement 0 DecrementCount 8\n"
    )
    (t,) = parse("!thread ffaf5410", out).threads
    assert t.owning_process == "0xffaf5690" and t.image is None
    assert (t.details["Initial Sp"], t.details["Current Sp"]) == ("fec6c000", "fec6b938")
    assert t.details["IRP List"].split(":")[0] == "fef29208"
    assert not {"Owning", "Initial", "IRP", "fef29208: (0006,00b8) Flags: 00000884"} & t.details.keys()
    assert t.start_address == "0x77f04644" and t.priority == 11
    assert [w.address for w in t.wait_objects] == ["0xfeecf698"]


def test_irp_list_of_a_running_thread_keeps_the_irp() -> None:
    # Microsoft sysvad lab (!thread, x64, RUNNING)
    out = (
        "THREAD ffffe001d3a27040  Cid 10f0.17f4  Teb: 000000ee6cf9d000 Win32Thread: 0000000000000000 "
        "RUNNING on processor 0\n"
        "IRP List:\n"
        "    ffffe001d429e580: (0006,02c8) Flags: 000008b4  Mdl: 00000000\n"
        "Not impersonating\n"
        "Owning Process            ffffe001d147c840       Image:         audiodg.exe\n"
    )
    (t,) = parse("!thread", out).threads
    assert t.details["IRP List"] == "ffffe001d429e580: (0006,02c8) Flags: 000008b4  Mdl: 00000000"
    assert "IRP" not in t.details and t.image == "audiodg.exe" and t.processor == 0


def test_complaints_inside_a_thread_block_are_warnings() -> None:
    # A Windows 7 x86 "!thread" of a 0x9F (usbehci.sys) dump, published in a write-up whose
    # repository could not be named (tab indents removed): the extension's read failures sit
    # above the THREAD line and between its detail lines; the same "GetUlongFromAddress" line
    # is in the XP "!locks -v" of the !locks docs (kernel_state/01.txt).
    out = (
        "GetPointerFromAddress: unable to read from 833a5850\n"
        "THREAD 85f6da70  Cid 0004.0048  Teb: 00000000 Win32Thread: 00000000 "
        "WAIT: (Executive) KernelMode Non-Alertable\n"
        "\t8dd9f6c0  NotificationEvent\n"
        "IRP List:\n"
        "\t8a6b15c0: (0006,01d8) Flags: 00060000  Mdl: 00000000\n"
        "Not impersonating\n"
        "GetUlongFromAddress: unable to read from 83364510\n"
        "Owning Process            85ed8cf0       Image:         System\n"
        "ffdf0000: Unable to get shared data\n"
        "Wait Start TickCount      1214434      \n"
        "ReadMemory error: Cannot get nt!KeMaximumIncrement value.\n"
        "Win32 Start Address nt!ExpWorkerThread (0x832b6bae)\n"
    )
    r = parse("!thread", out)
    assert r.warnings == [
        "GetPointerFromAddress: unable to read from 833a5850",
        "GetUlongFromAddress: unable to read from 83364510",
        "ffdf0000: Unable to get shared data",
        "ReadMemory error: Cannot get nt!KeMaximumIncrement value.",
    ]
    (t,) = r.threads
    assert t.details["IRP List"] == "8a6b15c0: (0006,01d8) Flags: 00060000  Mdl: 00000000"  # one IRP, no complaint
    assert not {"GetUlongFromAddress", "ReadMemory", "ffdf0000"} & set(t.details)
    assert (t.address, t.state, t.wait_reason, t.image) == ("0x85f6da70", "WAIT", "Executive", "System")
    assert (t.start_symbol, t.wait_start_tick) == ("nt!ExpWorkerThread", 1214434)
    assert [(w.address, w.type) for w in t.wait_objects] == [("0x8dd9f6c0", "NotificationEvent")]


def test_ready_group_headers_apply_to_the_threads_below() -> None:
    # Windows Internals 7th ed. study notes, "EXPERIMENT: Viewing Ready Threads" (!ready)
    out = (
        "Processor 0: Ready Threads at priority 8\n"
        "THREAD 857d9030 Cid 0ec8.0e30 Teb: 7ffdd000 Win32Thread: 00000000 READY\n"
        "THREAD 855c8300 Cid 0ec8.0eb0 Teb: 7ff9c000 Win32Thread: 00000000 READY\n"
        "Processor 1: Ready Threads at priority 10\n"
        "THREAD 857c0030 Cid 04c8.0378 Teb: 7ffdf000 Win32Thread: fef7f8c0 READY\n"
    )
    r = parse("!ready", out)
    assert [(t.address, t.priority, t.processor) for t in r.threads] == [
        ("0x857d9030", 8, 0),
        ("0x855c8300", 8, 0),
        ("0x857c0030", 10, 1),
    ]
    assert all(t.details == {} for t in r.threads)


def test_ready_shared_queue_and_empty_processors() -> None:
    # Windows Internals 7th ed. Part 1, ch. 4 (!Ready, Windows 10: shared ready queues; the
    # book wraps "READY on" / "processor N")
    out = (
        "KSHARED_READY_QUEUE 8147e800: (00) ****----------------------\n"
        "SharedReadyQueue 8147e800: Ready Threads at priority 8\n"
        "    THREAD 80af8bc0 Cid 1300.15c4 Teb: 7ffbd0b0 Win32Thread: 00000000 READY on\n"
        "processor 80000002\n"
        "SharedReadyQueue 8147e800: Ready Threads at priority 0\n"
        "    THREAD 82889bc0 Cid 0004.0008 Teb: 00000000 Win32Thread: 00000000 READY on\n"
        "processor 80000000\n"
        "Processor 0: No threads in READY state\n"
        "Processor 1: No threads in READY state\n"
    )
    first, last = parse("!Ready", out).threads
    assert (first.priority, first.details["SharedReadyQueue"]) == (8, "8147e800")
    assert (last.priority, last.details["SharedReadyQueue"]) == (0, "8147e800")
    assert "Processor" not in last.details and not any("READY state" in v for v in last.details.values())


def test_trap_frame_inside_fpo_data() -> None:
    # Windows 10 x86 !thread ("booster" driver notes): the syscall frame
    out = (
        "THREAD a738d040  Cid 0ce8.0998  Teb: 0026c000 Win32Thread: ac5e6108 WAIT: (UserRequest) UserMode "
        "Non-Alertable\n"
        "ChildEBP RetAddr  Args to Child\n"
        "ae12bbf8 77d12740 000000c0 a738d040 0000000a nt!KiSystemServicePostCall (FPO: [0,3] TrapFrame @ ae12bc14)\n"
        "00bff730 00000000 00000000 00000000 00000000 ntdll!KiFastSystemCallRet (FPO: [0,0,0])\n"
    )
    (t,) = parse("!thread 0xa738d040", out).threads
    syscall, user = t.frames
    assert syscall.trap_frame == "0xae12bc14" and syscall.function == "KiSystemServicePostCall"
    assert syscall.annotations == ("(FPO: [0,3] TrapFrame @ ae12bc14)",)
    assert user.trap_frame is None
    kv = parse("kv", "ChildEBP RetAddr  Args to Child\n" + out.split("Args to Child\n")[1])
    assert kv.frames[0].trap_frame == "0xae12bc14"


def test_thread_header_with_only_the_address() -> None:
    # Vanguard anti-cheat internals blog (!thread rdi, x64)
    out = (
        "THREAD ffffc2895a49f040\n"
        "Child-SP          RetAddr               : Call Site\n"
        "ffff8506`8f96a830 fffff801`cdc0ca92     : nt!KiSwapContext+0x76\n"
        "ffff8506`8f96a970 fffff801`ce0800af     : nt!KiDispatchInterrupt+0x152\n"
        "ffff8506`8f96ab60 00000000`00000000     : 0xfffff801`61a2e880\n"
    )
    r = parse("!thread rdi", out)
    assert r.kind == "threads"
    (t,) = r.threads
    assert t.address == "0xffffc2895a49f040" and t.cid is None
    assert [f.function for f in t.frames] == ["KiSwapContext", "KiDispatchInterrupt", None]
    assert t.frames[2].address == "0xfffff80161a2e880"


def _kernel_objects_07(c: Corpus) -> None:
    r = c.record("kernel_objects/07.txt", "!running -it")
    assert r.kind == "threads"
    assert [t.processor for t in r.threads] == [0, 1, 2, 3]
    assert r.threads[0].prcb == "0xffdff120" and r.threads[0].address == "0x805495a0"
    assert len(r.threads[0].frames) == 3
    assert r.threads[3].frames[0].call_site == "nt!KiIdleLoop+0x14"
    assert r.fields["all_idle"] == "true"


def _kernel_objects_17(c: Corpus) -> None:
    r = c.record("kernel_objects/17.txt", "!stacks 1")
    assert r.kind == "threads" and len(r.threads) == 11
    t0 = r.threads[0]
    assert (t0.process_id, t0.thread_id, t0.address, t0.state, t0.image) == (
        "0x4",
        "0x8",
        "0x827d0030",
        "Blocked",
        "System",
    )
    assert t0.frames[0].call_site == "ntoskrnl!MmZeroPageThread+0x66"
    assert r.threads[2].details["blocker"] == "Stack paged out" and r.threads[2].frames == []
    assert r.threads[-1].image == "csrss.exe"
    r2 = c.record("kernel_objects/17.txt", "!stacks 2")
    assert len(r2.threads[0].frames) == 7
    assert r2.threads[0].frames[5].function == "CreateSystemRootLink"


def _process_thread_04(c: Corpus) -> None:
    r = c.record("process_thread/04.txt", "!thread -t 1e10")
    assert r.kind == "threads"
    (t,) = r.threads
    assert t.address == "0xffffac819fb18080" and t.thread_id == "0x1e10"
    assert t.wait_reason == "WrUserRequest"
    assert t.image == "CPUSTRES.EXE"
    assert t.priority == 15
    assert t.frames == []  # elided by the author


def _process_thread_05(c: Corpus) -> None:
    r = c.record("process_thread/05.txt", "~")
    assert len(r.threads) == 7
    assert r.threads[4].id == "2064.bb8" and r.threads[4].suspend_count == 2
    cur = [t for t in r.threads if t.current]
    assert [t.index for t in cur] == [6]
    assert r.threads[6].teb == "0x00eef000"


def _process_thread_06(c: Corpus) -> None:
    r = c.record("process_thread/06.txt", "~")
    assert len(r.threads) == 14
    assert r.threads[11].current and r.threads[11].thread_id == "0x898"
    assert r.threads[0].teb == "0x000000555f35c000"


def _process_thread_07(c: Corpus) -> None:
    r = c.record("process_thread/07.txt", "~")
    assert len(r.threads) == 25
    assert r.threads[6].details["comment"] == "this thread owns the second critical section"
    assert r.threads[24].teb == "0x7ff5d000"
    assert all(t.suspend_count is None for t in r.threads)  # old format has no Suspend column


def _process_thread_12(c: Corpus) -> None:
    assert [t.current for t in c.record("process_thread/12.txt", "~").threads] == [False, True]
    all_threads = c.record("process_thread/12.txt", "~*").threads
    assert all_threads[0].start_symbol == "notepad!WinMainCRTStartup"
    assert all_threads[0].start_address == "0x00e131c9"
    assert all_threads[1].priority_class == 32
    (cur,) = c.record("process_thread/12.txt", "~.").threads
    assert cur.index == 1 and cur.start_symbol == "ntdll!DbgUiRemoteBreakin"


def _process_thread_14(c: Corpus) -> None:
    r = c.record("process_thread/14.txt", "!runaway")
    assert len(r.threads) == 13
    top = r.threads[0]
    assert (top.index, top.thread_id, top.user_time) == (8, "0x21dc", "0 days 0:00:07.000")


def _process_thread_15(c: Corpus) -> None:
    (t8,) = c.record("process_thread/15.txt", "~8").threads
    assert t8.name == "High priority thread #1" and t8.current
    assert t8.start_symbol == "coreclr!ThreadNative::KickOffThread"
    (t10,) = c.record("process_thread/15.txt", "~10").threads
    assert t10.priority == -2 and t10.name == "Low priority thread"


def _process_thread_16(c: Corpus) -> None:
    r = c.record("process_thread/16.txt", "!runaway 7")
    assert len(r.threads) == 7
    t1 = next(t for t in r.threads if t.index == 1)
    assert t1.user_time == "0 days 0:00:00.531"
    assert t1.kernel_time == "0 days 0:00:00.015"
    assert t1.elapsed_time == "0 days 0:32:07.369"


def test_user_start_bare_address_and_split_by_symbol_messages() -> None:
    # ~* of an injected notepad (HTB "CrashDump" write-up): a start outside every module is a
    # bare address, not a symbol
    out = (
        "   1  Id: 920.3a8 Suspend: 0 Teb: 00007ff7`8d76c000 Unfrozen\n"
        "      Start: 000000b1`20870000\n"
        "      Priority: 0  Priority class: 32  Affinity: 1\n"
    )
    (t,) = parse("~*", out).threads
    assert (t.start_address, t.start_symbol, t.priority_class) == ("0x000000b120870000", None, 32)
    # ~* of a service without symbols (a Portuguese write-up): the symbol load's messages sit
    # where the start symbol goes, the symbol follows on a line of its own
    out = (
        ".  0  Id: 4c8.30c Suspend: 1 Teb: 7ffde000 Unfrozen\n"
        "      Start: *** WARNING: Unable to verify checksum for Service.exe\n"
        "*** ERROR: Module load completed but symbols could not be loaded for Service.exe\n"
        "Service+0xc60c (0040c60c)\n"
        "      Priority: 0  Priority class: 32  Affinity: f\n"
        "   2  Id: 4c8.580 Suspend: 1 Teb: 7ffdc000 Unfrozen\n"
        "      Priority: 0  Priority class: 32  Affinity: f\n"
    )
    r = parse("~*", out)
    t0, t2 = r.threads
    assert (t0.start_symbol, t0.start_address, t0.affinity) == ("Service+0xc60c", "0x0040c60c", "f")
    assert (t2.start_symbol, t2.start_address, t2.priority) == (None, None, 0)
    assert r.warnings == [
        "*** WARNING: Unable to verify checksum for Service.exe",
        "*** ERROR: Module load completed but symbols could not be loaded for Service.exe",
    ]


def test_stacks_ticks_column_is_not_the_state() -> None:
    # the Windows 7+ !stacks layout: "Proc.Thread  .Thread  Ticks   ThreadState Blocker", the
    # process line holding its EPROCESS
    out = (
        "Proc.Thread  .Thread  Ticks   ThreadState Blocker\n"
        "                            [fffffa8000cd5b30 System]\n"
        "   4.000008  fffffa8000cd5660 ffffff8e Blocked    nt!KiSwapContext+0x7a\n"
        "   4.000010  fffffa8000cd5040 0000bc2e READY      nt!KiSwapContext+0x7a\n"
    )
    a, b = parse("!stacks", out).threads
    assert (a.state, a.details["ticks"]) == ("Blocked", "ffffff8e")
    assert (a.image, a.owning_process) == ("System", "0xfffffa8000cd5b30")
    assert (b.state, b.details["ticks"], b.frames[0].call_site) == ("READY", "0000bc2e", "nt!KiSwapContext+0x7a")


def _threads_01(c: Corpus) -> None:
    (t,) = c.record("families/threads/01.txt", "!thread 0xffffcb088f0a4480").threads
    assert (t.address, t.cid, t.process_id, t.thread_id) == ("0xffffcb088f0a4480", "0e34.3814", "0x0e34", "0x3814")
    assert (t.teb, t.win32_thread) == ("0x0000001a27ca6000", "0x0000000000000000")
    assert (t.state, t.processor, t.wait_reason) == ("RUNNING", 0, None)
    assert (t.owning_process, t.image, t.attached_process, t.attached_image) == (
        "0xffffcb08905397c0", "MsMpEng.exe", None, None,
    )  # fmt: skip
    assert (t.wait_start_tick, t.wait_ticks, t.wait_time) == (182835891, 0, None)  # "Ticks: 0", no time
    assert (t.context_switches, t.ideal_processor) == (5989, 3)
    assert (t.start_address, t.start_symbol) == ("0x00007ffb3b2fd1b0", None)
    assert (t.priority, t.base_priority, t.user_time, t.kernel_time) == (8, 8, "00:00:01.046", "00:00:00.296")
    assert [f.call_site for f in t.frames] == [
        "nt!DbgBreakPointWithStatus", "0xfffff801`b56d24aa", "0xffffcb08`8fd68010",
    ]  # fmt: skip
    assert t.frames[0].source_line == 130 and t.frames[0].args[0] == "0xffffcb088fd68010"
    assert (t.frames[2].child_sp, t.frames[2].return_address) == ("0xfffff80259858c78", "0x0000000000000000")


def _threads_02(c: Corpus) -> None:
    r = c.record("families/threads/02.txt", "~")
    assert [(t.index, t.id, t.teb) for t in r.threads] == [
        (0, "4dc.470", "0x7ffde000"), (1, "4dc.534", "0x7ffdd000"), (2, "4dc.5a8", "0x7ffdc000"),
    ]  # fmt: skip
    assert [t.current for t in r.threads] == [False, True, False]  # " . 1"
    assert [t.event_thread for t in r.threads] == [False, False, True]  # "#  2"
    assert all(t.suspend_count == 0 and t.frozen is False for t in r.threads)


def _threads_03(c: Corpus) -> None:
    r = c.record("families/threads/03.txt", "~")
    assert [t.index for t in r.threads] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13]
    (cur,) = [t for t in r.threads if t.current]
    assert (cur.index, cur.id, cur.teb) == (11, "5500.28b0", "0x000000c8262de000")
    assert (r.threads[8].id, r.threads[8].thread_id) == ("5500.808", "0x808")
    assert r.threads[-1].teb == "0x000000c8262e2000"
    assert all(t.suspend_count == 1 and t.state == "Unfrozen" and not t.event_thread for t in r.threads)


def _threads_04(c: Corpus) -> None:
    (t,) = c.record("families/threads/04.txt", "!thread ffffe00000e6d080").threads
    assert (t.address, t.cid, t.teb) == ("0xffffe00000e6d080", "0910.0cc0", "0x00007ff669a10000")
    assert (t.state, t.wait_reason, t.wait_mode) == ("WAIT", None, None)  # the author cut "WAIT: ..."
    assert [(w.address, w.type) for w in t.wait_objects] == [("0xffffe0000089a300", "QueueObject")]
    assert (t.owning_process, t.image, t.attached_process) == ("0xffffe00000d52900", "explorer.exe", None)
    assert (t.wait_start_tick, t.wait_ticks, t.wait_time) == (13777, 2, "0:00:00:00.031")
    assert (t.context_switches, t.ideal_processor) == (2, 1)
    assert (t.start_symbol, t.start_address) == ("ntdll!TppWorkerThread", "0x00007ffd14ab2850")
    assert (t.priority, t.base_priority) == (13, 13)
    assert t.frames == []  # "..." instead of the stack


def _threads_05(c: Corpus) -> None:
    b = c.block("families/threads/05.txt", "!thread ffffd88863435080 2")
    (t,) = b.record.threads
    assert (t.address, t.cid, t.teb) == ("0xffffd88863435080", "2064.1a00", "0x0000000000ebd000")
    assert (t.state, t.processor, t.frames, t.details) == ("RUNNING", 5, [], {})


def _threads_06(c: Corpus) -> None:
    (t,) = c.record("families/threads/06.txt", "!thread fffff8071ed3fa00").threads
    assert (t.address, t.cid, t.process_id, t.thread_id) == ("0xfffff8071ed3fa00", "0000.0000", "0x0000", "0x0000")
    assert (t.state, t.processor) == ("RUNNING", 0)
    assert (t.owning_process, t.image) == ("0xfffff8071ed3ca00", "Idle")
    assert (t.attached_process, t.attached_image) == ("0xffffc509b8884040", "System")
    assert (t.wait_start_tick, t.wait_ticks, t.wait_time) == (8051, 140509, "0:00:36:35.453")
    assert (t.context_switches, t.ideal_processor) == (983471, 0)
    assert (t.start_symbol, t.start_address) == ("nt!KiIdleLoop", "0xfffff8071e418500")
    assert (t.priority, t.base_priority, t.kernel_time) == (0, 0, "00:31:12.906")
    assert len(t.frames) == 6
    assert (t.frames[0].call_site, t.frames[3].call_site) == ("DumpIt+0x16d7", "nt!KiAbTreeArray+0xee10")
    assert t.frames[5].return_address == "0x0000000000000000"


def _threads_07(c: Corpus) -> None:
    # LittleMali/docs: "~~[0x000005f4]" in a WoW64 dump (0:000:x86>), one thread, Suspend: -1
    b = c.block("families/threads/07.txt", "~~[0x000005f4]")
    assert b.prompt is not None and b.prompt.machine == "x86"
    (t,) = b.record.threads
    assert (t.index, t.process_id, t.thread_id, t.teb) == (3, "0xaa0", "0x5f4", "0x7efd5000")
    assert (t.suspend_count, t.frozen, t.current) == (-1, False, False)
    assert (t.start_symbol, t.start_address) == ("iOAEntBiz!CTPNEvtMgr::Thread2WatchEvent", "0x0040e619")
    assert (t.priority, t.priority_class, t.affinity) == (0, 32, "3")


def _threads_08(c: Corpus) -> None:
    # gavinshark: two "~~[tid]" look-ups in one block; the Start symbol is a C++ template whose
    # name holds blanks and parentheses before the "(address)" the line ends with
    start = "ucrtbase!thread_start<unsigned int (__cdecl*)(void * __ptr64)>"
    (t4,) = c.record("families/threads/08.txt", "~~[0x0000000000000174]").threads
    (t3,) = c.record("families/threads/08.txt", "~~[0x0000000000000278]").threads
    assert (t4.index, t4.id, t4.process_id, t4.thread_id) == (4, "1914.174", "0x1914", "0x174")
    assert (t3.index, t3.id, t3.teb) == (3, "1914.278", "0x000000ddea989000")
    assert t4.teb == "0x000000ddea98b000"
    for t in (t3, t4):
        assert (t.start_symbol, t.start_address) == (start, "0x00007ffebd96cd30")
        assert (t.suspend_count, t.state, t.current, t.event_thread) == (1, "Unfrozen", False, False)
        assert (t.priority, t.priority_class, t.affinity) == (0, 32, "f")


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "kernel_objects/07.txt": _kernel_objects_07,
    "kernel_objects/17.txt": _kernel_objects_17,
    "process_thread/04.txt": _process_thread_04,
    "process_thread/05.txt": _process_thread_05,
    "process_thread/06.txt": _process_thread_06,
    "process_thread/07.txt": _process_thread_07,
    "process_thread/12.txt": _process_thread_12,
    "process_thread/14.txt": _process_thread_14,
    "process_thread/15.txt": _process_thread_15,
    "process_thread/16.txt": _process_thread_16,
    "families/threads/01.txt": _threads_01,
    "families/threads/02.txt": _threads_02,
    "families/threads/03.txt": _threads_03,
    "families/threads/04.txt": _threads_04,
    "families/threads/05.txt": _threads_05,
    "families/threads/06.txt": _threads_06,
    "families/threads/07.txt": _threads_07,
    "families/threads/08.txt": _threads_08,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
