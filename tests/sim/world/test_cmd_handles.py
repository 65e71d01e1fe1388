"""Kernel ``!handle`` from the world's generated tables: the entry count is ``!process``'s
HandleCount, handles point at the world's objects, one handle reads the same alone and in
the full table, and every form parses to the handle record (families/handles/05, 09)."""

from __future__ import annotations

import pytest

from kdmcp.sim.world.build import build
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.handles import decode_entry
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Process
from tests.sim.world.helpers import object_record as _record


@pytest.fixture(scope="module")
def client(world: World) -> Process:
    return next(p for p in world.processes if p.image == "notmyfault64.exe")


def test_entries_are_the_handle_count(world: World, client: Process) -> None:
    text = answer(world, f"!handle 0 3 {client.address:x}")
    assert text is not None
    assert text.startswith(
        f"\nPROCESS {client.address:016x}\n"
        "    SessionId: 1  Cid: 1e90    Peb: bb6f2ac000  ParentCid: 0d3c\n"
        f"    DirBase: 1d822d002  ObjectTable: {client.object_table:016x}  HandleCount: 186.\n"
        "    Image: notmyfault64.exe\n\n"
        f"Handle table at {client.object_table:016x} with 186 entries in use\n\n"
    )
    r = _record("!handle 0 3", text)
    assert len(r.handles) == client.handle_count == int(r.fields["entries_in_use"])
    assert [h.handle for h in r.handles][:3] == ["0x0004", "0x0008", "0x000c"]
    assert r.fields["process_handle_count"] == str(client.handle_count)
    types = {h.type for h in r.handles}
    assert {"File", "Key", "Event", "Process", "Thread", "Directory", "Token"} <= types
    for h in r.handles:
        assert h.object is not None and h.object_header is not None
        assert int(h.object_header, 16) == int(h.object, 16) - 0x30
        if h.type == "Process":
            assert world.process(int(h.object, 16)) is not None
        if h.type == "Thread":
            assert world.thread(int(h.object, 16)) is not None


def test_one_handle_matches_the_table(world: World, client: Process) -> None:
    full = _record("!handle", answer(world, f"!handle 0 3 {client.pid:x}"))
    for value in (0x4, 0x24, 0x1F0):
        one = _record("!handle", answer(world, f"!handle {value:x} f {client.address:x}"))
        assert len(one.handles) == 1
        row = next(h for h in full.handles if h.handle == f"0x{value:04x}")
        assert one.handles[0] == row


def test_client_file_handle_is_the_irps_file_object(world: World, client: Process) -> None:
    r = _record("!handle", answer(world, f"!handle c f {client.address:x}"))
    h = r.handles[0]
    assert h.type == "File" and int(h.object or "0", 16) == world.irps[0].stacks[0].file
    own = _record("!handle", answer(world, f"!handle 24 3 {client.address:x}")).handles[0]
    assert own.type == "Process" and int(own.object or "0", 16) == client.address


def test_flags_0_and_type_filter_and_free(world: World, client: Process) -> None:
    text = answer(world, "!handle 0 0")
    assert text is not None
    r = _record("!handle 0 0", text)
    assert r.handles == [] and r.fields["entries_in_use"] == str(world.idle_process.handle_count)
    files = _record("!handle", answer(world, f"!handle 0 3 {client.address:x} File"))
    assert files.fields["type_filter"] == "File" and files.handles
    assert all(h.type == "File" for h in files.handles)
    f = _record("!handle 0 f", answer(world, f"!handle 0 f {client.address:x}"))
    free = [h for h in f.handles if h.free]
    assert len(free) == 255 - client.handle_count  # the rest of the one 256-entry page (entry 0 reserved)
    assert len(f.handles) - len(free) == client.handle_count


def test_all_processes_and_deterministic(world: World) -> None:
    w = build()
    for p in w.processes[:3]:
        assert answer(w, f"!handle 4 3 {p.address:x}") == answer(world, f"!handle 4 3 {p.address:x}")
    every = answer(world, "!handle 4 1 0")
    assert every is not None and every.count("PROCESS ") == len(world.processes)


