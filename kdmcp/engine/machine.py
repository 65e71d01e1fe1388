"""The session's pure state machine: bytes in, transitions and completions out.

pexpect splits "move bytes" (its spawn classes) from "has it arrived?" (one ``Expecter``);
this module is kd-mcp's ``Expecter``. It decides what the debugger's bytes mean — the
state, the prompt, the events and their sequence, marker completion, connect-banner
skipping, DbgPrint attribution, the go echo, the exit — and nothing else: no threads, no
console, no sleeping (the wall clock stamping events is passed in). ``DebuggerSession``
feeds it every byte it stores. docs/architecture.md, "The engine", describes the split.

Longer than 500 lines because the state it keeps is one whole: what a run line changes
(run_line.py), the stop rules (stop_rules.py, step_stop.py) and the scanning (recognizer.py)
are apart already; what is left reads and writes the same dozen fields at every chunk.
"""

from __future__ import annotations

import collections
import secrets as _random
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

from kdmcp.engine.events import EVENT_TEXT_LIMIT, DebuggerEvent, EventKind, SessionState
from kdmcp.engine.recognizer import EventHit, LoneShape, MarkerHit, StreamRecognizer
from kdmcp.engine.run_line import RunLineMachine
from kdmcp.engine.step_stop import held_start, step_location
from kdmcp.engine.stop_rules import AutoCommands, exception_stopped, location_kind
from kdmcp.errors import DebuggerExited, KdMcpError, NotConnected, SessionBusy, TargetRunning
from kdmcp.parse.prompt import Prompt
from kdmcp.secret import Secret, redact

__all__ = ["PendingMarker", "SessionMachine", "Transition"]

_STOP_EVENTS = {"break_in", "breakpoint", "bugcheck", "exception"}
# Target output before these lines is DbgPrint; before a (re)connect line it is kd's own.
_ATTRIBUTED_BEFORE = _STOP_EVENTS | {"reboot", "transport_lost", "module_load", "module_unload", "last_event",
                                     "kd_own", "no_debuggees", "go_refused"}
_ENDS_BANNER = _STOP_EVENTS | {"reboot", "transport_lost"}
# Events that can be a stop's reason: the newest of them when the stop's prompt arrives is marked
# ``stopped`` (a module load or first-chance exception the target went on after is not the newest).
_REASONS = {"break_in", "breakpoint", "bugcheck", "exception", "step", "module_load", "module_unload",
            "process_exit", "thread_exit"}
_REARM = "the target rebooted: breakpoints set before it may need re-arming (bl lists them)"
_TARGET_GONE: set[EventKind] = {"reboot", "transport_lost", "reconnecting", "waiting_for_target"}
_UPTIME = b"System Uptime:"
_STEP_TAIL = 16384  # what a step's output keeps unread: far more than its last register block


class Transition(NamedTuple):
    """One thing the bytes said: the state before and after, and the event that said it (if any).

    A named tuple, not a model nor a frozen dataclass (whose ``__init__`` sets each field through
    ``object.__setattr__``): the machine makes one per state change (one per command), and
    nothing serialises it.
    """

    before: SessionState
    after: SessionState
    event: DebuggerEvent | None = None


class PendingMarker:
    """A command's completion marker: found (``hit``) and then followed by a prompt (``done``)."""

    __slots__ = ("done", "hit", "marker")

    def __init__(self, marker: bytes) -> None:
        self.marker = marker
        self.hit: MarkerHit | None = None
        self.done = False


