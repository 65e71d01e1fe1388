"""``handles`` on a user-mode session: cdb's ``!handle`` over the debugged process, live or a dump.

cdb's syntax (Microsoft docs, "!handle"): ``!handle [Handle [UMFlags [TypeName]]]`` -- no process
argument (cdb debugs one process: its handles are the only ones), UMFlags 0xf for the type, the
access and counts, the name and the object-specific lines. Its ``Handle 8`` blocks are read by
kdmcp.parse (the handle reader's user-mode form); the total is cdb's own count, not the rows':
``N Handles`` then a ``Type  Count`` table for every handle, ``N handles of type T`` for a type.

Each row names its process by pid (``|``'s current process: ``.  0  id: 1a2c  attach  name: app.exe``),
as the kernel path names each row's EPROCESS: a handle value means nothing without its process.

A dump written without handle data (no MINIDUMP_HANDLE_DATA_STREAM: ``.dump /m`` without ``h``)
makes ntsdexts print ``Unable to read handle information``: refused with the reason, never
served as a process with no handles.
"""

from __future__ import annotations

from collections import Counter

from kdmcp import parse as parsing
from kdmcp.errors import InvalidArgument
from kdmcp.server import typed
from kdmcp.server.tools.lists.models import HandleRow, HandlesResult

__all__ = ["user_handles"]

# ntsdexts' UMFlags: 1 type, 2 basic (attributes, access, counts), 4 name, 8 object-specific
_FLAGS = "f"


def _refuse(ran: typed.Ran, message: str) -> InvalidArgument:
    return InvalidArgument(message, session_id=ran.session.session_id, state=ran.session.state)


def user_handles(ran: typed.Ran, process: str | None, handle: str | None, type: str | None,
                 limit: int) -> HandlesResult:
    """The debugged process's handles through cdb's ``!handle``, each row labelled with its pid."""
    if process is not None:
        raise _refuse(ran, "cdb's !handle reads the debugged process only: leave process out in user mode")
    owner = ran.record("|", show=False)
    current = None
    if isinstance(owner, parsing.ProcessesRecord):
        current = next((p for p in owner.processes if p.current), owner.processes[0] if owner.processes else None)
    pid = current.cid if current is not None else None
    line = f"!handle {handle or 0} {_FLAGS}" + (f" {type}" if type else "")
    text = typed.whole_output(ran, ran.run(line, show=False))  # past the inline cap: the rows from all of it
    record = parsing.parse(line, text)
    if not isinstance(record, parsing.ObjectRecord):  # "Unknown type 'X'", an expression cdb could not read
        raise _refuse(ran, f"cdb: {_first_line(text)}")
    rows = record.handles
    fields = record.fields
    if handle is None and "handle_total" not in fields and "handles_of_type" not in fields:
        # no count line: ntsdexts printed its complaint instead ("Unable to read handle information")
        said = _first_line(text)
        why = (" (the dump was written without handle data: MiniDumpWithHandleData, .dump /mh)"
               if said == "Unable to read handle information" else "")
        raise _refuse(ran, f"cdb: {said}{why}")
    if handle is not None and (not rows or "unable to query object information" in text):
        # "Handle 999" then "unable to query object information": no such handle
        raise _refuse(ran, f"cdb: no handle {handle} in this process (unable to query object information)")
    # cdb's own count: "N handles of type T" for a type, "N Handles" for every handle
    counted = fields.get("handles_of_type") if type else fields.get("handle_total")
    return typed.serve(
        ran,
        HandlesResult,
        command=line,
        process=pid,
        image=current.image if current is not None else None,
        total=int(counted) if counted is not None else len(rows),
        # "Handle 0000000000000008" (a dump's, at pointer width) as "0x8"
        handles=[HandleRow(handle=f"0x{int(h.handle, 16):x}", type=h.type, access=h.granted_access, name=h.name,
                           process=pid) for h in rows[:limit]],
        # every row's own type: cdb's summary counts the types its table lacks as "None"; a
        # descriptor the dump stores without a type name ("  Type         \t" empty) is "(none)"
        types=dict(Counter(h.type or "(none)" for h in rows).most_common()) if not type and handle is None else {},
    )


def _first_line(text: str) -> str:
    return next((s for s in (x.strip() for x in text.splitlines()) if s), "no answer")
