"""``walk_list`` and ``handles`` as clients see them (issue 16); their logic is ``walk_list.py``
and ``handles.py``.

Every argument that reaches kd's command line is checked here: a head or process is a
``toolkit.Address``; a type one ``module!name`` word without wildcards (``dt nt!*`` would list
types); a field a dotted path of identifiers; a handle a hex value; an object type one word.
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.server import handles as handle_logic
from kdmcp.server import walk_list as walk_logic
from kdmcp.server.call import run_tool
from kdmcp.server.toolkit import Address, Ctx, SessionId, reads, tool
from kdmcp.server.walk_models import HandlesResult, WalkListResult

__all__ = ["handles", "walk_list"]

_FIELD = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
FieldPath = Annotated[str, Field(min_length=1, max_length=128, pattern=rf"^{_FIELD}$")]


@tool(reads("Walk a LIST_ENTRY list"))
async def walk_list(
    head: Annotated[Address, Field(description="the list head: nt!PsActiveProcessHead")],
    type: Annotated[
        str,
        Field(
            description="the entries' type: nt!_EPROCESS",
            min_length=1,
            max_length=128,
            pattern=r"^(?:[A-Za-z_]\w*!)?[A-Za-z_]\w*$",
        ),
    ],
    link_field: Annotated[FieldPath, Field(description="its LIST_ENTRY field: ActiveProcessLinks")],
    fields: Annotated[list[FieldPath] | None, Field(description="fields to read per entry", max_length=16)] = None,
    limit: Annotated[int, Field(description="entries to read at most", ge=1, le=1024)] = 256,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, WalkListResult]:
    """A LIST_ENTRY list's entries with chosen fields (dt per node); stopped: complete|limit|loop|unreadable|null."""
    return await run_tool(
        ctx,
        lambda c: walk_logic.walk_list(
            c.app, session_id, head, type, link_field, fields or [], limit, owner=c.owner, cancelled=c.cancel.is_set
        ),
        progress=f"walking {type}.{link_field}",
    )


@tool(reads("Handles"))
async def handles(
    process: Annotated[Address | None, Field(description="EPROCESS or pid; 0: all (default: current)")] = None,
    handle: Annotated[
        str | None, Field(description="one handle (hex)", max_length=18, pattern=r"^(?:0x)?[0-9a-fA-F]{1,16}$")
    ] = None,
    type: Annotated[
        str | None, Field(description="only this object type: File, Event, Key", pattern=r"^[A-Za-z]\w{0,31}$")
    ] = None,
    limit: Annotated[int, Field(description="rows to return at most", ge=1, le=5000)] = 100,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, HandlesResult]:
    """Handle table (!handle): value, type, access, object, name; total counts all."""
    return await run_tool(
        ctx,
        lambda c: handle_logic.handles(c.app, session_id, process, handle, type, limit, owner=c.owner),
        progress="!handle",
    )
