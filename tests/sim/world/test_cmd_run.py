"""Breakpoints, the running world and the steps (kdmcp/sim/world/cmd_run.py, activity.py).

Fast tier: the world is driven directly -- ``answer`` for the commands, :func:`activity.play`
for the target running -- and every stop is checked against the other views of it (the
thread's frames, its registers, the processor's current thread, the stack's memory, the code's
bytes), and ``bl`` through the project's parser.
"""

from __future__ import annotations

import pytest

from kdmcp.parse import parse
from kdmcp.sim.world import activity, build
from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world import drivers as drv
from kdmcp.sim.world.activity import Stop
from kdmcp.sim.world.code import decode, fmt_addr
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World


@pytest.fixture
def world() -> World:
    """A fresh world per test: breakpoints and stops change it."""
    return build()


def run_until_stop(world: World, limit: int = 200) -> tuple[str, Stop]:
    printed = ""
    for _ in range(limit):
        text, stop = activity.play(world)
        printed += text
        if stop is not None:
            return printed, stop
    raise AssertionError("no breakpoint hit")


def test_bp_then_the_running_world_stops_in_nt_create_file(world: World) -> None:
    assert answer(world, "bp nt!NtCreateFile") == ""
    address = world.evaluate("nt!NtCreateFile")
    _, stop = run_until_stop(world)
    t = world.current_thread()
    # the stop as kd prints it (corpus misc/05): the number, the label, the instruction there
    data = world.space().read(address, 16)
    assert data is not None
    d = decode(data, address, world.name)
    assert d is not None
    assert stop.text == f"Breakpoint 0 hit\nnt!NtCreateFile:\n{fmt_addr(address)} {d.data.hex():<15} {d.text}\n"
    # the hitting thread: frame 0 at the routine's entry, rip there, current on its processor
    assert t.frames[0].site == address == world.registers()["rip"]
    assert world.registers()["rsp"] == t.frames[0].child_sp
    assert world.processors[world.cpu].current_thread == t.address
    assert t.state == "RUNNING" and t.cpu == world.cpu
    assert world.owner(t).image == "svchost.exe"
    assert [world.name(f.site) for f in t.frames[:2]] == ["nt!NtCreateFile", "nt!KiSystemServiceCopyEnd+0x25"]
    assert world.breakpoints[0].hits == 1
    # the stack holds each return address where the callee's frame ends (dps @rsp agrees with k)
    for nxt in t.frames[1:]:
        if t.stack_limit <= nxt.child_sp - 8 < t.stack_base:
            assert world.space().u64(nxt.child_sp - 8) == nxt.site
    last = answer(world, ".lastevent") or ""
    assert last == "Last event: Hit breakpoint 0\n  debugger time: Mon Mar  4 10:15:42.168 2024 (UTC + 0:00)\n"
    assert parse(".lastevent", last).description == "Hit breakpoint 0"


def test_the_ioctl_event_reaches_myfaults_dispatch_routine_from_its_driver_object(world: World) -> None:
    d = world.driver("myfault")
    assert d is not None
    dispatch = world.space().u64(d.address + 0x70 + 8 * 0xE)  # MajorFunction[IRP_MJ_DEVICE_CONTROL]
    assert dispatch == world.evaluate("myfault+0x1e00")
    answer(world, f"bp {dispatch:x}")
    printed, stop = run_until_stop(world)
    assert stop.text.startswith("Breakpoint 0 hit\nmyfault+0x1e00:\n")
    assert printed == ""  # the driver had not printed yet: the stop is at its entry
    t = world.current_thread()
    assert t.address == cat.CLIENT_THREAD and world.cpu == 1
    names = [world.name(f.site) for f in t.frames[:5]]
    assert names == [
        "myfault+0x1e00",
        "nt!IofCallDriver+0x55",
        "nt!IopSynchronousServiceTail+0x1a8",
        "nt!IopXxxControlFile+0x5e5",
        "nt!NtDeviceIoControlFile+0x56",
    ]
    # each return address follows a call: IofCallDriver's through the dispatch table
    call = decode(world.space().read(world.evaluate("nt!IofCallDriver+0x51"), 16) or b"", 0, world.name)
    assert call is not None and call.text == "call    qword ptr [rax+rcx*8+70h]"
    tail = decode(world.space().read(world.evaluate("nt!IopSynchronousServiceTail+0x1a3"), 16) or b"", 0, world.name)
    assert tail is not None and tail.is_call
    # the IRP in rdx carries the event's control code, as the DbgPrint line will say
    regs = world.registers()
    assert regs["rdx"] == world.irps[0].address and regs["r8"] in drv.IOCTLS
    assert world.irps[0].stacks[0].args[2] == regs["r8"]
    # the rest of the cycle prints the driver's line
    activity.resume(world)
    answer(world, "bc *")
    printed = "".join(activity.play(world)[0] for _ in range(len(activity.events(world))))
    assert "myfault: IOCTL 0x83362000 received\n" in printed


