"""How ``kd-mcp serve`` ends: one shutdown for every way out.

End of input, SIGINT, SIGTERM (``docker stop``, systemd, a CI runner's cancel), SIGHUP (the
terminal went away) and, on Windows, the console's events (Ctrl+C, Ctrl+Break, the window
closed, logoff, system shutdown: ``SetConsoleCtrlHandler``) all run ``KdMcpApp.shutdown``: each
session stopped as its kind requires -- a KDNET guest resumed, a dump closed, a process
detached -- bounded by ``timeouts.stop`` and recorded (``session stopped`` with how), then the
``stop`` record. A second request while that runs takes the forced path: every debugger still
stopping is killed, which is recorded too, and the server exits with ``EXIT_INTERRUPTED``.

Signal handlers only start threads: a handler runs between two bytecodes of whatever the main
thread was doing (perhaps holding a session's lock), so it must not stop sessions itself.
Once a signal's shutdown is done the process ends with ``os._exit``: in stdio mode the main
thread sits in a read of stdin that nothing can interrupt, and there is nothing left to wait for.

A server killed outright (``kill -9``) runs none of this; its debuggers die with it all the
same (``kdmcp.console.lifetime``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kdmcp.console import win32
    from kdmcp.server import KdMcpApp

__all__ = ["ServeExit"]

_FORCED_GRACE_S = 5.0  # after the forced kills, how long the records may take before we exit anyway


class ServeExit:
    """The one shutdown of a serving process, whichever way out comes first."""

    def __init__(self, app: KdMcpApp, *, ok: int, forced: int,
                 exit_process: Callable[[int], None] | None = None) -> None:
        self.app = app
        self._exit_process = exit_process or _exit  # tests end no process
        self.code = ok
        self._forced_code = forced
        self._lock = threading.Lock()
        self._started = False
        self.done = threading.Event()
        # stop's worst case (four thirds of timeouts.stop), the listener's grace, and margin; read
        # from the config, not the engine's SessionConfig: a start does not import the engine
        self.bound_s = app.options.config.timeouts.stop * 4 / 3 + 10.0

    def install(self, *, kernel32: win32.Kernel32 | None = None) -> None:
        """Route SIGTERM, SIGINT and SIGHUP (POSIX) or the console's events (Windows) here."""
        for name in ("SIGTERM", "SIGINT", "SIGHUP"):
            number = getattr(signal, name, None)
            if number is not None and (name != "SIGINT" or sys.platform != "win32"):
                signal.signal(number, self._on_signal)
        if hasattr(signal, "pthread_sigmask"):  # a parent may have left them blocked (it survives exec)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
        if sys.platform == "win32" or kernel32 is not None:
            from kdmcp.console import win32  # ctypes and the console package: not on a POSIX start

            win32.install_ctrl_handler(self.on_console_event, kernel32)

    def _on_signal(self, signum: int, frame: object) -> None:
        del frame
        self.request(signal.Signals(signum).name)

    def on_console_event(self, name: str, ending: bool) -> None:
        """A Windows console event. After ``ending`` ones (close, logoff, shutdown) Windows ends
        the process as soon as the handler returns, so this waits for the shutdown (bounded)."""
        self.request(name)
        if ending:
            self.done.wait(self.bound_s)

    def request(self, why: str) -> None:
        """Start the shutdown on its own thread (it ends the process); a second request forces it."""
        with self._lock:
            first, self._started = not self._started, True
        if first:
            _say(f"{why}: stopping the sessions and exiting")
            threading.Thread(target=self._run, args=(why, True), name="kdmcp-shutdown", daemon=True).start()
        else:
            self.code = self._forced_code
            threading.Thread(target=self._force, args=(why,), name="kdmcp-force", daemon=True).start()

    def finish(self, why: str) -> int:
        """The main thread's way out (end of input, the listener stopped): shut down here, or wait
        for the shutdown a signal already started. Returns the exit code."""
        with self._lock:
            first, self._started = not self._started, True
        if first:
            self._run(why, False)
        else:
            self.done.wait(self.bound_s)
        return self.code

    def leave(self, code: int) -> None:
        """End the process now with ``code``, output flushed (the main thread's last step)."""
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        self._exit_process(code)

    def _run(self, why: str, then_exit: bool) -> None:
        try:
            self.app.shutdown(why)
        finally:
            self.done.set()
        if then_exit:
            self._exit_process(self.code)

    def _force(self, why: str) -> None:
        _say(f"{why} again: killing every debugger still stopping")
        self.app.force_shutdown(why)
        if not self.done.wait(_FORCED_GRACE_S):
            self._exit_process(self.code)  # the records could not be finished: the debuggers are dead, leave


def _say(text: str) -> None:
    try:
        sys.stderr.write(f"kd-mcp: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed with the terminal (SIGHUP): say nothing
        pass


def _exit(code: int) -> None:
    with contextlib.suppress(OSError, ValueError):  # not stdout: a client that stopped reading blocks it
        sys.stderr.flush()
    os._exit(code)
