"""!process, !thread, .process/.thread and k* answered from the world.

Each command is held to kd's layout (the canned default target's texts, which the corpus
modelled) and to the world: the model's processes and threads, the memory behind them, and the
other commands (``!process`` against ``dt``-style reads at ``UniqueProcessId``, ``k`` against
``!thread``, ``kb``'s args against the stack memory). Each output must parse to its typed record.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from collections.abc import Iterator

import pytest

from kdmcp.parse import parse
from kdmcp.sim.world.build import build
from kdmcp.sim.world.catalog import CLIENT_THREAD
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.layouts import offset_of
from kdmcp.sim.world.machine import World
from tests.sim.world.helpers import run

CLIENT_PROCESS = 0xFFFFE70F2E61B080


@pytest.fixture(scope="module")
def built() -> World:
    return build()


@pytest.fixture
def world(built: World) -> Iterator[World]:
    """The module's world, its debugger state put back after each test."""
    yield built
    built.cpu = 0
    built.context_thread = built.context_process = None
    built.registers_written.clear()


# ------------------------------------------------------------------ !process


def test_process_list_is_the_worlds_list_in_memory_order(world: World) -> None:
    out = run(world, "!process 0 0")
    assert out.startswith("**** NT ACTIVE PROCESS DUMP ****\nPROCESS ffffe70f28a7d040\n")
    record = parse("!process 0 0", out)
    assert record.kind == "processes"
    assert [int(p.address, 16) for p in record.processes] == [p.address for p in world.processes]
    pid_at = offset_of("nt!_EPROCESS", "UniqueProcessId")[0]
    for got, proc in zip(record.processes, world.processes, strict=True):
        assert int(got.cid, 16) == proc.pid == world.space().u64(proc.address + pid_at)
        assert got.image == proc.image
        assert int(got.parent_cid, 16) == proc.parent
        assert got.handle_count == proc.handle_count


def test_process_block_layout_is_the_canned_one(world: World) -> None:
    out = run(world, "!process 0 0")
    assert (
        "PROCESS ffffe70f28b0e080\n"
        "    SessionId: none  Cid: 0068    Peb: 00000000  ParentCid: 0004\n"
        "    DirBase: 0a8e7002  ObjectTable: ffffb28d4b8c4e80  HandleCount:   0.\n"
        "    Image: Registry\n\n"
    ) in out
    assert out.endswith(
        "PROCESS ffffe70f2e61b080\n"
        "    SessionId: 1  Cid: 1e90    Peb: bb6f2ac000  ParentCid: 0d3c\n"
        "    DirBase: 1d822d002  ObjectTable: ffffb28d4e9a3b80  HandleCount: 186.\n"
        "    Image: notmyfault64.exe\n\n"
    )


def test_image_filter_prints_no_header(world: World) -> None:
    out = run(world, "!process 0 0 NotMyFault64.exe")
    assert out.startswith("PROCESS ffffe70f2e61b080\n")
    assert out.count("PROCESS ") == 1
    assert len(parse("!process 0 0 notmyfault64.exe", out).processes) == 1  # type: ignore[union-attr]
    assert run(world, "!process 0 0 svchost.exe").count("PROCESS ") == sum(
        p.image == "svchost.exe" for p in world.processes
    )


def test_a_cid_is_searched_for(world: World) -> None:
    out = run(world, "!process 1e90 0")
    assert out.startswith("Searching for Process with Cid == 1e90\nPROCESS ffffe70f2e61b080\n")
    assert run(world, "!process 0n7824 0") == out  # 0n7824 == 0x1e90
    assert run(world, "!process 9999 0") == "Searching for Process with Cid == 9999\n"