def test_resuming_puts_every_thread_back(world: World) -> None:
    before = {t.address: (list(t.frames), dict(t.registers), t.state) for t in world.all_threads()}
    current = [p.current_thread for p in world.processors]
    answer(world, "bp nt!ExAllocatePoolWithTag")
    run_until_stop(world)
    answer(world, "p")
    activity.resume(world)
    after = {t.address: (list(t.frames), dict(t.registers), t.state) for t in world.all_threads()}
    assert after == before
    assert [p.current_thread for p in world.processors] == current and world.cpu == 0
    activity.break_in(world)
    assert world.cpu == 0 and world.current_thread().frames[0].site == world.evaluate("nt!DbgBreakPointWithStatus")


def test_bl_lists_in_kds_kernel_layout_and_parses_to_breakpoint_records(world: World) -> None:
    answer(world, "bp nt!NtCreateFile")
    answer(world, "bu foo!bar")
    answer(world, 'bp myfault+0x1e00 3 "k; g"')
    answer(world, "ba w 8 ffffe70f`2d53a080")
    answer(world, "bd 1")
    out = answer(world, "bl")
    assert out is not None
    assert out.splitlines()[0] == "     0 e Disable Clear  fffff800`62c3a1e0     0001 (0001) nt!NtCreateFile"
    assert out.splitlines()[1] == "     1 d Enable Clear u                      0001 (0001) (foo!bar)"
    r = parse("bl", out)
    assert r.kind == "breakpoints"
    b0, b1, b2, b3 = r.breakpoints
    assert (b0.id, b0.enabled, b0.address, b0.symbol) == (0, True, "0xfffff80062c3a1e0", "nt!NtCreateFile")
    assert (b1.enabled, b1.unresolved, b1.address, b1.symbol) == (False, True, None, "foo!bar")
    assert (b2.pass_count, b2.initial_pass_count, b2.symbol, b2.command) == (3, 3, "myfault+0x1e00", "k; g")
    assert (b3.access, b3.size, b3.address) == ("w", 8, "0xffffe70f2d53a080")
    assert answer(world, "bp nt!NtCreateFile") == "breakpoint 0 redefined\n"
    answer(world, "bc 0 2")
    assert [bp.id for bp in world.breakpoints] == [1, 3]
    answer(world, "bc *")
    assert answer(world, "bl") == "" and parse("bl", "").breakpoints == []


def test_bp_on_a_name_kd_cannot_resolve_is_deferred(world: World) -> None:
    out = answer(world, "bp securekernel!IumInvokeSecureService")
    assert out == "Bp expression 'securekernel!IumInvokeSecureService' could not be resolved, adding deferred bp\n"
    r = parse("bp securekernel!IumInvokeSecureService", out or "")
    assert r.kind == "breakpoints" and r.warnings == [out.rstrip("\n")]
    assert (answer(world, "bp nonsense+") or "").startswith("Couldn't resolve error at 'nonsense")


def test_pass_count_lets_the_breakpoint_be_passed_by_then_breaks(world: World) -> None:
    answer(world, "bp nt!NtCreateFile 3")
    names = [e.name for e in activity.events(world)]
    first = names.index("NtCreateFile")
    second = names.index("NtCreateFile", first + 1)
    for _ in range(first + 1):
        assert activity.play(world)[1] is None
    assert "0002 (0003)" in (answer(world, "bl") or "")  # passed by once (bl: remaining (initial))
    for _ in range(second - first):
        assert activity.play(world)[1] is None
    assert "0001 (0003)" in (answer(world, "bl") or "")
    run_until_stop(world, second - first)  # the third time it breaks
    assert world.breakpoints[0].hits == 1 and "0001 (0003)" in (answer(world, "bl") or "")


def test_disabled_and_data_breakpoints_do_not_stop(world: World) -> None:
    answer(world, "bp nt!NtCreateFile")
    answer(world, "bd 0")
    answer(world, "ba r 4 nt!IofCallDriver")
    for _ in range(3 * len(activity.events(world))):
        assert activity.play(world)[1] is None
    answer(world, "ba e 1 nt!IofCallDriver")  # an execute breakpoint is a code breakpoint
    _, stop = run_until_stop(world)
    assert stop.breakpoint == 2 and world.current_thread().frames[0].site == world.evaluate("nt!IofCallDriver")


def test_the_clock_advances_while_the_target_runs(world: World) -> None:
    start = world.uptime_ms
    for _ in range(40):
        activity.play(world)
    assert world.uptime_ms == start + 40 * activity.EVENT_MS
    assert "System Uptime: 0 days 0:02:32.407\n" in (answer(world, "vertarget") or "")
    assert parse("vertarget", answer(world, "vertarget") or "").uptime_seconds == pytest.approx(152.407)


