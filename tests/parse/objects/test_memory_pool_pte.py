"""``kdmcp.parse.objects.memory``: the ``pool`` and ``pte`` family samples (``!pool``, ``!poolfind``,
``!poolused``, ``!pte``), checked through ``CHECKS`` keyed by sample (``tests/parse/samples``).

Kept apart from ``test_memory.py`` (the heap, vad and mirrored memory checks) so each module stays
under 500 lines; hand-written excerpts of layouts the corpus lacks are in ``test_memory_layouts.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.parse.samples.corpus import Corpus

# pool


def _pool_01(c: Corpus) -> None:
    r = c.record("families/pool/01.txt", "!pool e1001050")
    assert [b.address for b in r.pool_blocks] == [
        "0xe1001000",
        "0xe1001040",
        "0xe1001050",
        "0xe1001060",
        "0xe1001070",
        "0xe1001080",
        "0xe10010c0",
    ]
    assert [b.tag for b in r.pool_blocks] == ["MmDT", "Mm", "ObDi", "ObDi", "Symt", "ObDm", "ObDi"]
    assert [b.state for b in r.pool_blocks].count("Free") == 1 and r.pool_blocks[1].state == "Free"
    assert r.address == "0xe1001050" and [b.contains_address for b in r.pool_blocks].count(True) == 1
    assert (r.pool_blocks[5].size, r.pool_blocks[6].previous_size) == ("0x40", "0x40")


def _pool_02(c: Corpus) -> None:
    r = c.output_record("families/pool/02.txt")
    assert r.fields == {"sorting": "Paged Pool Consumed"}
    assert [(u.tag, u.nonpaged_allocs, u.nonpaged_used, u.paged_allocs, u.paged_used) for u in r.pool_usage] == [
        ("Abc", 0, 0, 36405, 33930272),
        ("Tron", 0, 0, 552, 7863232),
        ("IoN7", 0, 0, 10939, 998432),
        ("Gla5", 1, 128, 2222, 924352),
        ("Ggb", 0, 0, 22, 828384),
    ]
    assert {u.description for u in r.pool_usage} == {None}


def _pool_03(c: Corpus) -> None:
    r = c.record("families/pool/03.txt", "!pool ffffe2809abee000")
    assert r.fields == {"region": "Paged pool", "pool_page": "0xffffe2809abee000"}
    mmst, free = r.pool_blocks
    assert (mmst.address, mmst.size, mmst.previous_size, mmst.state, mmst.tag, mmst.contains_address) == (
        "0xffffe2809abee000",
        "0x880",
        "0x0",
        "Allocated",
        "MmSt",
        True,
    )
    assert (mmst.description, mmst.binary) == ("Mm section object prototype ptes", "nt!mm")
    assert (free.address, free.size, free.state, free.tag, free.description) == (
        "0xffffe2809abee880",
        "0x760",
        "Free",
        '.r."',
        None,
    )
    assert r.address == "0xffffe2809abee000" and r.warnings == []


def _pool_unknown(c: Corpus, name: str, command: str, address: str) -> None:
    r = c.record(name, command)
    assert r.kind == "object" and r.pool_blocks == []
    assert r.fields == {"region": "Unknown", "pool_page": "0x" + address}
    assert r.warnings == [
        f"{address} is not a valid large pool allocation, checking large session pool...",
        "Unable to read large session pool table (Session data is not present in mini and kernel-only dumps)",
        f"{address} is not valid pool. Checking for freed (or corrupt) pool",
        f"Address {address} could not be read. It may be a freed, invalid or paged out page",
    ]


def _pool_04(c: Corpus) -> None:
    _pool_unknown(c, "families/pool/04.txt", "!pool ffffc48068d7d000", "ffffc48068d7d000")


def _pool_05(c: Corpus) -> None:
    _pool_unknown(c, "families/pool/05.txt", "!pool fffff803712e5000", "fffff803712e5000")


def _pool_06(c: Corpus) -> None:
    r = c.record("families/pool/06.txt", "!poolused 2")
    assert r.fields == {"sorting": "NonPaged Pool Consumed"}
    assert [u.tag for u in r.pool_usage] == ["amda", "IoWI", "EtwB", "HalD", "DAL3", "NxRx", "MKCx", "DAL2"]
    amda = r.pool_usage[0]
    assert (amda.nonpaged_allocs, amda.nonpaged_used, amda.paged_allocs, amda.paged_used) == (
        5768754,
        1938325232,
        32,
        9360,
    )
    assert amda.description == "UNKNOWN pooltag 'amda', please update pooltag.txt"
    dal2 = r.pool_usage[-1]
    assert (dal2.nonpaged_allocs, dal2.nonpaged_used, dal2.paged_allocs, dal2.paged_used) == (
        877,
        25073840,
        1560,
        6288352,
    )
    assert r.pool_usage[3].description == "Hardware Abstraction Layer: DMA , Binary: hal.dll"


def _pool_07(c: Corpus) -> None:
    r = c.record("families/pool/07.txt", "!poolfind amda -nonpaged")
    assert r.fields == {"tag": "amda"}
    assert len(r.pool_blocks) == 31  # 22 from the large pool table, 9 from the nonpaged scan
    assert {(b.tag, b.pool_type, b.state, b.previous_size) for b in r.pool_blocks} == {
        ("amda", "Nonpaged pool", None, None)
    }
    assert (r.pool_blocks[0].address, r.pool_blocks[0].size) == ("0xffffda0ff9791000", "0x18f0")
    assert (r.pool_blocks[19].address, r.pool_blocks[19].size) == ("0xffffda0ff7ce3000", "0x3420")
    assert sum(b.size == "0x140" for b in r.pool_blocks) == 23
    assert r.pool_blocks[-1].address == "0xffffda000f198e80"
    assert r.warnings == []


# pte


def _pte_01(c: Corpus) -> None:
    r = c.output_record("families/pte/01.txt")
    assert r.address == "0x0012f980"
    assert [(p.level, p.address, p.contains, p.pfn, p.flags, p.valid) for p in r.pte_levels] == [
        ("PDE", "0xc0300000", "0x0ba58067", "0xba58", "---DA--UWV", True),
        ("PTE", "0xc00004bc", "0x09de9067", "0x9de9", "---DA--UWV", True),
    ]


def _x64_levels(r: object, addresses: list[str]) -> None:
    levels = r.pte_levels  # type: ignore[attr-defined]
    assert [p.level for p in levels] == ["PXE", "PPE", "PDE", "PTE"]
    assert [p.address for p in levels] == addresses


def _pte_02(c: Corpus) -> None:
    r = c.record("families/pte/02.txt", "!pte ffffe5068d8a4000")
    assert r.address == "0xffffe5068d8a4000"
    _x64_levels(r, ["0xffffbedf6fb7de50", "0xffffbedf6fbca0d0", "0xffffbedf7941a360", "0xffffbef28346c520"])
    assert [p.pfn for p in r.pte_levels] == ["0x107400", "0x5dc8", "0x25754a", None]
    assert [p.valid for p in r.pte_levels] == [True, True, True, False]
    pte = r.pte_levels[3]
    assert (pte.contains, pte.flags, pte.details) == ("0x00003e9800000000", None, ["Page has been freed"])
    assert r.warnings == []


def _pte_03(c: Corpus) -> None:
    r = c.record("families/pte/03.txt", "!pte ffffe2809abee000")
    _x64_levels(r, ["0xffffcfe7f3f9fe28", "0xffffcfe7f3fc5010", "0xffffcfe7f8a026a8", "0xffffcff1404d5f70"])
    assert [p.contains for p in r.pte_levels] == [
        "0x0a00000107400863",
        "0x0a00000107401863",
        "0x0a000001184ef863",
        "0x80000001660ff963",
    ]
    assert [(p.pfn, p.flags) for p in r.pte_levels] == [
        ("0x107400", "---DA--KWEV"),
        ("0x107401", "---DA--KWEV"),
        ("0x1184ef", "---DA--KWEV"),
        ("0x1660ff", "-G-DA--KW-V"),
    ]
    assert all(p.valid for p in r.pte_levels) and all(p.details == [] for p in r.pte_levels)


def _pte_04(c: Corpus) -> None:
    r = c.record("families/pte/04.txt", "!pte ffffc48068d7d000")
    _x64_levels(r, ["0xfffffc7e3f1f8c48", "0xfffffc7e3f189008", "0xfffffc7e31201a30", "0xfffffc6240346be8"])
    assert [p.pfn for p in r.pte_levels] == ["0x10338", "0x10339", "0xe0f5", None]
    assert r.pte_levels[3].contains == "0x00068dc000001000"
    assert r.pte_levels[3].details == ["Page has been freed"] and r.pte_levels[2].details == []


def _pte_05(c: Corpus) -> None:
    r = c.record("families/pte/05.txt", "!pte fffff803712e5000")
    _x64_levels(r, ["0xfffffa7d3e9f4f80", "0xfffffa7d3e9f0068", "0xfffffa7d3e00dc48", "0xfffffa7c01b89728"])
    assert [p.valid for p in r.pte_levels] == [True, True, True, False]
    assert r.pte_levels[0].contains == "0x00000000f6c0b063"
    assert r.pte_levels[3].details == ["Proto: FFFFC182CC1FFDF8"]


def _pte_06(c: Corpus) -> None:
    # Windows 11: the PTE of an unmapped MMIO pointer holds zero; kd prints "not valid" and nothing under it
    r = c.record("families/pte/06.txt", "!pte 0xffff958f6836f000")
    assert r.address == "0xffff958f6836f000"
    _x64_levels(r, ["0xfffff97cbe5f2958", "0xfffff97cbe52b1e8", "0xfffff97ca563da08", "0xfffff94ac7b41b78"])
    assert [p.pfn for p in r.pte_levels] == ["0x647026", "0x647027", "0x12fb7c", None]
    assert [p.valid for p in r.pte_levels] == [True, True, True, False]
    assert r.pte_levels[3].contains == "0x0000000000000000" and r.pte_levels[3].details == []
    assert r.pte_levels[2].contains == "0x0a0000012fb7c863" and r.warnings == []


def _pte_07(c: Corpus) -> None:
    # the kdexts DbgPagingLevels bug: the whole output is one complaint, no level, no VA
    r = c.record("families/pte/07.txt", "!pte fffff801`00000000")
    assert r.kind == "object" and r.object_type == "pte"
    assert r.warnings == ["Levels not implemented for this platform"]
    assert r.pte_levels == [] and r.address is None


def _pte_08(c: Corpus) -> None:
    # x86 PAE (XP): two levels, 16-digit contents, the PDE maps a 2 MB page ("LARGE PAGE pfn 544")
    r = c.output_record("families/pte/08.txt")
    assert r.address == "0x80544a3c"
    assert [(p.level, p.address, p.contains) for p in r.pte_levels] == [
        ("PDE", "0xc0602010", "0x00000000004001e3"),
        ("PTE", "0xc0402a20", "0x0000000000000000"),
    ]
    pde, pte = r.pte_levels
    assert (pde.pfn, pde.flags, pde.valid) == ("0x400", "-GLDA--KWEV", True)
    assert (pte.pfn, pte.flags, pte.valid) == (None, None, None)
    assert r.fields == {"large_page": "true", "large_page_pfn": "0x544"}
    assert (pde.large_page, pte.large_page) == (True, False)


def _pte_09(c: Corpus) -> None:
    # Windows 10 1507: a user-mode page, every level valid and owned by user mode (U)
    r = c.record("families/pte/09.txt", "!pte 000000af`fe950000")
    assert r.address == "0x000000affe950000"
    _x64_levels(r, ["0xfffff6fb7dbed008", "0xfffff6fb7da015f8", "0xfffff6fb402bffa0", "0xfffff68057ff4a80"])
    assert [p.pfn for p in r.pte_levels] == ["0x13363d", "0x15273e", "0x152345", "0x133cdc"]
    assert {p.flags for p in r.pte_levels} == {"---DA--UWEV"} and all(p.valid for p in r.pte_levels)
    assert not any(p.large_page for p in r.pte_levels)
    assert r.pte_levels[3].contains == "0x2840000133cdc867" and r.fields == {}


def _pte_10(c: Corpus) -> None:
    # ARM64: its own flag columns ("-R--ADK--V"), the PDE maps a large page
    nt = c.record("families/pte/10.txt", "!pte nt")
    assert nt.address == "0xfffff800dfc00000"
    _x64_levels(nt, ["0xfffff67b3d9ecf80", "0xfffff67b3d9f0018", "0xfffff67b3e0037f0", "0xfffff67c006fe000"])
    assert [(p.pfn, p.flags, p.valid) for p in nt.pte_levels] == [
        ("0x84609", "-R--ADK--V", True),
        ("0x8460a", "-R--ADK--V", True),
        ("0x9c000", "-WX-ADK-LV", True),
        (None, None, None),
    ]
    assert nt.pte_levels[2].contains == "0x00c000009c000f01"
    assert nt.fields == {"large_page": "true", "large_page_pfn": "0x9c000"}
    assert [p.large_page for p in nt.pte_levels] == [False, False, True, False]
    hal = c.record("families/pte/10.txt", "!pte hal")
    assert hal.address == "0xfffff800df891000" and hal.pte_levels[2].address == "0xfffff67b3e0037e0"
    assert hal.pte_levels[2].pfn == "0x9bc00" and hal.fields["large_page_pfn"] == "0x9bc91"


def _pool_08(c: Corpus) -> None:
    # Windows 11: a double-freed block, Free, its tag overwritten
    r = c.record("families/pool/08.txt", "!pool ffffbd06d46e0000")
    assert r.fields == {"region": "Paged pool", "pool_page": "0xffffbd06d46e0000"}
    (block,) = r.pool_blocks
    assert (block.address, block.size, block.previous_size, block.state, block.tag) == (
        "0xffffbd06d46dffe0",
        "0x8020",
        "0x0",
        "Free",
        ">.g.",
    )
    assert block.contains_address and block.description == "Unknown (update pooltag.txt)"
    assert block.binary is None and r.warnings == []


def _pool_09(c: Corpus) -> None:
    # Windows 10 !poolused 2 after the cache complaint and statistics kd printed first
    r = c.record("families/pool/09.txt", "!poolused 2")
    assert r.fields == {"sorting": "NonPaged Pool Consumed"}
    assert r.warnings == ["*** CacheSize too low - increasing to 128 MB"]
    assert [(u.tag, u.nonpaged_allocs, u.nonpaged_used, u.paged_allocs, u.paged_used) for u in r.pool_usage] == [
        ("Cont", 1094, 6525216, 0, 0),
        ("EtwB", 128, 5041136, 4, 163840),
        ("AmlC", 31, 2031616, 0, 0),
        ("Pool", 5, 1705552, 0, 0),
        ("AmlH", 3, 1572864, 0, 0),
    ]
    assert r.pool_usage[0].description == "Contiguous physical memory allocations for device drivers"
    assert r.pool_usage[1].description == "Etw Buffer , Binary: nt!etw"


def _pool_10(c: Corpus) -> None:
    r = c.record("families/pool/10.txt", "!poolused 4")
    assert r.fields == {"sorting": "Paged Pool Consumed"} and r.warnings == []
    assert [u.tag for u in r.pool_usage] == ["CM31", "CM25", "MmRe", "MmSt", "CcPD", "CIcr", "Ntff"]
    assert [u.paged_used for u in r.pool_usage] == [91705344, 12546048, 11071552, 6790672, 4314976, 2976080, 2598288]
    ntff = r.pool_usage[-1]
    assert (ntff.nonpaged_allocs, ntff.nonpaged_used, ntff.paged_allocs) == (5, 1600, 2109)
    assert ntff.description == "FCB_DATA , Binary: ntfs.sys"
    assert r.pool_usage[5].description == "Code Integrity allocations for image integrity checking , Binary: ci.dll"


def _pool_11(c: Corpus) -> None:
    # Windows 7 x86: a full page of headers, padded and annotated tags
    r = c.record("families/pool/11.txt", "!pool 85246430")
    assert r.fields == {"region": "Nonpaged pool", "pool_page": "0x85246430"}
    blocks = r.pool_blocks
    assert len(blocks) == 25 and (blocks[0].address, blocks[-1].address) == ("0x85246000", "0x85246f38")
    assert [b.address for b in blocks if b.state == "Free"] == [
        "0x852460c8",
        "0x85246208",
        "0x85246778",
        "0x85246990",
        "0x85246c50",
    ]
    assert [b.tag for b in blocks[:6]] == ["Ntfx", ".PZH", "ReTa", "ReTa", "Vad", "NpFn"]
    assert blocks[5].details == "Process: 8507a030" and blocks[19].details == "(Protected)"
    hack = blocks[10]
    assert (hack.address, hack.size, hack.previous_size, hack.tag, hack.contains_address) == (
        "0x85246428",
        "0x200",
        "0xb8",
        "Hack",
        True,
    )
    assert hack.description == "Unknown (update pooltag.txt)" and blocks[11].description is None
    assert r.address == "0x85246428" and sum(b.contains_address for b in blocks) == 1


def _pte_11(c: Corpus) -> None:
    # Windows 7 x86 PAE: a demand-zero PTE, what it holds printed under its "not valid" column
    r = c.record("families/pte/11.txt", "!pte 0x001f0000")
    assert r.address == "0x001f0000"
    pde, pte = r.pte_levels
    assert (pde.level, pde.address, pde.contains, pde.pfn, pde.flags, pde.valid) == (
        "PDE",
        "0xc0600000",
        "0x000000006a1a6867",
        "0x6a1a6",
        "---DA--UWEV",
        True,
    )
    assert (pte.level, pte.address, pte.contains, pte.pfn, pte.valid) == (
        "PTE",
        "0xc0000f80",
        "0x0000000000000080",
        None,
        False,
    )
    assert pte.details == ["DemandZero", "Protect: 4 - ReadWrite"] and pde.details == []


def _pool_12(c: Corpus) -> None:
    # Windows 7 x86 "!pool <addr> 2": only the block holding the address
    r = c.record("families/pool/12.txt", "!pool 0x91c26130  2")
    assert r.fields == {"region": "Paged pool", "pool_page": "0x91c26130"}
    (block,) = r.pool_blocks
    assert (block.address, block.size, block.previous_size, block.state, block.tag, block.contains_address) == (
        "0x91c26128",
        "0x78",
        "0x60",
        "Allocated",
        "abcd",
        True,
    )
    assert block.description == "Unknown (update pooltag.txt)" and r.address == "0x91c26128"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "families/pool/01.txt": _pool_01,
    "families/pool/02.txt": _pool_02,
    "families/pool/03.txt": _pool_03,
    "families/pool/04.txt": _pool_04,
    "families/pool/05.txt": _pool_05,
    "families/pool/06.txt": _pool_06,
    "families/pool/07.txt": _pool_07,
    "families/pool/08.txt": _pool_08,
    "families/pool/09.txt": _pool_09,
    "families/pool/10.txt": _pool_10,
    "families/pool/11.txt": _pool_11,
    "families/pool/12.txt": _pool_12,
    "families/pte/01.txt": _pte_01,
    "families/pte/02.txt": _pte_02,
    "families/pte/03.txt": _pte_03,
    "families/pte/04.txt": _pte_04,
    "families/pte/05.txt": _pte_05,
    "families/pte/06.txt": _pte_06,
    "families/pte/07.txt": _pte_07,
    "families/pte/08.txt": _pte_08,
    "families/pte/09.txt": _pte_09,
    "families/pte/10.txt": _pte_10,
    "families/pte/11.txt": _pte_11,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
