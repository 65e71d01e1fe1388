"""sampledrv.sys loads while the target runs: before, deferred breakpoints; at the load, the
load chain and a DriverEntry hit; after, lm / x / ln / u / !drvobj agree (kdmcp/sim/world/loading.py)."""

from __future__ import annotations

from kdmcp.sim.world import activity, loading
from kdmcp.sim.world.build import build
from kdmcp.sim.world.machine import World
from tests.sim.world.helpers import run

ENTRY = "fffff800`60db5010"


def _play_until_stop(world: World, limit: int = 10) -> activity.Stop:
    for _ in range(limit):
        _printed, stop = activity.play(world)
        if stop is not None:
            return stop
    raise AssertionError("no stop")


def test_before_the_load_the_driver_is_nowhere_and_breakpoints_on_it_are_deferred() -> None:
    world = build()
    assert run(world, "x sampledrv!*") == ""
    assert "sampledrv" not in run(world, "lm")
    assert run(world, "!drvobj sampledrv") == "Driver object sampledrv not found\n"
    assert run(world, "db fffff800`60db0000 L4").startswith("fffff800`60db0000  ?? ?? ?? ??")
    # kd's note for bp on a name it cannot resolve; bu sets the same silently
    assert run(world, "bp sampledrv!DriverEntry") == (
        "Bp expression 'sampledrv!DriverEntry' could not be resolved, adding deferred bp\n"
    )
    assert run(world, "bu sampledrv!SampleUnload") == ""
    assert run(world, "bl") == (
        "     0 e Disable Clear u                      0001 (0001) (sampledrv!DriverEntry)\n"
        "     1 e Disable Clear u                      0001 (0001) (sampledrv!SampleUnload)\n"
    )


def test_a_deferred_breakpoint_on_driver_entry_hits_at_the_load_with_the_load_chain() -> None:
    world = build()
    run(world, "bu sampledrv!DriverEntry")
    printed = [activity.play(world) for _ in range(loading.LOAD_AT - 1)]
    assert all(stop is None for _, stop in printed)  # the load is the third event
    _printed, stop = activity.play(world)
    assert stop is not None
    assert stop.text == (
        f"Breakpoint 0 hit\nsampledrv!DriverEntry:\n{ENTRY} 48895c2408      mov     qword ptr [rsp+8],rbx\n"
    )
    calls = [line.split()[-1] for line in run(world, "k").splitlines()[1:]]
    assert calls == [
        "sampledrv!DriverEntry",
        "sampledrv!GsDriverEntry+0x20",
        "nt!PnpCallDriverEntry+0x4c",
        "nt!IopLoadDriver+0x4e5",
        "nt!IopLoadUnloadDriver+0x57",
        "nt!ExpWorkerThread+0x155",
        "nt!PspSystemThreadStartup+0x55",
        "nt!KiStartSystemThread+0x28",
    ]
    # resolved: the address and symbol where bl showed u and the expression
    assert run(world, "bl") == f"     0 e Disable Clear  {ENTRY}     0001 (0001) sampledrv!DriverEntry\n"
    assert run(world, "r rcx") == f"rcx={loading.DRIVER_OBJECT:016x}\n"  # DriverEntry(DriverObject, ...)
    # ub at each return address shows the call the frame made
    assert "call    sampledrv!DriverEntry (fffff800`60db5010)" in run(world, "ub fffff800`60db5150 L1")
    assert "call    qword ptr [rbx+58h]" in run(world, "ub nt!PnpCallDriverEntry+0x4c L1")


