"""A line that runs commands, then the target: ``.echo X; bl; g``, ``bp nt!Foo; g``, ``r; p``.

kd runs the commands before the run command, prints their output, then lets the target run;
nothing it prints marks where the commands' output ends and the target's begins, so that
output was taken for the target's DbgPrint (fixtures/sessions/geocausa-kd-arm64-unload-logopen.log
shows it). kd-mcp puts ``.echo <marker>`` right before the run command, in the same line:
what comes before the marker's line is the commands' (the ``kd_command`` result), what comes
after it is the target's.

One line, not two: kd's meaning is kept. "If .catch is not used, an error will terminate the
entire debugger command program" (.catch): an error in the commands still keeps the run
command from running (the prompt comes without the marker), and alias text kd pastes into the
line sees the whole line. Only a plain top-level sequence is changed: every command read by
the one command reader (:mod:`kdmcp.command.syntax`, under every reading of quotes and
escapes) is a simple command, the last one runs the target, none before it does, none is an
alias command or ``z`` (which repeats the commands before it) or hides output (``.outmask``,
``.ofilter``: the marker too), no alias is pasted in.

Three parts: :func:`split_run_line` (pure), :class:`RunLineMachine` (the state machine's side:
busy until the marker's line, running after it) and :class:`RunLineSession` (the session's).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn

from kdmcp.command import CommandClass, RunEffect, classify, run_effect
from kdmcp.command.lexing import lexings_for
from kdmcp.command.nodes import Command
from kdmcp.command.syntax import read_list
from kdmcp.command.tables import is_step, leaf_effect, pastes_aliases, reaches_across_line
from kdmcp.engine.commands import MAX_COMMAND_BYTES, CommandKind
from kdmcp.engine.config import SessionConfig
from kdmcp.engine.events import SessionState
from kdmcp.engine.kinds import KINDS
from kdmcp.engine.launch import LaunchPlan
from kdmcp.engine.recognizer import LoneShape, MarkerHit
from kdmcp.engine.results import CommandOutput
from kdmcp.engine.stopping import elapsed_ms

if TYPE_CHECKING:
    from kdmcp.engine.machine import PendingMarker, SessionMachine, Transition
    from kdmcp.engine.output_store import OutputStore
    from kdmcp.engine.recognizer import StreamRecognizer
    from kdmcp.engine.stop_rules import AutoCommands
    from kdmcp.parse.prompt import Prompt

__all__ = ["MARKER_ROOM", "RunLineMachine", "RunLineSession", "RunSplit", "split_run_line"]

MARKER_ROOM = 64  # bytes "; .echo <marker>" adds to a line, and more


@dataclass(frozen=True)
class RunSplit:
    """A run line cut before its run command: ``head + tail`` is the line, as typed."""

    head: str  # up to the ';' before the run command: the commands kd runs first
    tail: str  # from that ';': the run command
    run: str  # the run command's text

    def line(self, marker: str) -> str:
        """The line kd-mcp sends: the commands, ``.echo <marker>``, the run command."""
        return f"{self.head}; .echo {marker}{self.tail}"


def split_run_line(line: str) -> RunSplit | None:
    """``line`` cut before its run command, or None when a marker there could change what kd does
    (or when there is nothing before it to cut off)."""
    if len(line.encode("utf-8")) + MARKER_ROOM > MAX_COMMAND_BYTES or pastes_aliases(line):
        return None
    cuts: set[tuple[int | None, int | None]] = set()
    commands: list[Command] = []
    for lex in lexings_for(line):
        nodes = read_list(line, lex)
        commands = [n for n in nodes if isinstance(n, Command)]
        if len(nodes) < 2 or len(commands) != len(nodes):
            return None
        cuts.add((commands[-2].end, commands[-1].start))  # the ';' that ends the last command but one
    if len(cuts) != 1:
        return None  # the readings disagree on where the run command starts
    (cut, start), = cuts
    if cut is None or start is None or any(reaches_across_line(c.text) for c in commands):
        return None
    head, run = line[:cut], commands[-1].text
    effect = leaf_effect(run)
    if effect not in (RunEffect.RESUMES, RunEffect.REBOOTS) or run_effect(line) is not effect:
        return None
    if run_effect(head) is not RunEffect.IMMEDIATE or any(
            f.command_class is CommandClass.OUTPUT_CONTROL for f in classify(head)):
        return None  # a run command before the last, or .outmask/.ofilter, which could hide the marker
    return RunSplit(head, line[cut:], run)


class RunLineMachine:
    """The machine's side: busy with the commands until the marker's line, the target's after it.

    A mixin of ``SessionMachine`` (machine.py); the attributes below are the machine's. The
    chunk holding the marker's line is fed in two parts, so each part is read in its own state.
    """

    _boundary: tuple[PendingMarker, bool] | None = None  # the run line's marker, whether its command steps
    state: SessionState
    busy_command: bool
    end: int
    _rec: StreamRecognizer
    _out: list[Transition]
    _lone: LoneShape | None

    if TYPE_CHECKING:
        _stopping: bool
        _command_output: bool
        _stepping: bool
        _go_echo: bytes | None
        _auto: AutoCommands
        prompt: Prompt | None

        def feed(self, data: bytes) -> list[Transition]: ...
        def _open_run(self) -> None: ...
        def _skip_to_end(self) -> None: ...
        def _note(self, before: SessionState, event: None) -> None: ...

    def run_line_sent(self, marker: bytes, *, step: bool, command: str) -> PendingMarker:
        """A run line (``RunSplit.line``) is about to be written: busy until ``marker``'s line.
        ``step``: its run command steps or traces."""
        from kdmcp.engine.machine import PendingMarker

        self._auto.learn(command)
        self._rec.reset_line()
        self._lone = None  # a command's lone answer (machine.py) is not this line's
        self.prompt = None
        self.state = SessionState.busy
        self.busy_command = True
        self._boundary = (PendingMarker(marker), step)
        self._skip_to_end()
        return self._boundary[0]

    def _start_run(self, echo: bytes | None, step: bool) -> None:
        """The target runs from here (``go_sent``, or a run line's marker)."""
        self.state = SessionState.running
        self._stopping = False
        self._command_output = False
        self._stepping = step
        self._go_echo = echo
        self._open_run()

    def _feed_run_line(self, data: bytes) -> list[Transition]:
        """``feed`` while a run line's commands print: the part up to the marker's line as a
        command's output, the rest as the target's. The marker's line is ``<marker>`` and its line
        end: its echo is followed by the ``;`` before the run command. A prompt before it: kd ended
        the line there (an error), the run command never ran."""
        assert self._boundary is not None
        pending, step = self._boundary
        tail = self._rec.tail[-len(pending.marker) - 1 :]  # where a marker line cut between chunks starts
        found = re.compile(re.escape(pending.marker) + rb"\r?\n").search(tail + data)
        cut = len(data) if found is None else found.end() - len(tail)
        line_start = self.end - len(tail)
        self._boundary = None
        out = self.feed(data[:cut])
        if found is None:
            if self.state == SessionState.busy:
                self._boundary = (pending, step)  # still the commands' output
            return out
        if self.state != SessionState.busy:
            return out  # the target went away, or kd exited, before the marker could be read
        pending.hit = MarkerHit(pending.marker, line_start + found.start(), line_start + found.end())
        pending.done = True
        self.busy_command = False
        self._out = []
        self._start_run(None, step)
        self._note(SessionState.busy, None)
        out += self._out
        return out + (self.feed(data[cut:]) if cut < len(data) else [])


class RunLineSession:
    """The session's side: ``kd_command`` of a run line. A mixin of ``DebuggerSession``
    (session.py); the attributes below are the session's."""

    plan: LaunchPlan
    config: SessionConfig
    machine: SessionMachine
    store: OutputStore
    session_id: str
    _cond: threading.Condition
    go_read: bool | None

    if TYPE_CHECKING:
        @property
        def state(self) -> SessionState: ...
        @property
        def prompt(self) -> Prompt | None: ...
        @property
        def exit_code(self) -> int | None: ...
        def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool: ...
        def _check_ready(self) -> None: ...
        def _write(self, data: bytes) -> None: ...
        def _start_reading(self) -> None: ...
        def _read_until(self, predicate: Callable[[], bool], timeout: float) -> bool: ...
        def _done_reading(self) -> None: ...
        def _command_text(self, start: int, end: int, command: str, marker: bytes | None) -> tuple[str, bool]: ...
        def _unanswered(self, timed_out: bool, timeout: float, text: str, start: int, end: int) -> NoReturn: ...

    def _commands_then_run(self, command: str, split: RunSplit, kind: CommandKind, timeout: float) -> CommandOutput:
        """Send ``split``'s line; return the commands' output once the target runs (or has stopped
        again, or kd ended the line before its run command: then up to kd's prompt)."""
        t0, machine = time.monotonic(), self.machine
        with self._cond:  # as _immediate: busy, this thread reads the commands' answer, the pump stands aside
            self._check_ready()
            start, marker = self.store.size, machine.new_marker()
            pending = machine.run_line_sent(marker, step=is_step(split.run), command=command)
            self._start_reading()
        line = split.line(marker.decode())
        try:
            self._write(line.encode("utf-8") + b"\n")
            self._read_until(lambda: pending.hit is not None or self.state != SessionState.busy, timeout)
        finally:
            self._done_reading()
        if pending.hit is not None:
            self.go_read = True  # kd printed the marker: it read the line
            # as after any go: a short watch for an immediate stop; kd's refusal where nothing can run
            runs = KINDS[self.plan.kind].runs
            self.wait_for(lambda: self.state != SessionState.running,
                          self.config.go_settle_s if runs else self.config.command_timeout)
        with self._cond:
            end = pending.hit.output_end if pending.hit is not None else self.store.size
            if pending.hit is None and self.state == SessionState.broken and machine.last_prompt_offset is not None:
                end = max(start, machine.last_prompt_offset)  # kd ended the line: its answer is the output
            text, truncated = self._command_text(start, end, line, None)
            if pending.hit is None and self.state != SessionState.broken:
                # no marker, no prompt: kd exited, is still busy (timed out), or the target went away
                self._unanswered(self.state == SessionState.busy, timeout, text, start, end)
            return CommandOutput(
                command=command, kind=kind, state=self.state, prompt=self.prompt, output=text,
                truncated=truncated, output_offset=start, output_end=end, elapsed_ms=elapsed_ms(t0),
            )
