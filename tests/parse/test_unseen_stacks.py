"""Stack, thread and process layouts found in published debugger output the corpus lacks.

Each test feeds a short excerpt in the layout as published (where it was seen is named
above the excerpt) and checks what a person reads from it.
"""

from __future__ import annotations

import pytest

from kdmcp.parse import parse
from kdmcp.parse.frames import CHILD_SP_ROW_RE, FAST_FRAME_RE, FRAME_RE, child_sp_frame, fast_frame_model, frame_fields
from kdmcp.parse.models import Frame

# --------------------------------------------------------------------------- short bare call sites


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


def test_every_frame_reader_reads_a_short_bare_address_alike() -> None:
    # Microsoft sysvad lab (!thread, x64): the last frame of a Child-SP stack
    line = "000000ee`6d37c580 00000000`00000000     0x12e"
    fast = FAST_FRAME_RE.fullmatch(line)
    general = FRAME_RE.match(line)
    (row,) = CHILD_SP_ROW_RE.findall(line + "\n")
    assert fast is not None and general is not None
    fields = frame_fields(general)
    assert fields is not None
    expected = Frame.model_validate(fields)
    assert expected.address == "0x12e" and expected.module is None
    assert fast_frame_model(fast) == expected
    assert child_sp_frame(row) == expected


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


# --------------------------------------------------------------------------- THREAD body lines


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


# --------------------------------------------------------------------------- !ready


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


# --------------------------------------------------------------------------- frames


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