def test_current_process_follows_dot_process(world: World) -> None:
    out = run(world, "!process -1 0")
    assert out == (
        "PROCESS fffff80062f33f40\n"
        "    SessionId: none  Cid: 0000    Peb: 00000000  ParentCid: 0000\n"
        "    DirBase: 001ad002  ObjectTable: ffffb28d4b8a8b40  HandleCount: 2651.\n"
        "    Image: Idle\n\n"
    )
    assert run(world, ".process /r /p ffffe70f2e61b080") == (
        "Implicit process is now ffffe70f`2e61b080\n.cache forcedecodeuser done\nLoading User Symbols\n...\n"
    )
    assert world.context_process == CLIENT_PROCESS
    assert run(world, "!process -1 0").startswith("PROCESS ffffe70f2e61b080\n")
    assert run(world, ".process") == "Implicit process is now fffff800`62f33f40\n"  # reset
    assert world.context_process is None


def test_process_with_threads_and_stacks(world: World) -> None:
    out = run(world, "!process ffffe70f2e61b080 7")
    proc = world.process(CLIENT_PROCESS)
    assert proc is not None
    assert "    Token                             " + f"{proc.token & ~0xF:016x}\n" in out
    assert "        Child-SP          RetAddr               Call Site\n" in out
    record = parse("!process ffffe70f2e61b080 7", out)
    got = record.processes[0]  # type: ignore[union-attr]
    assert [int(t.address, 16) for t in got.threads] == [t.address for t in proc.threads]
    assert [f.call_site for f in got.threads[0].frames] == [world.name(f.site) for f in proc.threads[0].frames]
    assert run(world, "!process ffffe70f2e61b080 7") == out  # deterministic


def test_process_thread_list_one_line_a_thread(world: World) -> None:
    out = run(world, "!process ffffe70f2e61b080 4")
    rows = [line for line in out.splitlines() if line.startswith("        THREAD ")]
    assert rows[0] == (
        "        THREAD ffffe70f2d53a080  Cid 1e90.2f20  Teb: 000000bb6f2ad000 Win32Thread: 0000000000000000 WAIT"
    )
    assert len(rows) == 2


# ------------------------------------------------------------------- !thread


def test_thread_of_the_client_names_its_owner(world: World) -> None:
    out = run(world, f"!thread {CLIENT_THREAD:x}")
    lines = out.splitlines()
    assert lines[0].startswith("THREAD ffffe70f2d53a080  Cid 1e90.")
    assert lines[0].endswith("WAIT: (Executive) KernelMode Non-Alertable")
    assert "Owning Process            ffffe70f2e61b080       Image:         notmyfault64.exe" in lines
    record = parse(f"!thread {CLIENT_THREAD:x}", out)
    assert record.kind == "threads"
    t = record.threads[0]  # type: ignore[union-attr]
    assert t.image == "notmyfault64.exe"
    assert int(t.owning_process, 16) == CLIENT_PROCESS
    thread = world.thread(CLIENT_THREAD)
    assert thread is not None
    assert int(t.thread_id, 16) == thread.tid
    assert [int(f.child_sp, 16) for f in t.frames] == [f.child_sp for f in thread.frames]
    # the system call's frame carries its trap frame, as kv does
    syscall = next(f for f in t.frames if f.function == "KiSystemServiceCopyEnd")
    assert syscall.trap_frame is not None


def test_thread_current_is_the_break_in_idle_thread(world: World) -> None:
    out = run(world, "!thread")
    assert out.startswith(
        "THREAD fffff80062f34a00  Cid 0000.0000  Teb: 0000000000000000 Win32Thread: 0000000000000000"
        " RUNNING on processor 0\n"
        "Not impersonating\n"
        "DeviceMap                 ffffb28d4b836a10\n"
        "Owning Process            fffff80062f33f40       Image:         Idle\n"
        "Attached Process          ffffe70f28a7d040       Image:         System\n"
        "Wait Start TickCount      0              Ticks: 9691 (0:00:02:31.421)\n"
    )
    assert "Win32 Start Address nt!KiIdleLoop (0xfffff80062a00d10)\n" in out
    assert "Stack Init fffff80066c1ac90 Current " in out
    assert "Priority 0  BasePriority 0  IoPriority 0  PagePriority 5\n" in out
    assert out.endswith(
        "fffff800`66c1ac60 00000000`00000000     : 00000000`00000000 00000000`00000000"
        " 00000000`00000000 00000000`00000000 : nt!KiIdleLoop+0x54\n\n"
    )
    assert "nt!KiInterruptDispatchNoLockNoEtw+0x37 (TrapFrame @ fffff800`66c1a5f0)\n" in out


