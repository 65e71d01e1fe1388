"""The driver tools' readings without a process (fast tier): majors in both !irp layouts, the
IOCTL of a device-control location, and the lines the text block adds to the raw output."""

from __future__ import annotations

from kdmcp.parse import io_names
from kdmcp.parse.models.objects import IrpStackLocation
from kdmcp.server.tools.kobjects import logic as kobjects
from kdmcp.server.tools.kobjects.models import DeviceObjectResult, DriverObjectResult, IrpResult


def test_majors_in_the_named_and_the_old_layout() -> None:
    assert kobjects._major("IRP_MJ_DEVICE_CONTROL(e)") == ("IRP_MJ_DEVICE_CONTROL", 0xE)
    assert kobjects._major("N/A(0)") == ("N/A", 0)
    assert kobjects._major("e") == ("IRP_MJ_DEVICE_CONTROL", 0xE)  # ">[  e, 0]"
    assert kobjects._major("1b") == ("IRP_MJ_PNP", 0x1B)
    assert kobjects._major("3f") == ("N/A", 0x3F)


def test_a_device_control_location_has_its_ioctl_decoded_and_others_do_not() -> None:
    loc = kobjects._location(IrpStackLocation(
        major="IRP_MJ_INTERNAL_DEVICE_CONTROL(f)", minor="0", args=["0x00000010", "0x00000008", "0x222003", "0x0"]
    ))
    assert loc.ioctl is not None and loc.ioctl.ctl_code.startswith("CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800")
    assert (loc.output_length, loc.input_length) == (0x10, 8)
    read = kobjects._location(IrpStackLocation(major="3", minor="0", args=["0x1000", "0", "0x222003", "0"]))
    assert read.major == "IRP_MJ_READ" and read.ioctl is None
    unused = kobjects._location(IrpStackLocation(major="N/A(e)", minor="N/A(0)", args=["0", "0", "0x222003", "0"]))
    assert unused.ioctl is None  # an unused location's words are not a request
    cut = kobjects._location(IrpStackLocation(major="e", minor="0", args=["...", "...", "...", "..."]))
    assert cut.ioctl is None and cut.args == ["...", "...", "...", "..."]


def test_zero_pointers_are_absent_and_addresses_are_0x() -> None:
    assert kobjects._nonzero("00000000") is None and kobjects._nonzero(None) is None
    assert kobjects._nonzero("ffffe70f`2ed94d70") == "0xffffe70f2ed94d70"
    assert kobjects._nonzero("N/A") == "N/A"


def test_device_flags_are_named_and_unknown_bits_kept() -> None:
    assert io_names.device_flag_names(0x2050) == ["DO_DIRECT_IO", "DO_DEVICE_HAS_NAME", "DO_POWER_PAGABLE"]
    assert io_names.device_flag_names(0x40000001) == ["0x40000001"]
    assert io_names.major_name(0x0E) == "IRP_MJ_DEVICE_CONTROL" and io_names.major_name(0x1C) is None


def test_the_text_lines_say_what_the_raw_output_does_not_at_a_glance() -> None:
    driver = {"dispatch": [{"major": "IRP_MJ_CREATE", "address": "0x1", "symbol": "a+0x10"},
                           {"major": "IRP_MJ_CLOSE", "address": "0x1", "symbol": "a+0x10"},
                           {"major": "IRP_MJ_DEVICE_CONTROL", "address": "0x2"}], "unhandled_majors": 25}
    assert DriverObjectResult.text_lines(driver) == [
        "a+0x10: IRP_MJ_CREATE, IRP_MJ_CLOSE",
        "0x2: IRP_MJ_DEVICE_CONTROL",
        "25 other majors: nt!IopInvalidDeviceRequest",
    ]
    device = {"flags": "0x00002050", "flag_names": ["DO_DIRECT_IO"], "device_type": "0x7",
              "device_type_name": "FILE_DEVICE_DISK"}
    assert DeviceObjectResult.text_lines(device) == ["Flags 0x00002050: DO_DIRECT_IO", "Type 0x7: FILE_DEVICE_DISK"]
    assert DeviceObjectResult.text_lines({"device_type": "0x8336"}) == []
    request = {"locations": [{"ioctl": {"code": "0x00222003", "ctl_code": "CTL_CODE(X)"}}, {"major": "N/A"}]}
    assert IrpResult.text_lines(request) == ["IoControlCode 0x00222003 = CTL_CODE(X)"]
