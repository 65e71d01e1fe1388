"""The typed driver tools as clients see them (issue 16); their logic is ``kobjects.py``.

Every argument that reaches kd's command line is checked here: an address is
``toolkit.Address``, a driver or device name one word (``myfault``, ``\\Driver\\myfault``,
``\\Device\\Harddisk0\\DR0``) with no blank, ';' or '"' that could end the command or add to it.
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.errors import InvalidArgument
from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Call, Ctx, run_tool
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.kobjects import logic as kobjects
from kdmcp.server.tools.kobjects.models import DeviceObjectResult, DriverObjectResult, IrpResult

__all__ = ["device_object", "driver_object", "irp"]

ObjectName = Annotated[
    str,
    Field(description="an object name or address", min_length=1, max_length=256, pattern=r'^[^\s;"]+$'),
]


@tool("inspect", reads("Driver object"))
async def driver_object(
    name: Annotated[ObjectName, Field(description="myfault, \\Driver\\myfault or a DRIVER_OBJECT address")],
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, DriverObjectResult]:
    """A driver (!drvobj 7): entry points, devices, the majors it handles and their routines."""
    return await run_tool(ctx, lambda c: kobjects.driver_object(c.app, session_id, name, owner=c.owner))


@tool("inspect", reads("Device object"))
async def device_object(
    address: Annotated[Address | None, Field(description="a DEVICE_OBJECT")] = None,
    name: Annotated[ObjectName | None, Field(description="or its name: \\Device\\Harddisk0\\DR0")] = None,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, DeviceObjectResult]:
    """A device (!devobj, !devstack): type, flags, characteristics, driver, the stack it is in."""

    def run(c: Call) -> DeviceObjectResult:
        given = address if name is None else name
        if given is None or (address is not None and name is not None):
            raise InvalidArgument("give one of address or name")
        return kobjects.device_object(c.app, session_id, given, owner=c.owner)

    return await run_tool(ctx, run)


@tool("inspect", reads("I/O request packet"))
async def irp(
    address: Address,
    detail: Annotated[bool, Field(description="!irp ADDR 1: also the IRP's own fields")] = False,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, IrpResult]:
    """An IRP (!irp): its stack locations (major, minor, device, completion) with IOCTLs decoded."""
    return await run_tool(ctx, lambda c: kobjects.irp(c.app, session_id, address, detail, owner=c.owner))
