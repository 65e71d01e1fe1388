"""Kernel-object layouts found in published debugger output the corpus lacks.

Each test feeds a short excerpt in the layout as published (where it was seen is named
above the excerpt) and checks what a person reads from it.
"""

from __future__ import annotations

from kdmcp.parse import parse

# --------------------------------------------------------------------------- !irp


def test_irp_na_locations_are_kept_with_their_own_args() -> None:
    # Microsoft docs, bug check 0x9F example (!irp, Windows 8+ layout; 3 of its 7 locations)
    out = (
        "Irp is active with 3 stacks 2 is current (= 0xfffffa800ab61e08)\n"
        " No Mdl: No System Buffer: Thread 00000000:  Irp stack trace.  \n"
        "     cmd  flg cl Device   File     Completion-Context\n"
        " [N/A(0), N/A(0)]\n"
        "            0  0 00000000 00000000 00000000-00000000    \n"
        "\n"
        "            Args: 00000000 00000000 00000000 00000000\n"
        ">[IRP_MJ_POWER(16), IRP_MN_SET_POWER(2)]\n"
        "            0 e1 fffffa800783f060 00000000 00000000-00000000    pending\n"
        "           \\Driver\\HidUsb\n"
        "            Args: 00016600 00000001 00000004 00000006\n"
        " [N/A(0), N/A(0)]\n"
        "            0  0 00000000 00000000 00000000-fffffa800ad00170    \n"
        "\n"
        "            Args: 00000000 00000000 00000000 00000000\n"
    )
    r = parse("!irp fffffa800ab61bd0", out)
    assert [(loc.major, loc.minor, loc.current) for loc in r.irp_stack] == [
        ("N/A(0)", "N/A(0)", False),
        ("IRP_MJ_POWER(16)", "IRP_MN_SET_POWER(2)", True),
        ("N/A(0)", "N/A(0)", False),
    ]
    power = r.irp_stack[1]
    assert power.args == ["0x00016600", "0x00000001", "0x00000004", "0x00000006"]
    assert power.pending and power.driver == "\\Driver\\HidUsb" and power.device == "0xfffffa800783f060"
    assert r.irp_stack[2].context == "0xfffffa800ad00170"
    assert r.irp_stack[2].args == ["0x00000000"] * 4


def test_irp_current_na_location_and_flag_1_details() -> None:
    # jasandoval1/windev_training, io-subsystem/tracking-irps/README.md ("!irp <addr> 1",
    # tab-indented Args; the author cut the detail list at "...")
    out = (
        "Irp is active with 2 stacks 1 is current (= 0xffffc38e3d0bc0e0)\n"
        " Mdl=ffffc38e3b905880: No System Buffer: Thread ffffc38e3d0e9080:  Irp stack trace.  \n"
        "Flags = 00060900\n"
        "ThreadListEntry.Flink = ffffc38e3d0e9700\n"
        "ThreadListEntry.Blink = ffffc38e3d0e9700\n"
        "    ...\n"
        "Tail.CompletionKey = 116b080a350\n"
        "     cmd  flg cl Device   File     Completion-Context\n"
        ">[N/A(f), N/A(6)]\n"
        "            0  1 00000000 00000000 00000000-00000000    pending\n"
        "\n"
        "\t\t\tArgs: ffffa08f58fd3a70 116b2963c70 0x0 ffffc38e3b905880\n"
        " [IRP_MJ_READ(3), N/A(0)]\n"
        "            0  0 ffffc38e2cd58e00 ffffc38e2ff24e20 00000000-00000000    \n"
        "\t       \\Driver\\condrv\n"
        "\t\t\tArgs: 00001000 00000000 00000000 00000000\n"
    )
    r = parse("!irp ffffc38e3d0bc010 1", out)
    current, read = r.irp_stack
    assert (current.major, current.minor, current.current, current.pending) == ("N/A(f)", "N/A(6)", True, True)
    assert current.args == ["0xffffa08f58fd3a70", "0x116b2963c70", "0x0", "0xffffc38e3b905880"]
    assert (read.major, read.current, read.driver) == ("IRP_MJ_READ(3)", False, "\\Driver\\condrv")
    assert read.args == ["0x00001000", "0x00000000", "0x00000000", "0x00000000"]
    assert r.fields["Flags"] == "00060900"
    assert r.fields["ThreadListEntry.Flink"] == "ffffc38e3d0e9700"
    assert r.fields["ThreadListEntry.Blink"] == "ffffc38e3d0e9700"
    assert r.fields["Tail.CompletionKey"] == "116b080a350"
    assert r.fields["mdl"] == "0xffffc38e3b905880"


