"""cdb's breakpoints and steps on the user world (cmd_user_run.py) and the running process
(user_activity.py): ``bp``/``bl`` as cdb prints them, ``g`` through the worker's cycle to a
breakpoint, ``p``/``gu`` from the stop, a launch's start into ``app!wmain`` before its fault.
Fast tier: the world is driven directly, no processes."""

from __future__ import annotations

import pytest

import kdmcp.sim.world.commands  # noqa: F401  (the command table)
from kdmcp.parse import parse
from kdmcp.sim.world import user_activity
from kdmcp.sim.world.cmd_user import current_index
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.user import build_user

PID = 0x1A2C


def _say(world: World, command: str) -> str:
    out = answer(world, command, kernel=False)
    assert out is not None, command
    return out


def _run(world: World, limit: int = 16) -> tuple[int, user_activity.UserStep]:
    """``g`` and the events until the process stops: how many events it took, and the stop."""
    user_activity.go(world)
    for n in range(1, limit + 1):
        step = user_activity.play(world)
        if step.stopped:
            return n, step
    raise AssertionError("no stop")


@pytest.fixture
def attach() -> World:
    return build_user(0, PID, "")


def test_bl_rows_carry_cdbs_process_thread_column(attach: World) -> None:
    assert _say(attach, "bp ntdll!RtlAllocateHeap") == ""
    assert _say(attach, "bu app!wmain") == ""
    # corpus misc/06: "     0 e Disable Clear  00007ff6`8402c0f8     0001 (0001)  0:**** notepad!wWinMain"
    assert _say(attach, "bl") == (
        "     0 e Disable Clear  00007ffc`81a3a7f0     0001 (0001)  0:**** ntdll!RtlAllocateHeap\n"
        "     1 e Disable Clear  00007ff7`91d81000     0001 (0001)  0:**** app!wmain\n"
    )
    rows = parse("bl", _say(attach, "bl")).breakpoints
    assert [r.id for r in rows] == [0, 1]
    _say(attach, "bd 1")
    assert " 1 d Enable Clear " in _say(attach, "bl")
    _say(attach, "bc *")
    assert _say(attach, "bl") == ""


def test_bm_sets_one_breakpoint_per_matching_routine(attach: World) -> None:
    out = _say(attach, "bm ntdll!Rtl*Heap")
    assert out == ('  0: 00007ffc`81a3a7f0 @!"ntdll!RtlAllocateHeap"\n  1: 00007ffc`81a3b910 @!"ntdll!RtlFreeHeap"\n')
    assert len(attach.breakpoints) == 2


def test_g_runs_the_worker_into_a_breakpoint_and_the_thread_is_current(attach: World) -> None:
    _say(attach, "bp ucrtbase!wprintf")
    events, stop = _run(attach)
    assert events == 2  # alloc, then print (25 ms each)
    assert stop.text == (
        "Breakpoint 0 hit\nucrtbase!wprintf:\n00007ffc`7f44f2a0 48895c2408      mov     qword ptr [rsp+8],rbx\n"
    )
    assert current_index(attach) == 1  # the worker; the break-in thread exited at g
    assert len(attach.processes[0].threads) == 2
    k = _say(attach, "k").splitlines()
    assert [line.split()[-1] for line in k[1:4]] == [
        "ucrtbase!wprintf", "app!WorkCallback+0x2c", "ntdll!TppWorkerThread+0x1a4",
    ]  # fmt: skip
    # the return address sits at rsp (dq @rsp and k agree)
    assert _say(attach, "dq @rsp L1").split()[1] == "00007ff7`91d8106c"  # app!WorkCallback+0x2c
    assert _say(attach, ".lastevent").startswith("Last event: 1a2c.1e48: Hit breakpoint 0\n")


def test_p_and_gu_from_the_stop(attach: World) -> None:
    _say(attach, "bp ntdll!RtlAllocateHeap")
    assert _run(attach)[0] == 1
    step = _say(attach, "p")
    assert "rip=00007ffc81a3a7f5 " in step and step.endswith(
        "ntdll!RtlAllocateHeap+0x5:\n00007ffc`81a3a7f5 57              push    rdi\n"
    )
    up = _say(attach, "gu")
    assert "rip=00007ffc7f3fa6c9 " in up and up.endswith(
        "ucrtbase!malloc+0x19:\n00007ffc`7f3fa6c9 83e00f          and     eax,0Fh\n"
    )


def test_the_cycle_is_deterministic_and_resumes_where_it_stopped(attach: World) -> None:
    _say(attach, "bp ntdll!NtDelayExecution")
    assert _run(attach)[0] == 4
    assert _run(attach)[0] == 4  # one round of the cycle later

    def session() -> str:
        world = build_user(0, PID, "")
        out = _say(world, "bp ucrtbase!malloc")
        for _ in range(2):
            out += _run(world)[1].text + _say(world, "k") + _say(world, "r") + _say(world, "p")
        return out

    assert session() == session()


def test_a_pass_count_and_a_one_shot(attach: World) -> None:
    _say(attach, "bp ntdll!RtlFreeHeap 2")
    assert _run(attach)[0] == 7  # passed once (event 3), broken at the next round's free
    _say(attach, "bc 0")
    _say(attach, "bp /1 ntdll!RtlAllocateHeap")
    assert _run(attach)[0] == 2
    assert attach.breakpoints == []


def test_ctrl_c_after_a_stop_puts_the_stack_back(attach: World) -> None:
    _say(attach, "bp ntdll!RtlAllocateHeap")
    worker = attach.processes[0].threads[1]
    before = _say(attach, "~1k")
    _run(attach)
    assert "ntdll!RtlAllocateHeap" in _say(attach, "k")
    user_activity.go(attach)
    text = user_activity.break_in(attach)
    assert text.startswith("(1a2c.5d0): Break instruction exception - code 80000003 (first chance)\n")
    assert attach.processes[0].threads[1] is worker
    assert _say(attach, "~1k") == before


def test_a_launch_stops_in_wmain_before_its_fault() -> None:
    world = build_user(0, PID, "app.exe")
    _say(world, "bp app!wmain")
    user_activity.go(world)
    stop = user_activity.play(world)
    assert (
        stop.stopped
        and "ModLoad: 00007ffc`80e20000 00007ffc`80ed2000   C:\\Windows\\System32\\KERNEL32.DLL\n" in stop.text
    )
    assert stop.text.endswith(
        "Breakpoint 0 hit\napp!wmain:\n00007ff7`91d81000 48895c2408      mov     qword ptr [rsp+8],rbx\n"
    )
    assert _say(world, "k").splitlines()[1].split()[:2] == ["00", "00000000`006ff8d8"]
    user_activity.go(world)
    fault = user_activity.play(world)
    assert "Access violation - code c0000005 (first chance)" in fault.text
    assert fault.text.endswith(
        "app!wmain+0x14:\n"
        "00007ff7`91d81014 45891b          mov     dword ptr [r11],r11d ds:00000000`00000000=????????\n"
    )


def test_g_address_stops_there_without_a_breakpoint_number(attach: World) -> None:
    from kdmcp.sim.world import activity

    activity.go_to(attach, ["ucrtbase!wprintf"])  # what the debugger does for "g ucrtbase!wprintf"
    events, stop = _run(attach)
    assert events == 2
    assert stop.text == "ucrtbase!wprintf:\n00007ffc`7f44f2a0 48895c2408      mov     qword ptr [rsp+8],rbx\n"
    assert attach.run.go_to == []  # the one-time breakpoint is gone
