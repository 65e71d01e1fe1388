"""r, the ~Ns location, !running, !pcr, !irql, !idt, !stacks and !locks answered from the world.

The register block is held to the canned x64 layout and to the world's memory (the instruction
bytes under rip are the bytes ``read`` returns); ``~1s`` (``world.cpu = 1``) moves every command to
processor 1's frozen idle thread; the processor tables follow ``world.processors``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kdmcp.parse import parse
from kdmcp.sim.world.build import build
from kdmcp.sim.world.catalog import CLIENT_THREAD
from kdmcp.sim.world.cmd_cpu import processor_switch_text
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World
from tests.sim.world.helpers import run


@pytest.fixture(scope="module")
def built() -> World:
    return build()


@pytest.fixture
def world(built: World) -> Iterator[World]:
    """The module's world, its debugger state put back after each test."""
    saved = [p.current_thread for p in built.processors]
    yield built
    built.cpu = 0
    built.context_thread = built.context_process = None
    built.registers_written.clear()
    for p, thread in zip(built.processors, saved, strict=True):
        p.current_thread = thread


# ------------------------------------------------------------------------- r


def test_r_is_the_canned_break_in_context(world: World) -> None:
    out = run(world, "r")
    assert out == (
        "rax=0000000000000000 rbx=fffff80062f25180 rcx=0000000000000001\n"
        "rdx=0000008800000000 rsi=0000000000000001 rdi=ffffe70f2d53a080\n"
        "rip=fffff80062a05c20 rsp=fffff80066c0ef38 rbp=fffff80066c0f080\n"
        " r8=0000000000000000  r9=0000000000000000 r10=0000000000000000\n"
        "r11=0000000000000000 r12=0000000000000000 r13=0000000000000000\n"
        "r14=0000000000000000 r15=0000000000000000\n"
        # efl 0x246: ZF and PF set -- "zr", "pe" (parity even), as corpus user-mode samples read it
        "iopl=0         nv up ei pl zr na pe nc\n"
        "cs=0010  ss=0018  ds=002b  es=002b  fs=0053  gs=002b             efl=00000246\n"
        "nt!DbgBreakPointWithStatus:\n"
        "fffff800`62a05c20 cc              int     3\n"
    )
    record = parse("r", out)
    assert record.kind == "registers"
    regs = world.registers()
    assert {k: int(v, 16) for k, v in record.registers.items() if k != "iopl"} == {  # type: ignore[union-attr]
        k: v for k, v in regs.items()
    }
    assert record.symbol == "nt!DbgBreakPointWithStatus"  # type: ignore[union-attr]
    rip = regs["rip"]
    code = bytes.fromhex(record.bytes)  # type: ignore[union-attr]
    assert code == world.space().read(rip, len(code))


def test_flags_are_decoded_from_efl(world: World) -> None:
    run(world, "r efl=8d7")  # OF SF ZF AF PF CF, IF clear
    assert "iopl=0         ov up di ng zr ac pe cy\n" in run(world, "r")
    assert run(world, "r efl") == "efl=000008d7\n"
    run(world, "r efl=3202")  # IOPL 3, IF, nothing else
    assert "iopl=3         nv up ei pl nz na po nc\n" in run(world, "r")


def test_r_names_and_writes(world: World) -> None:
    assert run(world, "r rip") == "rip=fffff80062a05c20\n"
    assert run(world, "r @rsp") == "rsp=fffff80066c0ef38\n"
    assert run(world, "r rcx, rdi") == "rcx=0000000000000001 rdi=ffffe70f2d53a080\n"
    assert run(world, "r cs") == "cs=0010\n"
    assert run(world, "r rax=5") == ""
    thread = world.current_thread()
    assert world.registers_written[(thread.address, "rax")] == 5
    assert run(world, "r rax") == "rax=0000000000000005\n"
    assert run(world, "r").startswith("rax=0000000000000005 ")
    assert world.evaluate("@rax") == 5
    for other in ("rM 0x04", "rX", "rdmsr 176"):  # not the register display
        assert answer(world, other) is None
    assert run(world, "r bogus") == "       ^ Bad register error in 'r bogus'\n"
    assert parse("r rip", run(world, "r rip")).registers["rip"] == "0xfffff80062a05c20"  # type: ignore[union-attr]


