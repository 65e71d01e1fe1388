"""``kdmcp.parse.objects.devices``: hand-written excerpts of layouts the corpus lacks.

Each names where the layout was published (a write-up, a note, a docs page); the corpus samples
of this family are checked in ``test_devices.py``.
"""

from __future__ import annotations

from kdmcp.parse import parse


def test_windows8_irp_layout() -> None:
    out = (
        "Irp is active with 3 stacks 3 is current (= 0xffffe000d94e6e08)\n"
        " No Mdl: No System Buffer: Thread ffffe000d8e89880:  Irp stack trace.  \n"
        "     cmd  flg cl Device   File     Completion-Context\n"
        ">[IRP_MJ_DEVICE_CONTROL(e), N/A(0)]\n"
        "            5 e0 ffffe000d69c5050 ffffe000d9f2c070 fffff8016f3e2a40-ffffe000d94e6d50 Success Error Cancel \n"
        "\t       \\Driver\\ACPI\tnt!IopUnloadSafeCompletion\n"
        "\t\t\tArgs: 00000000 00000000 00000000 00000000\n"
    )
    r = parse("!irp ffffe000d94e6d50", out)
    (loc,) = r.irp_stack
    assert loc.current and loc.major == "IRP_MJ_DEVICE_CONTROL(e)" and loc.device == "0xffffe000d69c5050"
    assert loc.driver == "\\Driver\\ACPI" and loc.completion_symbol == "nt!IopUnloadSafeCompletion"
    assert r.fields["thread"] == "0xffffe000d8e89880" and "system_buffer" not in r.fields


def test_irp_system_buffer_is_kept() -> None:
    # the same Windows 10 header line with a buffered request's AssociatedIrp.SystemBuffer in it
    r = parse("!irp 1", " No Mdl: System buffer=ffffe70f300b48f0: Thread ffffe70f2d53a080:  Irp stack trace.\n")
    assert r.fields == {"system_buffer": "0xffffe70f300b48f0", "thread": "0xffffe70f2d53a080"}


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


def test_drvobj_device_list_several_per_line_ends_at_the_next_section() -> None:
    # Microsoft docs, the JavaScript DeviceExtensionInformation example (!drvobj HDAudBus):
    # an extension entry, then two devices on one line
    out = (
        "Driver object (ffffb60757a4ae60) is for:\n"
        " \\Driver\\HDAudBus\n"
        "Driver Extension List: (id , addr)\n"
        "(fffff8050a9eb290 ffffb60758413180)  \n"
        "Device Object list:\n"
        "ffffb60758e21810  ffffb60757a67c60\n"
        "\n"
        "DriverEntry:   fffff80114b45310\tHDAudBus!FxDriverEntry\n"
    )
    r = parse("!drvobj HDAudBus", out)
    assert r.entries == [{"device": "0xffffb60758e21810"}, {"device": "0xffffb60757a67c60"}]
    assert r.fields["driver_entry"] == "0xfffff80114b45310"


def test_drvobj_symbol_complaint_before_the_name_is_a_warning() -> None:
    # "A Bug Hunter's Diary" (Klein), chapter 6: !drvobj AavmKer4 7 on Windows XP, where the
    # symbol load of the name lookup prints its complaint (wrapped by the book) before the name
    out = (
        "Driver object (86444f38) is for:\n"
        "*** ERROR: Symbol file could not be found.  Defaulted to export\n"
        " symbols for Aavmker4.SYS -\n"
        " \\Driver\\Aavmker4\n"
        "Driver Extension List: (id , addr)\n"
        "\n"
        "Device Object list:\n"
        "863a9150\n"
        "\n"
        "DriverEntry:   f792d620 Aavmker4\n"
    )
    r = parse("!drvobj AavmKer4 7", out)
    assert r.name == "\\Driver\\Aavmker4"
    assert r.entries == [{"device": "0x863a9150"}]
    assert r.warnings == [
        "*** ERROR: Symbol file could not be found.  Defaulted to export",
        "symbols for Aavmker4.SYS -",
    ]


def test_devstack_row_split_by_symbol_load_messages() -> None:
    # the layout of the class: kdexts prints the row's address, then the symbol load
    # its driver-name lookup triggers prints its complaint, then the rest of the row follows
    out = (
        "  !DevObj           !DrvObj            !DevExt           ObjectName\n"
        "  ffffe0018a0f8040  \n"
        "*** ERROR: Module load completed but symbols could not be loaded for foo.sys\n"
        "  \\Driver\\foo        ffffe0018a0f8190  FooDev\n"
        "> ffffe0018a0f9040  *** ERROR: Symbol file could not be found.  Defaulted to export symbols for bar.sys -\n"
        "\\Driver\\bar        ffffe0018a0f9190  0000004e\n"
    )
    r = parse("!devstack ffffe0018a0f9040", out)
    assert [(d.current, d.device, d.driver, d.extension, d.name) for d in r.devices] == [
        (False, "0xffffe0018a0f8040", "\\Driver\\foo", "0xffffe0018a0f8190", "FooDev"),
        (True, "0xffffe0018a0f9040", "\\Driver\\bar", "0xffffe0018a0f9190", "0000004e"),
    ]
    assert r.warnings == [
        "*** ERROR: Module load completed but symbols could not be loaded for foo.sys",
        "*** ERROR: Symbol file could not be found.  Defaulted to export symbols for bar.sys -",
    ]


def test_symbol_load_lines_inside_irp_devobj_devnode_are_warnings() -> None:
    # resolving a completion routine or a driver name loads symbols, and the engine prints its
    # complaint in the middle of the extension's output (as in the !drvobj and !devstack samples)
    noise = "*** ERROR: Module load completed but symbols could not be loaded for foo.sys\n"
    irp = parse(
        "!irp ffffd581a6c6cd30",
        "Irp is active with 1 stacks 1 is current (= 0xffffd581a6c6cf68)\n" + noise + ">[IRP_MJ_READ(3), N/A(0)]\n"
        "            0 e1 ffffd581a5fbd050 00000000 fffff806d2412cf0-00000000 Success Error Cancel pending\n",
    )
    assert irp.warnings == [noise.strip()] and len(irp.irp_stack) == 1
    dev = parse(
        "!devobj ffffab0806cc6c80",
        "Device object (ffffab0806cc6c80) is for:\n" + noise + " foo \\Driver\\foo DriverObject ffffab0806cf6e20\n",
    )
    assert dev.warnings == [noise.strip()] and dev.fields["driver"] == "\\Driver\\foo"
    node = parse("!devnode 0 1", "DevNode 0x80e203b8 for PDO 0x80e204f8\n" + noise)
    assert node.warnings == [noise.strip()] and node.address == "0x80e203b8"
