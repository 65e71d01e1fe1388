"""Layouts found in published debugger output the corpus lacks: ``lm t``, status-less ``lm``
rows, current-WinDbg ``bl``, deferred ``bp``, ``dt`` arrays and values, bare ``version``
lines, ``uf`` without symbols, ``dc`` character columns.

Each output is a minimal excerpt in the format it was seen in (the comment names where).
"""

from __future__ import annotations

from kdmcp.parse import parse

# --------------------------------------------------------------------------- lm


def test_lm_t_stamps_go_to_timestamp() -> None:
    # lm t of a Windows 10 18362 kernel session, nmap/npcap issue 184
    out = (
        "start             end                 module name\n"
        "ffffd7c9`1fbe0000 ffffd7c9`1fc6c000   win32k    ***** Invalid (F9A3DAA3)\n"
        "fffff803`6c600000 fffff803`6d0b7000   nt        B785E389 (This is a reproducible build file hash, not a timestamp)\n"  # noqa: E501 - real output line, kept whole
        "fffff803`73ef0000 fffff803`73f04000   npcap     Wed Jun  3 11:37:54 2020 (5ED7EE02)\n"
    )
    r = parse("lm t", out)
    assert [(m.name, m.timestamp) for m in r.modules] == [
        ("win32k", "***** Invalid (F9A3DAA3)"),
        ("nt", "B785E389 (This is a reproducible build file hash, not a timestamp)"),
        ("npcap", "Wed Jun  3 11:37:54 2020 (5ED7EE02)"),
    ]
    assert all(m.image_path is None and m.symbol_file is None for m in r.modules)


def test_statusless_lm_row_column_follows_the_options() -> None:
    # plain lm: a module with loaded symbols shows its symbol file and no status (lm page,
    # MS docs "lm m s*" example)
    plain = "start    end        module name\nfb008000 fb00ba80   serenum      e:\\mysymbols\\SereEnum.pdb\\.......\n"
    (m,) = parse("lm m s*", plain).modules
    assert (m.symbol_file, m.image_path) == ("e:\\mysymbols\\SereEnum.pdb\\.......", None)
    # lm ksmf: sort (sm) and full image path (f), a kernel session's class notes
    paths = "fffff801`0a010000 fffff801`0a0dc000   ACPI     \\SystemRoot\\System32\\drivers\\ACPI.sys\n"
    (m,) = parse("lm ksmf", paths).modules
    assert (m.image_path, m.symbol_file) == ("\\SystemRoot\\System32\\drivers\\ACPI.sys", None)
    # lm n: the image name (lm page: "n  Displays the image name")
    (m,) = parse("lm n", "fffff803`6c600000 fffff803`6d0b7000   nt       ntkrnlmp.exe\n").modules
    assert (m.image_name, m.symbol_file) == ("ntkrnlmp.exe", None)


# --------------------------------------------------------------------------- breakpoints


def test_dml_bl_deferred_row() -> None:
    # current WinDbg (DML) bl of a deferred breakpoint, VBS/Secure Kernel debugging notes
    out = "     0 e Disable Clear u                      0001 (0001) (securekernel!IumInvokeSecureService)\n"
    (bp,) = parse("bl", out).breakpoints
    assert (bp.id, bp.enabled, bp.unresolved, bp.address) == (0, True, True, None)
    assert bp.symbol == "securekernel!IumInvokeSecureService"
    assert (bp.pass_count, bp.initial_pass_count) == (1, 1)


def test_deferred_bp_is_set_with_a_warning() -> None:
    # the same notes: bp on a module not loaded yet
    out = "Bp expression 'securekernel!IumInvokeSecureService' could not be resolved, adding deferred bp\n"
    r = parse("bp0 securekernel!IumInvokeSecureService", out)
    assert r.kind == "breakpoints" and r.breakpoints == []
    assert r.warnings == [out.rstrip("\n")]


def test_bl_printing_nothing_lists_no_breakpoints() -> None:
    # the same notes: bl after bc 0 prints an empty line
    for out in ("", "\n"):
        r = parse("bl", out)
        assert r.kind == "breakpoints" and r.breakpoints == []


