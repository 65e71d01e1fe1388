"""``handles``: a process's handle table through kd's ``!handle``, rows capped, all of it counted.

Kernel syntax (Microsoft docs, "!handle"): ``!handle [Handle [KMFlags [Process [TypeName]]]]``.
Handle 0 is every handle; KMFlags bit 0 (0x1) "Displays basic handle information", bit 1 (0x2)
"Displays information about objects" (the type and name: both wanted, so always 3, the default);
Process -1 "or omitted" is the current process, 0 every process, else "the process ID or the
hexadecimal address of the process object"; TypeName "is case-sensitive".

The System process holds thousands of handles (the simulated one 2651: 730 KB of kd output,
every process together 6 MB), more than the inline cap (64 KB) keeps: the rows are read from
the whole output in the session's store, ``limit`` of them returned with the ``total``, and
kd's own text stays out of the result, readable by ``output_id``. User mode (a process or a
user dump) takes cdb's own ``!handle``, whose flags and output differ: :mod:`.user_handles`.

Every argument that reaches kd's command line is checked: a process is a ``args.Address``, a
handle a hex value, an object type one word.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from kdmcp import parse as parsing
from kdmcp.server import typed
from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Call
from kdmcp.server.kind_rules import is_kernel
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.lists.models import HandleRow, HandlesResult
from kdmcp.server.tools.lists.user_handles import user_handles

if TYPE_CHECKING:
    from kdmcp.parse.models.objects import HandleEntry

__all__ = ["handles"]

# both blocks: the handle's row (value, object, access, attributes) and the object's (type, name)
_FLAGS = 3


def _row(h: HandleEntry, several: bool) -> HandleRow:
    return HandleRow(
        handle=h.handle,
        type=h.type,
        access=h.granted_access,
        object=h.object,
        name=h.name,
        flags=list(h.flags),
        process=h.process if several else None,
        free=h.free,
    )


@tool("inspect", reads("Handles"))
def handles(
    call: Call,
    process: Annotated[Address | None, Field(description='EPROCESS or pid; 0: all')] = None,
    handle: Annotated[str | None, Field(pattern=r"^(0x)?[0-9a-fA-F]{1,16}$")] = None,
    type: Annotated[str | None, Field(pattern=r"^[A-Za-z]\w{0,31}$")] = None,
    limit: Annotated[int, Field(ge=1, le=5000)] = 100,
    session_id: SessionId = None,
) -> HandlesResult:
    """Handles (!handle), counted per process."""
    call.progress("!handle")
    ran = typed.open_session(call.app, session_id, call.owner)
    if not is_kernel(ran.session):  # cdb's own !handle: the debugged process, live or a dump
        return user_handles(ran, process, handle, type, limit)
    line = f"!handle {handle or 0} {_FLAGS} {process or -1}" + (f" {type}" if type else "")
    text = typed.whole_output(ran, ran.run(line, show=False))  # past the inline cap: the rows from all of it
    record = parsing.parse(line, text)
    # no "Handle table at … with N entries in use": kd refused ("Invalid process …") or found no such process
    if not isinstance(record, parsing.ObjectRecord) or "handle_table" not in record.fields:
        raise typed.refusal(ran, record)
    rows = record.handles
    per_process = Counter(h.process for h in rows if h.process is not None)
    several = len(per_process) > 1
    # several tables (process 0): each row names its owner and the counts are per owner; the
    # first table's process and image would label all of them wrongly
    return typed.serve(
        ran,
        HandlesResult,
        command=line,
        process=None if several else record.fields.get("process"),
        image=None if several else record.fields.get("image"),
        total=len(rows),
        by_process=dict(per_process.most_common()) if several else {},
        handles=[_row(h, several) for h in rows[:limit]],
    )
