"""``walk_list`` and ``handles`` as clients see them (issue 16); their logic is ``walk_list.py``
and ``handles.py``.

Every argument that reaches kd's command line is checked here: a head or process is a
``toolkit.Address``; a type one ``module!name`` word without wildcards (``dt nt!*`` would list
types); a field a dotted path of identifiers; a handle a hex value; an object type one word.
Lengths the patterns leave open are bounded by the engine's command line (``MAX_COMMAND_BYTES``).
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Ctx, run_tool
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.lists import handles as handle_logic
from kdmcp.server.tools.lists import walk as walk_logic
from kdmcp.server.tools.lists.models import HandlesResult, WalkListResult

__all__ = ["handles", "walk_list"]

# a field or a dotted path to one (Tcb.ThreadListEntry): letters, digits, '_' and '.', nothing kd reads otherwise
FieldPath = Annotated[str, Field(pattern=r"^[A-Za-z_][\w.]{0,127}$")]


@tool("inspect", reads("Walk a list"))
async def walk_list(
    head: Annotated[Address, Field(description="nt!PsActiveProcessHead")],
    type: Annotated[str, Field(description="nt!_EPROCESS", pattern=r"^\w+(!\w+)?$")],
    link_field: Annotated[FieldPath, Field(description="its LIST_ENTRY: ActiveProcessLinks")],
    fields: Annotated[list[FieldPath] | None, Field(description="per entry: ImageFileName", max_length=16)] = None,
    limit: Annotated[int, Field(ge=1, le=1024)] = 256,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, WalkListResult]:
    """A LIST_ENTRY list's entries and chosen fields (dt per node); says why it stopped."""
    return await run_tool(
        ctx,
        lambda c: walk_logic.walk_list(
            c.app, session_id, head, type, link_field, fields or [], limit, owner=c.owner, cancelled=c.cancel.is_set
        ),
        progress=f"walking {type}.{link_field}",
    )


@tool("inspect", reads("Handles"))
async def handles(
    process: Annotated[Address | None, Field(description="EPROCESS or pid; 0: all (default: current)")] = None,
    handle: Annotated[str | None, Field(description="one, in hex", pattern=r"^(0x)?[0-9a-fA-F]{1,16}$")] = None,
    type: Annotated[str | None, Field(description="File, Event, Key", pattern=r"^[A-Za-z]\w{0,31}$")] = None,
    limit: Annotated[int, Field(description="rows at most", ge=1, le=5000)] = 100,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, HandlesResult]:
    """Handles (!handle): value, type, access, object, name; total counts all."""
    return await run_tool(
        ctx,
        lambda c: handle_logic.handles(c.app, session_id, process, handle, type, limit, owner=c.owner),
        progress="!handle",
    )