def test_r_notes_a_flat_data_segment_without_its_selector(world: World) -> None:
    # corpus: "fffff800`60da1981 8b03            mov     eax,dword ptr [rbx] ds:00000000`00000000=????????"
    # -- x64 leaves the flat 002b selector out, and one blank follows even a short instruction
    thread = world.current_thread()
    site = 0xFFFFF80060DA1981
    world.registers_written[(thread.address, "rip")] = site
    world.registers_written[(thread.address, "rbx")] = 0
    try:
        assert run(world, "r").splitlines()[-1] == (
            "fffff800`60da1981 8b03            mov     eax,dword ptr [rbx] ds:00000000`00000000=????????"
        )
    finally:
        del world.registers_written[(thread.address, "rip")], world.registers_written[(thread.address, "rbx")]


def test_r_notes_the_memory_an_instruction_touches(world: World) -> None:
    # mov qword ptr [rsp+8],rcx at a routine's first byte: kd shows ss:0018:<rsp+8>=<the qword>
    thread = world.current_thread()
    site = world.symbols.lookup("nt!KeBugCheckEx")
    assert site is not None
    space = world.space()
    saved = space.read(site.address, 5)
    assert saved is not None
    assert space.write(site.address, bytes.fromhex("48894c2408"))
    world.registers_written[(thread.address, "rip")] = site.address
    world.registers_written[(thread.address, "rsp")] = thread.frames[-1].child_sp
    try:
        stack = thread.frames[-1].child_sp + 8
        value = space.u64(stack)
        lines = run(world, "r").splitlines()
        assert lines[-2] == "nt!KeBugCheckEx:"
        assert lines[-1] == (
            # corpus exceptions: "mov     qword ptr [rsp+8],rcx ss:0018:ffffcf06`53b5f6e0=000000000000000a"
            f"{fmt_addr(site.address)} 48894c2408      mov     qword ptr [rsp+8],rcx"
            f" ss:0018:{fmt_addr(stack)}={value:016x}"
        )
        assert parse("r", "\n".join(lines) + "\n").memory_reference is not None  # type: ignore[union-attr]
    finally:
        space.write(site.address, saved)


def test_processor_switch_follows_the_world(world: World) -> None:
    own = world.thread(world.processors[1].idle_thread)
    assert own is not None
    text = processor_switch_text(world, 1)
    first, second = text.splitlines()
    assert first == "nt!KiFreezeTargetExecution+0x1b9:"
    site = own.frames[0].site
    assert second.startswith(fmt_addr(site) + " ")
    code = bytes.fromhex(second.split()[1])
    assert code == world.space().read(site, len(code))
    world.cpu = 1
    assert run(world, "r").endswith(text)  # r ends where ~1s said the processor is
    assert run(world, "r rip") == f"rip={site:016x}\n"
    assert run(world, "!irql") == "Debugger saved IRQL for processor 0x1 -- 14 (IPI_LEVEL)\n"
    assert run(world, "!pcr").startswith("KPCR for Processor 1 at ffffa7808e1c0000:\n")


# ---------------------------------------------------------------- processors


def test_running_is_the_canned_all_idle(world: World) -> None:
    head = "\nSystem Processors:  (000000000000000f)\n  Idle Processors:  (000000000000000f)\nAll processors idle.\n"
    assert run(world, "!running") == head + "\n"
    assert run(world, "!running -i") == head + (
        "\n"
        "       Prcbs             Current         (pri) Next            (pri) Idle\n"
        "  0    fffff80062f25180  fffff80062f34a00 ( 0)                       fffff80062f34a00  ................\n"
        "  1    ffffa7808e1c0180  ffffa7808e1cb2c0 ( 0)                       ffffa7808e1cb2c0  ................\n"
        "  2    ffffa7808e280180  ffffa7808e28b2c0 ( 0)                       ffffa7808e28b2c0  ................\n"
        "  3    ffffa7808e340180  ffffa7808e34b2c0 ( 0)                       ffffa7808e34b2c0  ................\n"
        "\n"
    )
    assert parse("!running -i", run(world, "!running -i")).kind == "threads"


def test_a_busy_processor_is_not_idle(world: World) -> None:
    world.processors[2].current_thread = CLIENT_THREAD
    out = run(world, "!running")
    assert "  Idle Processors:  (000000000000000b)\n" in out
    assert "All processors idle." not in out
    thread = world.thread(CLIENT_THREAD)
    assert thread is not None
    assert (
        f"  2    ffffa7808e280180  ffffe70f2d53a080 ({thread.priority:2d})"
        "                       ffffa7808e28b2c0  ................\n"
    ) in out
    assert out.count("................") == 1


def test_running_t_adds_each_stack(world: World) -> None:
    out = run(world, "!running -it")
    assert out.count("Child-SP          RetAddr               Call Site\n") == len(world.processors)
    assert "fffff800`66c0ef38 fffff800`62a8bea2     nt!DbgBreakPointWithStatus\n" in out


