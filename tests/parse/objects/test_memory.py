"""``kdmcp.parse.objects.memory``: ``!pool``, ``!poolfind``, ``!poolused``, ``!pte``, ``!heap``, ``!vad``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks are in ``test_memory_layouts.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.parse.samples.corpus import Corpus

# --------------------------------------------------------------------------- corpus checks


def _memory_16(c: Corpus) -> None:
    r = c.record("memory/16.txt", "!heap -p -a 0000015da8026b50")
    assert r.object_type == "heap" and r.address == "0x0000015da8026b50"
    (entry,) = r.heap_entries
    assert entry.user_pointer == "0x0000015da8026b80" and entry.state == "busy"
    assert entry.heap == "0x15d85bb0000"
    assert len(r.frames) == 8
    assert r.frames[0].function == "RtlpAllocateHeapInternal" and r.frames[0].offset == "0x96b87"


def _memory_17(c: Corpus) -> None:
    r = c.record("memory/17.txt", "!heap -flt s 28")
    assert len(r.heap_entries) == 4
    assert {e.user_size for e in r.heap_entries} == {"0x00028"}
    # "          unknown!printable" under the first two and the last entry
    assert [e.symbol for e in r.heap_entries] == ["unknown!printable", "unknown!printable", None, "unknown!printable"]
    assert r.frames == []


def _memory_18(c: Corpus) -> None:
    r = c.record("memory/18.txt", "!heap -p -a 06724ff8")
    assert r.fields["state"] == "free-ed"
    assert r.heap_page_blocks[0].virtual_address == "0x6724000"
    assert r.heap_page_blocks[0].virtual_size == "0x2000"
    assert len(r.frames) == 21
    assert r.frames[5].source_line == 105


def _kernel_objects_06(c: Corpus) -> None:
    r = c.record("kernel_objects/06.txt", "!poolused")
    assert r.fields["sorting"] == "Tag"
    assert r.fields["total_nonpaged_used"] == "209120008"
    by_tag = {e.tag: e for e in r.pool_usage}
    assert by_tag["1394"].nonpaged_used == 520
    assert by_tag["Wmit"].paged_used == 49480
    # description glued to the number and itself starting with digits
    assert by_tag["ohci"].paged_used == 0
    assert by_tag["ohci"].description == "1394 OHCI host controller driver"
    assert by_tag["hibr"].paged_used == 24576
    assert by_tag["AGP"].description == "UNKNOWN pooltag 'AGP ', please update pooltag.txt"
    assert r.entries == []


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


# heap


def _heap_01(c: Corpus) -> None:
    r = c.output_record("families/heap/01.txt")
    assert r.kind == "object" and r.object_type == "heap"
    assert r.fields == {
        "LFH Key": "0x64ecab356b9e5983",
        "Termination on corruption": "ENABLED",
        "debugging_aids": "stack back traces",
    }
    rows = r.heap_summaries
    assert [h.heap for h in rows] == [
        "0x0000015d85bb0000",
        "0x0000015d84290000",
        "0x0000015d87700000",
        "0x0000015d878b0000",
        "0x0000015d879e0000",
    ]
    assert [h.fast_heap for h in rows] == ["LFH", None, "LFH", None, None]
    first = rows[0]
    assert (first.flags, first.reserve_kb, first.commit_kb, first.virtual_kb, first.free_kb) == (
        "08000002",
        8376,
        6816,
        8176,
        254,
    )
    assert (first.free_list_length, first.ucr_blocks, first.virtual_blocks, first.lock_contention) == (97, 5, 1, "3")
    assert rows[4].flags == "08041002" and rows[4].free_kb == 5
    assert r.warnings == []


def _heap_02(c: Corpus) -> None:
    r = c.output_record("families/heap/02.txt")
    assert r.fields == {"heap": "0x0000015d85bb0000", "group_by": "TOTSIZE", "max_display": "20"}
    assert len(r.heap_stats) == 20
    top = r.heap_stats[0]
    assert (top.size, top.blocks, top.total, top.percent) == (0x28, 0x14B40, 0x33C200, 38.60)
    assert (r.heap_stats[1].size, r.heap_stats[1].blocks) == (0x24B238, 1)
    assert r.heap_stats[-1].total == 0x7807
    assert r.frames == []  # "    24b238 1 - 24b238  (27.37)" is no stack frame


def _heap_03(c: Corpus) -> None:
    r = c.record("families/heap/03.txt", "!heap -l")
    assert r.fields["leaks_detected"] == "21"
    assert len(r.heap_entries) == 21
    first = r.heap_entries[0]
    assert (first.address, first.user_pointer, first.heap, first.segment, first.size, first.previous_size) == (
        "0x001b2958",
        "0x001b2960",
        "0x00170000",
        "0x00000000",
        "0x40",
        "0x18",
    )
    assert first.state == "busy extra"
    assert r.heap_entries[18].state == "busy extra user_flag"
    assert [e.heap for e in r.heap_entries].count("0x00520000") == 2


def _heap_04(c: Corpus) -> None:
    r = c.record("families/heap/04.txt", "!heap 002057b8 -x")
    (e,) = r.heap_entries
    assert (e.address, e.user_pointer, e.heap, e.segment, e.size, e.previous_size, e.state) == (
        "0x002057a8",
        "0x002057b0",
        "0x00170000",
        "0x00170640",
        "0x58",
        "0x58",
        "busy extra",
    )


def _heap_05(c: Corpus) -> None:
    r = c.record("families/heap/05.txt", "!heap 002057b8 -x -v")
    (e,) = r.heap_entries
    assert e.address == "0x002057a8" and e.segment == "0x00170640"
    assert r.fields["search_range"] == "002057a8 - 002057ff"
    assert r.fields["search_found"] == "00205990 (002057d0)"


def _heap_06(c: Corpus) -> None:
    r = c.record("families/heap/06.txt", "!heap -srch 77176934")
    assert [(e.address, e.user_pointer, e.size, e.previous_size, e.flags) for e in r.heap_entries] == [
        ("0x00099a48", "0x00099a50", "0x0018", "0x0005", "01"),
        ("0x00099b58", "0x00099b60", "0x0018", "0x0005", "01"),
    ]
    assert {(e.heap, e.user_size, e.state) for e in r.heap_entries} == {("0x00090000", "0x000000b8", "busy")}
    assert r.heap_entries[0].symbol == "ole32!CALLFRAME_CACHE<INTERFACE_HELPER_CLSID>::`vftable'"


def _heap_07(c: Corpus) -> None:
    r = c.record("families/heap/07.txt", "!ntsdexts.heap -a")
    (heap,) = r.heap_summaries
    assert (heap.index, heap.heap) == (1, "0x00250000")
    assert r.fields["Flags"] == "50000062" and r.fields["Granularity"] == "8 bytes"
    assert r.fields["Segment Reserve"] == "00100000" and r.fields["Lock Variable at"] == "00250b54"
    free = [e for e in r.heap_entries if e.free_list]
    segment = [e for e in r.heap_entries if not e.free_list]
    assert len(free) == 13  # FreeList[ 00 ]: 1, [ 02 ]: 2, [ 04 ]: 10
    assert (free[0].address, free[0].previous_size, free[0].size, free[0].flags, free[0].state) == (
        "0x002a4370",
        "0x00098",
        "0x01c90",
        "14",
        "free",
    )
    assert len(segment) == 41  # the docs cut the listing with three "..." lines
    assert (segment[0].address, segment[0].size, segment[0].used, segment[0].tag) == (
        "0x00250000",
        "0x00b90",
        "0xb90",
        None,
    )
    ldr = segment[2]
    assert (ldr.address, ldr.flags, ldr.state, ldr.used, ldr.tag) == (
        "0x00250bc8",
        "07",
        "busy",
        "0x24",
        "NTDLL!LDR Database",
    )
    fill = [e for e in segment if e.state == "free fill"]
    assert [(e.address, e.tag) for e in fill] == [
        ("0x002527b0", None),
        ("0x0025cda0", "NTDLL!Temporary"),
        ("0x002a4370", None),
    ]


def _heap_08(c: Corpus) -> None:
    r = c.record("families/heap/08.txt", "!heap -p -a 42ae5b28")
    assert r.address == "0x42ae5b28"
    assert (r.fields["heap"], r.fields["heap_type"]) == ("0x6690000", "_HEAP")
    (e,) = r.heap_entries
    assert (e.address, e.size, e.previous_size, e.flags, e.user_pointer, e.user_size, e.state, e.heap) == (
        "0x42ae5b28",
        "0x0541",
        "0x0000",
        "00",
        "0x42ae5b40",
        "0x02800",
        "busy",
        "0x6690000",
    )
    assert len(r.frames) == 32
    assert (r.frames[0].module, r.frames[0].function, r.frames[0].offset) == ("ntdll", "RtlAllocateHeap", "0x274")
    # seven-digit return addresses, as printed
    assert (r.frames[5].return_address, r.frames[5].function) == ("0xf05cb4d", "IDispatchInvoke")
    assert r.frames[21].return_address == "0x563de19"
    assert r.frames[-1].return_address == "0x773a1287" and r.frames[-1].function == "_endthreadex"
    assert r.warnings == []


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "memory/16.txt": _memory_16,
    "memory/17.txt": _memory_17,
    "memory/18.txt": _memory_18,
    "kernel_objects/06.txt": _kernel_objects_06,
    "kernel_objects/10.txt": _kernel_objects_10,
    "kernel_objects/11.txt": _kernel_objects_11,
    "kernel_objects/14.txt": _kernel_objects_14,
    "families/heap/01.txt": _heap_01,
    "families/heap/02.txt": _heap_02,
    "families/heap/03.txt": _heap_03,
    "families/heap/04.txt": _heap_04,
    "families/heap/05.txt": _heap_05,
    "families/heap/06.txt": _heap_06,
    "families/heap/07.txt": _heap_07,
    "families/heap/08.txt": _heap_08,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
