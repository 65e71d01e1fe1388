"""The driver tools' text blocks (fast tier): the lines they add to the raw output."""

from __future__ import annotations

from kdmcp.server.tools.kobjects.models import DeviceObjectResult, DriverObjectResult, IrpResult


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