def test_irp_trimmed_header_and_row() -> None:
    # Korean write-up of a bug check 0x9F in e1dn.sys (2026): the author cut the header's
    # "(= 0x...)" and the middle of the column row ("...")
    out = (
        "Irp is active with 8 stacks 7 is current\n"
        ">[IRP_MJ_POWER(16), IRP_MN_SET_POWER(2)]\n"
        "   0 e1 ffff920fc5ca9c60 ... fffff802bd55b320  Success Error Cancel pending\n"
        "       \\Driver\\e1dnexpress   nt!PopRequestCompletion\n"
        "       Args: 00000000 00000001 00000004 00000000\n"
    )
    r = parse("!irp ffff920fc6603920", out)
    assert (r.fields["state"], r.fields["stack_count"], r.fields["current_location"]) == ("active", "8", "7")
    assert "current_location_address" not in r.fields
    (loc,) = r.irp_stack
    assert (loc.flags, loc.control, loc.device) == ("0", "e1", "0xffff920fc5ca9c60")
    assert loc.invoke_on == ["Success", "Error", "Cancel"] and loc.pending
    assert (loc.driver, loc.completion_symbol) == ("\\Driver\\e1dnexpress", "nt!PopRequestCompletion")


# --------------------------------------------------------------------------- !pte


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


# --------------------------------------------------------------------------- !object


def test_object_directory_type_with_a_blank() -> None:
    # Jekyll post "Exploring the Windows Executive - Part 1 - Object Manager" (2016, Win7 x86)
    out = (
        "Object: 86a05750  Type: (85261eb0) Directory\n"
        "    Hash Address  Type          Name\n"
        "    ---- -------  ----          ----\n"
        "     01  8d5f6dc0 ALPC Port     SeLsaCommandPort\n"
        "         8d464500 Event         UniqueInteractiveSessionIdEvent\n"
        "     22  9335d528 Directory     RPC Control\n"
    )
    r = parse("!object \\", out)
    assert [(d.hash, d.type, d.name) for d in r.directory] == [
        ("01", "ALPC Port", "SeLsaCommandPort"),
        ("01", "Event", "UniqueInteractiveSessionIdEvent"),
        ("22", "Directory", "RPC Control"),
    ]


def test_object_symbolic_link_target() -> None:
    # same post: "!object \Global??\C:"
    out = (
        "Object: 86bda030  Type: (85261de8) SymbolicLink\n"
        "    ObjectHeader: 86bda018 (new version)\n"
        "    HandleCount: 0  PointerCount: 1\n"
        "    Directory Object: 86a05128  Name: C:\n"
        "    Target String is '\\Device\\HarddiskVolume2'\n"
        "    Drive Letter Index is 3 (C:)\n"
    )
    r = parse("!object 86bda030", out)
    assert r.name == "C:" and r.fields["type"] == "SymbolicLink"
    assert r.fields["target"] == "\\Device\\HarddiskVolume2"
    assert (r.fields["drive_letter_index"], r.fields["drive_letter"]) == ("3", "C:")


def test_object_name_with_a_blank() -> None:
    # made in the layout of the post above, whose root directory lists "RPC Control"
    out = "Object: 9335d528  Type: (85261eb0) Directory\n    Directory Object: 86a05750  Name: RPC Control\n"
    assert parse('!object "\\RPC Control"', out).name == "RPC Control"


# --------------------------------------------------------------------------- !devstack


