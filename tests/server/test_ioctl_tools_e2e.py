"""End to end over stdio: ``decode_ioctl`` and ``ioctl_map`` on the simulated kernel (issue 16).

The simulated myfault.sys's IRP_MJ_DEVICE_CONTROL routine (kdmcp/sim/world/drivers.py) is real
x64 code: a compare chain of three codes, then a bounds-checked jump table of four. ``ioctl_map``
must recover exactly those codes, each routed to its case; ``pci``'s device-control entry is
nt!IopInvalidDeviceRequest; an unknown driver and a user-mode session are refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kdmcp.sim.world import drivers
from tests.server.test_run_tools_e2e import kernel
from tests.server.test_targets_e2e import stdio_server

pytestmark = [pytest.mark.anyio, pytest.mark.process]

MYFAULT = 0xFFFFF80060DA0000
ROUTINE = MYFAULT + 0x1E00


async def test_ioctl_map_recovers_every_code_myfaults_dispatch_routine_handles(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        got = await call("ioctl_map", driver="myfault")
        assert not got["_is_error"], got
        assert got["driver"] == "\\Driver\\myfault" and got["routine_symbol"] == "myfault+0x1e00"
        assert tuple(int(c["code"], 16) for c in got["codes"]) == drivers.IOCTLS
        # each code goes to its own case of the switch
        assert [int(c["handler"], 16) for c in got["codes"]] == [ROUTINE + off for off in drivers.CASES]
        hows = [c["how"] for c in got["codes"]]
        assert hows == ["compare"] * len(drivers.CHAIN_CODES) + ["jump_table"] * len(drivers.TABLE_CODES)
        assert all(c["confidence"] == "high" for c in got["codes"])
        assert got["codes"][3]["handler_symbol"] == "myfault+0x1ed0"
        assert (
            got["codes"][0]["ctl_code"]
            == "CTL_CODE(0x8336, 0x802, METHOD_NEITHER, FILE_READ_ACCESS | FILE_WRITE_ACCESS)"
        )
        assert got["default"] == [f"{ROUTINE + 0x110:#x}"] and "unresolved" not in got
        # the helper commands are hidden from the text, kept under output_id
        assert got["command"] == "!drvobj myfault 2; uf 0xfffff80060da1e00; dd 0xfffff80060da3000 L0x4"
        assert " cmp " not in got["_body"] and got["output_id"].startswith(got["session_id"] + ":")
        assert got["instructions"] > 40
        # by its object path and its DRIVER_OBJECT address, the same map
        again = await call("ioctl_map", driver="\\Driver\\myfault")
        assert again["codes"] == got["codes"]
        by_address = await call("ioctl_map", driver=got["driver_object"])
        assert by_address["codes"] == got["codes"]


async def test_a_listing_past_the_inline_cap_is_read_whole(tmp_path: Path) -> None:
    # !drvobj's table (~2.6 KB) and uf's listing (~3 KB) are longer than the inline cap: both are read
    # whole from the session's output
    async with kernel(tmp_path, "inline_output_bytes: 1024\n") as call:
        got = await call("ioctl_map", driver="myfault")
        assert tuple(int(c["code"], 16) for c in got["codes"]) == drivers.IOCTLS
        assert "listing_cut" not in got and got["instructions"] > 40


async def test_a_driver_without_a_device_control_routine_and_the_refusals(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        pci = await call("ioctl_map", driver="pci")
        assert not pci["_is_error"] and pci["handles_ioctls"] is False and "codes" not in pci
        assert pci["routine_symbol"] == "nt!IopInvalidDeviceRequest" and "no IOCTLs" in pci["note"]
        # a routine with no IoControlCode load: nothing recovered, and said so
        ndis = await call("ioctl_map", driver="ndis")
        assert "codes" not in ndis and "IoControlCode" in ndis["unresolved"][0]["reason"]
        # disk's device control is CLASSPNP's: the class driver dispatches for it, and the note says so
        disk = await call("ioctl_map", driver="disk")
        assert disk["routine_symbol"] == "CLASSPNP!ClassGlobalDispatch" and "CLASSPNP's, not disk's" in disk["note"]
        unknown = await call("ioctl_map", driver="nosuchdriver")
        assert unknown["category"] == "invalid_argument" and "not found" in unknown["message"]
        for bad in ("my fault", "a;g", 'x"y', ""):
            assert (await call("ioctl_map", driver=bad))["category"] == "invalid_argument"


async def test_decode_ioctl_needs_no_session_and_ioctl_map_needs_a_kernel(tmp_path: Path) -> None:
    async with stdio_server(tmp_path, "allow_attach: true\n") as call:
        d = await call("decode_ioctl", code="0x222003")
        assert d["ctl_code"] == "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_NEITHER, FILE_ANY_ACCESS)"
        assert d["device_type_name"] == "FILE_DEVICE_UNKNOWN" and d["vendor_function"] is True
        n = await call("decode_ioctl", code=0x2D1400)  # IOCTL_STORAGE_QUERY_PROPERTY, as an integer
        assert n["device_type_name"] == "FILE_DEVICE_MASS_STORAGE" and n["function"] == "0x500"
        assert n["method"] == "METHOD_BUFFERED" and n["access"] == "FILE_ANY_ACCESS"
        assert n["name"] == "IOCTL_STORAGE_QUERY_PROPERTY" and "name" not in d
        for bad in ("xyz", "0x1ffffffff", -1, "1;g"):
            assert (await call("decode_ioctl", code=bad))["category"] == "invalid_argument"
        started = await call("attach_process", pid=1234, timeout_s=30)
        assert started["state"] == "broken", started
        try:
            refused = await call("ioctl_map", driver="myfault")
            assert refused["category"] == "invalid_argument" and "kernel" in refused["message"]
        finally:
            await call("stop_kd")
