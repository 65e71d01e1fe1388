"""``handles``: a process's handle table through kd's ``!handle``, rows capped, all of it counted.

Kernel syntax (Microsoft docs, "!handle"): ``!handle [Handle [KMFlags [Process [TypeName]]]]``.
Handle 0 is every handle; KMFlags bit 0 (0x1) "Displays basic handle information", bit 1 (0x2)
"Displays information about objects" (the type and name: both wanted, so always 3, the default);
Process -1 "or omitted" is the current process, 0 every process, else "the process ID or the
hexadecimal address of the process object"; TypeName "is case-sensitive".

The System process holds thousands of handles (the simulated one 2651: 730 KB of kd output,
every process together 6 MB), more than the inline cap (64 KB) keeps: the rows are read from
the whole output in the session's store, ``limit`` of them returned with the ``total``, and
kd's own text stays out of the result, readable by ``output_id``. User mode is refused
(``needs="kernel"``): cdb's ``!handle`` takes other flags, and the simulated process answers none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdmcp import parse as parsing
from kdmcp.errors import InvalidArgument
from kdmcp.server import typed
from kdmcp.server.tools.lists.models import HandleRow, HandlesResult

if TYPE_CHECKING:
    from kdmcp.server.app import KdMcpApp

__all__ = ["handles"]

# both blocks: the handle's row (value, object, access, attributes) and the object's (type, name)
_FLAGS = 3


def _row(h: Any, several: bool) -> HandleRow:
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


def handles(
    app: KdMcpApp,
    session_id: str | None,
    process: str | None,
    handle: str | None,
    type_name: str | None,
    limit: int,
    *,
    owner: str | None,
) -> HandlesResult:
    ran = typed.open_session(app, session_id, owner, needs="kernel")
    line = f"!handle {handle or 0} {_FLAGS} {process or -1}" + (f" {type_name}" if type_name else "")
    out = ran.run(line, show=False)
    text = out.output
    if out.truncated:  # past the inline cap: the rows from all of it
        text, _ = app.masked_range(ran.session, out.output_offset, out.output_end)
    record = parsing.parse(line, text)
    found = getattr(record, "fields", None) or {}
    if getattr(record, "kind", None) == "error" or "handle_table" not in found:
        # no "Handle table at … with N entries in use": kd refused ("Invalid process …") or found no such process
        said = next((s.strip() for s in out.output.splitlines() if s.strip()), "no handle table")
        raise InvalidArgument(
            f"kd: {getattr(record, 'message', None) or said}",
            session_id=ran.session.session_id,
            state=ran.session.state,
        )
    rows = list(getattr(record, "handles", None) or [])
    several = len({h.process for h in rows}) > 1
    return typed.serve(
        ran,
        HandlesResult,
        command=line,
        process=found.get("process"),
        image=found.get("image"),
        total=len(rows),
        handles=[_row(h, several) for h in rows[:limit]],
    )