def test_devstack_driver_glued_to_devext_without_name() -> None:
    # Chinese note on layered TDI drivers (TdiDriverTest), x64
    out = (
        "  !DevObj           !DrvObj            !DevExt           ObjectName\n"
        "> fffffa80058b1b70  \\Driver\\TdiDriverTest00000000  \n"
        "  fffffa80044fd060  \\Driver\\tdx        fffffa80044fd1b0  Tcp\n"
    )
    r = parse("!devstack 0xfffffa80`058b1b70", out)
    assert [(d.current, d.device, d.driver, d.extension, d.name) for d in r.devices] == [
        (True, "0xfffffa80058b1b70", "\\Driver\\TdiDriverTest", "0x00000000", None),
        (False, "0xfffffa80044fd060", "\\Driver\\tdx", "0xfffffa80044fd1b0", "Tcp"),
    ]


def test_devstack_name_complaints_are_warnings() -> None:
    # Microsoft docs, bug check 0x9F example
    out = (
        "  !DevObj           !DrvObj            !DevExt           ObjectName\n"
        "  fffffa800783f060  \\Driver\\HidUsb     fffffa800783f1b0  "
        "InfoMask field not found for _OBJECT_HEADER at fffffa800783f030\n"
        "\n"
        "> fffffa8007b13440  \\Driver\\usbhub     fffffa8007b13590  "
        "Cannot read info offset from nt!ObpInfoMaskToOffset\n"
    )
    r = parse("!devstack fffffa8007b13440", out)
    assert [(d.driver, d.name) for d in r.devices] == [("\\Driver\\HidUsb", None), ("\\Driver\\usbhub", None)]
    assert r.devices[1].current
    assert r.warnings == [
        "InfoMask field not found for _OBJECT_HEADER at fffffa800783f030",
        "Cannot read info offset from nt!ObpInfoMaskToOffset",
    ]


# --------------------------------------------------------------------------- !handle


def test_handle_object_block_per_handle() -> None:
    # jasandoval1/windev_training, io-subsystem/tracking-irps/README.md ("!handle 0 3 <proc> File")
    out = (
        "Handle table at ffffa08f5ad26540 with 45 entries in use\n"
        "\n"
        "0044: Object: ffffc38e2ff24e20  GrantedAccess: 0012019f "
        "(Protected) (Inherit) (Audit) Entry: ffffa08f5b1ff110\n"
        "Object: ffffc38e2ff24e20  Type: (ffffc38e2c0fcf00) File\n"
        "    ObjectHeader: ffffc38e2ff24df0 (new version)\n"
        "        HandleCount: 2  PointerCount: 65456\n"
        "        Directory Object: 00000000  Name: \\Input {ConDrv}\n"
    )
    r = parse("!handle 0 3 ffffc38e2c0dc080 File", out)
    assert (r.fields["handle_table"], r.fields["entries_in_use"]) == ("0xffffa08f5ad26540", "45")
    (entry,) = r.entries
    assert entry["handle"] == "0x0044" and entry["attributes"] == "Protected Inherit Audit"
    assert entry["entry"] == "0xffffa08f5b1ff110"
    assert (entry["type"], entry["type_address"]) == ("File", "0xffffc38e2c0fcf00")
    assert entry["object_header"] == "0xffffc38e2ff24df0"
    assert (entry["handle_count"], entry["pointer_count"]) == ("2", "65456")
    assert entry["name"] == "\\Input {ConDrv}"


# --------------------------------------------------------------------------- !devobj / !drvobj


def test_devobj_wrapped_flag_names_and_zero_flags() -> None:
    # "Exploring the Windows Executive - Part 1" post: !devobj of HarddiskVolume2 (Win7 x86)
    out = (
        "Device object (8a7fa540) is for:\n"
        " HarddiskVolume2 \\Driver\\volmgr DriverObject 853ff098\n"
        "ExtensionFlags (0xc0000800)  DOE_DEFAULT_SD_PRESENT, DOE_BOTTOM_OF_FDO_STACK, \n"
        "                             DOE_DESIGNATED_FDO\n"
        "Characteristics (0000000000)  \n"
        "AttachedDevice (Upper) 8a7fc668 \\Driver\\fvevol\n"
    )
    r = parse("!devobj 8a7fa540", out)
    assert r.name == "HarddiskVolume2"
    assert r.fields["ExtensionFlags"] == "0xc0000800"
    assert r.fields["ExtensionFlags_names"] == "DOE_DEFAULT_SD_PRESENT, DOE_BOTTOM_OF_FDO_STACK, DOE_DESIGNATED_FDO"
    assert r.fields["Characteristics"] == "0x00000000" and "Characteristics_names" not in r.fields
    assert r.fields["attached_device"] == "0x8a7fc668"


