"""The world's core: memory, layouts, symbols and expressions, code, and the built machine's own
agreement -- the facts every command of the world stands on (fast tier, no processes)."""

from __future__ import annotations

import struct

import pytest

from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world.build import build
from kdmcp.sim.world.code import decode, fmt_addr
from kdmcp.sim.world.drivers import CASES, IOCTLS, JUMP_TABLE, MYFAULT, TABLE_CODES
from kdmcp.sim.world.layouts import layout, offset_of, type_size
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import PAGE, Memory
from kdmcp.sim.world.symbols import ExprError


@pytest.fixture(scope="module")
def world() -> World:
    return build(0)


def test_memory_reads_what_was_written_and_nothing_where_nothing_is_mapped() -> None:
    mem = Memory()
    mem.load(0x1FF8, b"ABCDEFGHIJ")  # across a page boundary
    assert mem.read(0x1FF8, 10) == b"ABCDEFGHIJ"
    assert mem.cells(0x5000, 2) == [None, None]
    assert mem.read(0x5000, 1) is None
    assert not mem.write(0x5000, b"x")  # e* on unmapped memory writes nothing
    mem.map(0x100000, 64 * PAGE)  # a large range stays a range until written
    assert mem.read(0x100000 + 5 * PAGE, 4) == b"\0\0\0\0"
    assert mem.write(0x100000 + 5 * PAGE, b"\x90")
    assert mem.read(0x100000 + 5 * PAGE, 2) == b"\x90\0"


def test_lazy_regions_appear_on_first_read() -> None:
    mem = Memory()
    calls: list[int] = []
    mem.defer(0x4000, 0x10, lambda: calls.append(1) or b"\xcc" * 0x10)
    assert calls == []
    assert mem.read(0x4008, 2) == b"\xcc\xcc"
    assert mem.read(0x4000, 1) == b"\xcc" and calls == [1]


def test_layouts_give_the_offsets_dt_lists() -> None:
    # the canned 'dt nt!_EPROCESS' (Windows 10 19041 x64): UniqueProcessId at 0x440, links at 0x448
    assert offset_of("_EPROCESS", "UniqueProcessId")[0] == 0x440
    assert offset_of("nt!_EPROCESS", "ActiveProcessLinks.Blink")[0] == 0x450
    assert offset_of("_EPROCESS", "Pcb.DirectoryTableBase")[0] == 0x28
    assert offset_of("_ETHREAD", "Cid.UniqueThread")[0] == 0x480
    eprocess = layout("NT!_eprocess")
    assert eprocess is not None and eprocess.size == 0xA40
    assert type_size("[15] UChar") == 15 and type_size("Ptr64 _EPROCESS") == 8
    assert type_size("_LIST_ENTRY") == 0x10


def test_expressions_read_symbols_registers_and_memory(world: World) -> None:
    assert world.evaluate("nt!KiIdleLoop+0x54") == 0xFFFFF80062A00D64
    assert world.evaluate("fffff800`62a05c20") == 0xFFFFF80062A05C20
    assert world.evaluate("nt") == 0xFFFFF80062600000
    assert world.evaluate("@rip") == world.evaluate("rip") == 0xFFFFF80062A05C20
    assert world.evaluate("0n16 + 0x10") == 0x20
    system = world.processes[0].address
    assert world.evaluate("poi(nt!PsActiveProcessHead) - 448") == system
    assert world.evaluate(f"dwo({system:x}+440)") == 4
    with pytest.raises(ExprError):
        world.evaluate("nt!NoSuchRoutine")
    with pytest.raises(ExprError):
        world.evaluate("poi(1234)")  # unreadable


def test_names_are_kds(world: World) -> None:
    assert world.name(0xFFFFF80062A00D64) == "nt!KiIdleLoop+0x54"
    assert world.name(0xFFFFF80062C3A1E0) == "nt!NtCreateFile"
    assert world.name(MYFAULT + 0x1E00) == "myfault+0x1e00"  # a driver without symbols
    assert fmt_addr(0xFFFFF80062A05C20) == "fffff800`62a05c20"


def test_every_return_address_in_every_stack_follows_a_call_to_the_frame_below(world: World) -> None:
    # the code behind k: "ub RetAddr" shows a call (interrupts, traps and system calls excepted)
    space = world.space()
    checked = 0
    for thread in world.all_threads():
        for callee, caller in zip(thread.frames, thread.frames[1:], strict=False):
            name = world.name(callee.site).split("+")[0]
            if name.split("!")[-1] in (
                "KiPageFault",
                "KiInterruptDispatchNoLockNoEtw",
                "KiIpiInterruptNoLockNoEtw",
                "KiSystemServiceCopyEnd",
            ):
                continue
            if caller.site < 0xFFFF800000000000:
                continue  # user frames: the user images are not laid in the kernel world
            calls = []
            for size in (3, 4, 5):  # call r10 / call qword ptr [...] / call rel32
                data = space.read(caller.site - size, 16)
                assert data is not None
                d = decode(data, caller.site - size, world.name)
                if d is not None and d.is_call and len(d.data) == size:
                    calls.append(d)
            assert calls, (fmt_addr(caller.site), world.name(caller.site))
            sym = world.symbols.nearest(callee.site)[1]
            assert sym is not None
            assert any(d.branch_target in (None, sym.address) for d in calls)
            checked += 1
    assert checked > 500


