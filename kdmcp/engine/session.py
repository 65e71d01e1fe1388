"""One debugger session: its console, the command runner, break-in and the stop policy.

Threads: the output reaches the store and the pure state machine (``kdmcp.engine.machine``)
on the console's reader thread, a command's caller or the pump (``kdmcp.engine.reading``);
callers (tool handlers, in worker threads) wait on the session's condition variable for the
states and markers they need, always with a bound. ``break_in`` never takes the command lock,
so it works while a command hangs. What the bytes mean is the machine's business, not this module's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NoReturn

from kdmcp.console import BackendName, Console, ConsoleError, SpawnSpec, open_console
from kdmcp.console.base import Delivering
from kdmcp.engine.commands import checked, is_step, strip_echo
from kdmcp.engine.config import SessionConfig
from kdmcp.engine.events import DebuggerEvent, SessionState
from kdmcp.engine.kinds import KINDS
from kdmcp.engine.launch import LaunchPlan
from kdmcp.engine.machine import SessionMachine
from kdmcp.engine.output_store import OutputStore
from kdmcp.engine.reading import Asked, Reading
from kdmcp.engine.results import BreakResult, CommandOutput, ContinueResult, StartResult
from kdmcp.engine.run_line import RunLineSession, split_run_line
from kdmcp.engine.stopping import GO_READ_S, Stopping, elapsed_ms
from kdmcp.errors import (
    CommandTimeout,
    DebuggerError,
    DebuggerExited,
    InvalidArgument,
    NotConnected,
    SessionBusy,
)
from kdmcp.parse.prompt import Prompt
from kdmcp.secret import redact


class DebuggerSession(Reading, Stopping, RunLineSession):
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
        # One lock, two wait queues: callers wait on _cond (woken after every chunk), the pump
        # on _pump_cond (woken only when it has to read again). Waking the pump on every chunk
        # cost a command several thread switches while the pump had nothing to do.
        lock = threading.RLock()
        # Taken directly on a command's path: a Condition's __enter__ and __exit__ are two Python
        # calls more around the same lock.
        self._lock = lock
        self._cond = threading.Condition(lock)
        self._pump_cond = threading.Condition(lock)
        self._command_lock = threading.Lock()
        self._io_lock = threading.Lock()  # held while reading the console and ingesting
        self._readers = 0  # callers reading the console themselves (the pump stands aside)
        self._eof = False
        self._console: Console | None = None
        self._pump: threading.Thread | None = None
        self._stop_pump = False
        self._quitting = False  # a quit was sent: the pump reads until the end instead of standing aside
        self._delivered = False  # the console's reader thread hands us each chunk (``_deliver``): nobody reads
        self._echoes = True  # the console echoes what is written (a pty, a Windows console): strip_echo
        self._asked: Asked | None = None  # the command whose answer is awaited
        self.store = OutputStore(self.config.memory_bytes, self.config.spill_dir)
        self.machine = SessionMachine(plan.secrets, self.config.event_log_size)
        self.started_at = time.time()
        # Called after each chunk is stored, and at the end, on the thread that read it.
        self.on_output: Callable[[], None] | None = None

    # ------------------------------------------------------------- queries

    @property
    def pid(self) -> int | None:
        return self._console.pid if self._console is not None else None

    @property
    def state(self) -> SessionState:
        return self.machine.state

    @property
    def prompt(self) -> Prompt | None:
        return self.machine.prompt

    @property
    def exit_code(self) -> int | None:
        return self.machine.exit_code

    def events_since(self, seq: int) -> list[DebuggerEvent]:
        with self._cond:
            return self.machine.events_after(seq)

    @property
    def last_event_seq(self) -> int:
        return self.machine.seq

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
        self._echoes = self._console.echoes_input
        if isinstance(self._console, Delivering):
            self._delivered = True
            self._console.deliver_to(self._deliver)
        self._pump = threading.Thread(target=self._pump_loop, name=f"kdmcp-pump-{self.session_id}", daemon=True)
        self._pump.start()
        ready = {SessionState.broken, SessionState.exited}
        if not self.plan.stops_at_start:
            ready.add(SessionState.running)
        self.wait_for(lambda: self.state in ready, timeout)
        with self._cond:
            banner = self.store.read(0, self.config.inline_output_bytes)
            return StartResult(
                session_id=self.session_id, state=self.state, prompt=self.prompt, command_line=self.plan.display,
                banner=self._redact(banner.decode("utf-8", errors="replace")),
                exit_code=self.exit_code, elapsed_ms=elapsed_ms(t0),
            )

    # ------------------------------------------------------------ commands

    def _check_ready(self) -> None:
        """Raise the error that says why a command cannot be sent now (lock held)."""
        refusal = self.machine.refusal(self.session_id)
        if refusal is not None:
            raise refusal

    def _write(self, data: bytes) -> None:
        assert self._console is not None
        try:
            self._console.write(data)
        except ConsoleError as exc:
            raise DebuggerError(str(exc), session_id=self.session_id, state=self.state) from exc

    def execute(self, command: str, timeout: float | None = None) -> CommandOutput:
        """Run one command line and return its output once the debugger is at a prompt again.

        Immediate commands are followed by ``.echo <nonce>``: the command is complete when that
        nonce appears alone on a line (after an optional prompt) and a prompt follows it.
        Prompt-like text inside the output cannot end the command early.
        """
        problem, kind = checked(command)
        if problem is not None:
            raise InvalidArgument(problem, session_id=self.session_id, state=self.state)
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
            split = split_run_line(command) if kind in ("go", "reboot") else None
            if split is not None:  # commands before the run command: their output is this answer
                return self._commands_then_run(command, split, kind, timeout)
            if kind in ("go", "reboot"):
                result = self._send_go(command)
                # A line that may run the target but came straight back to a prompt (a j
                # branch not taken, "gu" out of a short function): its output is the answer.
                end = result.output_offset
                output, truncated = "", False
                prompt_at = self.machine.last_prompt_offset
                if result.confirmed == "stopped" and prompt_at is not None and prompt_at > result.output_offset:
                    end = prompt_at
                    output, truncated = self._command_text(result.output_offset, end, command, None)
                return CommandOutput(
                    command=command, kind=kind, state=result.state, prompt=self.prompt, output=output,
                    truncated=truncated, output_offset=result.output_offset, output_end=end,
                    elapsed_ms=result.elapsed_ms,
                )
            return self._immediate(command, timeout)
        finally:
            self._command_lock.release()

    def _immediate(self, command: str, timeout: float) -> CommandOutput:
        t0 = time.monotonic()
        machine = self.machine
        with self._lock:
            if machine.state is not SessionState.broken:  # at a prompt: nothing to refuse (one call less)
                self._check_ready()
            start = self.store.size
            marker = machine.new_marker()
            pending = machine.command_sent(marker, command)
            asked = self._asked = Asked(command, marker, pending, start, t0)
            if not self._delivered:
                self._start_reading()
        try:
            self._write(b"%s\n.echo %s\n" % (command.encode("utf-8"), marker))
            done = self._read_until(lambda: pending.done or not machine.busy_command, timeout)
        finally:
            self._done_reading()
        with self._lock:
            self._asked = None
            if asked.result is not None:  # built as the answer was stored
                return asked.result
            if pending.done and pending.hit is not None:
                return self._answer(asked)
            end = self.store.size
            text, _ = self._command_text(start, end, command, marker)
            if self.state != SessionState.exited and not done and machine.adopt_prompt():
                # kd came back (the marker) but ended with a prompt of a shape nobody knew: it is
                # known now, so the session is usable; the command still says what happened
                self._cond.notify_all()
                end = pending.hit.output_end if pending.hit is not None else end
                text, _ = self._command_text(start, end, command, marker)
                shape = machine.prompt.text if machine.prompt else ""
                raise CommandTimeout(
                    f"no known prompt after {timeout:g}s: kd ended with {shape!r}, taken as its prompt from "
                    "now on; the output is what kd printed",
                    session_id=self.session_id, state=self.state, partial_output=text,
                    output_offset=start, output_end=end,
                )
            if done and self.state != SessionState.exited:
                machine.abandon(marker)  # the target went away mid-command (reboot, transport loss)
            self._unanswered(not done, timeout, text, start, end)

    def _answer(self, asked: Asked, chunk: bytes = b"", at: int = 0) -> CommandOutput:
        """A completed command's result (lock held), built where its last bytes were stored
        (``Reading._ingest``: ``chunk``, stored from offset ``at``), or else by its caller."""
        assert asked.pending.hit is not None
        start, end = asked.start, asked.pending.hit.output_end
        text, truncated = self._command_text(start, end, asked.command, asked.marker, chunk, at)
        machine = self.machine
        return CommandOutput(
            command=asked.command, kind="immediate", state=machine.state, prompt=machine.prompt, output=text,
            truncated=truncated, output_offset=start, output_end=end, elapsed_ms=elapsed_ms(asked.t0),
        )

    def _unanswered(self, timed_out: bool, timeout: float, text: str, start: int, end: int) -> NoReturn:
        """Why a command's answer did not come (lock held): the debugger exited, no prompt within
        ``timeout`` (``timed_out``), or else the target went away. Raised with what arrived."""
        if self.state == SessionState.exited:
            raise DebuggerExited(f"the debugger exited during the command (code {self.exit_code})",
                                 session_id=self.session_id, state=self.state, exit_code=self.exit_code)
        if timed_out:
            raise CommandTimeout(
                f"no prompt after {timeout:g}s: the command may still be running; "
                "break_in cancels it, read_output shows what arrived",
                session_id=self.session_id, state=self.state, partial_output=text, output_offset=start,
                output_end=end,
            )
        raise NotConnected(f"the target went away during the command ({self.state.value})",
                           session_id=self.session_id, state=self.state)

    def _command_text(self, start: int, end: int, command: str, marker: bytes | None, chunk: bytes = b"",
                      at: int = 0) -> tuple[str, bool]:
        """The command's output for the caller: echoes removed, capped inline (no marker: a go-class line).
        ``chunk``: bytes just stored from offset ``at`` that end the answer; on a console that does not
        echo, taken from there when they hold all of it (no read back from the store)."""
        limit = self.config.inline_output_bytes
        if not self._echoes:  # pipes: what was written does not come back, so kd's answer is all there is
            if chunk and start >= at:
                raw = chunk[start - at : min(end, start + limit) - at]
            else:
                raw = self.store.read(start, min(end - start, limit))
            return self._redact(raw.decode("utf-8", errors="replace")), end - start > len(raw)
        head_len = len(command.encode()) + len(marker or b"") + 32
        raw = self.store.read(start, min(end - start, limit + head_len))
        truncated = end - start > len(raw)
        # what followed: where a pty's echo of the marker line, cut by kd's answer, ends (strip_echo)
        after = self.store.read(end, 2 * len(marker) + 16) if marker else b""
        raw = strip_echo(raw, command.encode("utf-8"), marker, after)
        if len(raw) > limit:
            raw, truncated = raw[:limit], True
        return self._redact(raw.decode("utf-8", errors="replace")), truncated

    # ------------------------------------------------------- go / break-in

    def go(self, command: str = "g") -> ContinueResult:
        """Resume the target; return once it is confirmed running or has stopped again."""
        problem, kind = checked(command)
        if problem is not None or kind not in ("go", "reboot"):
            raise InvalidArgument(problem or f"{command!r} is not a go-class command",
                                  session_id=self.session_id, state=self.state)
        with self._command_lock:
            return self._send_go(command)

    def _send_go(self, command: str) -> ContinueResult:
        t0 = time.monotonic()
        with self._cond:
            self._check_ready()
            start = self.store.size
            assert self._console is not None
            self.machine.go_sent((command + "\r\n").encode() if self._console.echoes_input else None,
                                 step=is_step(command), command=command)
            self._cond.notify_all()
            self._pump_cond.notify()  # the target's output is the pump's to read
        self._write(command.encode("utf-8") + b"\n")
        # A target that can run says nothing when it resumes: a short watch for an immediate stop.
        # One that cannot (a dump, kd -kl) is refused by kd ("No runnable debuggees"), which comes
        # back to its prompt however long a loaded machine takes: wait for that, bounded.
        settle = self.config.go_settle_s if KINDS[self.plan.kind].runs else self.config.command_timeout
        self.wait_for(lambda: self.state != SessionState.running, settle)
        # kd prints nothing when the target resumes; a frozen or hung kd is as silent. So
        # "running" also needs kd to have read the line, where the backend can tell.
        read = self._input_read(GO_READ_S) if self.state == SessionState.running else True
        self.go_read = read
        with self._cond:
            confirmed = "unread" if read is False else "running" if self.state == SessionState.running else "stopped"
            return ContinueResult(
                state=self.state, confirmed=confirmed,
                prompt=self.prompt, output_offset=start,
                elapsed_ms=elapsed_ms(t0),
            )

    def break_in(self, timeout: float | None = None) -> BreakResult:
        """Break into a running target (or cancel a hung command) and wait for the prompt.

        Out of band: no command lock, so it works while a command holds the session.
        """
        t0 = time.monotonic()
        timeout = self.config.break_timeout if timeout is None else timeout
        with self._cond:
            if self.state == SessionState.broken:
                return BreakResult(state=self.state, already_broken=True, prompt=self.prompt, elapsed_ms=elapsed_ms(t0))
            if self.state not in (SessionState.running, SessionState.busy):
                self._check_ready()
            was_busy = self.state == SessionState.busy
            cancelled = self.machine.pending_markers()
            since = self.store.size
        deadline = time.monotonic() + timeout
        self._interrupt()
        if was_busy:
            # one Ctrl+C cancels the command; another could cancel the resync marker
            self._resync_after_cancel(since, deadline, cancelled)
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
            return BreakResult(state=self.state, already_broken=False, prompt=self.prompt, elapsed_ms=elapsed_ms(t0))

    def _interrupt(self) -> None:
        assert self._console is not None
        try:
            self._console.interrupt()
        except ConsoleError as exc:
            raise DebuggerError(str(exc), session_id=self.session_id, state=self.state) from exc

    def _stopped(self) -> bool:
        """At a prompt again, or gone (evaluated under the lock)."""
        return self.state in (SessionState.broken, SessionState.exited)

    def _resync_after_cancel(self, since: int, deadline: float, cancelled: frozenset[bytes]) -> None:
        """After Ctrl+C cancelled a command (``cancelled``: its markers), make sure the stream is at
        a clean prompt.

        The cancelled command's ``.echo`` marker may never come: a terminal flushes pending
        input on Ctrl+C. So once a prompt shows, abandon the old marker and send a fresh one;
        a late old marker is then just text before it. If the cancelled command's marker came
        after all (the command ended at that prompt), the session is busy again only with a
        command sent since — whose marker is not abandoned.
        """
        got_prompt = self.wait_for(
            lambda: self.state in (SessionState.broken, SessionState.exited)
            or self.machine.prompt_since(since),
            deadline - time.monotonic(),
        )
        with self._cond:
            if not got_prompt or self.state != SessionState.busy or not cancelled & self.machine.pending_markers():
                return
            marker = self.machine.resync_sent()
        self._write(b".echo " + marker + b"\n")
