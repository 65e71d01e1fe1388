"""``!pool``, ``!poolfind``, ``!poolused`` from the world: full pages whose headers are in
memory, ``*`` on the block holding the address, counts that are ``world.pool``'s (families/pool)."""

from __future__ import annotations

import re

from kdmcp.sim.world.build import build
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import PAGE
from tests.sim.world.helpers import object_record as _record


def test_pool_on_each_process_marks_its_proc_block(world: World) -> None:
    for proc in world.processes:
        text = answer(world, f"!pool {proc.address:x}")
        assert text is not None
        assert text.startswith(f"Pool page {proc.address:016x} region is Nonpaged pool\n")
        r = _record(f"!pool {proc.address:x}", text)
        marked = [b for b in r.pool_blocks if b.contains_address]
        assert len(marked) == 1 and marked[0].tag == "Proc" and marked[0].state == "Allocated"
        start, size = int(marked[0].address, 16), int(marked[0].size, 16)
        assert start <= proc.address < start + size
        assert marked[0].description == "Process objects" and marked[0].binary == "nt!ps"
        # the page reads full: the blocks tile it from its first byte to its last
        page = proc.address & ~(PAGE - 1)
        at = page
        for b in r.pool_blocks:
            assert int(b.address, 16) == at
            at += int(b.size, 16)
        assert at == page + PAGE
        assert re.search(rf"\n\*{start:016x} size: +[0-9a-f]+ previous size: +0  \(Allocated\) \*Proc\n", text)


def test_pool_headers_are_memory(world: World) -> None:
    proc = world.processes[-1]
    text = answer(world, f"!pool {proc.address:x}")
    r = _record("!pool", text)
    space = world.space()
    for b in r.pool_blocks:
        at = int(b.address, 16)
        head = space.read(at, 8)
        assert head is not None
        assert ((int.from_bytes(head[:4], "little") >> 16) & 0xFF) * 16 == int(b.size, 16)
        assert head[4:8].decode("latin-1").rstrip() == b.tag


def test_pool_flag_2_and_no_pool(world: World) -> None:
    proc = world.processes[0]
    text = answer(world, f"!pool {proc.address:x} 2")
    assert text is not None and len(text.splitlines()) == 3
    assert text.splitlines()[2] == "\t\tPooltag Proc : Process objects, Binary : nt!ps"
    miss = answer(world, "!pool fffff800`62a05c20")
    assert miss is not None
    assert miss.splitlines()[0] == "Pool page fffff80062a05c20 region is Unknown"
    assert _record("!pool", miss).warnings


def test_poolused_counts_are_the_worlds(world: World) -> None:
    text = answer(world, "!poolused 2")
    assert text is not None
    assert text.splitlines()[:6] == [
        "..",
        " Sorting by NonPaged Pool Consumed",
        "",
        "               NonPaged                  Paged",
        " Tag     Allocs         Used     Allocs         Used",
        "",
    ]
    r = _record("!poolused 2", text)
    rows = {u.tag: u for u in r.pool_usage}
    procs = [b for b in world.pool if b.tag == "Proc"]
    assert rows["Proc"].nonpaged_allocs == len(procs) == len(world.processes)
    assert rows["Proc"].nonpaged_used == sum(b.size for b in procs)
    assert rows["Thre"].nonpaged_allocs == sum(1 for b in world.pool if b.tag == "Thre")
    assert rows["Toke"].paged_allocs == sum(1 for b in world.pool if b.tag == "Toke")
    used = [u.nonpaged_used for u in r.pool_usage]
    assert used == sorted(used, reverse=True)
    assert int(r.fields["total_nonpaged_allocs"]) == sum(u.nonpaged_allocs for u in r.pool_usage)
    one = _record("!poolused 0 Proc", answer(world, "!poolused 0 Proc"))
    assert [u.tag for u in one.pool_usage] == ["Proc"] and one.fields["sorting"] == "Tag"


def test_poolfind_lists_the_process_blocks(world: World) -> None:
    text = answer(world, "!poolfind Proc")
    assert text is not None
    assert "Scanning large pool allocation table for tag 0x636f7250 (Proc) (" in text
    r = _record("!poolfind Proc", text)
    assert r.fields["tag"] == "Proc"
    found = {int(b.address, 16) for b in r.pool_blocks}
    assert found == {b.address for b in world.pool if b.tag == "Proc"}
    assert all(b.pool_type == "Nonpaged pool" for b in r.pool_blocks)
    paged = _record("!poolfind Toke 1", answer(world, "!poolfind Toke 1"))
    assert len(paged.pool_blocks) == sum(1 for b in world.pool if b.tag == "Toke")


def test_poolfind_takes_a_tag_value_for_a_tag_with_a_blank(world: World) -> None:
    # "!poolfind" docs: a TagValue "must begin with "0x""; 0x20707249 is "Irp " (little-endian)
    text = answer(world, "!poolfind 0x20707249")
    assert text is not None and "for tag 0x20707249 (Irp )" in text
    r = _record("!poolfind 0x20707249", text)
    assert [b.address for b in r.pool_blocks] == ["0xffffe70f2ed94d60"] and r.pool_blocks[0].tag == "Irp"
    assert answer(world, "!poolfind 0x20707249") == answer(world, "!poolfind Irp")
    # "0X" is no TagValue: the text is a tag string (its first four characters)
    assert "(0X20)" in (answer(world, "!poolfind 0X20707249") or "")


def test_deterministic() -> None:
    a, b = build(), build()
    for c in ("!pool ffffe70f2e61b080", "!poolused 4", "!poolfind Thre"):
        assert answer(a, c) == answer(b, c)


def test_poolused_verbose_diff_is_what_is_allocated(world: World) -> None:
    text = answer(world, "!poolused 1 Proc")
    assert text is not None
    assert (
        " Tag       Allocs       Frees      Diff         Used       Allocs       Frees      Diff         Used\n" in text
    )
    r = _record("!poolused 1 Proc", text)
    (row,) = r.pool_usage
    assert row.nonpaged_diff == len(world.processes) == (row.nonpaged_allocs or 0) - (row.nonpaged_frees or 0)
    assert r.fields["total_nonpaged_diff"] == str(len(world.processes))
    plain = answer(world, "!poolused 0 Proc")
    assert plain is not None and plain.endswith(
        f"TOTAL{len(world.processes):>10}{row.nonpaged_used:>13}{0:>11}{0:>13}\n"
    )
