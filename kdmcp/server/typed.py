"""What every typed tool shares (issue 15): run its fixed commands, parse them, serve one result.

A typed tool is a few debugger commands it composes itself from checked arguments (``bl`` /
``bp …`` / ``bl``; ``u @$ip L1`` / ``? @$thread``…). Each line still goes through the caller's
policy, exactly as if it were typed into ``kd_command``, and the session's kind rules; the
result keeps the raw output of what it ran beside its typed fields, and one ``output_id``
spans all of it, so nothing the debugger said is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from kdmcp import parse as parsing
from kdmcp.engine import DebuggerSession
from kdmcp.engine.results import CommandOutput
from kdmcp.errors import InvalidArgument
from kdmcp.parse.record_base import RecordBase
from kdmcp.server import models
from kdmcp.server.kind_rules import Action, refuse_for_kind

if TYPE_CHECKING:
    from kdmcp.server.app import KdMcpApp

__all__ = ["Ran", "open_session", "refusal", "refuse_error", "said_by", "serve", "whole_output"]

TypedT = TypeVar("TypedT", bound=models.TypedResult)
RecordT = TypeVar("RecordT", bound=RecordBase)


@dataclass
class Ran:
    """The commands a typed tool ran on one session, in order, with their records."""

    app: KdMcpApp
    session: DebuggerSession
    owner: str | None
    timeout_s: float | None = None
    outputs: list[CommandOutput] = field(default_factory=list)
    shown: list[bool] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list, init=False, repr=False)

    def allow(self, command: str) -> None:
        """The policy's word on ``command`` before the commands that lead up to it run (the ``bl``
        before a ``bp``: a denied line runs nothing); ``run`` then runs it without asking again."""
        self.app.enforce_policy(command, self.owner, self.session.session_id)
        self.allowed.append(command)

    def run(self, command: str, *, show: bool = True, timeout_s: float | None = None) -> CommandOutput:
        """Run one command at the prompt (policy first, once: ``allow``); ``show``: its output is part of the result."""
        if command in self.allowed:
            self.allowed.remove(command)
        else:
            self.app.enforce_policy(command, self.owner, self.session.session_id)
        out = self.session.execute(command, timeout_s if timeout_s is not None else self.timeout_s)
        self.outputs.append(out)
        self.shown.append(show)
        return out

    def record(self, command: str, *, show: bool = True, timeout_s: float | None = None) -> RecordBase | None:
        """Run ``command`` and return its parsed record (None when it ran the target)."""
        out = self.run(command, show=show, timeout_s=timeout_s)
        return parsing.parse(out.command, out.output) if out.kind == "immediate" else None

    def read(self, command: str, kind: type[RecordT], *, show: bool = True,
             timeout_s: float | None = None) -> RecordT | None:
        """Run ``command``: its record if it is a ``kind`` (None if kd answered otherwise), and kd's
        complaint as invalid_argument (``refuse_error``). ``kind`` is one of the parse layer's
        record models, named at call time (``parsing.BreakpointsRecord``: kdmcp.parse builds its
        models on first use, not at server start)."""
        record = self.record(command, show=show, timeout_s=timeout_s)
        refuse_error(self, record)
        return record if isinstance(record, kind) else None


def open_session(app: KdMcpApp, session_id: str | None, owner: str | None, *, needs: Action | None = None,
                 timeout_s: float | None = None) -> Ran:
    """The caller's session, checked against the kind rules for ``needs``, ready to run commands."""
    session = app.session(session_id, owner)
    if needs is not None:
        refuse_for_kind(session, needs)
    return Ran(app, session, owner, timeout_s)


def whole_output(ran: Ran, out: CommandOutput) -> str:
    """All of ``out``'s text, past the inline cap too: a long listing (thousands of handles) is
    read back from the session's output store, masked, so every row of it can be parsed."""
    if not out.truncated:
        return out.output
    text, _ = ran.app.masked_range(ran.session, out.output_offset, out.output_end)
    return text


def refuse_error(ran: Ran, record: RecordBase | None) -> None:
    """kd's complaint (``Couldn't resolve error at …``, a syntax error: an error record) as
    invalid_argument: the caller's words were wrong, not the debugger. The one reading of "kd
    refused this" every typed tool uses."""
    if record is not None and isinstance(record, parsing.ErrorRecord):
        raise refusal(ran, record)


def refusal(ran: Ran, record: RecordBase | None) -> InvalidArgument:
    """kd's refusal of the command ``record`` answers, in kd's words (``refuse_error``'s rule):
    an error record's message, else kd's first line (of the last command's output, when there is
    no record to read). A tool raises it also where kd printed none
    of what the command shows (no such object, no handle table): what kd printed instead is its
    refusal, as text rather than an error record (``Driver object nosuch 7 not found``,
    ``Invalid process 12345``)."""
    if record is not None and isinstance(record, parsing.ErrorRecord):
        said = record.message
    else:
        text = record.raw if record is not None else ran.outputs[-1].output if ran.outputs else ""
        said = next((line for line in (line.strip() for line in text.splitlines()) if line), "no answer")
    return InvalidArgument(f"{said_by(ran.session)}: {said}", session_id=ran.session.session_id,
                           state=ran.session.state)


def said_by(session: DebuggerSession) -> str:
    """The debugger that said it, by the name a person runs: kd, or cdb (user mode, minidumps)."""
    return str(session.plan.flavor)


def serve(ran: Ran, model: type[TypedT], elapsed_ms: float | None = None, command: str | None = None,
          **fields: Any) -> TypedT:
    """The served ``model``: the session's state and events now, the shown commands and their outputs,
    one ``output_id`` from the first command's output to the last's, and the tool's ``fields``.
    ``command`` names what ran when that is more than the shown commands (a tool whose long
    outputs are left to ``output_id`` still says it ran them)."""
    session = ran.session
    outs = ran.outputs
    shown = [o for o, s in zip(outs, ran.shown, strict=True) if s]
    start = outs[0].output_offset if outs else session.store.size
    end = outs[-1].output_end if outs else start
    return model(
        session_id=session.session_id, state=session.state,
        prompt=session.prompt.text if session.prompt is not None else None,
        events=ran.app.new_events(session),
        elapsed_ms=sum(o.elapsed_ms for o in outs) if elapsed_ms is None else elapsed_ms,
        command=command if command is not None else "; ".join(o.command for o in shown),
        output="\n".join(o.output.rstrip("\r\n") for o in shown if o.output.strip()),
        truncated=any(o.truncated for o in shown),
        output_id=models.output_id(session.session_id, start, end), output_bytes=end - start,
        **fields,
    )