# --------------------------------------------------------------------------- dt


def test_dt_a_array_elements_under_their_field() -> None:
    # dt page, MS docs: "dt mt1 -a gn"
    out = "   +0x00c gn : \n    [00] 0x1\n    [01] 0x2\n"
    r = parse("dt mt1 -a gn", out)
    assert r.instance
    assert [(f.name, f.value, f.depth) for f in r.fields] == [("gn", None, 0), ("[00]", "0x1", 1), ("[01]", "0x2", 1)]


def test_dt_ca_rows_without_fields() -> None:
    # dt page, MS docs: "dt -ca10 ULONG 01002be0"
    r = parse("dt -ca10 ULONG 01002be0", "[0] 0x1001098\n[1] 0x1\n[2] 0xdead\n")
    assert r.kind == "type_dump" and r.instance
    assert [(f.name, f.value) for f in r.fields] == [("[0]", "0x1001098"), ("[1]", "0x1"), ("[2]", "0xdead")]


def test_dt_b_element_markers_hold_their_fields() -> None:
    # dt page, MS docs: "dt nt!_ERESOURCE -b 0x8154f040"
    out = (
        "   +0x018 OwnerThreads     :\n"
        "    [00]\n"
        "      +0x000 OwnerThread      : 0\n"
        "    [01]\n"
        "      +0x000 OwnerThread      : 0x8167f563\n"
        "   +0x028 ContentionCount  : 0\n"
    )
    r = parse("dt nt!_ERESOURCE -b 0x8154f040", out)
    assert [(f.name, f.value, f.depth) for f in r.fields] == [
        ("OwnerThreads", None, 0),
        ("[00]", None, 1),
        ("OwnerThread", "0", 2),
        ("[01]", None, 1),
        ("OwnerThread", "0x8167f563", 2),
        ("ContentionCount", "0", 0),
    ]


def test_dt_value_after_two_blanks_has_no_leading_blank() -> None:
    # dt page, MS docs: "dt nt!_PEB CriticalSectionTimeout.." and the -b example
    out = (
        "   +0x070 CriticalSectionTimeout   :  0xffffe86d`079b8000\n"
        "   +0x000 SystemResourcesList :  [ 0x815bb388 - 0x816cd478 ]\n"
    )
    r = parse("dt nt!_PEB CriticalSectionTimeout.. 7ffdf000", out)
    assert [f.value for f in r.fields] == ["0xffffe86d079b8000", "[ 0x815bb388 - 0x816cd478 ]"]


def test_dt_pointer_then_type_then_what_it_points_at() -> None:
    # bug check 0x9F page, MS docs ("dt nt!TRIAGE_9F_POWER"), and "Exploring the Windows
    # Executive - Part 1" (dt nt!_OBJECT_TYPE -r1): a list entry's links, a function's symbol
    out = (
        "   +0x008 IrpList          : 0xfffff800`01c78bd0 _LIST_ENTRY [ 0xfffffa80`09f43620 - 0xfffffa80`0ad00170 ]\n"
        "   +0x03c DeleteProcedure  : 0x827fa2b4        void  nt!IopDeleteDevice+0\n"
    )
    r = parse("dt nt!TRIAGE_9F_POWER fffff8000386c3d8", out)
    assert [(f.value, f.type) for f in r.fields] == [("0xfffff80001c78bd0", "_LIST_ENTRY"), ("0x827fa2b4", "void")]


def test_dt_r1_children_are_one_level_down() -> None:
    # "Exploring the Windows Executive - Part 1": dt -r1 indents children 10 blanks
    out = (
        "   +0x028 TypeInfo         : _OBJECT_TYPE_INITIALIZER\n"
        "          +0x000 Length           : 0x50\n"
        "   +0x078 TypeLock         : _EX_PUSH_LOCK\n"
        "      +0x000 Locked           : 0y0\n"
    )
    r = parse("dt nt!_OBJECT_TYPE 852cd040 -r1", out)
    assert [(f.name, f.depth) for f in r.fields] == [("TypeInfo", 0), ("Length", 1), ("TypeLock", 0), ("Locked", 1)]


# --------------------------------------------------------------------------- version


