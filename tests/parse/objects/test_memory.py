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


def test_pte_error_lines_are_warnings() -> None:
    # DebugPrivilege/InsightEngineering (a Windows 11 dump write-up, README whose path was not
    # identified; found by its text): the PXE page is not in the dump
    out = (
        "                                           VA ffff80091002ac08\n"
        "PXE at FFFFD7EBF5FAF800    PPE at FFFFD7EBF5F00120    PDE at FFFFD7EBE0024400    PTE at FFFFD7C004880150\n"
        'Page 19e511 not present in the dump file. Type ".hh dbgerr004" for details\n'
        "Unable to get PXE FFFFD7EBF5F00120\n"
    )
    r = parse("!pte ffff80091002ac08", out)
    assert r.address == "0xffff80091002ac08"
    assert [(p.level, p.address, p.contains) for p in r.pte_levels] == [
        ("PXE", "0xffffd7ebf5faf800", None),
        ("PPE", "0xffffd7ebf5f00120", None),
        ("PDE", "0xffffd7ebe0024400", None),
        ("PTE", "0xffffd7c004880150", None),
    ]
    assert r.warnings == [
        'Page 19e511 not present in the dump file. Type ".hh dbgerr004" for details',
        "Unable to get PXE FFFFD7EBF5F00120",
    ]


def test_pte_levels_not_implemented_is_the_whole_answer() -> None:
    # README of a WinDbg !pte fix ("0: kd> !pte fffff801`00000000"), and orthia's README
    r = parse("!pte fffff801`00000000", "Levels not implemented for this platform\n")
    assert r.kind == "object" and r.object_type == "pte"
    assert r.pte_levels == [] and r.address is None
    assert r.warnings == ["Levels not implemented for this platform"]


def test_pte_columns_run_together_and_demand_zero() -> None:
    # Chinese notes on VirtualProtect and PAGE_GUARD (Windows 10 x64 user address): the paste
    # lost the blanks between the level columns; the invalid PTE is described under its row
    out = (
        "   VA 000001ca84260000\n"
        "PXE at FFFF844221108018PPE at FFFF844221003950PDE at FFFF84420072A108PTE at FFFF8400E5421300\n"
        "contains 0A00000035169867  contains 0A0000007B0EA867  contains 0A0000004100A867  contains 0000000000000220\n"
        "pfn 35169 ---DA--UWEV  pfn 7b0ea ---DA--UWEV  pfn 4100a ---DA--UWEV  not valid\n"
        "  DemandZero\n"
        "  Protect: 11 - Readonly G\n"
    )
    r = parse("!pte 1ca84260000", out)
    assert [p.address for p in r.pte_levels] == [
        "0xffff844221108018",
        "0xffff844221003950",
        "0xffff84420072a108",
        "0xffff8400e5421300",
    ]
    assert [p.valid for p in r.pte_levels] == [True, True, True, False]
    assert r.pte_levels[3].contains == "0x0000000000000220" and r.pte_levels[3].pfn is None
    assert r.pte_levels[3].details == ["DemandZero", "Protect: 11 - Readonly G"]


def test_pte_x86_pae_zero_page_not_valid() -> None:
    # Chinese notes on x86 PAE paging (XP kd, "!pte 0")
    out = (
        "                    VA 00000000\n"
        "PDE at C0600000            PTE at C0000000\n"
        "contains 000000000DCC2067  contains 0000000000000000\n"
        "pfn dcc2      ---DA--UWEV  not valid\n"
    )
    r = parse("!pte 0", out)
    assert [(p.level, p.pfn, p.valid) for p in r.pte_levels] == [("PDE", "0xdcc2", True), ("PTE", None, False)]
    assert r.pte_levels[1].contains == "0x0000000000000000"
    assert r.warnings == []


