"""One debugger session: the pump, the state machine, the command runner, break-in, stop.

Threads: one pump thread per session reads the console continuously into the output store
and drives the state machine; callers (tool handlers, in worker threads) wait on the
session's condition variable for the states and markers they need, always with a bound.
``break_in`` never takes the command lock, so it works while a command hangs.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator

from pydantic import BaseModel

from kdmcp.console import BackendName, Console, ConsoleClosed, ConsoleError, SpawnSpec, open_console
from kdmcp.engine.commands import command_kind, validate
from kdmcp.engine.events import EVENT_TEXT_LIMIT, DebuggerEvent, EventKind, SessionState
from kdmcp.engine.launch import LaunchPlan
from kdmcp.engine.output_store import DEFAULT_MEMORY_BYTES, OutputStore
from kdmcp.engine.recognizer import EventHit, MarkerHit, StreamRecognizer
from kdmcp.engine.results import BreakResult, CommandResult, ContinueResult, StartResult, StopResult
from kdmcp.errors import (
    CommandTimeout,
    DebuggerError,
    DebuggerExited,
    InvalidArgument,
    NotConnected,
    SessionBusy,
    TargetRunning,
)
from kdmcp.parse.prompt import Prompt
from kdmcp.secret import redact

log = logging.getLogger(__name__)

_READ_CHUNK = 65536
_COALESCE_FROM = 2048  # a shorter read means the debugger had nothing more queued
_PUMP_WAKE_S = 0.25  # bounded read so the pump notices a stop request
_STOP_EVENTS = {"break_in", "breakpoint", "bugcheck", "exception"}
_NOT_CONNECTED = {
    SessionState.starting,
    SessionState.waiting_for_target,
    SessionState.rebooting,
    SessionState.reconnecting,
    SessionState.lost,
}
_CTRL_B_ENTER = b"\x02\n"  # kd/cdb: Ctrl+B then Enter quits, even while the target runs


class SessionConfig(BaseModel):
    """Timeouts and limits of one session (seconds unless named otherwise)."""

    startup_timeout: float = 30.0
    command_timeout: float = 60.0
    break_timeout: float = 10.0
    stop_timeout: float = 10.0
    # After g: how long to watch for an immediate stop before calling the target running.
    # kd prints nothing when a target resumes, so "running" is the absence of a prompt.
    go_settle_s: float = 0.015
    # A break-in request that gets no prompt is sent again this often until break_timeout:
    # Ctrl+C is lost when it reaches kd before kd has read the preceding g (kd drops a
    # Ctrl+C at its prompt), and a KDNET break packet can be lost on the wire.
    break_retry_s: float = 1.0
    inline_output_bytes: int = 64 * 1024
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    spill_dir: str | None = None
    event_log_size: int = 10_000
    backend: BackendName = "auto"


class _Marker:
    __slots__ = ("done", "hit", "marker")

    def __init__(self, marker: bytes) -> None:
        self.marker = marker
        self.hit: MarkerHit | None = None
        self.done = False


class DebuggerSession:
    """A debugger process and everything known about it."""

    def __init__(
        self,
        session_id: str,
        plan: LaunchPlan,
        config: SessionConfig | None = None,
        console_factory: Callable[[SpawnSpec, BackendName], Console] = open_console,
    ) -> None:
        self.session_id = session_id
        self.plan = plan
        self.config = config or SessionConfig()
        self._factory = console_factory
        self._cond = threading.Condition()
        self._command_lock = threading.Lock()
        self._io_lock = threading.Lock()  # held while reading the console and ingesting
        self._readers = 0  # callers reading the console themselves (the pump stands aside)
        self._eof = False
        self._console: Console | None = None
        self._pump: threading.Thread | None = None
        self._stop_pump = False
        self.store = OutputStore(self.config.memory_bytes, self.config.spill_dir)
        self._rec = StreamRecognizer()
        self.state = SessionState.starting
        self.prompt: Prompt | None = None
        self.exit_code: int | None = None
        self._connected_once = False
        self._stopping = False  # a stop banner arrived; its prompt has not
        self._markers: dict[bytes, _Marker] = {}
        self._marker_prefix = f"KDMCP{secrets.token_hex(8).upper()}N".encode()
        self._marker_count = 0
        self._events: collections.deque[DebuggerEvent] = collections.deque(maxlen=self.config.event_log_size)
        self._seq = 0
        self._busy_command = False
        self._go_echo: bytes | None = None
        self._last_prompt_offset: int | None = None
        self._in_connect_banner = False
        self.started_at = time.time()

    # ------------------------------------------------------------- queries

    @property
    def pid(self) -> int | None:
        return self._console.pid if self._console is not None else None

    def events_since(self, seq: int) -> list[DebuggerEvent]:
        with self._cond:
            return self._events_after(seq)

    def _events_after(self, seq: int) -> list[DebuggerEvent]:
        """Events newer than ``seq``, scanning from the newest end (the log holds 10,000)."""
        newer: list[DebuggerEvent] = []
        for event in reversed(self._events):
            if event.seq <= seq:
                break
            newer.append(event)
        newer.reverse()
        return newer

    @property
    def last_event_seq(self) -> int:
        return self._seq

    def read_output(self, offset: int, length: int) -> bytes:
        return self.store.read(offset, length)

    def _redact(self, text: str) -> str:
        return redact(text, self.plan.secrets)

    # --------------------------------------------------------------- start

    def start(self, timeout: float | None = None) -> StartResult:
        """Spawn the debugger and wait (bounded) until it has a target, running or broken.

        With a wrong key or port kd waits forever ("Waiting to reconnect..."), so this returns
        at ``timeout`` with state ``waiting_for_target``, the debugger still waiting.
        """
        t0 = time.monotonic()
        timeout = self.config.startup_timeout if timeout is None else timeout
        try:
            self._console = self._factory(SpawnSpec(argv=self.plan.argv), self.config.backend)
        except ConsoleError as exc:
            raise DebuggerError(self._redact(f"cannot start the debugger: {exc}"), session_id=self.session_id,
                                state=SessionState.exited) from exc
        self._pump = threading.Thread(target=self._pump_loop, name=f"kdmcp-pump-{self.session_id}", daemon=True)
        self._pump.start()
        ready = {SessionState.broken, SessionState.exited}
        if not self.plan.stops_at_start:
            ready.add(SessionState.running)
        self.wait_for(lambda: self.state in ready, timeout)
        with self._cond:
            banner = self.store.read(0, self.config.inline_output_bytes)
            return StartResult(
                session_id=self.session_id,
                state=self.state,
                prompt=self.prompt,
                command_line=self.plan.display,
                banner=self._redact(banner.decode("utf-8", errors="replace")),
                events=list(self._events),
                exit_code=self.exit_code,
                elapsed_ms=_ms(t0),
            )

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` (evaluated under the lock) holds; False on timeout."""
        with self._cond:
            return self._cond.wait_for(predicate, timeout=max(0.0, timeout))

    # ---------------------------------------------------------------- pump

    def _pump_loop(self) -> None:
        """Drain the console whenever no caller is reading it; then record the exit."""
        console = self._console
        assert console is not None
        while not self._stop_pump and not self._eof:
            wait = _PUMP_WAKE_S
            with self._cond:
                if self._readers or self.state == SessionState.broken:
                    # A command's caller reads for itself, or the debugger sits at a prompt
                    # and prints nothing: stand aside, so the caller that sends the next
                    # command does not race the pump for its answer. At a prompt, still look
                    # for unsolicited output (a remote session's other clients) now and then.
                    if self._cond.wait(_PUMP_WAKE_S) or self._readers or self._stop_pump:
                        continue  # woken by a change: look at the state again
                    wait = 0.0
            self._drain_once(wait, pump=True)
        code = console.wait(5.0)
        if code is not None:
            console.close()  # the process is gone: release its pipes or pty now
        with self._cond:
            self.exit_code = code
            if self.state != SessionState.exited:
                end = self.store.size
                self._event("exited", f"debugger exited with code {code}", end, end)
            self.state = SessionState.exited
            for m in self._markers.values():
                m.done = True
            self._cond.notify_all()

    def _drain_once(self, timeout: float, *, pump: bool) -> None:
        """Wait up to ``timeout`` for output, then read and ingest what is there.

        Read and ingest happen under one lock, so whichever thread reads (the pump, or a
        caller waiting for its command) the store gets the bytes in order. The pump checks
        for a reading caller under that lock: once a caller has announced itself, the pump
        cannot consume output the caller is blocked waiting for.
        """
        console = self._console
        assert console is not None
        if not console.wait_readable(timeout):
            return
        with self._io_lock:
            if self._eof or (pump and self._readers):
                return
            data = b""
            try:
                data = console.read(_READ_CHUNK, 0)
                # A pty hands out at most ~4 KB per read: after a full one, gather what is
                # already there so the per-chunk work is paid per 64 KB, not per 4 KB.
                while len(data) >= _COALESCE_FROM and len(data) < _READ_CHUNK:
                    more = console.read(_READ_CHUNK - len(data), 0)
                    if not more:
                        break
                    data += more
            except (ConsoleClosed, ConsoleError, OSError):
                self._eof = True
            with self._cond:
                if data:
                    self._ingest(data)
                self._cond.notify_all()

    def _read_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """``wait_for``, but this thread reads the console itself while it waits.

        The caller has announced itself with ``_reading()``, so the pump stands aside.
        Without this, every command pays a wake-up of the caller by the pump thread,
        several times the cost of a pipe round trip.
        """
        deadline = time.monotonic() + max(0.0, timeout)
        wait = 0.0  # first pass: take what is already there (the pump may have stopped mid-way)
        while True:
            self._drain_once(wait, pump=False)
            with self._cond:
                if predicate():
                    return True
                if self._eof:
                    # The pump records the exit; wait for it there.
                    return self._cond.wait_for(predicate, max(0.0, deadline - time.monotonic()))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            wait = min(remaining, _PUMP_WAKE_S)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Announce that this thread reads the console (nestable); the pump stands aside.

        A command announces itself *before* writing, so the pump cannot wake up on the
        answer and take it first.
        """
        with self._cond:
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    def _ingest(self, data: bytes) -> None:
        """Store a chunk and apply what it says to the state machine (lock held)."""
        start = self.store.size
        self.store.append(data)
        events, markers = self._rec.feed(data)
        running = self.state == SessionState.running and not self._stopping
        covered = self._skip_connect_banner(start, data)
        for hit in events:
            if running and hit.kind in _STOP_EVENTS | {"reboot", "transport_lost"} and hit.start > covered:
                self._dbgprint(covered, hit.start)
            covered = max(covered, hit.end)
            self._apply_event(hit)
            if hit.kind == "connected":
                covered = self._skip_connect_banner(hit.end, data[hit.end - start :])
            running = self.state == SessionState.running and not self._stopping
        if running:
            # A prompt at the end is the stop, not target output.
            end = self._rec.prompt_offset if self._rec.prompt is not None else self.store.size
            if end is not None and end > covered:
                self._dbgprint(covered, end)
        for mh in markers:
            pending = self._markers.get(mh.marker)
            if pending is not None and pending.hit is None:
                pending.hit = mh
                self._rec.discard_marker(mh.marker)
        if self._rec.prompt is not None:
            self._on_prompt(self._rec.prompt, self._rec.prompt_offset or 0)

    def _skip_connect_banner(self, start: int, data: bytes) -> int:
        """Where target output starts in ``data`` (at ``start``) once the connect banner ends.

        After "Kernel Debugger connection established." kd prints the symbol path and kernel
        version block, ending with "System Uptime:"; that is the connection, not DbgPrint.
        """
        if not self._in_connect_banner:
            return start
        pos = data.find(b"System Uptime:")
        if pos < 0:
            return start + len(data)
        self._in_connect_banner = False
        nl = data.find(b"\n", pos)
        return start + (len(data) if nl < 0 else nl + 1)

    def _on_prompt(self, prompt: Prompt, offset: int) -> None:
        self.prompt = prompt
        self._last_prompt_offset = offset
        for m in self._markers.values():
            if m.hit is not None and not m.done and offset >= m.hit.line_end:
                m.done = True
        if any(not m.done for m in self._markers.values()):
            return  # an intermediate prompt: the command's marker is still to come
        self._markers.clear()
        self._stopping = False
        self._busy_command = False
        if self.state != SessionState.exited:
            self.state = SessionState.broken

    def _apply_event(self, hit: EventHit) -> None:
        text = hit.text.decode("utf-8", errors="replace")
        kind: EventKind
        if hit.kind == "waiting":
            kind = "reconnecting" if self._connected_once else "waiting_for_target"
            self.state = SessionState.reconnecting if self._connected_once else SessionState.waiting_for_target
        elif hit.kind == "connected":
            kind = "connected"
            self._connected_once = True
            self._in_connect_banner = True
            self._stopping = False
            self.state = SessionState.running
        elif hit.kind == "reboot":
            kind = "reboot"
            self._stopping = False
            self.state = SessionState.rebooting
        elif hit.kind == "transport_lost":
            kind = "transport_lost"
            self.state = SessionState.lost
        else:
            kind = hit.kind  # type: ignore[assignment]
            if self.state == SessionState.running:
                self._stopping = True
        if kind in ("reboot", "transport_lost", "reconnecting", "waiting_for_target") and self._busy_command:
            # The command's marker will not come back before the target does.
            self._busy_command = False
        ev = self._event(kind, text, hit.start, hit.end, number=hit.number, code=hit.code)
        ev.during_command = bool(self._markers)

    def _dbgprint(self, start: int, end: int) -> None:
        raw = self.store.read(start, min(end - start, EVENT_TEXT_LIMIT + 1))
        if self._go_echo is not None and raw.startswith(self._go_echo):
            start += len(self._go_echo)
            raw = raw[len(self._go_echo) :]
            self._go_echo = None
        if not raw.strip(b" \t\r\n\x03"):
            return  # only line ends, or the pty's echo of the ^C that breaks in
        self._event("dbgprint", raw.decode("utf-8", errors="replace"), start, end)

    def _event(
        self, kind: EventKind, text: str, start: int, end: int, *, number: int | None = None, code: str | None = None
    ) -> DebuggerEvent:
        self._seq += 1
        truncated = len(text) > EVENT_TEXT_LIMIT
        ev = DebuggerEvent(
            seq=self._seq,
            kind=kind,
            text=self._redact(text[:EVENT_TEXT_LIMIT]),
            offset=start,
            end_offset=end,
            time_unix=time.time(),
            breakpoint=number,
            code=code,
            truncated=truncated,
        )
        self._events.append(ev)
        return ev

    # ------------------------------------------------------------ commands

    def _check_ready(self) -> None:
        """Raise the error that says why a command cannot be sent now (lock held)."""
        state = self.state
        if state == SessionState.broken:
            return
        kw = {"session_id": self.session_id, "state": state.value}
        if state == SessionState.exited:
            raise DebuggerExited(f"the debugger exited (code {self.exit_code})", exit_code=self.exit_code, **kw)
        if state == SessionState.running:
            raise TargetRunning("the target is running: break in first", **kw)
        if state == SessionState.busy:
            raise SessionBusy("a previous command is still running: break in or wait", **kw)
        raise NotConnected(f"the debugger has no target to command ({state.value})", **kw)

    def _write(self, data: bytes) -> None:
        assert self._console is not None
        try:
            self._console.write(data)
        except ConsoleError as exc:
            raise DebuggerError(str(exc), session_id=self.session_id, state=self.state) from exc

    def execute(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run one command line and return its output once the debugger is at a prompt again.

        Immediate commands are followed by ``.echo <nonce>``: the command is complete when that
        nonce appears alone on a line (after an optional prompt) and a prompt follows it.
        Prompt-like text inside the output cannot end the command early.
        """
        problem = validate(command)
        if problem is not None:
            raise InvalidArgument(problem, session_id=self.session_id, state=self.state)
        kind = command_kind(command)
        if kind == "quit":
            raise InvalidArgument(
                "q ends the session: use stop, which resumes a live kernel target first",
                session_id=self.session_id, state=self.state,
            )
        timeout = self.config.command_timeout if timeout is None else timeout
        if not self._command_lock.acquire(timeout=max(0.0, timeout)):
            raise SessionBusy("another command is running on this session", session_id=self.session_id,
                              state=self.state)
        try:
            if kind in ("go", "reboot"):
                result = self._send_go(command)
                # A line that may run the target but came straight back to a prompt (a j
                # branch not taken, "gu" out of a short function): its output is the answer.
                end = result.output_offset
                output, truncated = "", False
                prompt_at = self._last_prompt_offset
                if result.confirmed == "stopped" and prompt_at is not None and prompt_at > result.output_offset:
                    end = prompt_at
                    output, truncated = self._command_text(result.output_offset, end, command, None)
                return CommandResult(
                    command=command, kind=kind, state=result.state, prompt=self.prompt, output=output,
                    truncated=truncated, output_offset=result.output_offset, output_end=end,
                    events=result.events, elapsed_ms=result.elapsed_ms,
                )
            return self._immediate(command, timeout)
        finally:
            self._command_lock.release()

    def _immediate(self, command: str, timeout: float) -> CommandResult:
        t0 = time.monotonic()
        marker = self._new_marker()
        pending = _Marker(marker)
        with self._cond:
            self._check_ready()
            seq0 = self._seq
            self._rec.reset_line()
            start = self.store.size
            self._markers[marker] = pending
            self._rec.add_marker(marker)
            self.state = SessionState.busy
            self._busy_command = True
            self.prompt = None
        with self._reading():
            self._write(command.encode("utf-8") + b"\n.echo " + marker + b"\n")
            done = self._read_until(lambda: pending.done or not self._busy_command, timeout)
        with self._cond:
            events = self._events_after(seq0)
            if pending.done and pending.hit is not None:
                end = pending.hit.output_end
                text, truncated = self._command_text(start, end, command, marker)
                return CommandResult(
                    command=command, kind="immediate", state=self.state, prompt=self.prompt, output=text,
                    truncated=truncated, output_offset=start, output_end=end, events=events,
                    elapsed_ms=_ms(t0),
                )
            end = self.store.size
            text, truncated = self._command_text(start, end, command, marker)
            if self.state == SessionState.exited:
                raise DebuggerExited(
                    f"the debugger exited during the command (code {self.exit_code})",
                    session_id=self.session_id, state=self.state, exit_code=self.exit_code,
                )
            if not done:
                raise CommandTimeout(
                    f"no prompt after {timeout:g}s: the command may still be running; "
                    "break_in cancels it, read_output shows what arrived",
                    session_id=self.session_id, state=self.state, partial_output=text,
                    output_offset=start, output_end=end,
                )
            # The target went away mid-command (reboot, transport loss).
            self._markers.pop(marker, None)
            self._rec.discard_marker(marker)
            raise NotConnected(f"the target went away during the command ({self.state.value})",
                               session_id=self.session_id, state=self.state)

    def _new_marker(self) -> bytes:
        """A marker no output can forge: a random per-session prefix and a counter.

        (A fresh random token per command cost a getrandom() call each time.)
        """
        self._marker_count += 1
        return self._marker_prefix + str(self._marker_count).encode()

    def _command_text(self, start: int, end: int, command: str, marker: bytes | None) -> tuple[str, bool]:
        """The command's output for the caller: echoes removed, capped inline (no marker: a go-class line)."""
        limit = self.config.inline_output_bytes
        head_len = len(command.encode()) + len(marker or b"") + 32
        raw = self.store.read(start, min(end - start, limit + head_len))
        truncated = end - start > len(raw)
        raw = _strip_echo(raw, command.encode("utf-8"), marker)
        if len(raw) > limit:
            raw, truncated = raw[:limit], True
        return self._redact(raw.decode("utf-8", errors="replace")), truncated

    # ------------------------------------------------------- go / break-in

    def go(self, command: str = "g") -> ContinueResult:
        """Resume the target; return once it is confirmed running or has stopped again."""
        problem = validate(command)
        if problem is not None or command_kind(command) not in ("go", "reboot"):
            raise InvalidArgument(problem or f"{command!r} is not a go-class command",
                                  session_id=self.session_id, state=self.state)
        with self._command_lock:
            return self._send_go(command)

    def _send_go(self, command: str) -> ContinueResult:
        t0 = time.monotonic()
        with self._cond:
            self._check_ready()
            seq0 = self._seq
            self._rec.reset_line()
            start = self.store.size
            self.state = SessionState.running
            self._stopping = False
            self.prompt = None
            self._cond.notify_all()  # wake the pump: the target's output is the pump's to read
            assert self._console is not None
            self._go_echo = (command + "\r\n").encode() if self._console.echoes_input else None
        self._write(command.encode("utf-8") + b"\n")
        self.wait_for(lambda: self.state != SessionState.running, self.config.go_settle_s)
        with self._cond:
            return ContinueResult(
                state=self.state,
                confirmed="running" if self.state == SessionState.running else "stopped",
                prompt=self.prompt,
                events=self._events_after(seq0),
                output_offset=start,
                elapsed_ms=_ms(t0),
            )

    def break_in(self, timeout: float | None = None) -> BreakResult:
        """Break into a running target (or cancel a hung command) and wait for the prompt.

        Out of band: no command lock, so it works while a command holds the session.
        """
        t0 = time.monotonic()
        timeout = self.config.break_timeout if timeout is None else timeout
        with self._cond:
            seq0 = self._seq
            if self.state == SessionState.broken:
                return BreakResult(state=self.state, already_broken=True, prompt=self.prompt, events=[],
                                   elapsed_ms=_ms(t0))
            if self.state not in (SessionState.running, SessionState.busy):
                self._check_ready()
        with self._cond:
            was_busy = self.state == SessionState.busy
            since = self.store.size
        deadline = time.monotonic() + timeout
        self._interrupt()
        if was_busy:
            # one Ctrl+C cancels the command; another could cancel the resync marker
            self._resync_after_cancel(since, deadline)
            ok = self.wait_for(self._stopped, deadline - time.monotonic())
        else:
            ok = self.wait_for(self._stopped, min(self.config.break_retry_s, deadline - time.monotonic()))
            while not ok and time.monotonic() < deadline:
                self._interrupt()
                ok = self.wait_for(self._stopped, min(self.config.break_retry_s, deadline - time.monotonic()))
        with self._cond:
            if self.state == SessionState.exited:
                self._check_ready()
            if not ok:
                raise CommandTimeout(f"no prompt within {timeout:g}s of the break-in request",
                                     session_id=self.session_id, state=self.state)
            return BreakResult(state=self.state, already_broken=False, prompt=self.prompt,
                               events=self._events_after(seq0), elapsed_ms=_ms(t0))

    def _interrupt(self) -> None:
        assert self._console is not None
        try:
            self._console.interrupt()
        except ConsoleError as exc:
            raise DebuggerError(str(exc), session_id=self.session_id, state=self.state) from exc

    def _stopped(self) -> bool:
        """At a prompt again, or gone (evaluated under the lock)."""
        return self.state in (SessionState.broken, SessionState.exited)

    def _resync_after_cancel(self, since: int, deadline: float) -> None:
        """After Ctrl+C cancelled a command, make sure the stream is at a clean prompt.

        The cancelled command's ``.echo`` marker may never come: a terminal flushes pending
        input on Ctrl+C. So once a prompt shows, abandon the old marker and send a fresh one;
        a late old marker is then just text before it.
        """
        got_prompt = self.wait_for(
            lambda: self.state in (SessionState.broken, SessionState.exited)
            or (self._last_prompt_offset is not None and self._last_prompt_offset >= since),
            deadline - time.monotonic(),
        )
        with self._cond:
            if not got_prompt or self.state != SessionState.busy:
                return
            for m in self._markers.values():
                self._rec.discard_marker(m.marker)
            marker = self._new_marker()
            self._markers = {marker: _Marker(marker)}
            self._rec.add_marker(marker)
            self._rec.reset_line()
        self._write(b".echo " + marker + b"\n")

    # ---------------------------------------------------------------- stop

    def stop(self, resume: bool = True, timeout: float | None = None) -> StopResult:
        """End the session, leaving a live kernel target running, and say what was done.

        A guest left at a break is frozen, so a live kernel target is resumed first; then the
        debugger is asked to quit (``q`` at a prompt, Ctrl+B Enter while the target runs), and
        only if that fails is it terminated, then killed.
        """
        t0 = time.monotonic()
        timeout = self.config.stop_timeout if timeout is None else timeout
        actions: list[str] = []
        if self._console is None:
            return StopResult(actions=["never started"], state=self.state, exit_code=None, elapsed_ms=_ms(t0))
        if self.state != SessionState.exited:
            if self.plan.live_kernel and resume:
                actions += self._resume_for_stop(timeout / 3)
            self._request_quit(actions)
            if not self.wait_for(lambda: self.state == SessionState.exited, timeout / 3):
                self._console.terminate(force=False)
                actions.append("terminated")
                if not self.wait_for(lambda: self.state == SessionState.exited, timeout / 3):
                    self._console.terminate(force=True)
                    actions.append("killed")
                    self.wait_for(lambda: self.state == SessionState.exited, timeout / 3)
        self._stop_pump = True
        if self._pump is not None:
            self._pump.join(timeout=5.0)
        return StopResult(actions=actions, state=self.state, exit_code=self.exit_code, elapsed_ms=_ms(t0))

    def _resume_for_stop(self, timeout: float) -> list[str]:
        actions: list[str] = []
        if self.state == SessionState.busy:
            try:
                self.break_in(timeout)
                actions.append("cancelled the running command")
            except (CommandTimeout, DebuggerError, DebuggerExited, NotConnected):
                return ["could not cancel the running command"]
        if self.state == SessionState.broken:
            acquired = self._command_lock.acquire(timeout=timeout)
            try:
                result = self._send_go("g")
                actions.append("resumed target" if result.confirmed == "running" else "resume attempted")
            except (DebuggerError, DebuggerExited, TargetRunning, NotConnected, SessionBusy):
                actions.append("could not resume target")
            finally:
                if acquired:
                    self._command_lock.release()
        return actions

    def _request_quit(self, actions: list[str]) -> None:
        try:
            if self.state == SessionState.broken and not self.plan.live_kernel:
                quit_command = b"qd\n" if "-p" in self.plan.argv else b"q\n"
                self._write(quit_command)
                actions.append(f"sent {quit_command.decode().strip()}")
            else:
                self._write(_CTRL_B_ENTER)
                actions.append("sent Ctrl+B")
        except DebuggerError:
            actions.append("could not write the quit request")


def _strip_echo(raw: bytes, command: bytes, marker: bytes | None) -> bytes:
    """Remove what a console echoes: the command line and the ``.echo <marker>`` line (if one was sent).

    Under a pty both lines are echoed as soon as they are written; a Windows console echoes
    each as kd reads it, so the marker's echo sits before the marker, behind a prompt.
    """
    for echoed in (command,) if marker is None else (command, b".echo " + marker):
        for ending in (b"\r\n", b"\n"):
            if raw.startswith(echoed + ending):
                raw = raw[len(echoed) + len(ending) :]
                break
    if marker is None:
        return raw
    echo_line = b".echo " + marker
    pos = raw.rfind(echo_line)
    if pos >= 0:
        line_start = raw.rfind(b"\n", 0, pos) + 1
        raw = raw[:line_start] + raw[pos + len(echo_line) :].lstrip(b"\r\n")
    return raw


def _ms(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000, 3)
