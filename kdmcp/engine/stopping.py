"""How a session ends: as its kind of target must be left (``kdmcp.engine.kinds``), saying what was done.

A mixin of ``DebuggerSession`` (session.py), kept apart so that module stays one idea: the
stop policy reads the session's state and uses its break-in, go and write, nothing else.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kdmcp.console import Console, ConsoleError
from kdmcp.engine.config import SessionConfig
from kdmcp.engine.events import SessionState
from kdmcp.engine.kinds import KINDS, NONINVASIVE_QUIT, KindRules
from kdmcp.engine.launch import LaunchPlan
from kdmcp.engine.results import BreakResult, ContinueResult, StopResult
from kdmcp.errors import (
    CommandTimeout,
    DebuggerError,
    DebuggerExited,
    InvalidArgument,
    NotConnected,
    SessionBusy,
    TargetRunning,
)

_CTRL_B_ENTER = b"\x02\n"  # kd/cdb: Ctrl+B then Enter quits, even while the target runs
GO_READ_S = 1.0  # how long kd may take to read a g before "resumed" becomes "unread"


class Stopping:
    """``stop`` and its steps; the attributes below are the session's."""

    plan: LaunchPlan
    config: SessionConfig
    _console: Console | None
    _cond: threading.Condition
    _pump_cond: threading.Condition
    _command_lock: threading.Lock
    _pump: threading.Thread | None
    _stop_pump: bool
    _quitting: bool
    state_before_quit_ran: bool = False  # the target ran (no prompt) when the quit was sent
    _killed: bool = False  # kill_now ended it: an exit that is no answer to the quit
    go_read: bool | None = None  # whether kd read the last g (None: the console cannot tell)

    if TYPE_CHECKING:
        @property
        def state(self) -> SessionState: ...
        @property
        def exit_code(self) -> int | None: ...
        def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool: ...
        def break_in(self, timeout: float | None = None) -> BreakResult: ...
        def _send_go(self, command: str) -> ContinueResult: ...
        def _write(self, data: bytes) -> None: ...

    def stop(self, resume: bool = True, timeout: float | None = None) -> StopResult:
        """End the session as its kind of target must be left (``kdmcp.engine.kinds``), and say what was done.

        A guest left at a break is frozen, so a live kernel target is resumed first; an attached
        process is broken into (a detach needs a prompt) and detached; a remote client leaves the
        server's session going. Then the debugger is asked to quit, and only if that fails is it
        terminated, then killed. What the target was left doing is claimed only on evidence
        (``_left``): kd prints nothing when a target resumes, and neither does a frozen kd.
        """
        t0 = time.monotonic()
        timeout = self.config.stop_timeout if timeout is None else timeout
        actions: list[str] = []
        if self._console is None:
            return StopResult(actions=["never started"], state=self.state, exit_code=None, elapsed_ms=elapsed_ms(t0),
                              left="never started")
        rules = KINDS[self.plan.kind]
        resumed: bool | None = None  # None: no resume was needed or wanted
        quit_index = -1
        quit_itself = self.state == SessionState.exited
        was = self.state
        if not quit_itself:
            if rules.resume_before_quit and resume:
                more, resumed = self._resume_for_stop(timeout / 3)
                actions += more
            elif rules.break_before_quit and self.state in (SessionState.running, SessionState.busy):
                actions += self._break_for_stop(timeout / 3)
            at_prompt = self.state == SessionState.broken
            quit_index = len(actions)
            self._request_quit(actions)
            quit_itself = self.wait_for(lambda: self.state == SessionState.exited, timeout / 3) and not self._killed
            if not quit_itself:
                actions[quit_index] += " (no answer)"
                self._console.terminate(force=False)
                actions.append("terminated")
                if not self.wait_for(lambda: self.state == SessionState.exited, timeout / 3):
                    self._console.terminate(force=True)
                    actions.append("killed")
                    self.wait_for(lambda: self.state == SessionState.exited, timeout / 3)
            left = self._left(rules, resume, resumed, quit_itself, at_prompt)
            if quit_itself and quit_index >= 0:
                actions[quit_index] += f" ({left})"
        else:
            left = "the debugger had already exited"
        if not quit_itself and was != SessionState.exited:
            actions.append(left)
        with self._cond:
            self._stop_pump = True
            self._pump_cond.notify()
        if self._pump is not None:
            self._pump.join(timeout=5.0)
        return StopResult(actions=actions, state=self.state, exit_code=self.exit_code, elapsed_ms=elapsed_ms(t0),
                          left=left)

    def _left(self, rules: KindRules, resume: bool, resumed: bool | None, quit_itself: bool, at_prompt: bool) -> str:
        """What the target was left doing, as far as the debugger showed it.

        Evidence, in order: kd read the ``g`` (its input drained, where the backend can tell)
        and did not stop again; kd then read and obeyed the quit, which it reads only after
        every line before it. A debugger that had to be killed proved neither.
        """
        kind = self.plan.kind
        if quit_itself and kind == "process" and not at_prompt and not self.plan.noninvasive:
            return "quit cdb without a detach (no prompt to type qd at): the process was ended with it"
        if quit_itself:
            if kind != "kdnet" or (resume and resumed is not False and self.state_before_quit_ran):
                return rules.quit_says if not self.plan.noninvasive else NONINVASIVE_QUIT[1]
            if not resume:
                return "quit kd; the guest was left as it was (resume=false)"
            return "quit kd, but kd never showed the guest running: it may be frozen at a break"
        if kind == "kdnet":
            if not resume:
                return "the guest was left as it was (resume=false)"
            return ("the guest's state is unknown: kd had to be killed before it showed the guest running, "
                    "so it may still be frozen at a break; start kd on it again and break in (then g), "
                    "or check the guest (ping, WinRM)")
        if kind == "process" and not self.plan.noninvasive:
            return ("the process's state is unknown: cdb had to be killed before it detached, which ends or "
                    "leaves suspended the process it debugged; check the process")
        if kind in ("kernel_dump", "user_dump"):
            return "closed the dump (the debugger was killed)"
        if kind == "launched":
            return "ended the launched process with its debugger"
        return "the debugger was killed"

    def _break_for_stop(self, timeout: float) -> list[str]:
        """Break into a running user-mode target so it can be detached at a prompt."""
        try:
            self.break_in(timeout)
            return ["broke in"]
        except (CommandTimeout, DebuggerError, DebuggerExited, NotConnected, InvalidArgument):
            return ["could not break in"]

    def _resume_for_stop(self, timeout: float) -> tuple[list[str], bool | None]:
        """Resume a broken-in guest; whether kd was seen to read the ``g`` (None: nothing to resume)."""
        actions: list[str] = []
        self.state_before_quit_ran = self.state == SessionState.running
        if self.state == SessionState.busy:
            try:
                self.break_in(timeout)
                actions.append("cancelled the running command")
            except (CommandTimeout, DebuggerError, DebuggerExited, NotConnected):
                return ["could not cancel the running command"], False
        if self.state != SessionState.broken:
            return actions, None
        acquired = self._command_lock.acquire(timeout=timeout)
        try:
            result = self._send_go("g")
        except (DebuggerError, DebuggerExited, TargetRunning, NotConnected, SessionBusy):
            return [*actions, "could not resume target"], False
        finally:
            if acquired:
                self._command_lock.release()
        if result.confirmed == "running":
            self.state_before_quit_ran = True
            seen = "kd read the g" if self.go_read else "sent g; this console cannot show kd read it"
            return [*actions, f"resumed target ({seen})"], True
        if result.confirmed == "unread":
            return [*actions, "sent g, unread by kd (frozen or hung?)"], False
        return [*actions, "sent g, but the target stopped again at once"], False

    def _input_read(self, timeout: float) -> bool | None:
        """Whether the debugger has read everything written to it, waiting up to ``timeout``
        (None: the backend cannot tell). Polled with a backoff from 2 ms: no event says it."""
        assert self._console is not None
        deadline = time.monotonic() + timeout
        delay = 0.002
        asked = False
        while True:
            pending = self._console.input_pending()
            if pending is None:  # cannot tell -- or could a moment ago, and the debugger is gone
                return False if asked else None
            asked = True
            if pending == 0:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.state == SessionState.exited:
                return False
            self.wait_for(lambda: self.state == SessionState.exited, min(delay, remaining))
            delay = min(delay * 2, 0.05)

    def _request_quit(self, actions: list[str]) -> None:
        """Type the kind's quit command at a prompt; else Ctrl+B then Enter, which kd and cdb read
        even while the target runs ("CTRL+B, then ENTER: exits the debugger")."""
        rules = KINDS[self.plan.kind]
        command = NONINVASIVE_QUIT[0] if self.plan.noninvasive else rules.quit_command
        try:
            if self.state == SessionState.broken and command:
                self._write(command.encode() + b"\n")
                actions.append(f"sent {command}")
            else:
                self._write(_CTRL_B_ENTER)
                actions.append("sent Ctrl+B")
            with self._cond:  # read the debugger's last words now: it leaves no prompt to wait at
                self._quitting = True
                self._pump_cond.notify()
        except DebuggerError:
            actions.append("could not write the quit request")

    def kill_now(self) -> None:
        """The forced path of a shutdown (a second signal): kill the debugger and its process
        group at once, from any thread; a ``stop`` in progress then sees the exit and returns."""
        if self._console is not None and self.state != SessionState.exited:
            self._killed = True
            with contextlib.suppress(ConsoleError):
                self._console.terminate(force=True)


def elapsed_ms(t0: float) -> float:
    """Milliseconds since ``t0`` (``time.monotonic``), as every engine result reports them."""
    return round((time.monotonic() - t0) * 1000, 3)
