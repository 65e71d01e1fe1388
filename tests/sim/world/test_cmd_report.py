"""``!analyze``, ``vertarget``, ``version``, ``.lastevent`` and the D1 crash state
(kdmcp/sim/world/cmd_report.py, cmd_analyze.py): figures from the world, records from the parser.
"""

from __future__ import annotations

import pytest

from kdmcp.parse import parse
from kdmcp.sim.world import build
from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world.cmd_report import COMMAND_LINE_TOKEN, crash
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World


@pytest.fixture(scope="module")
def live() -> World:
    return build()


@pytest.fixture(scope="module")
def crashed() -> World:
    w = build()
    crash(w)
    return w


def test_vertarget_from_the_world(live: World) -> None:
    out = answer(live, "vertarget")
    assert out == (
        "Windows 10 Kernel Version 19041 MP (4 procs) Free x64\n"
        "Product: WinNt, suite: TerminalServer SingleUserTS\n"
        "Edition build lab: 19041.1.amd64fre.vb_release.191206-1406\n"
        "Machine Name:\n"
        "Kernel base = 0xfffff800`62600000 PsLoadedModuleList = 0xfffff800`6322a230\n"
        "Debug session time: Mon Mar  4 10:15:42.118 2024 (UTC + 0:00)\n"
        "System Uptime: 0 days 0:02:31.407\n"
    )
    r = parse("vertarget", out)
    assert (r.kind, r.processors, r.kernel_base) == ("target", len(live.processors), "0xfffff80062600000")
    # the build lab is the string in nt's memory (da nt!NtBuildLabEx)
    lab = live.space().read(live.evaluate("nt!NtBuildLabEx"), 39)
    assert lab is not None and r.build_lab == lab.decode()
    assert answer(build(processors=2), "vertarget").startswith("Windows 10 Kernel Version 19041 MP (2 procs)")  # type: ignore[union-attr]


def test_version_starts_with_the_target_and_names_the_debugger(live: World) -> None:
    out = answer(live, "version") or ""
    assert out.startswith(answer(live, "vertarget") + "\nMicrosoft (R) Windows Debugger Version 10.0.26100.1 AMD64\n")  # type: ignore[operator]
    assert f"command line: '{COMMAND_LINE_TOKEN}'  Debugger Process 0x2F4C \n" in out
    assert out.endswith(
        "    kdexts: image 10.0.26100.1, API 1.0.0, \n"
        "        [path: C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x64\\WINXP\\kdexts.dll]\n"
    )
    assert parse("version", out).kind == "target"


def test_lastevent_after_the_break_in(live: World) -> None:
    out = answer(live, ".lastevent") or ""
    assert out == (
        "Last event: Break instruction exception - code 80000003 (first chance)\n"
        "  debugger time: Mon Mar  4 10:15:42.118 2024 (UTC + 0:00)\n"
    )
    r = parse(".lastevent", out)
    assert r.kind == "exception_record" and r.code == "0x80000003"


def test_analyze_on_the_live_break_in_names_the_break_routine(live: World) -> None:
    out = answer(live, "!analyze -v") or ""
    assert "\nUnknown bugcheck code (0)\nUnknown bugcheck description\nArguments:\nArg1: 0000000000000000\n" in out
    r = parse("!analyze -v", out)
    assert r.kind == "analysis" and r.mode == "kernel"
    assert (r.module_name, r.image_name, r.symbol_name) == ("nt", "ntkrnlmp.exe", "nt!DbgBreakPointWithStatus+0")
    assert r.process_name == live.current_process().image
    t = live.current_thread()
    assert [f.child_sp for f in r.stack] == [f"0x{f.child_sp:016x}" for f in t.frames]
    assert out.endswith("Followup:     MachineOwner\n---------\n\n")


def test_analyze_after_the_crash_is_the_d1_of_myfault(crashed: World) -> None:
    out = answer(crashed, "!analyze -v") or ""
    r = parse("!analyze -v", out)
    assert r.kind == "analysis" and r.bugcheck is not None
    assert r.bugcheck.code == "0xd1" and r.bugcheck.name == "DRIVER_IRQL_NOT_LESS_OR_EQUAL"
    myfault = crashed.symbols.module("myfault")
    assert myfault is not None
    fault = myfault.base + 0x1981
    assert r.bugcheck.args[3] == f"0x{fault:016x}"
    assert (r.module_name, r.image_name, r.symbol_name) == ("myfault", "myfault.sys", "myfault+1981")
    assert r.failure_bucket_id == "AV_myfault!unknown_function"
    assert r.key_values["Failure.Exception.IP.Address"] == f"{fault:#x}"
    # the faulting instruction is the one in myfault's memory
    assert crashed.space().read(fault, 2) == bytes.fromhex("8b03")
    assert "fffff800`60da1981 8b03            mov     eax,dword ptr [rbx] ds:00000000`00000000=????????\n" in out
    assert r.trap_frame is not None
    # the thread and process: processor 0's, the client's
    t = crashed.current_thread()
    assert t.address == cat.CLIENT_THREAD == crashed.processors[0].current_thread and crashed.cpu == 0
    proc = crashed.owner(t)
    assert r.process_name == proc.image == "notmyfault64.exe"
    assert r.stack_command == f".process /r /p 0x{proc.address:016x}; .thread 0x{t.address:016x} ; kb"
    # STACK_TEXT is the thread's frames: the canned D1 stack
    names = [f.call_site for f in r.stack]
    assert names[:4] == ["nt!KeBugCheckEx", "nt!KiBugCheckDispatch+0x69", "nt!KiPageFault+0x469", "myfault+0x1981"]
    assert [f.child_sp for f in r.stack] == [f"0x{f.child_sp:016x}" for f in t.frames]
    assert crashed.registers()["rip"] == crashed.evaluate("nt!KeBugCheckEx")
    # the stack's memory holds the return addresses, and KeBugCheckEx's home slots its arguments
    assert crashed.space().u64(t.frames[1].child_sp - 8) == t.frames[1].site
    assert crashed.space().u64(t.frames[0].child_sp + 8) == 0xD1


def test_short_analyze(crashed: World) -> None:
    out = answer(crashed, "!analyze") or ""
    assert "BugCheck D1, {ffffb28d4aaa8010, 2, 0, fffff80060da1981}\n\n" in out
    assert "Probably caused by : myfault.sys ( myfault+1981 )\n" in out
    r = parse("!analyze", out)
    assert r.kind == "analysis" and r.image_name == "myfault.sys"


def test_reports_are_deterministic() -> None:
    def texts() -> str:
        w = build()
        out = "".join(answer(w, c) or "" for c in ("!analyze -v", "vertarget", ".lastevent"))
        crash(w)
        return out + "".join(answer(w, c) or "" for c in ("!analyze -v", "!analyze", ".lastevent"))

    assert texts() == texts()