def test_step_over_into_to_return_and_up(world: World) -> None:
    # the break-in: p over the int 3, then the ret returns to KdCheckForDebugBreak
    out = answer(world, "p") or ""
    assert out.endswith("nt!DbgBreakPointWithStatus+0x1:\nfffff800`62a05c21 c3              ret\n")
    assert out.startswith("rax=0000000000000000 rbx=fffff80062f25180 rcx=0000000000000001\n")
    assert "iopl=0         nv up ei pl zr na pe nc\n" in out  # efl 246: PF set is "pe"
    assert parse("p", out).context is not None
    t = world.current_thread()
    caller = t.frames[1]
    out = answer(world, "p") or ""
    assert world.registers()["rip"] == caller.site and world.registers()["rsp"] == caller.child_sp
    assert t.frames[0].site == caller.site and out.splitlines()[-2] == "nt!KdCheckForDebugBreak+0x72:"
    # t into a call pushes a frame; gu returns to the call's return address
    answer(world, "bp nt!NtCreateFile")
    run_until_stop(world)
    t = world.current_thread()
    depth = len(t.frames)
    call_site = world.evaluate("nt!NtCreateFile+0x3f")
    while world.registers()["rip"] != call_site:
        answer(world, "p")
    answer(world, "t")
    assert world.registers()["rip"] == world.evaluate("nt!IoCreateFileEx")
    assert len(t.frames) == depth + 1 and t.frames[1].site == world.evaluate("nt!NtCreateFile+0x44")
    assert world.space().u64(world.registers()["rsp"]) == t.frames[1].site  # the pushed return address
    out = answer(world, "gu") or ""
    assert world.registers()["rip"] == world.evaluate("nt!NtCreateFile+0x44") and len(t.frames) == depth
    assert "nt!NtCreateFile+0x44:\n" in out
    out = answer(world, "pt") or ""
    d = decode(world.space().read(world.registers()["rip"], 16) or b"", 0, world.name)
    assert d is not None and d.is_return and out.splitlines()[-1].endswith(" ret")


def test_the_same_commands_give_the_same_bytes() -> None:
    def session() -> str:
        w = build()
        out = ""
        for line in ("bp nt!ExAllocatePoolWithTag", "bp myfault+0x1e00 2", "bl"):
            out += answer(w, line) or ""
        for _ in range(3):
            printed, stop = run_until_stop(w)
            out += printed + stop.text + (answer(w, "p") or "") + (answer(w, ".lastevent") or "")
            activity.resume(w)
        return out + (answer(w, "bl") or "") + (answer(w, "vertarget") or "")

    assert session() == session()


def test_a_scenarios_scripted_breakpoint_stops_the_world_in_nt_create_file(world: World) -> None:
    text = activity.scripted_stop(world, 0)
    address = world.evaluate("nt!NtCreateFile")
    assert text.startswith("Breakpoint 0 hit\nnt!NtCreateFile:\nfffff800`62c3a1e0 ")
    assert world.cpu == 0 and world.current_thread().frames[0].site == address == world.registers()["rip"]
    assert (answer(world, ".lastevent") or "").startswith("Last event: Hit breakpoint 0\n")


def test_bp_with_its_id_run_into_the_command(world: World) -> None:
    assert answer(world, "bp5 nt!NtCreateFile") == ""
    (row,) = parse("bl", answer(world, "bl") or "").breakpoints
    assert (row.id, row.symbol) == (5, "nt!NtCreateFile")
    answer(world, "bp5 nt!IofCallDriver")  # the same id again: the breakpoint is replaced
    assert [(bp.id, bp.expression) for bp in world.breakpoints] == [(5, "nt!IofCallDriver")]


def test_a_stop_on_another_processor_freezes_processor_0(world: World) -> None:
    answer(world, "bp nt!NtCreateFile")
    run_until_stop(world)
    assert world.cpu == 2
    idle = world.thread(world.processors[0].idle_thread)
    assert idle is not None and world.processors[0].current_thread == idle.address
    assert world.name(idle.frames[0].site) == "nt!KiFreezeTargetExecution+0x1b9"
    assert world.registers(idle)["rip"] == idle.frames[0].site
    activity.break_in(world)
    assert world.name(idle.frames[0].site) == "nt!DbgBreakPointWithStatus"


def test_a_machine_in_a_bugcheck_runs_no_events(world: World) -> None:
    from kdmcp.sim.world.cmd_report import crash

    crash(world)
    answer(world, "bp nt!NtCreateFile")
    start = world.uptime_ms
    assert all(activity.play(world) == ("", None) for _ in range(50))
    assert world.uptime_ms == start
