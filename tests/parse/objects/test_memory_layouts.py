"""``kdmcp.parse.objects.memory`` and ``heap``: hand-written excerpts of layouts the corpus lacks.

Each names where the layout was published (a write-up, a note, a docs page); the corpus samples
of these families are checked in ``test_memory.py``.
"""

from __future__ import annotations

from kdmcp.parse import parse


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
    assert [p.large_page for p in r.pte_levels] == [False, False, True, False]


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


def test_pte_other_flag_layout_large_page() -> None:
    # Exploit write-up (Windows 10 x64, "!pte nt" of a Hyper-V guest): flags printed in another
    # column order ("-R--ADK--V", "-WX-ADK-LV"), the PDE maps a large page, the PTE column is empty
    out = (
        "                                           VA fffff800dfc00000\n"
        "PXE at FFFFF67B3D9ECF80    PPE at FFFFF67B3D9F0018    PDE at FFFFF67B3E0037F0    PTE at FFFFF67C006FE000\n"
        "contains 0060000084609F03  contains 006000008460AF03  contains 00C000009C000F01  contains 0000000000000000\n"
        "pfn 84609      -R--ADK--V  pfn 8460a      -R--ADK--V  pfn 9c000      -WX-ADK-LV  LARGE PAGE pfn 9c000       \n"
    )
    r = parse("!pte nt", out)
    assert [(p.pfn, p.flags, p.valid) for p in r.pte_levels] == [
        ("0x84609", "-R--ADK--V", True),
        ("0x8460a", "-R--ADK--V", True),
        ("0x9c000", "-WX-ADK-LV", True),
        (None, None, None),
    ]
    assert r.fields == {"large_page": "true", "large_page_pfn": "0x9c000"}


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


def test_poolused_verbose_layout_frees_and_diff() -> None:
    # `!poolused 1 Hack` in the notes of an HEVD pool exploit (Windows 10; a C comment whose
    # repository could not be named, found by its text): the verbose layout adds Frees and Diff
    # to each pool, and TOTAL has eight numbers
    out = (
        "Using a machine size of 1f9e5f pages to configure the kd cache\n"
        "..\n"
        " Sorting by Tag\n"
        "\n"
        "                            NonPaged                                         Paged\n"
        " Tag       Allocs       Frees      Diff         Used       Allocs       Frees      Diff         Used\n"
        "\n"
        " Hack           1           0         1          112            0           0         0            0"
        "\tUNKNOWN pooltag 'Hack', please update pooltag.txt\n"
        "\n"
        "TOTAL           1           0         1          112            0           0         0            0\n"
    )
    r = parse("!poolused 1 Hack", out)
    (row,) = r.pool_usage
    assert (row.tag, row.nonpaged_allocs, row.nonpaged_frees, row.nonpaged_diff, row.nonpaged_used) == (
        "Hack",
        1,
        0,
        1,
        112,
    )
    assert (row.paged_allocs, row.paged_frees, row.paged_diff, row.paged_used) == (0, 0, 0, 0)
    assert row.description == "UNKNOWN pooltag 'Hack', please update pooltag.txt"
    assert r.fields["sorting"] == "Tag"
    assert (r.fields["total_nonpaged_allocs"], r.fields["total_nonpaged_frees"]) == ("1", "0")
    assert (r.fields["total_nonpaged_diff"], r.fields["total_nonpaged_used"]) == ("1", "112")
    assert r.fields["total_paged_used"] == "0" and r.warnings == []


def test_poolused_plain_rows_have_no_verbose_columns() -> None:
    # `!poolused 2 Even` with a tag filter and its TOTAL line (an HEVD memory-disclosure write-up,
    # Windows 10 x64, repository not named): the frees and diffs were not printed, so they are None
    out = (
        " Tag     Allocs         Used     Allocs         Used\n"
        " Even     19248      2470752          0            0\tEvent objects \n"
        "TOTAL     19248      2470752          0            0\n"
    )
    (row,) = parse("!poolused 2 Even", out).pool_usage
    assert (row.nonpaged_allocs, row.nonpaged_used, row.nonpaged_frees, row.paged_diff) == (19248, 2470752, None, None)
