"""``??`` from the world (kdmcp/sim/world/cmd_cpp.py): sizes from the type layouts, members read
from memory at their offsets, printed as kd's C++ evaluator prints them (published sessions)."""

from __future__ import annotations

import pytest

import kdmcp.sim.world.commands  # noqa: F401  (the command table)
from kdmcp.sim.world.build import build
from kdmcp.sim.world.machine import World
from tests.sim.world.helpers import run


@pytest.fixture(scope="module")
def world() -> World:
    return build()


def test_sizeof_a_kernel_type_is_its_layouts_size(world: World) -> None:
    # "0: kd> ?? sizeof(nt!_eprocess)" / "unsigned int64 0xa40" (Windows 10 x64)
    assert run(world, "?? sizeof(nt!_eprocess)") == "unsigned int64 0xa40\n"
    # "kd> ?? sizeof(nt!_OBJECT_HEADER)" / "unsigned int64 0x38"
    assert run(world, "?? sizeof(nt!_OBJECT_HEADER)") == "unsigned int64 0x38\n"
    assert run(world, "?? sizeof(nt!_POOL_HEADER)") == "unsigned int64 0x10\n"
    assert run(world, "?? sizeof(int)") == "unsigned int64 0x4\n"


def test_a_cast_and_members_read_the_objects_memory(world: World) -> None:
    system = next(p for p in world.processes if p.pid == 4)
    cast = f"((nt!_EPROCESS*)0x{system.address:x})"
    # the same Cid !process prints and dt reads
    assert run(world, f"?? {cast}->UniqueProcessId") == "void * 0x00000000`00000004\n"
    assert run(world, f"?? {cast}->ImageFileName") == 'unsigned char [15]  "System"\n'
    dirbase = run(world, f"?? {cast}->Pcb.DirectoryTableBase")
    assert dirbase.startswith("unsigned int64 0x")
    assert f"DirBase: {int(dirbase.split()[-1], 16):08x}" in run(world, f"!process {system.address:x} 0")
    # "?? ((nt!_EPROCESS*)0xffff9e02f4e11080)->Protection.Level" / "unsigned char 0x00 ''"
    thread = world.current_thread().address
    assert run(world, f"?? ((nt!_KTHREAD*)0x{thread:x})->State") == "unsigned char 0x02 ''\n"
    assert run(world, f"?? {cast}->ActiveProcessLinks.Flink").startswith("struct _LIST_ENTRY * 0xffffe70f`")


def test_errors_name_where_kd_stops(world: World) -> None:
    assert run(world, "?? sizeof(nt!_NO_SUCH_TYPE)") == "Couldn't resolve error at 'nt!_NO_SUCH_TYPE)'\n"
    system = next(p for p in world.processes if p.pid == 4)
    assert run(world, f"?? ((nt!_EPROCESS*)0x{system.address:x})->NoSuchField") == (
        "Couldn't resolve error at '->NoSuchField'\n"
    )
    assert run(world, "?? ((nt!_EPROCESS*)0x10)->UniqueProcessId") == "Memory access error at '->UniqueProcessId'\n"


def test_a_register_is_an_unsigned_int64(world: World) -> None:
    assert run(world, "?? @rip") == "unsigned int64 0xfffff800`62a05c20\n"
