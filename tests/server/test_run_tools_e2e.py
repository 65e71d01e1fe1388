"""End to end over stdio: the run-control tools on the simulated kernel (issue 15).

``kd-mcp --simulate`` driven by the SDK's stdio client: breakpoints set, listed and cleared;
``continue_go`` then ``wait_for_stop`` reporting the breakpoint at its symbol; steps that move
``location``; ``run_to`` hit and still running; a timed-out wait that is a result; the
refusals (a dump, a policy, arguments). The simulated machine's event cycle
(kdmcp/sim/world/activity.py) calls nt!NtCreateFile within the first events after ``g``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.server.test_targets_e2e import ROOT, Call, stdio_server

pytestmark = [pytest.mark.anyio, pytest.mark.process]


@asynccontextmanager
async def kernel(tmp_path: Path, config: str | None = None) -> AsyncIterator[Call]:
    """A server with one simulated KDNET session, broken in at its initial break."""
    async with stdio_server(tmp_path, config) as call:
        started = await call("start_from_state", initial_break=True)
        assert started["state"] == "broken", started
        try:
            yield call
        finally:
            await call("stop_kd")


async def test_a_breakpoint_then_continue_go_then_wait_for_stop_reports_it_at_its_symbol(tmp_path):
    async with kernel(tmp_path) as call:
        bp = await call("set_breakpoint", location="nt!NtCreateFile")
        assert bp["breakpoint"]["id"] == 0 and bp["breakpoint"]["symbol"] == "nt!NtCreateFile"
        assert bp["breakpoint"]["address"] == "0xfffff80062c3a1e0" and bp["breakpoint"]["kind"] == "code"
        assert (await call("continue_go"))["state"] in ("running", "broken")
        stop = await call("wait_for_stop", timeout_s=20)
        assert stop["state"] == "broken"
        assert stop["stop"]["reason"] == "breakpoint" and stop["stop"]["breakpoint"] == 0
        assert stop["location"]["symbol"] == "nt!NtCreateFile" and stop["location"]["ip"] == "0xfffff80062c3a1e0"
        assert stop["location"]["thread"].startswith("0xffff") and "processor" in stop["location"]
        listed = await call("breakpoints")
        assert [(b["id"], b["hits"]) for b in listed["breakpoints"]] == [(0, 1)]
        # asked again at a prompt, the wait answers at once with the same stop
        again = await call("wait_for_stop", timeout_s=20)
        assert again["stop"]["seq"] == stop["stop"]["seq"] and "waited_s" in again


async def test_steps_move_the_location(tmp_path):
    async with kernel(tmp_path) as call:
        await call("set_breakpoint", location="nt!NtCreateFile")
        await call("continue_go")
        await call("wait_for_stop", timeout_s=20)
        before = (await call("location"))["location"]
        over = await call("step", mode="over")
        assert over["state"] == "broken" and over["stop"]["reason"] == "step"
        assert over["location"]["symbol"] == "nt!NtCreateFile+0x5" and over["location"]["ip"] != before["ip"]
        assert (await call("location"))["location"] == over["location"]
        into = await call("step", mode="into", count=3)
        assert into["location"]["symbol"] == "nt!NtCreateFile+0xd"
        out = await call("step", mode="out")
        assert out["location"]["symbol"] == "nt!KiSystemServiceCopyEnd+0x25"
        # the step event, never DbgPrint (issue 15: "gu reported the step-out location as a dbgprint event")
        assert [e["kind"] for e in out["events"]] == ["step"]


async def test_gu_through_continue_go_is_a_step_event_not_dbgprint(tmp_path):
    async with kernel(tmp_path) as call:
        await call("set_breakpoint", location="nt!NtCreateFile")
        await call("continue_go")
        await call("wait_for_stop", timeout_s=20)
        went = await call("continue_go", command="gu")
        stop = await call("wait_for_stop", timeout_s=20)
        kinds = [e["kind"] for e in went.get("events", []) + stop.get("events", [])]
        assert kinds == ["step"] and stop["stop"]["reason"] == "step", kinds
        assert stop["location"]["symbol"] == "nt!KiSystemServiceCopyEnd+0x25"


async def test_run_to_hits_its_location_and_says_running_when_nothing_reaches_it(tmp_path):
    async with kernel(tmp_path) as call:
        hit = await call("run_to", location="nt!NtCreateFile", timeout_s=20)
        assert hit["outcome"] == "hit" and hit["target"] == "0xfffff80062c3a1e0"
        assert hit["location"]["symbol"] == "nt!NtCreateFile"
        assert "breakpoints" not in await call("breakpoints")  # g's breakpoint is one-time: bl lists nothing
        # nt!KeBugCheckEx is never called by the running machine: the run goes on
        running = await call("run_to", location="nt!KeBugCheckEx", timeout_s=0.3)
        assert running["outcome"] == "running" and running["state"] == "running" and "location" not in running
        assert (await call("break_in"))["state"] == "broken"


async def test_run_to_stops_elsewhere_at_a_breakpoint_on_the_way(tmp_path):
    async with kernel(tmp_path) as call:
        await call("set_breakpoint", location="nt!NtCreateFile")
        elsewhere = await call("run_to", location="nt!KeBugCheckEx", timeout_s=20)
        assert elsewhere["outcome"] == "stopped_elsewhere"
        assert elsewhere["stop"]["reason"] == "breakpoint" and elsewhere["location"]["symbol"] == "nt!NtCreateFile"


async def test_a_wait_that_times_out_is_running_not_an_error(tmp_path):
    async with kernel(tmp_path) as call:
        await call("continue_go")
        waited = await call("wait_for_stop", timeout_s=0.2)
        assert not waited["_is_error"] and waited["state"] == "running" and waited["waited_s"] >= 0.2
        assert "stop" not in waited and "location" not in waited
        assert (await call("break_in"))["state"] == "broken"
        stopped = await call("wait_for_stop", timeout_s=5)
        assert stopped["stop"]["reason"] == "break_in"


async def test_breakpoint_kinds_and_clearing(tmp_path):
    async with kernel(tmp_path) as call:
        deferred = await call("set_breakpoint", location="mydrv!DriverEntry", kind="deferred")
        assert deferred["breakpoint"] | {} == {"id": 0, "state": "enabled", "kind": "deferred",
                                               "symbol": "mydrv!DriverEntry", "unresolved": True}
        conditional = await call("set_breakpoint", location="nt!NtReadFile", condition="@rcx==0", one_shot=True,
                                 command="r rcx")
        assert conditional["command"] == 'bp /1 nt!NtReadFile ".if (@rcx==0) {r rcx} .else {gc}"'
        assert conditional["breakpoint"]["condition"] == "@rcx==0" and conditional["breakpoint"]["one_shot"]
        assert conditional["breakpoint"]["command"] == "r rcx"
        data = await call("set_breakpoint", location="nt!PsInitialSystemProcess", kind="data", access="w", size=4)
        assert data["breakpoint"]["kind"] == "data" and data["breakpoint"]["id"] == 2
        listed = await call("breakpoints")
        assert [b["id"] for b in listed["breakpoints"]] == [0, 1, 2]
        cleared = await call("clear_breakpoints", ids=[1, 9])
        assert cleared["cleared"] == [1] and cleared["not_found"] == [9]
        assert [b["id"] for b in cleared["remaining"]] == [0, 2]
        everything = await call("clear_breakpoints", all=True)
        assert everything["cleared"] == [0, 2] and "remaining" not in everything


async def test_bad_arguments_are_refused_before_anything_runs(tmp_path):
    async with kernel(tmp_path) as call:
        for args in ({"location": "nt!NtCreateFile L100"}, {"location": "x;g"},
                     {"location": "nt!NtCreateFile", "condition": 'a" ; .shell'},
                     {"location": "nt!NtCreateFile", "command": 'k"; .shell x; "'},
                     {"location": "nt!NtCreateFile", "kind": "data", "access": "e", "size": 4},
                     {"location": "nt!NtCreateFile", "process": "not-an-address"}):
            refused = await call("set_breakpoint", **args)
            assert refused["_is_error"] and refused["category"] == "invalid_argument", (args, refused)
        assert (await call("clear_breakpoints"))["category"] == "invalid_argument"
        assert (await call("clear_breakpoints", ids=[0], all=True))["category"] == "invalid_argument"
        assert (await call("step", count=0))["category"] == "invalid_argument"
        assert (await call("wait_for_stop", timeout_s=0))["category"] == "invalid_argument"
        # a host command in a breakpoint's command string is the policy's to refuse
        denied = await call("set_breakpoint", location="nt!NtCreateFile", command=".shell dir")
        assert denied["category"] == "policy_denied"
        assert "breakpoints" not in await call("breakpoints")  # nothing was set on the way


async def test_a_read_only_policy_refuses_run_control_but_reads(tmp_path):
    async with kernel(tmp_path, "policy: read_only\n") as call:
        for name, args in (("set_breakpoint", {"location": "nt!NtCreateFile"}), ("step", {}),
                           ("run_to", {"location": "nt!NtCreateFile"}), ("clear_breakpoints", {"all": True})):
            assert (await call(name, **args))["category"] == "policy_denied", name
        assert (await call("location"))["location"]["symbol"] == "nt!DbgBreakPointWithStatus"
        assert (await call("breakpoints"))["state"] == "broken"


async def test_a_dump_refuses_breakpoints_and_steps_but_has_a_location(tmp_path):
    async with stdio_server(tmp_path) as call:
        opened = await call("open_dump", path=str(ROOT / "fixtures" / "dumps" / "kernel-header-only.dmp"))
        assert not opened["_is_error"], opened
        for name, args in (("set_breakpoint", {"location": "nt!NtCreateFile"}), ("step", {}),
                           ("run_to", {"location": "nt!NtCreateFile"})):
            refused = await call(name, **args)
            assert refused["category"] == "invalid_argument" and "never runs" in refused["message"], refused
        await call("stop_kd")


async def test_a_deferred_breakpoint_resolves_when_its_module_loads(tmp_path):
    # sampledrv.sys is not loaded at connect; the simulated machine loads it on its 3rd event
    # after connect and calls its DriverEntry (docs/simulator.md, "A driver that loads")
    async with kernel(tmp_path) as call:
        deferred = (await call("set_breakpoint", location="sampledrv!DriverEntry"))["breakpoint"]
        assert deferred["unresolved"] and deferred["kind"] == "deferred" and "address" not in deferred
        await call("continue_go")
        stop = await call("wait_for_stop", timeout_s=20)
        assert stop["stop"]["reason"] == "breakpoint" and stop["stop"]["breakpoint"] == deferred["id"]
        assert stop["location"]["symbol"] == "sampledrv!DriverEntry"
        resolved = (await call("breakpoints"))["breakpoints"][0]
        assert resolved["address"] == "0xfffff80060db5010" and "unresolved" not in resolved
        assert resolved["kind"] == "deferred" and resolved["hits"] == 1
        frames = (await call("backtrace"))["record"]["frames"]
        assert any("IopLoadDriver" in (f.get("function") or "") for f in frames), frames


async def test_run_control_in_a_user_mode_process(tmp_path):
    # the simulated process's worker thread calls ucrtbase!malloc -> ntdll!RtlAllocateHeap first
    # after g (kdmcp/sim/world/user_activity.py)
    async with stdio_server(tmp_path, "allow_attach: true\n") as call:
        attached = await call("attach_process", pid=1234)
        assert attached["state"] == "broken", attached
        bp = (await call("set_breakpoint", location="ntdll!RtlAllocateHeap"))["breakpoint"]
        assert bp["id"] == 0 and bp["address"] == "0x00007ffc81a3a7f0" and "thread" not in bp
        refused = await call("set_breakpoint", location="ntdll!RtlFreeHeap", process="ffffe70f2d1d2080")
        assert refused["category"] == "invalid_argument" and "kernel" in refused["message"]
        await call("continue_go")
        stop = await call("wait_for_stop", timeout_s=20)
        assert stop["stop"]["breakpoint"] == 0 and stop["location"]["symbol"] == "ntdll!RtlAllocateHeap"
        assert stop["location"]["thread_index"] == 1 and "." in stop["location"]["thread"]
        over = await call("step")
        assert over["location"]["symbol"] == "ntdll!RtlAllocateHeap+0x5"
        out = await call("step", mode="out")
        assert out["location"]["symbol"] == "ucrtbase!malloc+0x19"
        hit = await call("run_to", location="ucrtbase!wprintf", timeout_s=20)
        assert hit["outcome"] == "hit" and hit["location"]["symbol"] == "ucrtbase!wprintf"
        await call("stop_kd")
