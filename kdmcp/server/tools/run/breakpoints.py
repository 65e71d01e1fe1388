"""The breakpoint tools (issue 15): ``set_breakpoint``, ``breakpoints``, ``clear_breakpoints``.

Each composes kd's own commands from checked arguments and reads kd's own answers back:
``bp``/``bu``/``ba`` between two ``bl`` (the new id is the one the second lists and the first
did not), ``bc`` between two ``bl``. Each argument that reaches kd's command line is checked
(``args.Address``; a condition or command string cannot close its quotes); what ``bl`` does
not say (how a breakpoint was asked for, its hits) is the family's ``BreakpointBook``.

Records are read by their kind (the parse layer's models are imported on first parse, not at
server start: docs/performance.md, "Cold start").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from kdmcp import parse as parsing
from kdmcp.engine import DebuggerSession
from kdmcp.errors import InvalidArgument
from kdmcp.server import typed
from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Call
from kdmcp.server.kind_rules import is_kernel
from kdmcp.server.registry import controls, reads, tool
from kdmcp.server.tools.run.bp_book import BreakpointBook, BreakpointNote
from kdmcp.server.tools.run.models import (
    BreakpointKind,
    BreakpointRow,
    BreakpointsResult,
    ClearResult,
    SetBreakpointResult,
)

if TYPE_CHECKING:
    from kdmcp.server.app import KdMcpApp

__all__ = ["breakpoints", "clear_breakpoints", "set_breakpoint"]

# How a condition becomes a breakpoint command string ("Setting a Conditional Breakpoint":
# bp Address ".if (Condition) {OptionalCommands} .else {gc}") and how it is read back from bl.
_CONDITIONAL_RE = re.compile(r"\.if \((?P<cond>.*)\) \{(?P<cmd>.*)\} \.else \{gc\}", re.DOTALL)


def _bl(ran: typed.Ran, *, show: bool) -> list[parsing.Breakpoint]:
    record = ran.record("bl", show=show)
    return list(record.breakpoints) if isinstance(record, parsing.BreakpointsRecord) else []


def _hits(session: DebuggerSession, bp_id: int, since_seq: int) -> int:
    return sum(1 for e in session.events_since(since_seq) if e.kind == "breakpoint" and e.breakpoint == bp_id)


def _row(app: KdMcpApp, session: DebuggerSession, bp: parsing.Breakpoint) -> BreakpointRow:
    """A ``bl`` row with the book's note (when kd-mcp set it and the row is still that breakpoint)."""
    note = app.state_of(BreakpointBook).get(session.session_id, bp.id)
    command: str | None = bp.command
    condition = None
    if note is not None:
        condition, command = note.condition, note.command
    elif command is not None and (m := _CONDITIONAL_RE.fullmatch(command)) is not None:
        condition, command = m["cond"], m["cmd"] or None
    kind: BreakpointKind = (note.kind if note is not None
                            else "data" if bp.access else "deferred" if bp.unresolved else "code")
    return BreakpointRow(
        id=bp.id, state="enabled" if bp.enabled else "disabled", kind=kind, address=bp.address, symbol=bp.symbol,
        unresolved=bp.unresolved, access=bp.access, size=bp.size,
        hits=_hits(session, bp.id, note.since_seq if note is not None else 0),
        condition=condition, command=command, one_shot=note.one_shot if note is not None else False,
        thread=None if bp.thread == "0:****" else bp.thread,  # process 0, any thread: the usual filter
    )


# The breakpoint's command string is one quoted string of the bp line: a '"' would end it, a line
# break would end the line; a condition sits inside ".if (…) {…}", so it has no braces either.
_STRING_BAD = re.compile(r'["\x00-\x08\x0a-\x1f\x7f]')
_PROCESS_RE = re.compile(r"(?:0x)?[0-9a-fA-F`]{1,20}")


def _check_strings(condition: str | None, command: str | None, process: str | None) -> None:
    for name, value in (("condition", condition), ("command", command)):
        if value is not None and (_STRING_BAD.search(value) or not value.strip()):
            raise InvalidArgument(f"{name} must be one line without '\"' (it becomes part of kd's quoted "
                                  "breakpoint command string)")
    if condition is not None and ("{" in condition or "}" in condition):
        raise InvalidArgument("condition may not contain braces (it sits inside .if (condition) {...})")
    if command is not None and command.count("{") != command.count("}"):
        raise InvalidArgument("command has unbalanced braces")
    if process is not None and not _PROCESS_RE.fullmatch(process):
        raise InvalidArgument(f"process must be an EPROCESS address (hex), not {process!r}")