def test_pcr_is_the_canned_layout(world: World) -> None:
    out = run(world, "!pcr")
    assert out == (
        "KPCR for Processor 0 at fffff80062f25000:\n"
        "    Major 1 Minor 1\n"
        "\tNtTib.ExceptionList: fffff80066c07fb0\n"
        "\t    NtTib.StackBase: fffff80066c06000\n"
        "\t   NtTib.StackLimit: 0000000000000000\n"
        "\t NtTib.SubSystemTib: fffff80062f25000\n"
        "\t      NtTib.Version: 0000000062f25180\n"
        "\t  NtTib.UserPointer: fffff80062f25870\n"
        "\t      NtTib.SelfTib: 0000000000000000\n"
        "\n"
        "\t            SelfPcr: 0000000000000000\n"
        "\t               Prcb: fffff80062f25180\n"
        "\t               Irql: 0000000000000000\n"
        "\t                IRR: 0000000000000000\n"
        "\t                IDR: 0000000000000000\n"
        "\t      InterruptMode: 0000000000000000\n"
        "\t                IDT: 0000000000000000\n"
        "\t                GDT: 0000000000000000\n"
        "\t                TSS: 0000000000000000\n"
        "\n"
        "\t      CurrentThread: fffff80062f34a00\n"
        "\t         NextThread: 0000000000000000\n"
        "\t         IdleThread: fffff80062f34a00\n"
        "\n"
        "\t          DpcQueue: \n"
    )
    record = parse("!pcr", out)
    assert record.kind == "object"
    # the PCR's figures are the world's: the PRCB that KiProcessorBlock holds, the PRCB's threads
    assert int(record.fields["Prcb"], 16) == world.space().u64(world.evaluate("nt!KiProcessorBlock"))  # type: ignore[union-attr]
    p3 = world.processors[3]
    out3 = run(world, "!pcr 3")
    assert f"\t      CurrentThread: {p3.current_thread:016x}\n" in out3
    assert f"\t               Prcb: {p3.prcb:016x}\n" in out3


def test_irql_of_each_processor(world: World) -> None:
    assert run(world, "!irql") == "Debugger saved IRQL for processor 0x0 -- 13 (CLOCK_LEVEL)\n"
    assert run(world, "!irql 0") == run(world, "!irql")
    assert run(world, "!irql 3") == "Debugger saved IRQL for processor 0x3 -- 14 (IPI_LEVEL)\n"
    assert parse("!irql", run(world, "!irql")).fields["irql"] == "13"  # type: ignore[union-attr]


def test_idt_names_only_routines_nt_has(world: World) -> None:
    out = run(world, "!idt")
    lines = out.splitlines()
    assert lines[0] == "Dumping IDT: fffff80066c05000" and lines[1] == ""
    assert "0e:\tfffff80062a05000 nt!KiPageFault" in lines
    for line in lines[2:]:
        address, name = line.split("\t")[1].split()
        assert world.name(int(address, 16)) == name and "+" not in name


def test_stacks_lists_every_thread(world: World) -> None:
    out = run(world, "!stacks")
    lines = out.splitlines()
    assert lines[0] == "Proc.Thread  .Thread  Ticks   ThreadState Blocker"
    assert lines[1] == "                            [fffff80062f33f40 Idle]"
    assert lines[2] == "   0.000000  fffff80062f34a00 0000000 RUNNING    nt!DbgBreakPointWithStatus"
    assert lines[-1] == f"Threads Processed: {len(world.all_threads())}"
    thread = world.thread(CLIENT_THREAD)
    assert thread is not None
    # the client waits in IopSynchronousServiceTail: !stacks names the frame past the wait machinery
    assert (
        f"1e90.{thread.tid:06x}  ffffe70f2d53a080 {thread.wait_ticks:07x} Blocked    nt!IopSynchronousServiceTail+0x2c2"
    ) in lines
    detail = run(world, "!stacks 2 DeviceIoControl")
    assert "                                        KERNELBASE!DeviceIoControl+0x6b\n" in detail
    assert detail.splitlines()[-1] == "Threads Processed: 1"


def test_locks_finds_none_held(world: World) -> None:
    out = run(world, "!locks")
    assert out == "**** DUMP OF ALL RESOURCE OBJECTS ****\nKD: Scanning for held locks.\n\n0 total locks\n"
    record = parse("!locks", out)
    assert record.kind == "object" and record.resources == []  # type: ignore[union-attr]


def test_every_answer_is_the_same_each_run(world: World) -> None:
    other = build()
    for command in ("r", "!stacks 2", "!running -it", "!pcr 2", "!idt", "k", "!process 0 7"):
        assert answer(other, command) == run(world, command), command
