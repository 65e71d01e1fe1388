"""``kd_command`` and the fixed typed reads: one command line, its output, its parsed record.

``kd_command`` runs whatever the caller's policy allows; the reads (``registers``, ``backtrace``,
``modules``, ``processes``, ``analyze``, ``vertarget``) each compose one fixed command from
checked arguments and cut each list of its record to ``limit`` (the counts say how many there
were). Both serve the raw output beside the record, and an ``output_id`` for all of it.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar

from pydantic import Field

# The parsers and record models are built on the first command, not at start-up (kdmcp.parse's
# lazy attributes; docs/performance.md, "Cold start").
from kdmcp import parse as parsing
from kdmcp.engine import DebuggerSession
from kdmcp.engine.commands import command_kind
from kdmcp.engine.results import CommandOutput
from kdmcp.errors import InvalidArgument
from kdmcp.parse.record_base import RecordBase
from kdmcp.server import models
from kdmcp.server.args import LIST_LIMIT, Limit, SessionId, Timeout
from kdmcp.server.call import Call
from kdmcp.server.kind_rules import Action, refuse_for_kind
from kdmcp.server.registry import destroys, reads, tool
from kdmcp.server.tools.commands.not_crashed import AnalyzeResult, not_crashed, stop_check
from kdmcp.server.typed import said_by

InspectT = TypeVar("InspectT", bound=models.InspectResult)

__all__ = ["analyze", "backtrace", "kd_command", "modules", "processes", "registers", "vertarget"]


def _served(call: Call, model: type[models.CommandT], session: DebuggerSession, result: CommandOutput,
            record: RecordBase | str | None, **own: object) -> models.CommandT:
    """``record``: the parsed record, or its kind alone (``_execute``'s ``kind_only``)."""
    served = model.serve(
        result, session_id=session.session_id, prompt=result.prompt, events=call.app.new_events(session),
        output_id=models.output_id(session.session_id, result.output_offset, result.output_end),
        output_bytes=result.output_end - result.output_offset,
        record=None if isinstance(record, str) else record, record_partial=record is not None and result.truncated,
        **own,
    )
    if isinstance(record, str):
        served.read_kind(record)
    return served


@tool("commands", destroys("Run one debugger command"))
def kd_command(
    call: Call,
    command: Annotated[str, Field(min_length=1, max_length=4000)],
    session_id: SessionId = None,
    timeout_s: Timeout = None,
) -> models.CommandResult:
    """Run one kd/cdb command; prefer a typed tool that fits."""
    needs: Action | None = "run" if command_kind(command) in ("go", "reboot") else None
    session, result = _run(call, command, session_id, timeout_s, needs, cancel_with_break_in=True)
    record: RecordBase | str | None = None
    if result.kind == "immediate":
        # a text-only result reads the record's kind alone ("unparsed"): parse.kind_of builds no
        # record where it can tell the kind without
        read = call.record_read
        record = (parsing.parse if read else parsing.kind_of)(result.command, result.output)
    return _served(call, models.CommandResult, session, result, record)


def _execute(call: Call, command: str, session_id: str | None, timeout_s: float | None, needs: Action | None, *,
             cancel_with_break_in: bool = False) -> tuple[DebuggerSession, CommandOutput, RecordBase | None]:
    """``_run``, and the output's record (None when the command ran the target)."""
    session, result = _run(call, command, session_id, timeout_s, needs, cancel_with_break_in=cancel_with_break_in)
    return session, result, parsing.parse(result.command, result.output) if result.kind == "immediate" else None


def _run(call: Call, command: str, session_id: str | None, timeout_s: float | None, needs: Action | None, *,
         cancel_with_break_in: bool = False) -> tuple[DebuggerSession, CommandOutput]:
    """One command line on the caller's session: progress, the policy, the kind rule for ``needs``,
    and the command; ``cancel_with_break_in``: a client that gives up stops kd working on it (Ctrl+C)."""
    app = call.app
    call.progress(f"running {command!r}", timeout_s or app.options.config.timeouts.command)
    session = app.session(session_id, call.owner)
    if cancel_with_break_in:
        call.on_cancel(session.break_in)
    app.enforce_policy(command, call.owner, session.session_id)
    if needs is not None:
        refuse_for_kind(session, needs)
    return session, session.execute(command, timeout_s)


def _inspect(call: Call, command: str, session_id: str | None, limit: int, timeout_s: float | None = None,
             needs: Action | None = None, model: type[InspectT] = models.InspectResult) -> InspectT:  # type: ignore[assignment]
    """A typed read: one fixed command, its record, each list cut to ``limit`` items; ``needs``:
    what the target must allow for it (``kind_rules``)."""
    session, result, record = _execute(call, command, session_id, timeout_s, needs)
    if isinstance(record, parsing.ErrorRecord):
        # kd refused the composed command ("Bad register error in 'r foo'"): the caller's words were
        # wrong, so it is invalid_argument in the debugger's words, not a success holding them
        raise InvalidArgument(f"{said_by(session)}: {record.message}", session_id=session.session_id,
                              state=session.state)
    lists: dict[str, models.ListCount] = {}
    # over every module, before the list is cut to limit
    symbols = models.SymbolCounts.of(record.modules) if isinstance(record, parsing.ModulesRecord) else None
    if record is not None:
        cut: dict[str, list[object]] = {}
        for name in type(record).model_fields:
            value = getattr(record, name)  # every field of whichever record kind came back
            if isinstance(value, list) and value:
                lists[name] = models.ListCount(total=len(value), returned=min(len(value), limit))
                cut[name] = value[:limit]
        record = record.model_copy(update=cut)
    return _served(call, model, session, result, record, lists=lists, symbols=symbols)


@tool("inspect", reads("Registers"))
def registers(
    call: Call,
    session_id: SessionId = None,
    register: Annotated[str | None, Field(pattern=r"^[A-Za-z][A-Za-z0-9]{0,15}$")] = None,
) -> models.InspectResult:
    """Register values (r)."""
    return _inspect(call, f"r {register}" if register else "r", session_id, LIST_LIMIT)


@tool("inspect", reads("Call stack"))
def backtrace(
    call: Call,
    session_id: SessionId = None,
    variant: Annotated[Literal["k", "kb", "kv", "kn", "kp", "kP", "kc", "kL", "knL"],
                       Field()] = "kn",
    limit: Limit = LIST_LIMIT,
) -> models.InspectResult:
    """The current thread's stack (k)."""
    return _inspect(call, variant, session_id, limit)


@tool("inspect", reads("Loaded modules"))
def modules(
    call: Call,
    session_id: SessionId = None,
    pattern: Annotated[str | None, Field(description='e.g. win32k*',
                                         pattern=r"^[A-Za-z0-9_*?.\-]{1,64}$")] = None,
    verbose: Annotated[bool, Field(description='lmv')] = False,
    limit: Limit = LIST_LIMIT,
) -> models.InspectResult:
    """Loaded modules (lm); which lack symbols."""
    command = "lmv" if verbose else "lm"
    if pattern:
        command += f" m {pattern}"
    return _inspect(call, command, session_id, limit)


@tool("inspect", reads("Processes"))
def processes(
    call: Call,
    session_id: SessionId = None,
    name: Annotated[str | None, Field(description='image name',
                                      pattern=r"^[A-Za-z0-9_.\-]{1,64}$")] = None,
    limit: Limit = LIST_LIMIT,
) -> models.InspectResult:
    """Processes (!process 0 0)."""
    return _inspect(call, f"!process 0 0 {name}" if name else "!process 0 0", session_id, limit, needs="processes")


@tool("inspect", reads("Crash analysis"))
def analyze(call: Call, session_id: SessionId = None, timeout_s: Timeout = None) -> AnalyzeResult:
    """Crash analysis (!analyze -v)."""
    # a live target that has not crashed: the stop's own short answer (not_crashed.py says why)
    check = stop_check(call.app.session(session_id, call.owner))
    if check is not None:
        session, result, _ = _execute(call, check, session_id, None, None)
        record, note = not_crashed(result)
        if note is not None:
            return _served(call, AnalyzeResult, session, result, record, crashed=False, note=note)
    return _inspect(call, "!analyze -v", session_id, LIST_LIMIT,
                    timeout_s or max(call.app.options.config.timeouts.command, 300.0), model=AnalyzeResult)


@tool("inspect", reads("Target version"))
def vertarget(call: Call, session_id: SessionId = None) -> models.InspectResult:
    """OS build, processors, uptime (vertarget)."""
    return _inspect(call, "vertarget", session_id, LIST_LIMIT)