def test_devobj_zero_extension_flags() -> None:
    # Microsoft docs, !devobj example (the PnP manager's PDO)
    out = (
        "Device object (80e204f8) is for:\n"
        "  \\Driver\\PnpManager DriverObject 80e20610\n"
        "ExtensionFlags (0000000000)  \n"
        "Device queue is not busy.\n"
    )
    r = parse("!devobj 80e204f8", out)
    assert r.fields["ExtensionFlags"] == "0x00000000"
    assert r.fields["driver"] == "\\Driver\\PnpManager"


def test_drvobj_old_layout_name_on_next_line() -> None:
    # Microsoft docs, !drvobj example (Alpha target, no address in the header)
    out = "Driver object is for:\n\\Driver\\symc810\nDevice Object list:\n809d50d0\n"
    r = parse("!drvobj 809d5550", out)
    assert r.name == "\\Driver\\symc810"
    assert r.address is None
    assert r.entries == [{"device": "0x809d50d0"}]


# --------------------------------------------------------------------------- !vad / !devnode / !lmi


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


def test_devnode() -> None:
    # Microsoft docs, !devobj page (the !devnode example before it)
    out = (
        "Dumping IopRootDeviceNode (= 0x80e203b8)\n"
        "DevNode 0x80e203b8 for PDO 0x80e204f8\n"
        " Parent 0000000000   Sibling 0000000000   Child 0x80e56dc8\n"
        '  InstancePath is "HTREE\\ROOT\\0"\n'
        "  State = DeviceNodeStarted (0x308)\n"
        "  Flags (0x00000131)  DNF_MADEUP, DNF_ENUMERATED, \n"
        "                      DNF_IDS_QUERIED, DNF_NO_RESOURCE_REQUIRED\n"
        "  DisableableDepends = 11 (from children)\n"
    )
    r = parse("!devnode", out)
    assert r.kind == "object" and r.address == "0x80e203b8"
    assert (r.fields["pdo"], r.fields["parent"], r.fields["child"]) == ("0x80e204f8", "0x00000000", "0x80e56dc8")
    assert r.fields["InstancePath"] == "HTREE\\ROOT\\0"
    assert r.fields["State"] == "DeviceNodeStarted (0x308)"
    assert r.fields["Flags"] == "0x00000131"
    assert r.fields["Flags_names"] == "DNF_MADEUP, DNF_ENUMERATED, DNF_IDS_QUERIED, DNF_NO_RESOURCE_REQUIRED"
    assert r.fields["DisableableDepends"] == "11 (from children)"
    assert r.entries == [
        {
            "devnode": "0x80e203b8",
            "pdo": "0x80e204f8",
            "instance_path": "HTREE\\ROOT\\0",
            "state": "DeviceNodeStarted (0x308)",
        }
    ]


def test_lmi() -> None:
    # Microsoft docs, "Debugging performance-optimized code" (!lmi ntdll)
    out = (
        "Loaded Module Info: [ntdll]\n"
        "         Module: ntdll\n"
        "   Base Address: 77f80000\n"
        "     Image Name: ntdll.dll\n"
        "     Time Stamp: 394193d2 Fri Jun 09 18:03:14 2000\n"
        "    Symbol Type: DIA PDB  - Symbols loaded successfully from symbol server.\n"
        "                 c:\\symbols\\dll\\ntdll.pdb\n"
    )
    r = parse("!lmi ntdll", out)
    assert r.kind == "object" and r.object_type == "lmi"
    assert (r.name, r.address) == ("ntdll", "0x77f80000")
    assert r.fields["Image Name"] == "ntdll.dll"
    assert r.fields["Time Stamp"] == "394193d2 Fri Jun 09 18:03:14 2000"
    assert r.fields["Symbol Type"] == (
        "DIA PDB  - Symbols loaded successfully from symbol server.\nc:\\symbols\\dll\\ntdll.pdb"
    )
    assert "c" not in r.fields  # the drive letter's colon is not a key
