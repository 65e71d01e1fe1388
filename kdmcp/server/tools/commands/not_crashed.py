"""``analyze`` on a live target that has not crashed: a one-line answer, not 4 KB of analysis.

``!analyze -v`` explains a crash: a bug check (kernel) or an exception (user mode). On a live
kernel stopped at a break-in kd has no bug check to explain and prints ``Unknown bugcheck code
(0)`` with a page of analysis of nothing; on a process stopped at the attach's break-in
(``Break instruction exception - code 80000003``) or a breakpoint cdb analyses the debugger's
own break. Neither is about the target: an agent reading it as a crash report is misled.

So on a live target (not a dump: a dump is written because something happened) ``analyze``
first asks the debugger what the stop is, with one short command whose answer is definite:

- kernel: ``.bugcheck`` -- ``Bugcheck code 00000000`` while no bug check happened (kd reads
  ``KiBugCheckData``, empty until a crash);
- user mode: ``.lastevent`` -- a break instruction (``80000003``, ``4000001f`` the WOW64 one), a
  breakpoint hit (``Hit breakpoint 0``) or no event is not a crash; any other exception is.

Not crashed, ``analyze`` serves that command's output and record with ``crashed: false`` and a
``note`` naming what to ask instead; ``!analyze -v`` does not run (on real kd it can take
minutes loading symbols). A crashed target gets the analysis exactly as before.

Why a success and not an ``invalid_argument`` error: "what crashed?" has a definite, useful
answer here -- nothing -- and the call was right (the session, the arguments); only the target's
state leaves nothing to analyze. An error would tell the agent its call was wrong, invite a
retry or a "tool failed" report, and stop a ``batch``; a short success states the fact once,
with the debugger's own evidence beside it, and points to the tools that answer the question
the agent most likely has (where is it stopped, and why).
"""

from __future__ import annotations

from pydantic import Field

from kdmcp import parse as parsing
from kdmcp.engine import DebuggerSession
from kdmcp.engine.results import CommandOutput
from kdmcp.parse.record_base import RecordBase
from kdmcp.server import models
from kdmcp.server.kind_rules import is_kernel
from kdmcp.server.text import Data, command_text

__all__ = ["NOT_A_CRASH", "AnalyzeResult", "not_crashed", "stop_check"]

# user-mode exception codes that are the debugger's or the program's own break, not a crash
NOT_A_CRASH = frozenset({0x80000003, 0x4000001F})
_DUMPS = ("kernel_dump", "user_dump")


class AnalyzeResult(models.InspectResult):
    """``!analyze -v``'s record; on a live target with no crash, the stop's own command instead."""

    crashed: bool = Field(default=True, description="false: a live target with no bug check or exception; "
                          "!analyze -v did not run, output is the stop's own command")
    note: str | None = Field(default=None, description="why there is nothing to analyze, and what to ask instead")

    @classmethod
    def render_text(cls, data: Data) -> str:
        return command_text(data, [data["note"]] if data.get("note") else None)


def stop_check(session: DebuggerSession) -> str | None:
    """The short command that says whether the target crashed, or None where ``!analyze -v`` runs anyway."""
    if session.plan.kind in _DUMPS:
        return None
    return ".bugcheck" if is_kernel(session) else ".lastevent"


def not_crashed(result: CommandOutput) -> tuple[RecordBase | None, str | None]:
    """The stop command's record, and the note when it shows no crash (None: crashed, analyse it)."""
    record = parsing.parse(result.command, result.output) if result.kind == "immediate" else None
    if isinstance(record, parsing.AnalysisRecord):
        code = record.bugcheck.code if record.bugcheck is not None else None
        if code is not None and int(code, 16) == 0:
            return record, ("not crashed: no bug check (.bugcheck code 0), nothing for !analyze -v to explain; "
                            "where it stopped: backtrace, registers, kd_command .lastevent")
        return record, None
    if isinstance(record, parsing.ExceptionRecordRecord):
        exception = int(record.code, 16) if record.code else None
        if exception is None or exception in NOT_A_CRASH:
            what = record.description or "no exception"
            return record, (f"not crashed: the last event is {what}, no exception for !analyze -v to explain; "
                            "where it stopped: backtrace, registers, threads")
        return record, None
    if "<no event>" in result.output:
        return record, ("not crashed: no last event, nothing for !analyze -v to explain; "
                        "where it stopped: backtrace, registers, threads")
    return record, None
