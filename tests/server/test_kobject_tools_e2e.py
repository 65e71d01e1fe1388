"""End to end over stdio: the driver tools on the simulated world (issue 16).

``kd-mcp --simulate`` driven by the SDK's stdio client, a kernel at its initial break: myfault's
driver object (its three handled majors), the disk stack's device object (flags, type, the
stack top to bottom), myfault's device and its pending IRP with the IOCTL decoded, kd's refusals
as invalid_argument, and a user-mode session refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kdmcp.parse import ioctl
from kdmcp.sim.world import drivers
from tests.server.test_run_tools_e2e import kernel
from tests.server.test_targets_e2e import stdio_server

pytestmark = [pytest.mark.anyio, pytest.mark.process]

MYFAULT = "0xfffff80060da0000"


async def test_driver_object_lists_the_majors_a_driver_handles(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        got = await call("driver_object", name="myfault")
        assert got["command"] == "!drvobj myfault 7" and got["name"] == "\\Driver\\myfault"
        handled = {(d["major"], d["symbol"]) for d in got["dispatch"]}
        assert handled == {("IRP_MJ_CREATE", "myfault+0x1f80"), ("IRP_MJ_CLOSE", "myfault+0x1f80"),
                           ("IRP_MJ_DEVICE_CONTROL", "myfault+0x1e00")}
        assert got["unhandled_majors"] == 25  # IRP_MJ_PNP is 0x1b: 28 majors in all
        assert got["routines"] == {
            "DriverEntry": {"address": "0xfffff80060da6000", "symbol": "myfault+0x6000"},
            "DriverUnload": {"address": "0xfffff80060da2000", "symbol": "myfault+0x2000"},
        }
        assert got["devices"] == [{"address": "0xffffe70f300b4610", "name": "Myfault"}]
        # the same driver by its DRIVER_OBJECT address and by its full name
        for name in (got["address"], "\\Driver\\myfault"):
            again = await call("driver_object", name=name)
            assert again["dispatch"] == got["dispatch"] and again["address"] == got["address"]
        # a class driver sends every major to one routine: nothing is left to IopInvalidDeviceRequest
        disk = await call("driver_object", name="disk")
        assert len(disk["dispatch"]) == 28 and "unhandled_majors" not in disk
        assert {d["symbol"] for d in disk["dispatch"]} == {"CLASSPNP!ClassGlobalDispatch"}

        missing = await call("driver_object", name="nosuch")
        assert missing["category"] == "invalid_argument" and "not found" in missing["message"]
        assert (await call("driver_object", name="myfault 0"))["category"] == "invalid_argument"


async def test_device_object_reads_flags_type_and_the_stack(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        dr0 = await call("device_object", name="\\Device\\Harddisk0\\DR0")
        assert dr0["address"] == "0xffffe70f300b3230" and dr0["driver"] == "\\Driver\\disk"
        assert dr0["device_type_name"] == "FILE_DEVICE_DISK"
        assert dr0["flag_names"] == ["DO_DIRECT_IO", "DO_DEVICE_HAS_NAME", "DO_POWER_PAGABLE"]
        assert dr0["characteristics"] == ["FILE_DEVICE_SECURE_OPEN"]
        assert [(s["driver"], s.get("this", False)) for s in dr0["stack"]] == [
            ("\\Driver\\partmgr", False), ("\\Driver\\disk", True), ("\\Driver\\ACPI", False), ("\\Driver\\pci", False),
        ]
        assert dr0["attached_device"]["driver"] == "\\Driver\\partmgr"
        assert dr0["attached_to"]["driver"] == "\\Driver\\ACPI"
        by_address = await call("device_object", address="ffffe70f300b3230")
        assert by_address["stack"] == dr0["stack"]

        mine = await call("device_object", name="\\Device\\Myfault")
        assert mine["device_type"] == "0x8336" and "device_type_name" not in mine  # a vendor's type
        assert mine["current_irp"] == "0xffffe70f2ed94d70"

        for args in ({}, {"address": "1", "name": "\\Device\\Myfault"}, {"name": "a;g"}):
            assert (await call("device_object", **args))["category"] == "invalid_argument", args
        not_one = await call("device_object", address="0")
        assert not_one["category"] == "invalid_argument" and "is not a device object" in not_one["message"]


async def test_irp_decodes_the_pending_ioctl(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        device = await call("device_object", name="\\Device\\Myfault")
        got = await call("irp", address=device["current_irp"])
        assert got["irp_state"] == "active" and got["stack_count"] == 1 and got["current_location"] == 1
        (loc,) = got["locations"]
        assert loc["major"] == "IRP_MJ_DEVICE_CONTROL" and loc["major_code"] == 0xE and loc["current"]
        assert loc["device"] == device["address"] and loc["driver"] == "\\Driver\\myfault" and loc["pending"]
        assert loc["ioctl"] == ioctl.decode(drivers.WAIT_CODE).model_dump(exclude_defaults=True)
        assert loc["input_length"] == 0x20 and loc["output_length"] == 0x20
        assert got["system_buffer"] == "0xffffe70f300b48f0" and got["thread"] == "0xffffe70f2d53a080"

        assert "details" not in got
        detailed = await call("irp", address=device["current_irp"], detail=True)
        assert detailed["command"] == f"!irp {device['current_irp']} 1"
        # the set fields of "!irp ADDR 1"; kd's zeros (IoStatus.Status = 00000000...) are left out
        assert detailed["details"]["UserBuffer"] == "000001e35fb24550" and "IoStatus.Status" not in detailed["details"]
        assert detailed["details"]["Tail.Overlay.CurrentStackLocation"] == "ffffe70f2ed94e40"
        assert detailed["locations"] == got["locations"]

        bad = await call("irp", address="0")
        assert bad["category"] == "invalid_argument" and "probably not an IRP" in bad["message"]
        assert (await call("irp", address="1;g"))["category"] == "invalid_argument"


async def test_a_user_mode_session_is_refused(tmp_path: Path) -> None:
    async with stdio_server(tmp_path, "allow_attach: true\n") as call:
        assert not (await call("attach_process", pid=1234))["_is_error"]
        try:
            for tool, args in (("driver_object", {"name": "myfault"}), ("irp", {"address": "1"}),
                               ("device_object", {"address": "1"})):
                got = await call(tool, **args)
                assert got["category"] == "invalid_argument" and "kernel objects" in got["message"], got
        finally:
            await call("stop_kd")