def test_heap_summary_x86_windows7_without_banner() -> None:
    # Blog post "Understanding Windows memory data structures" (x86, Windows 7: no banner)
    out = (
        "LFH Key                   : 0x748d6815\n"
        "Termination on corruption : ENABLED\n"
        "  Heap     Flags   Reserv  Commit  Virt   Free  List   UCR  Virt  Lock  Fast \n"
        "                    (k)     (k)    (k)     (k) length      blocks cont. heap \n"
        "-----------------------------------------------------------------------------\n"
        "002e0000 00000002    1024    196   1024      3     4     1    0      0   LFH\n"
        "00010000 00008000      64      4     64      2     1     1    0      0      \n"
        "-----------------------------------------------------------------------------\n"
    )
    r = parse("!heap -s", out)
    assert r.fields == {"LFH Key": "0x748d6815", "Termination on corruption": "ENABLED"}
    first, second = r.heap_summaries
    assert (first.heap, first.flags, first.reserve_kb, first.commit_kb, first.fast_heap) == (
        "0x002e0000",
        "00000002",
        1024,
        196,
        "LFH",
    )
    assert (second.heap, second.virtual_kb, second.fast_heap) == ("0x00010000", 64, None)


def test_heap_summary_fragmentation_and_letter_in_lock_column() -> None:
    # Blog post "Debug Memory Leak Using WinDBG" (x64): fragmentation under a row; a mex notes
    # page: a letter in the Lock column
    out = (
        "000001976aa70000 08000002   16564   9492  16364   3684   224     5    0      6   LFH\n"
        "    External fragmentation  38 % (224 free blocks)\n"
        "00000218f1710000 00000002   65320  14712  64928   5575   163    16    2      c   LFH\n"
    )
    r = parse("!heap -s", out)
    first, second = r.heap_summaries
    assert (first.external_fragmentation_percent, first.external_fragmentation_free_blocks) == (38, 224)
    assert second.external_fragmentation_percent is None
    assert (second.ucr_blocks, second.virtual_blocks, second.lock_contention) == (16, 2, "c")


def test_heap_page_heap_stack_keeps_symbol_warning() -> None:
    # Blog post "Debug Memory Leak Using WinDBG" (x64, cdb): a symbol complaint among the frames
    out = (
        "    address 000001976dcf4710 found in\n"
        "    _HEAP @ 1976aa70000\n"
        "              HEAP_ENTRY Size Prev Flags            UserPtr UserSize - state\n"
        "        000001976dcf46e0 000a 0000  [00]   000001976dcf4710    00074 - (busy)\n"
        "        7ffd4fd2f883 ntdll!RtlpCallInterceptRoutine+0x000000000000003f\n"
        "        7ffd0499eafd mfc140ud!operator new+0x000000000000003d\n"
        "*** WARNING: Unable to verify checksum for MyApp.exe\n"
        "        7ff74aefa443 MyApp!std::_Allocate+0x00000000000001a3\n"
        "        7ff74af3d9a8 +0x0000000000000058\n"
    )
    r = parse("!heap -p -a 000001976dcf4710", out)
    assert r.address == "0x000001976dcf4710" and r.fields["heap"] == "0x1976aa70000"
    (entry,) = r.heap_entries
    assert (entry.address, entry.size, entry.user_pointer, entry.user_size, entry.state) == (
        "0x000001976dcf46e0",
        "0x000a",
        "0x000001976dcf4710",
        "0x00074",
        "busy",
    )
    assert [f.return_address for f in r.frames] == [
        "0x7ffd4fd2f883",
        "0x7ffd0499eafd",
        "0x7ff74aefa443",
        "0x7ff74af3d9a8",
    ]
    assert r.frames[2].function == "std::_Allocate"
    assert r.warnings == ["*** WARNING: Unable to verify checksum for MyApp.exe"]


def test_heap_page_heap_read_error_is_a_warning() -> None:
    # the -p -a reader's own complaint lines stay as warnings, never frames or entries
    # (kdexts prints "ReadMemory error for address %p" when a page-heap root cannot be read)
    out = "    address 0a1b2c3d found in\n    _DPH_HEAP_ROOT @ 3d71000\nReadMemory error for address 03d71000\n"
    r = parse("!heap -p -a 0a1b2c3d", out)
    assert r.fields["heap_type"] == "_DPH_HEAP_ROOT"
    assert r.warnings == ["ReadMemory error for address 03d71000"] and r.frames == []