def test_the_break_in_is_the_canned_one(world: World) -> None:
    t = world.current_thread()
    assert t.address == cat.PROCESSORS[0][1] and world.owner(t).image == "Idle"
    assert [f.child_sp for f in t.frames] == cat.BREAK_IN_SPS
    assert world.registers()["rip"] == t.frames[0].site == 0xFFFFF80062A05C20
    # "nt!DbgBreakPointWithStatus: int 3" and the canned db bytes around it
    assert world.space().read(0xFFFFF80062A05C20, 16) == bytes.fromhex("ccc3cccccccccccc0f1f840000000000")


def test_the_process_list_is_linked_in_memory_in_model_order(world: World) -> None:
    space = world.space()
    head = cat.NT_DATA["PsActiveProcessHead"][0]
    node, seen = space.u64(head), []
    while node != head and node is not None and len(seen) < 100:
        seen.append(node - 0x448)
        node = space.u64(node)
    assert seen == [p.address for p in world.processes]
    assert len(world.processes) == 40
    for p in world.processes:
        assert space.u64(p.address + 0x440) == p.pid
        assert space.read(p.address + 0x5A8, len(p.image[:14])) == p.image[:14].encode()
        # ThreadListHead links every thread's ThreadListEntry
        node, threads = space.u64(p.address + 0x5E0), []
        while node != p.address + 0x5E0 and node is not None and len(threads) < 100:
            threads.append(node - 0x4E8)
            node = space.u64(node)
        assert threads == [t.address for t in p.threads]


def test_ids_are_unique_and_canned_processes_keep_their_figures(world: World) -> None:
    ids = [p.pid for p in world.processes] + [t.tid for t in world.all_threads() if t.tid]
    assert len(ids) == len(set(ids))
    canned = {row[0]: row for row in cat.CANNED_PROCESSES}
    for p in world.processes:
        if p.address in canned:
            _, pid, parent, image, *_ = canned[p.address]
            assert (p.pid, p.parent, p.image) == (pid, parent, image)


def test_pool_headers_carry_the_tags_the_model_lists(world: World) -> None:
    space = world.space()
    for block in world.pool:
        head = space.read(block.address, 8)
        assert head is not None
        units, tag = struct.unpack("<I4s", head)
        assert tag.decode("latin-1") == block.tag
        assert (units >> 16 & 0xFF) * 16 == min(block.size, 0xFF0)
    procs = {b.owner for b in world.pool if b.tag == "Proc"}
    assert {p.address for p in world.processes} <= procs


def test_the_test_drivers_dispatch_table_and_switch(world: World) -> None:
    myfault = world.driver("myfault")
    assert myfault is not None and myfault.name == "\\Driver\\myfault"
    space = world.space()
    table = [space.u64(myfault.address + 0x70 + 8 * i) for i in range(28)]
    assert table == myfault.dispatch and table[0xE] == MYFAULT + 0x1E00
    # the jump table holds the four table codes' case offsets
    for i in range(len(TABLE_CODES)):
        rva = space.u32(MYFAULT + JUMP_TABLE + 4 * i)
        assert rva == 0x1E00 + CASES[len(IOCTLS) - len(TABLE_CODES) + i]
    # the compare chain names the first three codes as immediates
    pos, immediates = MYFAULT + 0x1E00, []
    for _ in range(20):
        data = space.read(pos, 16)
        assert data is not None
        d = decode(data, pos, world.name)
        assert d is not None
        if d.text.startswith("cmp     ecx,"):
            immediates.append(d.immediate)
        pos += len(d.data)
    assert immediates == list(IOCTLS[:3])


def test_the_same_seed_builds_the_same_machine() -> None:
    a, b = build(0), build(0)
    assert [(p.address, p.pid) for p in a.processes] == [(p.address, p.pid) for p in b.processes]
    assert [(t.address, t.tid) for t in a.all_threads()] == [(t.address, t.tid) for t in b.all_threads()]
    for addr in (0xFFFFF80062A00D10, MYFAULT + 0x1E00, a.processes[-1].address):
        assert a.space().read(addr, 64) == b.space().read(addr, 64)
    other = build(7)
    canned = {row[1] for row in cat.CANNED_PROCESSES}
    assert canned <= {p.pid for p in other.processes} and canned <= {p.pid for p in a.processes}
    assert [p.pid for p in other.processes] != [p.pid for p in a.processes]  # generated
