"""``!irpfind`` from the world (kdmcp/sim/world/cmd_irpfind.py): the IRPs in flight, as kd lists
them (a published x64 session's rows; Windows 10's scan lines), agreeing with ``!irp``."""

from __future__ import annotations

import kdmcp.sim.world.commands  # noqa: F401  (the command table)
from kdmcp.parse import parse
from kdmcp.sim.world.build import build
from tests.sim.world.helpers import run


def test_irpfind_lists_the_clients_irp_pending_in_myfault() -> None:
    world = build()
    irp = world.irps[0]
    out = run(world, "!irpfind")
    assert out == (
        "\n"
        "Scanning large pool allocation table for tag 0x3f707249 (Irp?) (ffffe70f27e00000 : ffffe70f27f00000)\n"
        "\n"
        "Searching nonpaged pool (ffffe70000000000 : fffff70000000000) for tag 0x3f707249 (Irp?)\n"
        "\n"
        "  Irp            [ Thread ]         irpStack: (Mj,Mn)   DevObj          [Driver]         MDL Process\n"
        f"{irp.address:016x} [{irp.thread:016x}] irpStack: ( e, 0)  ffffe70f300b4610 [ \\Driver\\myfault]\n"
    )
    # the same IRP, thread, stack and device !irp shows
    detail = run(world, f"!irp {irp.address:x}")
    assert f"Thread {irp.thread:016x}" in detail and "ffffe70f300b4610" in detail and "\\Driver\\myfault" in detail
    assert parse("!irpfind", out) is not None


def test_criteria_keep_only_the_irps_that_match() -> None:
    world = build()
    irp = world.irps[0]
    assert f"{irp.address:016x}" in run(world, f"!irpfind 0 0 thread {irp.thread:x}")
    assert f"{irp.address:016x}" in run(world, "!irpfind 0 0 device ffffe70f`300b4610")
    none = run(world, "!irpfind 0 0 thread 1234")
    assert "irpStack" not in none and none.endswith("for tag 0x3f707249 (Irp?)\n\n")
