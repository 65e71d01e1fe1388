"""How a session ends: as its kind of target must be left (``kdmcp.engine.kinds``), saying what was done.

A mixin of ``DebuggerSession`` (session.py), kept apart so that module stays one idea: the
stop policy reads the session's state and uses its break-in, go and write, nothing else.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kdmcp.console import Console
from kdmcp.engine.config import SessionConfig
from kdmcp.engine.events import SessionState
from kdmcp.engine.kinds import KINDS, NONINVASIVE_QUIT
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
        terminated, then killed.
        """
        t0 = time.monotonic()
        timeout = self.config.stop_timeout if timeout is None else timeout
        actions: list[str] = []
        if self._console is None:
            return StopResult(actions=["never started"], state=self.state, exit_code=None, elapsed_ms=elapsed_ms(t0))
        rules = KINDS[self.plan.kind]
        if self.state != SessionState.exited:
            if rules.resume_before_quit and resume:
                actions += self._resume_for_stop(timeout / 3)
            elif rules.break_before_quit and self.state in (SessionState.running, SessionState.busy):
                actions += self._break_for_stop(timeout / 3)
            self._request_quit(actions)
            if not self.wait_for(lambda: self.state == SessionState.exited, timeout / 3):
                self._console.terminate(force=False)
                actions.append("terminated")
                if not self.wait_for(lambda: self.state == SessionState.exited, timeout / 3):
                    self._console.terminate(force=True)
                    actions.append("killed")
                    self.wait_for(lambda: self.state == SessionState.exited, timeout / 3)
        with self._cond:
            self._stop_pump = True
            self._pump_cond.notify()
        if self._pump is not None:
            self._pump.join(timeout=5.0)
        return StopResult(actions=actions, state=self.state, exit_code=self.exit_code, elapsed_ms=elapsed_ms(t0))

    def _break_for_stop(self, timeout: float) -> list[str]:
        """Break into a running user-mode target so it can be detached at a prompt."""
        try:
            self.break_in(timeout)
            return ["broke in"]
        except (CommandTimeout, DebuggerError, DebuggerExited, NotConnected, InvalidArgument):
            return ["could not break in"]

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
        """Type the kind's quit command at a prompt; else Ctrl+B then Enter, which kd and cdb read
        even while the target runs ("CTRL+B, then ENTER: exits the debugger")."""
        rules = KINDS[self.plan.kind]
        command, says = (NONINVASIVE_QUIT if self.plan.noninvasive else (rules.quit_command, rules.quit_says))
        try:
            if self.state == SessionState.broken and command:
                self._write(command.encode() + b"\n")
                actions.append(f"sent {command} ({says})")
            else:
                self._write(_CTRL_B_ENTER)
                actions.append(f"sent Ctrl+B ({says})")
            with self._cond:  # read the debugger's last words now: it leaves no prompt to wait at
                self._quitting = True
                self._pump_cond.notify()
        except DebuggerError:
            actions.append("could not write the quit request")


def elapsed_ms(t0: float) -> float:
    """Milliseconds since ``t0`` (``time.monotonic``), as every engine result reports them."""
    return round((time.monotonic() - t0) * 1000, 3)
