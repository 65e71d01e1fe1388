"""``kdmcp.parse.objects.memory``: ``!pool``, ``!poolfind``, ``!poolused``, ``!pte``, ``!heap``, ``!vad``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_x64_pte() -> None:
    out = (
        "                                           VA fffff80240d322f9\n"
        "PXE at FFFFF5FAFD7EBF80    PPE at FFFFF5FAFD7F0048    PDE at FFFFF5FAFE009028    PTE at FFFFF5FC01205E90\n"
        "contains 0000000004F09063  contains 0000000004F0A063  contains 0A0000013F6F1863  contains 090000013E47A021\n"
        "pfn 4f09      ---DA--KWEV  pfn 4f0a      ---DA--KWEV  pfn 13f6f1    ---DA--KWEV  pfn 13e47a    ----A--KREV\n"
    )
    r = parse("!pte fffff80240d322f9", out)
    assert r.address == "0xfffff80240d322f9"
    assert [p.level for p in r.pte_levels] == ["PXE", "PPE", "PDE", "PTE"]
    assert r.pte_levels[3].contains == "0x090000013e47a021" and r.pte_levels[3].flags == "----A--KREV"


def test_pte_large_page_pfn_x86_pae() -> None:
    # C source of a HalDispatchTable exploit, WinDbg session in a trailing comment (x86 PAE)
    out = (
        "                    VA 80544a3c\n"
        "PDE at C0602010            PTE at C0402A20\n"
        "contains 00000000004001E3  contains 0000000000000000\n"
        "pfn 400       -GLDA--KWEV   LARGE PAGE pfn 544\n"
    )
    r = parse("!pte 80544a3c", out)
    assert r.fields["large_page"] == "true" and r.fields["large_page_pfn"] == "0x544"
    assert (r.pte_levels[0].level, r.pte_levels[0].pfn) == ("PDE", "0x400")
    assert r.pte_levels[1].pfn is None


def test_pte_large_page_pfn_x64() -> None:
    # Markdown note "The kernel is mapped with large pages" (!pte of nt!ExAllocatePoolWithTag)
    out = (
        "                                           VA fffff803791153a0\n"
        "PXE at FFFF80C060301F80    PPE at FFFF80C0603F0068    PDE at FFFF80C07E00DE40    PTE at FFFF80FC01BC88A8\n"
        "contains 0000000000B09063  contains 0000000000B0A063  contains 000000013A0009E3  contains 0000000000000000\n"
        "pfn b09       ---DA--KWEV  pfn b0a       ---DA--KWEV  pfn 13a000    -GLDA--KWEV  LARGE PAGE pfn 13a115 \n"
    )
    r = parse("!pte fffff803`791153a0", out)
    assert r.fields["large_page_pfn"] == "0x13a115"
    assert [p.pfn for p in r.pte_levels] == ["0xb09", "0xb0a", "0x13a000", None]


def test_vad_tree() -> None:
    # Microsoft docs, !vad example (XP-era layout)
    out = (
        "VAD     level      start      end    commit\n"
        "82741bf8 ( 1)      78000    78045         8 Mapped  Exe  EXECUTE_WRITECOPY\n"
        "8273e508 ( 2)      7ffde    7ffde         1 Private      EXECUTE_READWRITE\n"
        "\n"
        "Total VADs:     5  average level:    2  maximum depth: 2\n"
    )
    r = parse("!vad 824bc2f8", out)
    assert r.kind == "object" and r.object_type == "vad"
    assert r.entries == [
        {
            "vad": "0x82741bf8",
            "level": "1",
            "start": "78000",
            "end": "78045",
            "commit": "8",
            "type": "Mapped",
            "protection": "EXECUTE_WRITECOPY",
            "exe": "true",
        },
        {
            "vad": "0x8273e508",
            "level": "2",
            "start": "7ffde",
            "end": "7ffde",
            "commit": "1",
            "type": "Private",
            "protection": "EXECUTE_READWRITE",
        },
    ]
    assert (r.fields["total_vads"], r.fields["average_level"], r.fields["maximum_depth"]) == ("5", "2", "2")


def test_vad_tree_windows10_layout() -> None:
    # wlsgjd.github.io post on VADs (Windows 10 x64: level without parentheses, commas)
    out = (
        "VAD             Level         Start             End              Commit\n"
        "ffffdf02ef26f440  8           7ffe0           7ffe0               1 Private      READONLY           \n"
        "Total VADs: 669, average level: 8, maximum depth: 10\n"
    )
    r = parse("!vad", out)
    (entry,) = r.entries
    assert (entry["vad"], entry["level"], entry["start"], entry["protection"]) == (
        "0xffffdf02ef26f440",
        "8",
        "7ffe0",
        "READONLY",
    )
    assert (r.fields["total_vads"], r.fields["maximum_depth"]) == ("669", "10")


def test_vad_single() -> None:
    # Microsoft docs, !vad example ("!vad <addr> 1")
    out = (
        "VAD @ 824bc2f8\n"
        "  Start VPN:         7ffb0  End VPN:    7ffd3  Control Area:  827f1208\n"
        "  First ProtoPte: e1008500  Last PTE e100858c  Commit Charge         0 (0.)\n"
    )
    r = parse("!vad 824bc2f8 1", out)
    assert r.address == "0x824bc2f8"
    assert r.fields == {
        "Start VPN": "7ffb0",
        "End VPN": "7ffd3",
        "Control Area": "827f1208",
        "First ProtoPte": "e1008500",
        "Last PTE": "e100858c",
        "Commit Charge": "0 (0.)",
    }


def _memory_16(c: Corpus) -> None:
    r = c.record("memory/16.txt", "!heap -p -a 0000015da8026b50")
    assert r.object_type == "heap" and r.address == "0x0000015da8026b50"
    (entry,) = r.entries
    assert entry["user_pointer"] == "0x0000015da8026b80" and entry["state"] == "busy"
    assert len(r.frames) == 8
    assert r.frames[0].function == "RtlpAllocateHeapInternal" and r.frames[0].offset == "0x96b87"


def _memory_17(c: Corpus) -> None:
    r = c.record("memory/17.txt", "!heap -flt s 28")
    assert len(r.entries) == 4
    assert {e["user_size"] for e in r.entries} == {"0x00028"}


def _memory_18(c: Corpus) -> None:
    r = c.record("memory/18.txt", "!heap -p -a 06724ff8")
    assert r.fields["state"] == "free-ed"
    assert r.entries[0]["virt_addr"] == "0x6724000"
    assert len(r.frames) == 21
    assert r.frames[5].source_line == 105


def _kernel_objects_06(c: Corpus) -> None:
    r = c.record("kernel_objects/06.txt", "!poolused")
    assert r.fields["sorting"] == "Tag"
    assert r.fields["total_nonpaged_used"] == "209120008"
    by_tag = {e["tag"]: e for e in r.entries}
    assert by_tag["1394"]["nonpaged_used"] == "520"
    assert by_tag["Wmit"]["paged_used"] == "49480"
    # description glued to the number and itself starting with digits
    assert by_tag["ohci"]["paged_used"] == "0"
    assert by_tag["ohci"]["description"] == "1394 OHCI host controller driver"
    assert by_tag["hibr"]["paged_used"] == "24576"


def _kernel_objects_10(c: Corpus) -> None:
    r = c.record("kernel_objects/10.txt", "!pool e1001050 1")
    assert [b.tag for b in r.pool_blocks] == ["MmDT", "Mm", "ObDi", "ObDi"]
    marked = [b for b in r.pool_blocks if b.contains_address]
    assert [b.address for b in marked] == ["0xe1001050"]
    assert r.pool_blocks[1].state == "Free"
    assert r.pool_blocks[0].size == "0x40"


def _kernel_objects_11(c: Corpus) -> None:
    r0 = c.record("kernel_objects/11.txt", "!poolfind SeSd 0")
    assert r0.fields["tag"] == "SeSd"
    assert len(r0.pool_blocks) == 19
    assert sum(b.state == "Free" for b in r0.pool_blocks) == 2
    r1 = c.record("kernel_objects/11.txt", "!poolfind SeSd 1")
    assert len(r1.pool_blocks) == 4
    assert c.blocks("kernel_objects/11.txt")[-1].command == ""  # trailing empty "kd> " prompt


def _kernel_objects_14(c: Corpus) -> None:
    r = c.record("kernel_objects/14.txt", "!pte 801544f4")
    assert r.address == "0x801544f4"
    assert [(p.level, p.address, p.contains, p.pfn, p.flags) for p in r.pte_levels] == [
        ("PDE", "0xc0300800", "0x0003b163", "0x3b", "G-DA--KWV"),
        ("PTE", "0xc0200550", "0x00154121", "0x154", "G--A--KRV"),
    ]


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "memory/16.txt": _memory_16,
    "memory/17.txt": _memory_17,
    "memory/18.txt": _memory_18,
    "kernel_objects/06.txt": _kernel_objects_06,
    "kernel_objects/10.txt": _kernel_objects_10,
    "kernel_objects/11.txt": _kernel_objects_11,
    "kernel_objects/14.txt": _kernel_objects_14,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