def test_heap_index_plain_listing() -> None:
    # Chinese notes on a memory leak (WOW64 dump, x86 heap), plain "!heap"
    out = "Index   Address  Name      Debugging options enabled\n  1:   033f0000                \n"
    r = parse("!heap", out)
    (heap,) = r.heap_summaries
    assert (heap.index, heap.heap, heap.reserve_kb) == (1, "0x033f0000", None)


def test_pool_large_page_allocation() -> None:
    # Chinese write-up on Windows 8.1 x64 bitmap objects (win32k session pool)
    out = (
        "Pool page fffff901400d0000 region is Unknown\n"
        "fffff901400d0000 is not a valid large pool allocation, checking large session pool...\n"
        "*fffff901400d0000 : large page allocation, tag is Gh05, size is 0x1090 bytes\n"
        "\t\tPooltag Gh05 : GDITAG_HMGR_SURF_TYPE, Binary : win32k.sys\n"
    )
    r = parse("!pool fffff901400d0000", out)
    (block,) = r.pool_blocks
    assert (block.address, block.size, block.tag, block.large, block.previous_size) == (
        "0xfffff901400d0000",
        "0x1090",
        "Gh05",
        True,
        None,
    )
    assert (block.description, block.binary) == ("GDITAG_HMGR_SURF_TYPE", "win32k.sys")
    assert r.address == "0xfffff901400d0000"
    assert r.warnings == ["fffff901400d0000 is not a valid large pool allocation, checking large session pool..."]


def test_pool_block_details_and_owning_component() -> None:
    # HEVD pool-overflow write-up (x86 Windows 7: "Process:" after the tag) and a Windows 10
    # note ("Owning component" when pooltag.txt lacks the tag)
    out = (
        "Pool page 85246430 region is Nonpaged pool\n"
        " 85246118 size:   48 previous size:   20  (Allocated)  Vad \n"
        " 85246160 size:   68 previous size:   48  (Allocated)  NpFn Process: 8507a030\n"
        "*ffffac883ca17910 size:  600 previous size:    0  (Allocated) *tvEm\n"
        "\t\tOwning component : Unknown (update pooltag.txt)\n"
    )
    r = parse("!pool 85246430", out)
    vad, npfn, tvem = r.pool_blocks
    assert (vad.tag, vad.details) == ("Vad", None)
    assert (npfn.tag, npfn.details) == ("NpFn", "Process: 8507a030")
    assert (tvem.tag, tvem.contains_address, tvem.description, tvem.binary) == (
        "tvEm",
        True,
        "Unknown (update pooltag.txt)",
        None,
    )


def test_poolused_windows10_layout_tab_before_description() -> None:
    # Blog post on an Edge memory leak (Windows 10 x64, "!poolused 2"); the excerpt ends inside
    # the description, as the search excerpt did
    out = (
        " Sorting by NonPaged Pool Consumed\n"
        "\n"
        "               NonPaged                  Paged\n"
        " Tag     Allocs         Used     Allocs         Used\n"
        "\n"
        " amda   5768754   1938325232         32         9360\tUNKNOWN pooltag 'amda', please update poolta\n"
    )
    r = parse("!poolused 2", out)
    assert r.fields["sorting"] == "NonPaged Pool Consumed"
    (row,) = r.pool_usage
    assert (row.tag, row.nonpaged_allocs, row.nonpaged_used, row.paged_allocs, row.paged_used) == (
        "amda",
        5768754,
        1938325232,
        32,
        9360,
    )
    assert row.description == "UNKNOWN pooltag 'amda', please update poolta"


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
    "families/pool/01.txt": _pool_01,
    "families/pool/02.txt": _pool_02,
    "families/pool/03.txt": _pool_03,
    "families/pool/04.txt": _pool_04,
    "families/pool/05.txt": _pool_05,
    "families/pool/06.txt": _pool_06,
    "families/pool/07.txt": _pool_07,
    "families/pte/01.txt": _pte_01,
    "families/pte/02.txt": _pte_02,
    "families/pte/03.txt": _pte_03,
    "families/pte/04.txt": _pte_04,
    "families/pte/05.txt": _pte_05,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