def test_thread_minus_one_is_the_current_thread(world: World) -> None:
    assert run(world, "!thread -1") == run(world, "!thread")
    assert run(world, "!thread -1 2").count("\n") == 1


def test_thread_flag_2_is_the_header_only(world: World) -> None:
    out = run(world, f"!thread {CLIENT_THREAD:x} 2")
    assert out.count("\n") == 1 and out.startswith("THREAD ffffe70f2d53a080")


def test_an_address_that_is_no_thread_or_process(world: World) -> None:
    assert run(world, "!thread ffffe70f2e61b080") == (
        "ffffe70f2e61b080 is not a thread object, interpreting as stack value...\n"
        "TYPE mismatch for thread object at ffffe70f2e61b080\n"
    )
    assert run(world, f"!process {CLIENT_THREAD:x} 0") == "TYPE mismatch for process object at ffffe70f2d53a080\n"


def test_thread_current_in_memory(world: World) -> None:
    # "Current" is the KernelStack the ETHREAD holds (what dt nt!_ETHREAD Tcb.KernelStack shows)
    out = run(world, f"!thread {CLIENT_THREAD:x}")
    kernel_stack = world.space().u64(CLIENT_THREAD + offset_of("nt!_ETHREAD", "Tcb.KernelStack")[0])
    assert kernel_stack is not None
    assert f" Current {kernel_stack:016x}\n" in out


# ------------------------------------------------------------ .thread and k


def test_dot_thread_moves_k_r_and_the_process(world: World) -> None:
    assert run(world, f".thread {CLIENT_THREAD:x}") == "Implicit thread is now ffffe70f`2d53a080\n"
    assert world.context_thread == CLIENT_THREAD
    k = run(world, "k")
    thread = world.thread(CLIENT_THREAD)
    assert thread is not None
    assert k.startswith("  *** Stack trace for last set context - .thread/.cxr resets it\n")
    assert f"00 {fmt_addr(thread.frames[0].child_sp)} " in k
    assert "KERNELBASE!DeviceIoControl+0x6b" in k  # the user frames print as well
    assert run(world, "r").startswith("Last set context:\nrax=")
    assert run(world, "r rip") == f"rip={thread.frames[0].site:016x}\n"
    assert run(world, "!process -1 0").startswith("PROCESS ffffe70f2e61b080\n")
    # !thread with no address is still the processor's thread (.thread docs)
    assert run(world, "!thread").startswith("THREAD fffff80062f34a00 ")
    # no address, or 0: back to the current thread
    assert run(world, ".thread") == "Implicit thread is now fffff800`62f34a00\n"
    assert world.context_thread is None
    assert run(world, "k").startswith(" # Child-SP")
    assert run(world, ".process 0") == "Implicit process is now fffff800`62f33f40\n"


def test_dot_thread_p_sets_the_process_too(world: World) -> None:
    assert run(world, f".thread /p /r {CLIENT_THREAD:x}") == (
        "Implicit thread is now ffffe70f`2d53a080\n"
        "Implicit process is now ffffe70f`2e61b080\n"
        ".cache forcedecodeuser done\n"
        "Loading User Symbols\n...\n"
    )
    assert world.context_process == CLIENT_PROCESS