def test_after_the_load_lm_x_ln_u_and_drvobj_agree() -> None:
    world = build()
    for _ in range(loading.LOAD_AT):
        assert activity.play(world)[1] is None  # nothing breaks; kd prints nothing at a load
    lm = run(world, "lm m sampledrv")
    assert lm.splitlines()[2] == "fffff800`60db0000 fffff800`60db8000   sampledrv   (deferred)             "
    x = run(world, "x sampledrv!*")
    assert f"{ENTRY} sampledrv!DriverEntry (<no parameter info>)\n" in x
    assert len(x.splitlines()) == len(loading.ROUTINES)
    assert "Exact matches:\n    sampledrv!DriverEntry (<no parameter info>)\n" in run(world, "ln sampledrv!DriverEntry")
    assert run(world, "u sampledrv!DriverEntry L1") == (
        f"sampledrv!DriverEntry:\n{ENTRY} 48895c2408      mov     qword ptr [rsp+8],rbx\n"
    )
    drvobj = run(world, "!drvobj sampledrv 3")
    assert drvobj.startswith(f"Driver object ({loading.DRIVER_OBJECT:016x}) is for:\n \\Driver\\sampledrv\n")
    assert "DriverEntry:   fffff80060db5130\tsampledrv!GsDriverEntry\n" in drvobj
    assert "DriverUnload:  fffff80060db1010\tsampledrv!SampleUnload\n" in drvobj
    assert "[0e] IRP_MJ_DEVICE_CONTROL              fffff80060db10c0\tsampledrv!SampleDeviceControl\n" in drvobj
    # in nt!PsLoadedModuleList's ring: the tail entry (InsertTailList), its DllBase the image's
    tail = world.space().u64(world.evaluate("nt!PsLoadedModuleList") + 8) or 0
    assert world.space().u64(tail + 0x30) == loading.BASE
    assert world.space().u64(tail) == world.evaluate("nt!PsLoadedModuleList")
    assert run(world, "bp sampledrv!DriverEntry") == ""  # resolves now: no deferred note


def test_a_stop_before_the_image_is_mapped_goes_on_into_driver_entry() -> None:
    world = build()
    run(world, "bp nt!IopLoadDriver")
    run(world, "bu sampledrv!DriverEntry")
    stop = _play_until_stop(world)
    assert stop.text.startswith("Breakpoint 0 hit\nnt!IopLoadDriver:\n")
    assert run(world, "x sampledrv!*") == ""  # IopLoadDriver has not mapped it yet
    activity.resume(world)
    stop = _play_until_stop(world, 1)  # the same event goes on below IopLoadDriver
    assert stop.text.startswith("Breakpoint 1 hit\nsampledrv!DriverEntry:\n")
    assert "DriverUnload:  00000000" in run(world, "!drvobj sampledrv 2")  # DriverEntry has not run
    activity.resume(world)
    assert activity.play(world)[1] is None  # the load ends, then the cycle goes on
    assert "sampledrv!SampleUnload" in run(world, "!drvobj sampledrv 2")


def test_the_load_is_deterministic() -> None:
    texts = []
    for _ in range(2):
        world = build()
        run(world, "bu sampledrv!DriverEntry")
        _play_until_stop(world)
        texts.append(run(world, "k") + run(world, "!drvobj sampledrv 7") + run(world, "lm"))
    assert texts[0] == texts[1]


def test_a_disabled_deferred_breakpoint_resolves_without_stopping_and_bc_bd_be_keep_bl_right() -> None:
    world = build()
    run(world, "bu sampledrv!DriverEntry")
    run(world, "ba e1 nt!NtCreateFile")
    run(world, "bd 0 1")
    for _ in range(loading.LOAD_AT):
        assert activity.play(world)[1] is None
    assert run(world, "bl") == (
        f"     0 d Enable Clear  {ENTRY}     0001 (0001) sampledrv!DriverEntry\n"
        "     1 d Enable Clear  fffff800`62c3a1e0 e 1 0001 (0001) nt!NtCreateFile\n"
    )
    run(world, "be 1")
    stop = _play_until_stop(world, 30)  # ba e1: a code breakpoint, stops as bp does
    assert stop.text.startswith("Breakpoint 1 hit\nnt!NtCreateFile:\n")
    run(world, "bc *")
    assert run(world, "bl") == ""


def test_data_breakpoints_stop_after_the_dispatch_routine_touches_the_irp() -> None:
    world = build()
    irp = world.irps[0].address
    run(world, f"ba w4 {irp + 0x30:x}")  # IoStatus.Status, written at myfault+0x1f22
    stop = _play_until_stop(world)
    assert stop.text == (
        "Breakpoint 0 hit\nmyfault+0x1f25:\nfffff800`60da1f25 488bcf          mov     rcx,rdi\n"
    )  # the instruction after the write
    assert run(world, "k").splitlines()[2].endswith("nt!IofCallDriver+0x55")
    run(world, "bc *")
    activity.resume(world)
    run(world, f"ba r4 {irp + 0xE8:x}")  # the stack location's IoControlCode, read at +0x14
    assert _play_until_stop(world, 30).text.startswith("Breakpoint 0 hit\nmyfault+0x1e17:\n")
    run(world, "bc *")
    activity.resume(world)
    run(world, f"ba w4 {irp + 0xE8:x}")  # only read: a write breakpoint never stops there
    assert all(activity.play(world)[1] is None for _ in range(30))
