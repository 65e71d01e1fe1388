"""Replaying a published debugger session log through ``SessionMachine`` as kd-mcp would have seen it.

A log (fixtures/sessions/) is what a console showed: each prompt, the command typed after it (the
console's echo), the output. The replay splits it at the prompts named in the log's facts
(fixtures/sessions/facts.json), feeds each piece in the chunks a caller chooses, and tells the
machine what kd-mcp would have sent at each prompt: a go-class line (``go_sent`` with its echo) or
an immediate command (``command_sent``). An immediate command's completion marker is what kd would
have printed for kd-mcp's ``.echo`` -- the prompt, the echoed ``.echo`` line, the marker -- and it is
added right before the next prompt of the log, so a command is complete exactly at that prompt.
Everything the log holds is fed byte for byte; only those marker lines are added.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kdmcp.engine.commands import command_kind, is_step
from kdmcp.engine.events import DebuggerEvent
from kdmcp.engine.machine import SessionMachine

SESSIONS = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"
MARKER_PREFIX = b"KDMCPREPLAYN"

Split = Callable[[bytes], Iterable[bytes]]


@dataclass
class Step:
    """One prompt of the log and what was typed after it (``command`` None: nothing, the log ends)."""

    prompt: str
    command: str | None
    kind: str  # "go", "step", "immediate", or "none"


@dataclass
class Replay:
    """What the machine said while the log was replayed."""

    prompts: list[str | None] = field(default_factory=list)  # the prompt the machine saw at each step
    states: list[str] = field(default_factory=list)  # its state at each step's prompt
    early: list[int] = field(default_factory=list)  # steps whose command completed before its prompt
    completed: list[int] = field(default_factory=list)  # steps whose command completed at the next prompt
    events: list[DebuggerEvent] = field(default_factory=list)
    final_state: str = ""

    def dbgprint(self) -> str:
        return "".join(e.text for e in self.events if e.kind == "dbgprint")

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events if e.kind != "dbgprint"]


def load_facts() -> dict[str, dict[str, Any]]:
    return json.loads((SESSIONS / "facts.json").read_text(encoding="utf-8"))


def steps_of(facts: dict[str, Any]) -> list[Step]:
    steps = []
    for prompt, command, *kind in facts["steps"]:
        if kind:
            steps.append(Step(prompt, command, kind[0]))
        elif command is None:
            steps.append(Step(prompt, None, "none"))
        else:
            effect = command_kind(command) if command.strip() else "immediate"
            go = effect in ("go", "reboot")
            steps.append(Step(prompt, command, ("step" if is_step(command) else "go") if go else "immediate"))
    return steps


def locate(log: bytes, steps: list[Step]) -> list[tuple[int, int]]:
    """Where each step's prompt starts and ends in the log: at a line start, followed by its command."""
    found = []
    pos = 0
    for step in steps:
        prompt = step.prompt.encode()
        tail = re.escape(step.command.encode()) + rb"(?:\r?\n|$)" if step.command is not None else rb"(?:\r?\n)?$"
        m = re.compile(rb"(?:^|(?<=\n))" + re.escape(prompt) + rb"(?=" + tail + rb")", re.MULTILINE).search(log, pos)
        if m is None:
            raise AssertionError(f"prompt {step.prompt!r} + {step.command!r} not found after byte {pos}")
        found.append((m.start(), m.end()))
        pos = m.end()
    return found


def replay(log: bytes, steps: list[Step], split: Split) -> Replay:
    """Feed ``log`` to a fresh machine, piece by piece as ``split`` cuts each piece."""
    m = SessionMachine(marker_prefix=MARKER_PREFIX, clock=lambda: 0.0)
    out = Replay()
    spans = locate(log, steps)

    def feed(data: bytes) -> None:
        for chunk in split(data):
            if chunk:
                m.feed(chunk)

    pos = 0
    pending = None
    for i, (step, (start, end)) in enumerate(zip(steps, spans, strict=True)):
        if pending is not None:  # the previous command's marker lines, right before this prompt
            feed(log[pos:start])
            if pending.done:
                out.early.append(i - 1)
            line_end = b"\r\n" if log[start - 2 : start] == b"\r\n" else b"\n"
            marker = pending.marker
            feed(step.prompt.encode() + b".echo " + marker + line_end + marker + line_end)
            pos = start
        feed(log[pos:end])
        pos = end
        if pending is not None and pending.done:
            out.completed.append(i - 1)
        pending = None
        out.prompts.append(m.prompt.text if m.prompt is not None else None)
        out.states.append(m.state.value)
        if step.kind in ("go", "step"):
            assert step.command is not None
            eol = b"\r\n" if log[end + len(step.command.encode()) :].startswith(b"\r\n") else b"\n"
            m.go_sent(step.command.encode() + eol, step=step.kind == "step", command=step.command)
        elif step.kind == "immediate":
            pending = m.command_sent(m.new_marker(), step.command)
    feed(log[pos:])
    if pending is not None and pending.done:
        out.early.append(len(steps) - 1)
    out.final_state = m.state.value
    out.events = list(m.events)
    return out