@tool("control", controls("Set a breakpoint"))
def set_breakpoint(
    call: Call,
    location: Address,
    kind: Annotated[Literal["code", "deferred", "data"],
                    Field()] = "code",
    access: Annotated[Literal["e", "r", "w", "i"], Field()] = "w",
    size: Annotated[Literal[1, 2, 4, 8], Field()] = 1,
    condition: Annotated[str | None, Field(max_length=512)] = None,
    command: Annotated[str | None, Field(max_length=1024)] = None,
    one_shot: Annotated[bool, Field()] = False,
    process: Annotated[str | None, Field(description='EPROCESS', max_length=24)] = None,
    session_id: SessionId = None,
) -> SetBreakpointResult:
    """Set a breakpoint (bp, bu, ba)."""
    app = call.app
    _check_strings(condition, command, process)
    ran = typed.open_session(app, session_id, call.owner, needs="breakpoint")
    kernel = is_kernel(ran.session)
    if process is not None and not kernel:
        raise InvalidArgument("process applies to kernel targets (bp /p EPROCESS); a user-mode breakpoint is "
                              "the debugged process's", session_id=ran.session.session_id)
    if kind == "data" and access == "e" and size != 1:
        raise InvalidArgument("an execute (e) data breakpoint has size 1 (ba e1 ADDRESS)",
                              session_id=ran.session.session_id)
    line = {"code": "bp", "deferred": "bu", "data": f"ba {access}{size}"}[kind]
    line += " /1" if one_shot else ""
    line += f" /p {process}" if process is not None else ""
    line += f" {location}"
    string = f".if ({condition}) {{{command or ''}}} .else {{gc}}" if condition is not None else command
    if string is not None:
        line += f' "{string}"'
    ran.allow(line)  # before bl: nothing runs if the line is denied
    since = ran.session.last_event_seq
    before = {bp.id for bp in _bl(ran, show=False)}
    record = ran.record(line)
    after = _bl(ran, show=False)
    new = [bp for bp in after if bp.id not in before]
    if not new:  # "breakpoint 0 redefined": kd reused the id of one already there
        new = [bp for bp in after if location in (bp.symbol, bp.address)]
    if not new:
        typed.refuse_error(ran, record)  # "Couldn't resolve error at …": kd's own words
        raise InvalidArgument(f"kd set no breakpoint: {ran.outputs[-2].output.strip() or 'no answer'}",
                              session_id=ran.session.session_id, state=ran.session.state)
    bp = new[-1]
    set_kind = "deferred" if kind == "code" and bp.unresolved else kind  # "adding deferred bp"
    app.state_of(BreakpointBook).note(ran.session.session_id, bp.id, BreakpointNote(
        kind=set_kind, expression=location, since_seq=since, condition=condition,
        command=command, one_shot=one_shot))
    warning = _never_resolves(ran, location) if bp.unresolved else None
    return typed.serve(ran, SetBreakpointResult, breakpoint=_row(app, ran.session, bp), warning=warning)


_MODULE_NAME = re.compile(r"([A-Za-z0-9_.\-]{1,64})!")


def _never_resolves(ran: typed.Ran, location: str) -> str | None:
    """Why a deferred breakpoint on ``module!name`` may never resolve: its module is loaded already,
    so kd's "could not be resolved" means it has no symbol of that name (no symbols for the module,
    or a guessed name), not that the module is still to load. One ``lm m`` to know."""
    named = _MODULE_NAME.match(location)
    if named is None:
        return None
    listed = ran.record(f"lm m {named[1]}", show=False)
    loaded = [m for m in getattr(listed, "modules", []) if m.name.lower() == named[1].lower()]
    if not loaded:
        return None
    status = f"symbols: {loaded[0].symbol_status or 'unknown'}"
    return (f"{loaded[0].name} is loaded ({status}) yet kd cannot resolve {location}: it may never resolve; "
            "set it on an address (lookup_symbol, disassemble)")


@tool("inspect", reads("List breakpoints"))
def breakpoints(call: Call, session_id: SessionId = None) -> BreakpointsResult:
    """List breakpoints (bl)."""
    ran = typed.open_session(call.app, session_id, call.owner)
    listed = _bl(ran, show=True)
    call.app.state_of(BreakpointBook).keep_only(ran.session.session_id, {bp.id for bp in listed})
    return typed.serve(ran, BreakpointsResult, breakpoints=[_row(call.app, ran.session, bp) for bp in listed])


@tool("control", controls("Clear breakpoints", idempotent=True))
def clear_breakpoints(
    call: Call,
    ids: Annotated[list[Annotated[int, Field(ge=0, le=65535)]] | None,
                   Field(min_length=1, max_length=256)] = None,
    all: Annotated[bool, Field()] = False,  # the issue names it "all"
    session_id: SessionId = None,
) -> ClearResult:
    """Clear breakpoints by id, or all."""
    if all == (ids is not None):
        raise InvalidArgument("give ids, or all=true (not both)")
    ran = typed.open_session(call.app, session_id, call.owner)
    line = "bc *" if all else "bc " + " ".join(map(str, ids or []))
    ran.allow(line)  # before bl: nothing runs if the line is denied
    before = {bp.id for bp in _bl(ran, show=False)}
    ran.run(line)
    remaining = _bl(ran, show=False)
    left = {bp.id for bp in remaining}
    call.app.state_of(BreakpointBook).keep_only(ran.session.session_id, left)
    asked = before if all else set(ids or [])
    return typed.serve(ran, ClearResult, cleared=sorted((before & asked) - left), not_found=sorted(asked - before),
                       remaining=[_row(call.app, ran.session, bp) for bp in remaining])