def test_version_bare_build_lab_line() -> None:
    # cdb 10.0.19041 version in a rust-lang CI log (x86_64-pc-windows-msvc)
    out = (
        "Windows 10 Version 17763 MP (8 procs) Free x64\n"
        "Product: Server, suite: TerminalServer DataCenter SingleUserTS\n"
        "17763.1.amd64fre.rs5_release.180914-1434\n"
        "Machine Name:\n"
    )
    assert parse("version", out).build_lab == "17763.1.amd64fre.rs5_release.180914-1434"


def test_version_extension_search_path_is_one_value() -> None:
    # cdb 10.0.22000 version in a rust-lang CI log (i686-pc-windows-msvc)
    path = "C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x86\\WINXP;C:\\Windows\\system32"
    out = (
        "Windows 10 Version 17763 MP (8 procs) Free x86 compatible\n"
        f"Extension DLL search Path:\n    {path}\n"
        "Extension DLL chain:\n"
        "    ext: image 10.0.22000.194, API 1.0.0, \n"
    )
    r = parse("version", out)
    assert "C" not in r.details
    assert r.details["Extension DLL search Path"] == path
    assert r.details["ext"] == "image 10.0.22000.194, API 1.0.0,"


# --------------------------------------------------------------------------- u / uf


def test_uf_branch_note_is_not_an_operand() -> None:
    # uf without symbols (a hook's trampoline), wlsgjd.github.io post on PspProcessOpen
    out = "ffff9d01`69ff0014 741c            je      ffff9d01`69ff0032  Branch\n"
    (ins,) = parse("uf ffff9d01`69ff0000", out).instructions
    assert (ins.mnemonic, ins.operands, ins.target) == ("je", "ffff9d01`69ff0032", "0xffff9d0169ff0032")


def test_memory_operand_target_before_another_operand() -> None:
    # u ntdll!NtCreateFile, user-mode WinDbg exercise (windev_training series)
    out = "00007ff8`9f45cb58 f604250803fe7f01 test    byte ptr [SharedUserData+0x308 (00000000`7ffe0308)],1\n"
    (ins,) = parse("u", out).instructions
    assert ins.target == "0x000000007ffe0308"


# --------------------------------------------------------------------------- dc


def test_dc_character_column_keeps_its_blanks() -> None:
    # lkd dc /c5 of an import directory, alipasaturhan.github.io PE post: the first byte of
    # the second row is 0x20; the short last row pads its missing cells with blanks
    out = (
        "00007ff6`8d0ed0d4  0002d320 00000000 00000000 0002e342 00026800   ...........B....h..\n"
        "00007ff6`8d0ed138  0002d8a0 00000000                             ........\n"
    )
    r = parse("dc /c5 00007ff68d0c0000+2d0c0", out)
    assert [row.ascii for row in r.rows] == [" ...........B....h..", "........"]


def test_arm64_banner_and_connect_lines_name_the_machine() -> None:
    # an ARM64 KDNET/COM break-in as published in ARM64 driver bring-up notes
    out = (
        "Connected to Windows 10 21337 ARM 64-bit (AArch64) target at (Mon Mar 22 10:01:02.123 2021 (UTC + 8:00)), "
        "ptr64 TRUE\n"
        "Kernel Debugger connection established.\n"
        "Windows 10 Kernel Version 21337 MP (4 procs) Free ARM 64-bit (AArch64)\n"
    )
    record = parse("", out)
    assert record.kind == "events"
    assert record.target is not None and record.target.arch == "ARM64" and record.target.processors == 4
    assert any(e.kind == "connected" and e.name == "Windows 10 21337" for e in record.events)


def test_connect_line_of_an_x86_compatible_target() -> None:
    # a Windows 7 x86 kd log: "x86 compatible" between the build and "target"
    out = (
        "Connected to Windows 7 7601 x86 compatible target at (Sat Jan 11 08:12:40.433 2014 (UTC + 8:00)), "
        "ptr64 FALSE\n"
    )
    record = parse("", out)
    assert record.kind == "events"
    assert record.target is not None and record.target.arch == "x86" and record.target.build == 7601
    assert any(e.kind == "connected" for e in record.events)
