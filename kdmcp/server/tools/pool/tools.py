"""The pool and page-table tools as clients see them (issue 16); their logic is ``pool_pte.py``.

Every argument that reaches kd's command line is checked here: addresses are ``toolkit.Address``
(no blank, ';' or '"'); a pool tag is one to four printable characters without a blank, ';' or
'"' (``*`` and ``?`` are kd's wildcards).
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.server.args import Address, SessionId, Timeout
from kdmcp.server.call import Ctx, run_tool
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.pool import logic as pool_pte
from kdmcp.server.tools.pool.models import PoolFindResult, PoolResult, PoolUsageResult, PteResult

__all__ = ["pool", "pool_find", "pool_usage", "pte"]

# printable ASCII but blank (0x20), '"' (0x22) and ';' (0x3b)
Tag = Annotated[
    str,
    Field(
        description="a pool tag, case-sensitive, * ? wildcards: Proc, Irp, Mm*",
        min_length=1,
        max_length=4,
        pattern=r"^[!#-:<-~]+$",
    ),
]
Pool = Literal["nonpaged", "paged"]


@tool("inspect", reads("A pool block"))
async def pool(
    address: Address, session_id: SessionId = None, ctx: Ctx = None
) -> Annotated[CallToolResult, PoolResult]:
    """!pool: the block holding an address (tag, size, state, owner), its neighbours, the region."""
    return await run_tool(ctx, lambda c: pool_pte.pool(c.app, session_id, address, owner=c.owner))


@tool("inspect", reads("Find pool blocks by tag"))
async def pool_find(
    tag: Tag,
    limit: Annotated[int, Field(description="blocks to return (found counts all)", ge=1, le=5000)] = 100,
    pool: Pool = "nonpaged",
    timeout_s: Timeout = None,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, PoolFindResult]:
    """!poolfind: the blocks with a tag (address, size); a pool scan, slow on a real target."""
    return await run_tool(
        ctx, lambda c: pool_pte.pool_find(c.app, session_id, tag, limit, pool, timeout_s, owner=c.owner)
    )


@tool("inspect", reads("Pool use by tag"))
async def pool_usage(
    tag: Annotated[Tag | None, Field(description="one tag or pattern (default: every tag)")] = None,
    limit: Annotated[int, Field(description="rows to return, largest first", ge=1, le=5000)] = 20,
    sort: Annotated[Pool, Field(description="by nonpaged or paged bytes")] = "nonpaged",
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, PoolUsageResult]:
    """!poolused: allocations and bytes per tag, nonpaged and paged, with pooltag.txt's words."""
    return await run_tool(ctx, lambda c: pool_pte.pool_usage(c.app, session_id, tag, limit, sort, owner=c.owner))


@tool("inspect", reads("Page-table entries"))
async def pte(address: Address, session_id: SessionId = None, ctx: Ctx = None) -> Annotated[CallToolResult, PteResult]:
    """!pte: the PXE/PPE/PDE/PTE chain (entry, pfn, flags decoded) and the physical address."""
    return await run_tool(ctx, lambda c: pool_pte.pte(c.app, session_id, address, owner=c.owner))
