"""Replaying a published debugger session log through ``SessionMachine`` as kd-mcp would have seen it.

A log (fixtures/sessions/) is what a console showed: each prompt, the command typed after it (the
console's echo), the output. The replay splits it at the prompts named in the log's facts
(fixtures/sessions/facts.json), feeds each piece in the chunks a caller chooses, and tells the
machine what kd-mcp would have sent at each prompt: a go-class line (``go_sent`` with its echo),
an immediate command (``command_sent``), or the ``q`` its stop types (nothing to the machine, then
the end of the stream). An immediate command's completion marker is what kd would
have printed for kd-mcp's ``.echo`` -- the prompt, the echoed ``.echo`` line, the marker -- and it is
added right before the next prompt of the log, so a command is complete exactly at that prompt.
A run line (commands, then a run command: kdmcp/engine/run_line.py) is sent as kd-mcp sends it,
with ``.echo <marker>`` before its run command: kd prints that marker's line once the commands are
done, and the log cannot say where that is, so facts.json does (``run_lines``: the step, and text
of the last line the commands printed, read in the log); the marker's line is added after it.
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
from kdmcp.engine.run_line import split_run_line

SESSIONS = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"
MARKER_PREFIX = b"KDMCPREPLAYN"

Split = Callable[[bytes], Iterable[bytes]]


@dataclass
class Step:
    """One prompt of the log and what was typed after it (``command`` None: nothing, the log ends)."""

    prompt: str
    command: str | None
    kind: str  # "go", "step", "immediate", "quit", or "none"
    commands_end: str | None = None  # a run line's: text of the last line its commands printed


@dataclass
class Replay:
    """What the machine said while the log was replayed."""

    prompts: list[str | None] = field(default_factory=list)  # the prompt the machine saw at each step
    states: list[str] = field(default_factory=list)  # its state at each step's prompt
    early: list[int] = field(default_factory=list)  # steps whose command completed before its prompt
    run_lines: list[int] = field(default_factory=list)  # run lines whose marker made the target's output start
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
            kind = ("step" if is_step(command) else "go") if go else "quit" if effect == "quit" else "immediate"
            steps.append(Step(prompt, command, kind))
    for index, text in facts.get("run_lines", []):
        steps[index].commands_end = text
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
        if step.kind in ("go", "step") and split_run_line(step.command or "") is not None:
            assert step.command is not None and step.commands_end is not None, f"step {i}: no run_lines fact"
            line = m.run_line_sent(MARKER_PREFIX + b"RUN" + str(i).encode(), step=step.kind == "step",
                                   command=step.command)
            echo_end = log.index(b"\n", end) + 1
            cut = log.index(b"\n", log.index(step.commands_end.encode(), echo_end)) + 1  # the commands' last line
            feed(log[pos:cut])
            feed(line.marker + (b"\r\n" if log[cut - 2 : cut] == b"\r\n" else b"\n"))
            pos = cut
            if line.hit is not None:
                out.run_lines.append(i)
        elif step.kind in ("go", "step"):
            assert step.command is not None
            eol = b"\r\n" if log[end + len(step.command.encode()) :].startswith(b"\r\n") else b"\n"
            m.go_sent(step.command.encode() + eol, step=step.kind == "step", command=step.command)
        elif step.kind == "immediate":
            pending = m.command_sent(m.new_marker(), step.command)
    feed(log[pos:])
    if pending is not None and pending.done:
        out.early.append(len(steps) - 1)
    if steps and steps[-1].kind == "quit":
        m.eof(0)  # kd-mcp's stop typed q (engine/stopping.py) and read the debugger's last words
    out.final_state = m.state.value
    out.events = list(m.events)
    return out


# Issue 29's item 1, kind by kind: what in a replay counts as recognising one event of the kind.
# facts.json's "present" says how many the log shows (read in it, counted with grep), "missed" how
# many of them the machine cannot know and why ("note"); README.md's table is rendered from both.
def _events(r: Replay, kind: str) -> list[DebuggerEvent]:
    return [e for e in r.events if e.kind == kind]


def _exceptions(r: Replay, chance: bool | None, stopped: bool | None = None) -> int:
    return sum(1 for e in _events(r, "exception")
               if e.first_chance is chance and (stopped is None or e.stopped is stopped))


def _line_commands(r: Replay, facts: dict[str, Any]) -> int:
    """Run lines whose marker the machine saw and whose commands' last line is no DbgPrint."""
    return sum(1 for index, text in facts.get("run_lines", []) if index in r.run_lines and text not in r.dbgprint())


