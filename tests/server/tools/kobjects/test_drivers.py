"""The driver tools' readings without a process (fast tier): majors in both !irp layouts, the
IOCTL of a device-control location, kd's zero pointers and the device flags' names."""

from __future__ import annotations

from kdmcp.parse import io_names
from kdmcp.parse.models.objects import IrpStackLocation
from kdmcp.server.tools.kobjects import drivers


def test_majors_in_the_named_and_the_old_layout() -> None:
    assert drivers._major("IRP_MJ_DEVICE_CONTROL(e)") == ("IRP_MJ_DEVICE_CONTROL", 0xE)
    assert drivers._major("N/A(0)") == ("N/A", 0)
    assert drivers._major("e") == ("IRP_MJ_DEVICE_CONTROL", 0xE)  # ">[  e, 0]"
    assert drivers._major("1b") == ("IRP_MJ_PNP", 0x1B)
    assert drivers._major("3f") == ("N/A", 0x3F)


def test_a_device_control_location_has_its_ioctl_decoded_and_others_do_not() -> None:
    loc = drivers._location(IrpStackLocation(
        major="IRP_MJ_INTERNAL_DEVICE_CONTROL(f)", minor="0", args=["0x00000010", "0x00000008", "0x222003", "0x0"]
    ))
    assert loc.ioctl is not None and loc.ioctl.ctl_code.startswith("CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800")
    assert (loc.output_length, loc.input_length) == (0x10, 8)
    read = drivers._location(IrpStackLocation(major="3", minor="0", args=["0x1000", "0", "0x222003", "0"]))
    assert read.major == "IRP_MJ_READ" and read.ioctl is None
    unused = drivers._location(IrpStackLocation(major="N/A(e)", minor="N/A(0)", args=["0", "0", "0x222003", "0"]))
    assert unused.ioctl is None  # an unused location's words are not a request
    cut = drivers._location(IrpStackLocation(major="e", minor="0", args=["...", "...", "...", "..."]))
    assert cut.ioctl is None and cut.args == ["...", "...", "...", "..."]


def test_zero_pointers_are_absent_and_addresses_are_0x() -> None:
    assert drivers._nonzero("00000000") is None and drivers._nonzero(None) is None
    assert drivers._nonzero("ffffe70f`2ed94d70") == "0xffffe70f2ed94d70"
    assert drivers._nonzero("N/A") == "N/A"


def test_device_flags_are_named_and_unknown_bits_kept() -> None:
    assert io_names.device_flag_names(0x2050) == ["DO_DIRECT_IO", "DO_DEVICE_HAS_NAME", "DO_POWER_PAGABLE"]
    assert io_names.device_flag_names(0x40000001) == ["0x40000001"]
    assert io_names.major_name(0x0E) == "IRP_MJ_DEVICE_CONTROL" and io_names.major_name(0x1C) is None
