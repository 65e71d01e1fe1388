"""``!pte`` and ``!vm`` from the world: entry addresses from the 0x1EC self-map, validity from
what memory maps (families/pte), the counters agreeing with the pool and the page files read
as the parser's ``page_files`` (families/kernel_state/06)."""

from __future__ import annotations

from kdmcp.sim.world.build import build
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.paging import PXE_BASE, entry_addresses
from kdmcp.sim.world.pool import all_blocks
from tests.sim.world.helpers import object_record as _record


def test_pte_of_the_break_in_address(world: World) -> None:
    text = answer(world, "!pte fffff800`62a05c20")
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == " " * 43 + "VA fffff80062a05c20"
    assert lines[1].startswith("PXE at FFFFF67B3D9ECF80    PPE at FFFFF67B3D9F0008    PDE at ")
    assert lines[2].startswith("contains 0000000004F09063  ")
    assert lines[3].startswith("pfn 4f09      ---DA--KWEV  ")
    r = _record("!pte", text)
    assert r.address == "0xfffff80062a05c20"
    assert [lv.level for lv in r.pte_levels] == ["PXE", "PPE", "PDE", "PTE"]
    assert all(lv.valid for lv in r.pte_levels)
    assert r.pte_levels[3].flags == "-G--A--KREV"  # an image page: global, read-only, executable
    assert [int(lv.address, 16) for lv in r.pte_levels] == entry_addresses(0xFFFFF80062A05C20)


def test_pte_self_map_arithmetic() -> None:
    # the PXE of a VA is the PML4 entry for its bits 47:39, in the page the self-map slot maps
    va = 0xFFFFE70F2E61B080
    assert entry_addresses(va)[0] == PXE_BASE + 8 * ((va >> 39) & 0x1FF)
    assert entry_addresses(va)[3] == 0xFFFFF60000000000 + 8 * ((va & ((1 << 48) - 1)) >> 12)


def test_pte_of_a_pte_address_is_the_va_it_maps(world: World) -> None:
    va = 0xFFFFF80062A05C20
    pte = entry_addresses(va)[3]
    assert answer(world, f"!pte {pte:x}") == answer(world, f"!pte {va & ~0xFFF:x}")
    user = 0x7FF8F1650000
    assert (answer(world, f"!pte {entry_addresses(user)[3]:x}") or "").splitlines()[0].endswith(f"VA {user:016x}")


def test_pte_pool_page_and_unmapped(world: World) -> None:
    proc = world.processes[-1]
    r = _record("!pte", answer(world, f"!pte {proc.address:x}"))
    assert r.pte_levels[3].valid and r.pte_levels[3].flags == "-G-DA--KW-V"
    gap = (proc.address & ~0x1FFFFF) + 0x1FF000  # the last page of its 2 MB: nothing there
    assert not world.kernel.readable(gap)
    text = answer(world, f"!pte {gap:x}")
    assert text is not None and text.splitlines()[3].endswith("not valid")
    r2 = _record("!pte", text)
    assert r2.pte_levels[3].valid is False and r2.pte_levels[3].contains == "0x0000000000000000"
    # same VA, same frame, every time
    assert answer(world, f"!pte {proc.address:x}") == answer(build(), f"!pte {proc.address:x}")


def test_pte_user_address_uses_the_process(world: World) -> None:
    w = build()
    client = next(p for p in w.processes if p.image == "notmyfault64.exe")
    ntdll = w.user_modules[0].base
    assert (answer(w, f"!pte {ntdll:x}") or "").splitlines()[-1].strip() == "not valid"  # Idle: no user half
    w.context_process = client.address
    r = _record("!pte", answer(w, f"!pte {ntdll:x}"))
    assert all(lv.valid for lv in r.pte_levels)
    assert r.pte_levels[0].flags == "---DA--UWEV" and r.pte_levels[3].flags == "----A--UREV"


def test_vm_page_files_and_pool(world: World) -> None:
    text = answer(world, "!vm 1")
    assert text is not None
    assert text.startswith("Page File: \\??\\C:\\pagefile.sys\n  Current:   1441792 Kb  Free Space:   1402316 Kb\n")
    r = _record("!vm 1", text)
    assert [f.name for f in r.page_files] == ["\\??\\C:\\pagefile.sys", "\\??\\C:\\swapfile.sys", None]
    assert r.page_files[0].maximum_kb == 4194304
    pool_pages = len({b.address >> 12 for b in all_blocks(world) if b.pool_type != "Paged pool"})
    assert r.fields["NonPagedPoolNx Usage"].split()[0] == str(pool_pages)
    assert "Physical Memory:          1048320 (    4193280 Kb)\n" in text
    full = answer(world, "!vm")
    assert full is not None and full.startswith(text)
    assert "notmyfault64.exe" in full[len(text) :]


def test_vm_process_list_adds_up_to_total_private(world: World) -> None:
    text = answer(world, "!vm")
    assert text is not None
    head = "  Pid ImageName                        Commit   SharedCommit        Debt\n\n"
    assert head in text
    rows = text.split(head, 1)[1].splitlines()
    assert len(rows) == len(world.processes)
    kb = [int(r.split()[-6]) for r in rows]
    assert kb == sorted(kb, reverse=True)
    total = next(line for line in text.splitlines() if line.startswith("Total Private:"))
    assert int(total.split()[2]) * 4 == sum(kb)
    assert {int(r.split()[0], 16) for r in rows} == {p.pid for p in world.processes}
