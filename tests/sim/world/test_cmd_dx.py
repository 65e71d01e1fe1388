"""``dx`` from the world: the data model's sessions, processes and threads, typed objects read from
its memory, casts and arithmetic, in kd's spelling (families/dx) and agreeing with the world model."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kdmcp.parse import parse
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World


def dx(world: World, args: str) -> str:
    out = answer(world, f"dx {args}")
    assert out is not None
    return out


def test_current_process(world: World) -> None:
    p = world.current_process()
    assert dx(world, "@$curprocess").splitlines() == [
        f"@$curprocess                 : {p.image} [Switch To]",
        "    KernelObject     [Type: _EPROCESS]",
        f"    Name             : {p.image}",
        f"    Id               : 0x{p.pid:x}",
        "    Handle           : 0xf0f0f0f0",
        "    Threads         ",
        "    Modules         ",
        "    Environment     ",
        "    Devices         ",
        "    Io              ",
    ]
    assert dx(world, "-r0 @$curprocess") == f"@$curprocess                 : {p.image} [Switch To]\n"


def test_current_thread(world: World) -> None:
    t = world.current_thread()
    site = t.frames[0].site
    lines = dx(world, "@$curthread").splitlines()
    assert lines[0] == f"@$curthread                 : {world.name(site)} ({fmt_addr(site)})  [Switch To]"
    assert lines[1:3] == ["    KernelObject     [Type: _ETHREAD]", f"    Id               : 0x{t.tid:x}"]
    frames = dx(world, "@$curthread.Stack.Frames").splitlines()
    assert frames[1] == f"    [0x0]            : {world.name(site)}"
    assert len(frames) == 1 + len(t.frames)


def test_session_processes_are_the_world_processes(world: World) -> None:
    lines = dx(world, "@$cursession.Processes").splitlines()
    assert lines[0] == "@$cursession.Processes                "
    # the Idle process first, as WinDbg lists it (families/dx/02), then ActiveProcessLinks order
    expected = [world.idle_process, *world.processes]
    assert lines[1:] == [f"    {f'[0x{p.pid:x}]':<16} : {p.image} [Switch To]" for p in expected]
    assert lines[2] == "    [0x4]            : System [Switch To]"
    same = dx(world, "Debugger.Sessions[0].Processes").splitlines()[1:]
    assert same == lines[1:]


def test_indexing_by_pid_decimal_and_hex(world: World) -> None:
    for p in world.processes[:6]:
        out = dx(world, f"@$cursession.Processes[{p.pid}]").splitlines()
        assert out[0] == f"@$cursession.Processes[{p.pid}]                 : {p.image} [Switch To]"
        assert f"    Id               : 0x{p.pid:x}" in out
        assert (
            dx(world, f"@$cursession.Processes[0x{p.pid:x}].Id")
            == f"@$cursession.Processes[0x{p.pid:x}].Id : 0x{p.pid:x}\n"
        )
    missing = dx(world, "@$cursession.Processes[99999]")
    assert missing.startswith("Error: The operation attempted to access data outside the valid range")


def test_threads_of_a_process(world: World) -> None:
    system = world.processes[0]
    lines = dx(world, "-r1 @$cursession.Processes[4].Threads").splitlines()
    assert len(lines) == 1 + len(system.threads)
    for line, t in zip(lines[1:], system.threads, strict=True):
        site = t.frames[0].site
        assert line == f"    {f'[0x{t.tid:x}]':<16} : {world.name(site)} ({fmt_addr(site)})  [Switch To]"
    count = dx(world, "@$cursession.Processes[4].Threads.Count()")
    assert count == f"@$cursession.Processes[4].Threads.Count() : 0x{len(system.threads):x}\n"


def test_kernel_object_reads_the_same_memory_as_dt(world: World) -> None:
    for p in world.processes:
        out = dx(world, f"@$cursession.Processes[{p.pid}].KernelObject.UniqueProcessId")
        assert out == f"@$cursession.Processes[{p.pid}].KernelObject.UniqueProcessId : 0x{p.pid:x} [Type: void *]\n"
        dt = answer(world, f"dt nt!_EPROCESS {p.address:x} UniqueProcessId")
        assert dt is not None and dt.endswith(f"`{p.pid:08x} Void\n")
    cur = world.current_process()
    assert dx(world, "@$curprocess.KernelObject.UniqueProcessId") == (
        f"@$curprocess.KernelObject.UniqueProcessId : 0x{cur.pid:x} [Type: void *]\n"
    )


def test_typed_object_views(world: World) -> None:
    p = world.processes[0]
    pointer = dx(world, f"(nt!_EPROCESS*)0x{p.address:x}").splitlines()
    assert pointer[0] == f"(nt!_EPROCESS*)0x{p.address:x}                 : 0x{p.address:x} [Type: _EPROCESS *]"
    assert pointer[1] == "    [+0x000] Pcb              [Type: _KPROCESS]"
    assert "    [+0x440] UniqueProcessId  : 0x4 [Type: void *]" in pointer
    assert "    [+0x460 ( 0: 0)] JobNotReallyActive : 0x0 [Type: unsigned long]" in pointer
    assert "    [+0x5a8] ImageFileName    [Type: unsigned char [15]]" in pointer
    value = dx(world, f"*(nt!_EPROCESS*)0x{p.address:x}").splitlines()
    assert value[0] == f"*(nt!_EPROCESS*)0x{p.address:x}                 [Type: _EPROCESS]"
    assert value[1:] == pointer[1:]
    member = dx(world, f"((nt!_EPROCESS*)0x{p.address:x})->UniqueProcessId")
    assert member == f"((nt!_EPROCESS*)0x{p.address:x})->UniqueProcessId : 0x4 [Type: void *]\n"
    deeper = dx(world, f"-r2 (*((nt!_EPROCESS *)0x{p.address:x}))").splitlines()
    assert f"        [+0x028] DirectoryTableBase : 0x{p.dirbase:x} [Type: unsigned __int64]" in deeper


def test_driver_object_fields(world: World) -> None:
    drv = world.driver("myfault")
    assert drv is not None
    lines = dx(world, f"*(nt!_DRIVER_OBJECT*)0x{drv.address:x}").splitlines()
    assert '    [+0x038] DriverName       : "\\Driver\\myfault" [Type: _UNICODE_STRING]' in lines
    assert "    [+0x000] Type             : 4 [Type: short]" in lines
    assert "    [+0x070] MajorFunction    [Type: long (__cdecl*[28])(_DEVICE_OBJECT *,_IRP *)]" in lines


def test_unreadable_environment(world: World) -> None:
    system = world.processes[0]
    lines = dx(world, "-r2 @$cursession.Processes[4].Environment").splitlines()
    assert system.peb == 0
    assert lines[1] == "    EnvironmentBlock [Type: _PEB]"
    # families/dx/05: a null PEB's fields
    assert lines[2] == "        [+0x000] InheritedAddressSpace : Unable to read memory at Address 0x0"
    assert "        [+0x003 ( 0: 0)] ImageUsesLargePages : Unable to read memory at Address 0x3" in lines


def test_debugger_objects(world: World) -> None:
    lines = dx(world, "-r2 Debugger").splitlines()
    assert lines[0] == "Debugger                "
    assert lines[1] == "    Sessions         : [object Object]"
    assert lines[2].startswith("        [0x0]            : Remote KD: KdSrv:Server=@{<Local>}")
    assert "        AutoSaveSettings : false" in lines
    sessions = dx(world, "Debugger.Sessions").splitlines()
    assert sessions[0] == "Debugger.Sessions                 : [object Object]"


def test_strings_modules_and_arithmetic(world: World) -> None:
    cur = world.current_process()
    assert (
        dx(world, "@$curprocess.Name")
        == f"@$curprocess.Name : {cur.image}\n    Length           : 0x{len(cur.image):x}\n"
    )
    modules = dx(world, "@$curprocess.Modules").splitlines()
    assert modules[1] == "    [0x0]            : ntkrnlmp.exe"
    assert len(modules) == 1 + len(world.modules)
    assert dx(world, "1+2") == "1+2              : 3\n"
    assert dx(world, "0x10*2") == "0x10*2           : 32\n"


def test_errors(world: World) -> None:
    assert dx(world, "foo") == "Error: Unable to bind name 'foo'\n"
    assert dx(world, "@$curprocess.Nope") == "Error: Unable to bind name 'Nope'\n"


def test_parser_reads_data_model_records(world: World) -> None:
    record = parse("dx @$curprocess", dx(world, "@$curprocess"))
    assert record.kind == "data_model"
    assert record.expression == "@$curprocess"  # type: ignore[attr-defined]
    names = [c.name for c in record.children]  # type: ignore[attr-defined]
    assert names[:3] == ["KernelObject", "Name", "Id"]
    kernel = record.children[0]  # type: ignore[attr-defined]
    assert kernel.type == "_EPROCESS" and kernel.value is None
    listing = parse("dx @$cursession.Processes", dx(world, "@$cursession.Processes"))
    pids = [int(c.name.strip("[]"), 16) for c in listing.children]  # type: ignore[attr-defined]
    assert pids == [0] + [p.pid for p in world.processes]
    assert all(c.links == ["Switch To"] for c in listing.children)  # type: ignore[attr-defined]


@pytest.mark.process
def test_the_simulator_answers_dt_and_dx_from_the_same_world(world: World) -> None:
    """``python -m kdmcp.sim kd`` (the real debugger loop) prints what the world built here does."""
    commands = [
        "dt nt!_LIST_ENTRY nt!PsActiveProcessHead",
        "dx @$cursession.Processes[4].KernelObject.UniqueProcessId",
        "dx -r0 @$cursession.Processes[4]",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "kdmcp.sim", "kd", "-k", "net:port=50000,key=1.2.3.4", "-b"],
        input="".join(c + "\n" for c in commands) + "q\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    out = run.stdout.replace("\r\n", "\n")
    for command in commands:
        expected = answer(world, command)
        assert expected is not None
        assert f"kd> {expected}" in out


def test_pseudo_registers_are_typed_pointers(world: World) -> None:
    thread = world.current_thread()
    assert dx(world, "-r0 @$thread") == f"@$thread                 : 0x{thread.address:x} [Type: _ETHREAD *]\n"
    proc = dx(world, "@$proc").splitlines()
    assert proc[0] == f"@$proc                 : 0x{world.current_process().address:x} [Type: _EPROCESS *]"
    assert proc[1] == "    [+0x000] Pcb              [Type: _KPROCESS]"
    rip = world.registers()["rip"]
    assert dx(world, "@rip") == f"@rip             : 0x{rip:x} [Type: unsigned __int64]\n"
    assert dx(world, "@rip+1") == f"@rip+1           : 0x{rip + 1:x} [Type: unsigned __int64]\n"
    assert dx(world, "@$curthread.Registers.User.rip") == f"@$curthread.Registers.User.rip : 0x{rip:x}\n"


def test_first_chains_reach_the_break_in_stack(world: World) -> None:
    # families/dx/03: Debugger.Sessions.First().Processes.First().Threads.First().Stack.Frames
    expr = "Debugger.Sessions.First().Processes.First().Threads.First().Stack.Frames"
    lines = dx(world, f"-r1 {expr}").splitlines()
    first = world.idle_process.threads[0]
    assert lines[0] == f"{expr}                "
    assert lines[1:] == [
        f"    {f'[0x{i:x}]':<16} : {world.name(f.site).replace('+', ' + ')}" for i, f in enumerate(first.frames)
    ]