def test_k_is_the_canned_break_in_stack(world: World) -> None:
    out = run(world, "k")
    lines = out.splitlines()
    assert lines[0] == " # Child-SP          RetAddr               Call Site"
    assert lines[1] == "00 fffff800`66c0ef38 fffff800`62a8bea2     nt!DbgBreakPointWithStatus"
    assert lines[2] == "01 fffff800`66c0ef40 fffff800`62834f5d     nt!KdCheckForDebugBreak+0x72"
    assert lines[-1] == "0c fffff800`66c1ac60 00000000`00000000     nt!KiIdleLoop+0x54"
    frames = world.current_thread().frames
    record = parse("k", out)
    assert record.kind == "stack"
    got = record.frames  # type: ignore[union-attr]
    assert len(got) == len(frames)
    for i, frame in enumerate(got[:-1]):  # RetAddr n == site n+1
        assert int(frame.return_address, 16) == frames[i + 1].site
    assert int(got[0].child_sp, 16) == world.registers()["rsp"]
    for letters in ("kn", "kp", "kL"):
        assert run(world, letters) == out


def test_k_frame_counts_and_kc(world: World) -> None:
    assert len(parse("kn 3", run(world, "kn 3")).frames) == 3  # type: ignore[union-attr]
    assert run(world, "k 2").count("\n") == 3
    assert len(parse("kb 100", run(world, "kb 100")).frames) == 13  # type: ignore[union-attr]
    kc = run(world, "kc").splitlines()
    assert kc[:2] == [" # Call Site", "00 nt!DbgBreakPointWithStatus"]


def test_kb_args_are_the_stack_memory(world: World) -> None:
    world.context_thread = CLIENT_THREAD
    thread = world.current_thread()
    sp = thread.frames[1].child_sp
    space = world.space()
    saved = space.read(sp + 8, 32)
    assert saved is not None
    assert space.write(sp + 8, struct.pack("<4Q", 0x1111, 0xFFFFE70F2ED94D70, 3, 0x4444))
    try:
        out = run(world, "kb")
        assert out.splitlines()[3].startswith(  # the banner, the header, frame 00
            f"01 {fmt_addr(sp)} {fmt_addr(thread.frames[2].site)}     : 00000000`00001111 ffffe70f`2ed94d70"
            " 00000000`00000003 00000000`00004444 : nt!KiSwapThread+0x500"
        )
        record = parse("kb", out)
        assert record.frames[1].args[1] == "0xffffe70f2ed94d70"  # type: ignore[union-attr]
    finally:
        space.write(sp + 8, saved)


def test_kv_marks_the_interrupt_entry(world: World) -> None:
    out = run(world, "kv")
    assert out.splitlines()[0] == (
        " # Child-SP          RetAddr               : Args to Child"
        "                                                           : Call Site"
    )
    marked = [line for line in out.splitlines() if "TrapFrame" in line]
    assert len(marked) == 1 and marked[0].endswith(
        ": nt!KiInterruptDispatchNoLockNoEtw+0x37 (TrapFrame @ fffff800`66c1a5f0)"
    )
    assert "TrapFrame" not in run(world, "kb")
    assert parse("kv", out).frames[7].trap_frame == "0xfffff80066c1a5f0"  # type: ignore[union-attr]


def test_processor_1_has_its_own_stack(world: World) -> None:
    world.cpu = 1  # what ~1s does
    out = run(world, "k")
    own = world.thread(world.processors[1].idle_thread)
    assert own is not None
    assert out.splitlines()[1] == (
        f"00 {fmt_addr(own.frames[0].child_sp)} {fmt_addr(own.frames[1].site)}     nt!KiFreezeTargetExecution+0x1b9"
    )
    assert out.splitlines()[-1].endswith("nt!KiIdleLoop+0x54")
    assert run(world, "r rip") == f"rip={own.frames[0].site:016x}\n"
    assert "RUNNING on processor 1" in run(world, "!thread")


@pytest.mark.process  # starts the simulator (tests/tiers.py)
def test_the_simulator_answers_from_the_world() -> None:
    # the real simulator (kd -b), which asks the world after the scenario's own responses
    done = subprocess.run(
        [sys.executable, "-m", "kdmcp.sim", "kd", "-b", "-k", "net:port=50000,key=1.2.3.4"],
        input="!process 0 0 notmyfault64.exe\nq\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "0: kd> PROCESS ffffe70f2e61b080\n    SessionId: 1  Cid: 1e90" in done.stdout.replace("\r\n", "\n")
