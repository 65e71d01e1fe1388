"""``decode_ioctl`` and ``ioctl_map`` as clients see them; their logic is ``ioctl_map.py``.

The driver reaches kd's command line (``!drvobj DRIVER 2``), so it is one word: a name
(``myfault``, ``\\Driver\\myfault``) or a DRIVER_OBJECT address; no blank, ';' or '"'.
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.server.args import SessionId
from kdmcp.server.call import Ctx, run_tool
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.ioctl import ioctl_map as logic
from kdmcp.server.tools.ioctl.models import DecodeIoctlResult, IoctlMapResult

__all__ = ["decode_ioctl", "ioctl_map"]


@tool("inspect", reads("Decode an IOCTL"))
async def decode_ioctl(
    code: Annotated[
        Annotated[int, Field(ge=0, le=0xFFFFFFFF)]
        | Annotated[str, Field(min_length=1, max_length=24, pattern=r"^(?:0x|0n)?[0-9a-fA-F`]+h?$")],
        Field(description="0x222003, 222003h or 2236419"),
    ],
    ctx: Ctx = None,
) -> Annotated[CallToolResult, DecodeIoctlResult]:
    """An I/O control code's device type, function, method, access and CTL_CODE (no session)."""
    return await run_tool(ctx, lambda c: logic.decode_ioctl(code))


@tool("inspect", reads("Map a driver's IOCTLs"))
async def ioctl_map(
    driver: Annotated[
        str,
        Field(
            description="myfault, \\Driver\\myfault or a DRIVER_OBJECT",
            min_length=1,
            max_length=256,
            pattern=r'^[^\s;"]+$',
        ),
    ],
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, IoctlMapResult]:
    """The IOCTLs a driver's IRP_MJ_DEVICE_CONTROL routine handles, recovered from its code."""
    return await run_tool(ctx, lambda c: logic.ioctl_map(c.app, session_id, driver, owner=c.owner))