def _bugchecks(r: Replay) -> int:
    """Bugchecks not followed by a break_in event (kd's own break after one is the bugcheck's)."""
    kinds = r.kinds()
    return sum(1 for i, k in enumerate(kinds) if k == "bugcheck" and kinds[i + 1 : i + 2] != ["break_in"])


KINDS: dict[str, tuple[str, Callable[[Replay, dict[str, Any]], int]]] = {
    "module_load": ("module load (cdb `ModLoad:`, kd's load stops)", lambda r, f: len(_events(r, "module_load"))),
    "module_unload": ("module unload (`Unload module`, an `sxe ud` stop)",
                      lambda r, f: len(_events(r, "module_unload"))),
    "process_exit": ("process exit (the exit stop)", lambda r, f: len(_events(r, "process_exit"))),
    "thread_exit": ("thread exit (an `sxe et` stop)", lambda r, f: len(_events(r, "thread_exit"))),
    "exception_went_on": ("exception, first chance, the target went on", lambda r, f: _exceptions(r, True, False)),
    "exception_stopped": ("exception, first chance, a stop", lambda r, f: _exceptions(r, True, True)),
    "exception_second_chance": ("exception, second chance", lambda r, f: _exceptions(r, False)),
    "exception_in_dump": ("exception stored in a dump (chance not available)", lambda r, f: _exceptions(r, None)),
    "bugcheck": ("bugcheck, the stop's reason through kd's own break after it", lambda r, f: _bugchecks(r)),
    "command_output": ("a breakpoint's or event filter's command-string output: the stop's, not DbgPrint",
                       lambda r, f: f["present"].get("command_output", 0)
                       - r.dbgprint().count(f.get("command_output_marker", "\0"))),
    "line_commands": ("commands typed before a run command on its line (`.echo X; bl; g`): their output "
                      "the command's, not DbgPrint", lambda r, f: _line_commands(r, f)),
    "startup": ("a debugger's start-up lines: the start's, not DbgPrint",
                lambda r, f: sum(1 for e in _events(r, "connected") if e.note is None)),
    "reboot": ("reboot (`Shutdown occurred`)", lambda r, f: len(_events(r, "reboot"))),
    "reconnect": ("reconnect, breakpoints noted for re-arming",
                  lambda r, f: sum(1 for e in _events(r, "connected") if e.note and "re-arm" in e.note)),
}


def recognised(r: Replay, facts: dict[str, Any]) -> dict[str, int]:
    """How many events of each item-1 kind the machine recognised in replay ``r`` of a log."""
    return {kind: count(r, facts) for kind, (_, count) in KINDS.items()}


def kind_table(facts: dict[str, dict[str, Any]], replays: dict[str, Replay]) -> str:
    """The per-kind table of README.md: recognised / present over all logs, and which logs."""
    rows = ["| event (issue 29, item 1) | recognised / present | logs that show it |", "|---|---|---|"]
    for kind, (label, _) in KINDS.items():
        present = {name: f["present"].get(kind, 0) for name, f in sorted(facts.items())}
        got = sum(recognised(replays[name], facts[name])[kind] for name in facts)
        logs = ", ".join(f"{name} ({n})" for name, n in present.items() if n) or "none found (see below)"
        rows.append(f"| {label} | {got} / {sum(present.values())} | {logs} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # python -m tests.engine.session_replay: print the table README.md holds
    _facts = load_facts()
    _replays = {name: replay((SESSIONS / name).read_bytes(), steps_of(f), lambda d: [d]) for name, f in _facts.items()}
    print(kind_table(_facts, _replays), end="")