def test_kernel_table_flag(world: World) -> None:
    system = world.process_by_pid(4)
    assert system is not None
    r = _record("!handle 4 13", answer(world, "!handle 4 13"))
    assert r.fields["process"] == f"0x{world.current_process().address:016x}"  # the header: the current process
    assert r.fields["handle_table"] == f"0x{system.object_table:016x}"
    direct = _record("!handle", answer(world, f"!handle 4 3 {system.address:x}"))
    assert [h.model_copy(update={"process": None}) for h in r.handles] == [
        h.model_copy(update={"process": None}) for h in direct.handles
    ]


def test_tables_are_in_memory(world: World, client: Process) -> None:
    r = _record("!handle", answer(world, f"!handle 0 3 {client.address:x}"))
    space = world.space()
    system = world.process_by_pid(4)
    assert system is not None
    for p in (client, system):
        code = space.u64(p.object_table + 8)
        assert code is not None and code != 0
        assert space.u32(p.object_table + 0x28) == p.pid
    # the client's one level-0 page is TableCode itself; each Entry decodes to its object and access
    assert space.u64(client.object_table + 8) == int(r.handles[0].entry or "0", 16) - 0x10
    for h in r.handles:
        data = space.read(int(h.entry or "0", 16), 16)
        assert data is not None
        decoded = decode_entry(data)
        assert decoded == (int(h.object_header or "0", 16), int(h.granted_access or "0", 16))
    # System's table has two levels: TableCode | 1 points at the level-0 pages
    code = space.u64(system.object_table + 8) or 0
    assert code & 1
    first = space.u64(code & ~1)
    entry4 = _record("!handle", answer(world, f"!handle 4 1 {system.address:x}")).handles[0].entry
    assert first is not None and first + 0x10 == int(entry4 or "0", 16)


def test_handle_objects_are_pool_blocks(client: Process) -> None:
    world = build()  # a fresh world: the object headers are in memory after !handle alone
    r = _record("!handle", answer(world, f"!handle 0 3 {client.address:x}"))
    space = world.space()
    for h in r.handles[:40]:
        if h.type == "Event":
            assert space.read(int(h.object_header or "0", 16), 8) == (h.pointer_count or 0).to_bytes(8, "little")
    tags = {"Event": "Even", "File": "File", "Key": "Key", "Mutant": "Muta", "ALPC Port": "AlPo"}
    seen: set[str] = set()
    space = world.space()
    for h in r.handles:
        if h.type not in tags or h.type in seen or h.object is None or h.object_header is None:
            continue
        obj = int(h.object, 16)
        if obj == world.irps[0].stacks[0].file:
            continue  # the IRP's FILE_OBJECT: the world's own File block
        seen.add(h.type)
        pool = _record("!pool", answer(world, f"!pool {obj:x}"))
        marked = [b for b in pool.pool_blocks if b.contains_address]
        assert len(marked) == 1 and marked[0].tag == tags[h.type], (h, marked)
        start = int(marked[0].address, 16)
        assert start <= obj < start + int(marked[0].size, 16)
        # the object header in memory holds the counts !handle printed
        header = int(h.object_header, 16)
        assert space.read(header, 16) == (h.pointer_count or 0).to_bytes(8, "little") + (h.handle_count or 0).to_bytes(
            8, "little"
        )
    assert seen == set(tags)


def test_poolused_counts_the_handle_objects(world: World) -> None:
    from kdmcp.sim.world.handle_objects import all_object_blocks

    used = _record("!poolused", answer(world, "!poolused 0 Even"))
    events = [b for b in all_object_blocks(world) if b.tag == "Even"]
    assert used.pool_usage[0].nonpaged_allocs == len(events) > 1000


def test_table_pages_are_large_pool(world: World, client: Process) -> None:
    from kdmcp.sim.world.handles import table_allocations

    h = _record("!handle", answer(world, f"!handle 4 1 {client.address:x}")).handles[0]
    entry = int(h.entry or "0", 16)
    text = answer(world, f"!pool {entry:x}")
    assert text is not None
    assert f"*{entry & ~0xFFF:016x} : large page allocation, tag is Obtb, size is 0x1000 bytes\n" in text
    pool = _record("!pool", text)
    assert pool.pool_blocks[0].large and pool.pool_blocks[0].contains_address
    found = _record("!poolfind Obtb 1", answer(world, "!poolfind Obtb 1"))
    listed = {int(b.address, 16) for b in found.pool_blocks if b.size == "0x1000"}
    pages = table_allocations(world)
    assert listed == set(pages) and len(pages) == len(set(pages))  # no two tables share a page