class SessionMachine(RunLineMachine):
    """What one debugger's output stream means, fed chunk by chunk (offsets count every byte fed)."""

    def __init__(
        self,
        secrets: Sequence[Secret] = (),
        event_log_size: int = 10_000,
        clock: Callable[[], float] = time.time,
        marker_prefix: bytes | None = None,
    ) -> None:
        self._secrets = tuple(secrets)
        self._clock = clock
        self._rec = StreamRecognizer()
        self.state = SessionState.starting
        self.prompt: Prompt | None = None
        self.exit_code: int | None = None
        self.last_prompt_offset: int | None = None
        self.end = 0  # bytes fed so far: the next chunk's offset
        self.events: collections.deque[DebuggerEvent] = collections.deque(maxlen=event_log_size)
        self.seq = 0
        self.busy_command = False  # an immediate command awaits its marker
        self._markers: dict[bytes, PendingMarker] = {}
        self._marker_prefix = marker_prefix or f"KDMCP{_random.token_hex(8).upper()}N".encode()
        self._marker_count = 0
        self._connected_once = False
        self._stopping = False  # a stop banner arrived; its prompt has not
        self._stepping = False  # a step runs: its output is kd's, not the target's
        self._in_connect_banner = False
        self._go_echo: bytes | None = None
        # The current run (from a go, a connect or the start to the prompt that ends it): the newest
        # event that can be its stop's reason. A bugchecked target stays so until it reboots (g at a
        # bugcheck only breaks again: fixtures/sessions, the sim's bugcheck_mp).
        self._run_open = True
        self._run_reason: DebuggerEvent | None = None
        self._bugchecked = False
        self._pending_exception = False  # an exception line while running: does the target stop?
        self._process_exited = False
        self._rebooted = False
        self._candidate_prompt: bytes | None = None  # a prompt shape seen before a marker (pipes)
        self.rearm_breakpoints = False  # set by a reconnect after a reboot
        self._auto = AutoCommands()  # event filters and breakpoints whose commands resume the target
        self._command_output = False  # such a command's output is being printed: not DbgPrint
        # DbgPrint attribution: bytes from ``_attributed`` to ``end`` are not yet assigned to an
        # event or skipped; while the target runs this holds at most the unterminated last line.
        self._attributed = 0
        self._unattributed = b""
        self._out: list[Transition] = []
        self._lone: LoneShape | None = None  # how the next chunk ends if it answers the command alone
        self._lone_marker = b""  # that command's marker
        self.lean = True  # take ``_feed_lone`` where it applies (tests turn it off to compare)

    # ------------------------------------------------------------- queries

    def events_after(self, seq: int) -> list[DebuggerEvent]:
        """Events newer than ``seq``, scanning from the newest end (the log holds 10,000)."""
        newer: list[DebuggerEvent] = []
        for event in reversed(self.events):
            if event.seq <= seq:
                break
            newer.append(event)
        newer.reverse()
        return newer

    def prompt_since(self, offset: int) -> bool:
        """A prompt has shown at or after ``offset``."""
        return self.last_prompt_offset is not None and self.last_prompt_offset >= offset

    def refusal(self, session_id: str) -> KdMcpError | None:
        """The error that says why a command cannot be sent now, or None at a prompt."""
        state = self.state
        if state == SessionState.broken:
            return None
        kw = {"session_id": session_id, "state": state.value}
        if state == SessionState.exited:
            return DebuggerExited(f"the debugger exited (code {self.exit_code})", exit_code=self.exit_code, **kw)
        if state == SessionState.running:
            return TargetRunning("the target is running: break in first", **kw)
        if state == SessionState.busy:
            return SessionBusy("a previous command is still running: break in or wait", **kw)
        return NotConnected(f"the debugger has no target to command ({state.value})", **kw)

    # ----------------------------------------------------- what was sent

    def new_marker(self) -> bytes:
        """A marker no output can forge: a random per-session prefix and a counter.

        (A fresh random token per command cost a getrandom() call each time.)
        """
        self._marker_count += 1
        return self._marker_prefix + str(self._marker_count).encode()

    def command_sent(self, marker: bytes, command: str | None = None) -> PendingMarker:
        """An immediate command and ``.echo <marker>`` are about to be written: the session is busy.
        ``command``: the line, for the event filters and breakpoints it sets (``AutoCommands``)."""
        if command:
            self._auto.learn(command)
        rec = self._rec
        lone = rec.expect_lone(marker) if self.lean and not self._markers and self._boundary is None else None
        rec.reset_line()
        pending = PendingMarker(marker)
        self._markers[marker] = pending
        self._rec.add_marker(marker)
        self.state = SessionState.busy
        self.busy_command = True
        self.prompt = None
        self._skip_to_end()
        self._lone, self._lone_marker = lone, marker
        return pending

    def abandon(self, marker: bytes) -> None:
        """Forget a command's marker (the target went away mid-command)."""
        self._markers.pop(marker, None)
        self._rec.discard_marker(marker)
        self._lone = None

    def pending_markers(self) -> frozenset[bytes]:
        """The markers of the command under way (and of a resync after it) not yet followed by a prompt."""
        return frozenset(m.marker for m in self._markers.values() if not m.done)

    def resync_sent(self) -> bytes:
        """After Ctrl+C cancelled a command: drop every old marker, return the fresh one to send."""
        for m in self._markers.values():
            self._rec.discard_marker(m.marker)
        marker = self.new_marker()
        self._lone = None
        self._markers = {marker: PendingMarker(marker)}
        self._rec.add_marker(marker)
        self._rec.reset_line()
        return marker

    def go_sent(self, echo: bytes | None, *, step: bool = False, command: str | None = None) -> None:
        """A go-class line is about to be written: the target runs (``echo``: what the console echoes).
        ``step``: it steps or traces (``p``, ``t 5``): kd prints the steps' registers and locations
        until its prompt, the last of them the ``step`` event."""
        if command:
            self._auto.learn(command)
        self._rec.reset_line()
        self._lone = None
        self.prompt = None
        self._start_run(echo, step)
        self._skip_to_end()

    # ------------------------------------------------------------ the stream

    def feed(self, data: bytes) -> list[Transition]:
        """Consume the next chunk of output; return what it changed, in order."""
        if self._boundary is not None:  # a run line's commands print (run_line.py): cut at their marker
            return self._feed_run_line(data)
        lone, self._lone = self._lone, None
        if lone is not None and not self._pending_exception:
            found = self._rec.feed_lone(data, self._lone_marker, lone)
            if found is not None:
                return self._feed_lone(data, found, lone.prompt)
        self._out = []
        self.end += len(data)
        self._unattributed = self._unattributed + data if self._unattributed else data
        events, markers = self._rec.feed(data)
        for hit in events:
            if self._pending_exception:
                self._settle_exception(hit.start, event_next=True)
            if self._attributing() and hit.kind in _ATTRIBUTED_BEFORE:
                self._attribute(hit.start)
                if hit.kind in _ENDS_BANNER:
                    self._in_connect_banner = False  # the banner has ended: a stop follows it
            self._skip_to(hit.end)
            self._apply_event(hit)
        if self._pending_exception:
            self._settle_exception(self.end, event_next=False)
        if self._attributing():
            # A prompt at the end is the stop, not target output; an unterminated short line may
            # still become a prompt or an event line, so it waits for its next bytes.
            if self._rec.prompt is not None:
                self._stop_at_prompt(self._rec.prompt_offset or 0, target_output=True)
            else:
                upto = self._rec.open_line_start
                self._attribute(self._held_from(self.end if upto is None else upto))
        elif self._stepping and self.state == SessionState.running and not self._stopping:
            if self._rec.prompt is not None:
                self._stop_at_prompt(self._rec.prompt_offset or 0, target_output=False)
            elif len(self._unattributed) > _STEP_TAIL:
                self._skip_to(self.end - _STEP_TAIL // 2)  # only the last step's lines can be the stop
        elif not self._pending_exception:
            self._skip_to_end()
        for mh in markers:
            pending = self._markers.get(mh.marker)
            if pending is not None and pending.hit is None:
                pending.hit = mh
                self._rec.discard_marker(mh.marker)
                self._candidate_prompt = mh.prompt_text
        if self._rec.prompt is None and self._candidate_prompt and self._rec.tail == self._candidate_prompt:
            # On pipes kd's output after a prompt starts on the prompt's line: the same text before
            # the marker and alone at the end is the prompt, whatever its shape.
            self._rec.learn_prompt(Prompt(text=self._candidate_prompt.decode("utf-8", errors="replace"),
                                          mode="unknown"))
        if self._rec.prompt is not None:
            self._on_prompt(self._rec.prompt, self._rec.prompt_offset or 0)
        return self._out

    def _feed_lone(self, data: bytes, hit: MarkerHit, prompt: Prompt) -> list[Transition]:
        """``feed`` for the chunk that answers the command alone (``StreamRecognizer.feed_lone``): its
        marker after its output, then the prompt. What ``feed`` does with it, without its search for
        events (there are none) and the attribution of a running target's output (a command's is
        not attributed: ``command_sent`` skipped to the end)."""
        self._out = []
        self.end += len(data)
        self._skip_to_end()
        self._markers[hit.marker].hit = hit
        self._candidate_prompt = None
        self._on_prompt(prompt, hit.line_end)
        return self._out

    def adopt_prompt(self) -> bool:
        """A command timed out after its marker came back with no known prompt after it: the short
        unterminated line kd ended with is its prompt from now on, so the session is usable again.
        False when there is nothing to adopt (no marker yet: kd may still work; break in)."""
        waiting = [m for m in self._markers.values() if not m.done]
        tail = self._rec.tail
        offset = self._rec.open_line_start
        if not waiting or any(m.hit is None for m in waiting) or offset is None or not tail.strip():
            return False
        prompt = Prompt(text=tail.decode("utf-8", errors="replace"), mode="unknown")
        self._rec.learn_prompt(prompt)
        self._lone = None
        self._out = []
        self._on_prompt(prompt, offset)
        return True

    def eof(self, exit_code: int | None) -> list[Transition]:
        """The output stream ended (the debugger exited with ``exit_code``, if known)."""
        self._out = []
        self._lone = None
        if self._attributing():
            self._attribute(self.end)  # a last line without its end is still the target's
        self.exit_code = exit_code
        before = self.state
        event = None
        if self.state != SessionState.exited:
            event = self._event("exited", f"debugger exited with code {exit_code}", self.end, self.end)
        self.state = SessionState.exited
        for m in self._markers.values():
            m.done = True
        self._note(before, event)
        return self._out

    # --------------------------------------------------------------- inner

    def _open_run(self) -> None:
        self._run_open = True
        self._run_reason = None
        self._pending_exception = False

    def _settle_exception(self, limit: int, *, event_next: bool) -> None:
        """Did the exception line just seen stop the target? Decided by the line after it, up to
        ``limit`` (``stop_rules.exception_stopped``); the target going on makes what follows its
        output again (a first-chance C++ exception its program handles)."""
        verdict = exception_stopped(self._unattributed[: max(0, limit - self._attributed)], event_next=event_next)
        if verdict is not None:
            self._pending_exception = False
            self._stopping = self._stopping and verdict

    def _attributing(self) -> bool:
        return self.state == SessionState.running and not self._stopping and not self._stepping

    def _skip_to(self, offset: int) -> None:
        if offset > self._attributed:
            self._unattributed = self._unattributed[offset - self._attributed :]
            self._attributed = offset

    def _skip_to_end(self) -> None:
        self._attributed = self.end
        self._unattributed = b""

    def _attribute(self, upto: int) -> None:
        """The target's output up to ``upto`` becomes a ``dbgprint`` event (after the connect banner).

        After "Kernel Debugger connection established." kd prints the symbol path and kernel
        version block, ending with "System Uptime:"; that is the connection, not DbgPrint.
        """
        if upto <= self._attributed:
            return
        if self._command_output:
            self._skip_to(upto)  # an event filter's or breakpoint's command printing: the stop's output
            return
        if self._in_connect_banner:
            text = self._unattributed[: upto - self._attributed]
            pos = text.find(_UPTIME)
            nl = text.find(b"\n", pos) if pos >= 0 else -1
            if nl < 0:
                # The banner goes on; keep what may be the start of a split "System Uptime:".
                keep = pos if pos >= 0 else max(0, len(text) - len(_UPTIME) + 1)
                self._skip_to(self._attributed + keep)
                return
            self._in_connect_banner = False
            self._skip_to(self._attributed + nl + 1)
        if upto <= self._attributed:
            return
        start = self._attributed
        raw = self._unattributed[: min(upto - start, EVENT_TEXT_LIMIT + 1)]
        self._skip_to(upto)
        if self._go_echo is not None and raw.startswith(self._go_echo):
            start += len(self._go_echo)
            raw = raw[len(self._go_echo) :]
            self._go_echo = None
        if not raw.strip(b" \t\r\n\x03"):
            return  # only line ends, or the pty's echo of the ^C that breaks in
        ev = self._event("dbgprint", raw.decode("utf-8", errors="replace"), start, upto)
        self._note(self.state, ev)

    def _held_from(self, upto: int) -> int:
        """``upto``, or before the trailing lines that may be a step's stop (``step_stop``): they
        wait for what follows them — a prompt makes them a ``step`` event, anything else DbgPrint."""
        if upto <= self._attributed:
            return upto
        return self._attributed + held_start(self._unattributed[: upto - self._attributed])

    def _stop_at_prompt(self, upto: int, *, target_output: bool) -> None:
        """A prompt at ``upto`` ended a run no stop line announced: the held lines before it are a
        ``step`` event when they end in a location and its instruction -- or, after a go, the event
        its place names (``stop_rules.location_kind``), or the module event right before it (cdb's
        sxe ld). ``target_output``: what came before is the target's; after a step line, kd's."""
        held = self._held_from(upto)
        location = step_location(self._unattributed[held - self._attributed : upto - self._attributed])
        if target_output:
            self._attribute(upto if location is None else held)
        if location is not None:
            kind: EventKind = "step"
            if target_output:
                kind = location_kind(location) or "step"  # type: ignore[assignment]
            reason = self._run_reason
            if (target_output and kind in ("step", "module_load") and reason is not None
                    and reason.kind in ("module_load", "module_unload") and reason.seq == self.seq):
                self._skip_to(upto)  # the module event right before it is this stop's reason
                return
            if kind == "process_exit":
                self._process_exited = True
            event = self._event(kind, location.decode("utf-8", errors="replace"), held, upto)
            self._run_reason = event if self._run_open else self._run_reason
            self._note(self.state, event)
        self._skip_to(upto)

    def _on_prompt(self, prompt: Prompt, offset: int) -> None:
        self.prompt = prompt
        self.last_prompt_offset = offset
        waiting = False
        for m in self._markers.values():
            if not m.done:
                if m.hit is not None and offset >= m.hit.line_end:
                    m.done = True
                else:
                    waiting = True
        if waiting:
            return  # an intermediate prompt: the command's marker is still to come
        self._markers.clear()
        self._candidate_prompt = None
        self._command_output = False
        self._connected_once = self._connected_once or prompt.mode == "kernel"
        self._stopping = False
        self._stepping = False
        self._pending_exception = False
        self.busy_command = False
        if self._run_open:
            if self._run_reason is not None:
                self._run_reason.stopped = True  # the newest reason before the prompt is the stop's
            self._run_open = False
            self._run_reason = None
        if self.state != SessionState.exited:
            before = self.state
            self.state = SessionState.broken
            self._note(before, None)

    def _apply_event(self, hit: EventHit) -> None:
        before = self.state
        text = hit.text.decode("utf-8", errors="replace")
        kind: EventKind
        note = None
        if hit.kind == "kd_own" or (hit.kind == "last_event" and (self.busy_command or hit.detail == "other")):
            return  # kd's own line (a typed .lastevent, or its report of a stop already reported)
        if hit.kind == "break_in" and self._bugchecked:  # kd's break after "*** Fatal System Error" (and at
            self._stopping = self.state == SessionState.running  # every g after): the bugcheck's stop
            return
        if hit.kind in ("no_debuggees", "go_refused") and self.state == SessionState.running:
            self._stopping = True  # kd refused the go: what it prints up to its prompt is its own
        if hit.kind == "go_refused":
            return
        if hit.kind == "no_debuggees":
            if self._process_exited:
                return
            kind = "process_exit"  # "No runnable debuggees": nothing said the debuggee ended before
            self._process_exited = True
        elif hit.kind == "waiting":
            kind = "reconnecting" if self._connected_once else "waiting_for_target"
            self.state = SessionState.reconnecting if self._connected_once else SessionState.waiting_for_target
        elif hit.kind in ("connected", "launched") or (hit.kind == "joined" and self.state == SessionState.starting):
            # kd's connection, cdb's "CommandLine:" (the debuggee runs until its first stop), or our
            # own join of a remote session: running until a prompt says not
            kind = "connected"
            self._connected_once = self._connected_once or hit.kind != "launched"
            self._in_connect_banner = hit.kind == "connected"
            self._stopping = self._bugchecked = self._process_exited = False
            self.state = SessionState.running
            self._open_run()
            if self._rebooted and hit.kind == "connected":
                self._rebooted, self.rearm_breakpoints, note = False, True, _REARM
        elif hit.kind == "joined":
            kind = "client_connected"  # someone joined a session we are in; nothing changes for us
        elif hit.kind == "reboot":
            kind = "reboot"
            self._stopping = self._bugchecked = False
            self._rebooted = True
            self.state = SessionState.rebooting
        elif hit.kind == "transport_lost":
            kind = "transport_lost"
            self.state = SessionState.lost
        elif hit.kind == "last_event":
            kind = {"load": "module_load", "unload": "module_unload", "exit_process": "process_exit"}.get(
                hit.detail or "", "thread_exit")  # type: ignore[assignment]
            self._process_exited = self._process_exited or kind == "process_exit"
        elif hit.kind in ("module_load", "module_unload"):
            kind = hit.kind  # type: ignore[assignment]  # the target goes on: no stop begins here
        else:
            kind = hit.kind  # type: ignore[assignment]
            if self.state == SessionState.running:
                self._stopping = True
                self._pending_exception = kind == "exception" and not self._stepping
            self._bugchecked = self._bugchecked or kind == "bugcheck"
        self._command_output = (self.state == SessionState.running
                                and self._auto.resumes_after(kind, hit.code, hit.number))
        if self._command_output:  # its command string prints, then resumes the target: no prompt comes
            self._stopping = self._pending_exception = False
        if kind in _TARGET_GONE and self.busy_command:
            # The command's marker will not come back before the target does.
            self.busy_command = False
        ev = self._event(kind, text, hit.start, hit.end, number=hit.number, code=hit.code,
                         during_command=bool(self._markers))
        ev.first_chance = {"first": True, "second": False}.get(hit.chance or "")
        ev.module, ev.base, ev.module_end, ev.note = hit.module, hit.base, hit.module_end, note
        if kind in _REASONS and self._run_open:
            self._run_reason = ev
        self._note(before, ev)

    def _event(
        self, kind: EventKind, text: str, start: int, end: int, *, number: int | None = None,
        code: str | None = None, during_command: bool = False,
    ) -> DebuggerEvent:
        self.seq += 1
        ev = DebuggerEvent(
            seq=self.seq,
            kind=kind,
            text=redact(text[:EVENT_TEXT_LIMIT], self._secrets),
            offset=start,
            end_offset=end,
            time_unix=self._clock(),
            during_command=during_command,
            breakpoint=number,
            code=code,
            truncated=len(text) > EVENT_TEXT_LIMIT,
        )
        self.events.append(ev)
        return ev

    def _note(self, before: SessionState, event: DebuggerEvent | None) -> None:
        if event is not None or before != self.state:
            self._out.append(Transition(before=before, after=self.state, event=event))
