"""``PipeConsole``: the debugger on plain stdin/stdout pipes, on every platform.

Pipes are the one transport that behaves the same on Windows and POSIX and needs no
third-party code: no screen scraping, no column limit, no line-length limit. What a pipe
lacks is a console's Ctrl+C, so ``interrupt()`` sends the console break out of band:

* POSIX: the child leads its own session (``start_new_session``), and SIGINT goes to that
  process group, as a terminal's ^C would.
* Windows: the child leads its own process group (CREATE_NEW_PROCESS_GROUP). If the server
  shares a console with it, ``os.kill(pid, CTRL_BREAK_EVENT)`` reaches that group directly.
  A server without a console (started by a GUI MCP client) starts the child with
  CREATE_NO_WINDOW, so it gets a hidden console of its own, and breaks in through
  ``kdmcp.console.ctrl_helper``, which attaches to that console.

Reading runs on a daemon thread that blocks in ``os.read`` and hands chunks over a bounded queue
(:class:`~kdmcp.console.base.OutputQueue`, shared with the wexpect backend), or, once the engine
asks (``deliver_to``), straight to the engine on that thread:
Windows pipes cannot be ``select``-ed, and a reader that never stops also keeps kd from
blocking on a full pipe while the target floods DbgPrint.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from kdmcp.console import ctrl_helper, lifetime, win32
from kdmcp.console.base import ConsoleError, OutputQueue, SpawnSpec, child_environment, unread_input

logger = logging.getLogger(__name__)

READ_CHUNK = 65536
HELPER_TIMEOUT_SEC = 10.0
TASKKILL_TIMEOUT_SEC = 10.0
CLOSE_JOIN_SEC = 1.0


class PipeConsole:
    """One debugger process on pipes; create it with ``PipeConsole.spawn(spec)``."""

    def __init__(self, process: subprocess.Popen[bytes], *, shares_console: bool) -> None:
        if process.stdin is None or process.stdout is None:
            raise ConsoleError("the debugger process was started without stdin/stdout pipes")
        self._process = process
        self._stdin: IO[bytes] = process.stdin
        self._stdout: IO[bytes] = process.stdout
        self._shares_console = shares_console
        # POSIX: the child called setsid(), so its pid is its process group id; remember it
        # so the group can still be signalled after the leader is reaped.
        self._pgid = process.pid
        self._output = OutputQueue()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(
            target=self._read_loop, name=f"kdmcp-pipe-reader-{process.pid}", daemon=True
        )
        self._reader.start()

    @classmethod
    def spawn(cls, spec: SpawnSpec, *, kernel32: win32.Kernel32 | None = None,
              job: lifetime.KillOnCloseJob | None = None) -> PipeConsole:
        """Start ``spec.argv`` with piped stdin/stdout (stderr merged) and a scrubbed environment.

        The child dies with the server whatever ends it (``kdmcp.console.lifetime``): Linux forks
        it with a parent-death signal, on the one thread that lives as long as the server;
        Windows puts it in the server's kill-on-close job (``job``). ``kernel32`` and ``job``
        (Windows only) replace the real ones in tests.
        """
        if not spec.argv:
            raise ConsoleError("cannot start a debugger from an empty command line")
        env = child_environment(os.environ, spec.env)
        options: dict[str, Any] = {}
        shares_console = False
        if sys.platform == "win32":
            shares_console = win32.has_console(kernel32)
            options["creationflags"] = windows_creationflags(shares_console=shares_console)
        else:
            options["start_new_session"] = True

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                list(spec.argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                bufsize=0,
                env=env,
                cwd=spec.cwd,
                # prctl and getppid only, looked up before the fork: nothing that takes a lock
                preexec_fn=lifetime.die_with_parent(),  # noqa: PLW1509
                **options,
            )

        try:
            process = start() if sys.platform == "win32" else lifetime.on_spawner_thread(start)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            # Only argv[0]: the rest may carry the KDNET key.
            raise ConsoleError(f"cannot start {spec.argv[0]!r}: {exc}") from exc
        if sys.platform == "win32":
            _join_job(process, job)
        logger.debug("started %s as pid %d (pipes)", spec.argv[0], process.pid)
        return cls(process, shares_console=shares_console)

    # -- Console protocol ------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def echoes_input(self) -> bool:
        return False

    def read(self, max_bytes: int, timeout: float) -> bytes:
        return self._output.read(max_bytes, timeout, what=f"debugger pid {self.pid}")

    def wait_readable(self, timeout: float) -> bool:
        return self._output.wait_readable(timeout)

    def deliver_to(self, sink: Callable[[bytes], None]) -> None:
        """The reader thread hands each chunk to ``sink`` (``base.Delivering``): the engine stores
        it there and wakes the caller whose answer it completes, one thread switch per answer."""
        self._output.deliver_to(sink)

    def write(self, data: bytes) -> None:
        """Write all of ``data``; a raw pipe write may be partial, so loop until done."""
        view = memoryview(data)
        with self._write_lock:
            try:
                while view:
                    written = self._stdin.write(view)
                    if written is None:  # only for non-blocking pipes, which we never make
                        raise ConsoleError("debugger input pipe would block")
                    view = view[written:]
            except (OSError, ValueError) as exc:
                raise ConsoleError(f"cannot write to debugger pid {self.pid}: {exc}") from exc

    def input_pending(self) -> int | None:
        """Bytes written that the debugger has not read yet (POSIX pipes); None on Windows,
        whose anonymous pipes cannot be asked from the writing end."""
        if sys.platform == "win32":
            return None
        try:
            return unread_input(self._stdin.fileno())
        except ValueError:  # closed: the debugger has ended
            return None

    def interrupt(self) -> None:
        if self._process.poll() is not None:
            raise ConsoleError(f"debugger pid {self.pid} has exited; nothing to interrupt")
        if sys.platform == "win32":
            self._interrupt_windows()
        else:
            self._interrupt_posix()

    def is_alive(self) -> bool:
        return self._process.poll() is None

    def exit_status(self) -> int | None:
        return self._process.poll()

    def terminate(self, force: bool = False) -> None:
        if sys.platform == "win32":
            self._terminate_windows(force)
        else:
            self._terminate_posix(force)

    def wait(self, timeout: float) -> int | None:
        try:
            return self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        """Close our end of stdin and let the reader finish; stdout is the reader's to close.

        The reader closes stdout itself at end of stream: closing a descriptor under a thread
        blocked in ``os.read`` on it could hand the number to an unrelated file. If a
        grandchild (``.shell``) still holds the pipe open, the daemon reader is left to finish
        when it does.
        """
        try:
            self._stdin.close()
        except OSError as exc:
            logger.debug("closing stdin of pid %d: %s", self.pid, exc)
        self._output.close()
        self._reader.join(CLOSE_JOIN_SEC)
        if self._reader.is_alive():
            logger.warning("output pipe of pid %d is still open (held by a child process?)", self.pid)

    # -- internals -------------------------------------------------------------------------

    def _read_loop(self) -> None:
        fd = self._stdout.fileno()
        try:
            while True:
                try:
                    chunk = os.read(fd, READ_CHUNK)
                except OSError as exc:
                    logger.debug("reading output of pid %d: %s", self._process.pid, exc)
                    break
                if not chunk:
                    break
                self._output.put(chunk)
        finally:
            self._output.put_eof()
            try:
                self._stdout.close()
            except OSError as exc:
                logger.debug("closing stdout of pid %d: %s", self._process.pid, exc)

    def _interrupt_posix(self) -> None:
        if sys.platform != "win32":  # spelled out so mypy on Windows skips POSIX-only calls
            try:
                os.killpg(self._pgid, signal.SIGINT)
            except ProcessLookupError as exc:
                raise ConsoleError(f"debugger pid {self.pid} has exited; nothing to interrupt") from exc
            except PermissionError as exc:
                raise ConsoleError(f"cannot signal debugger pid {self.pid}: {exc}") from exc

    def _terminate_posix(self, force: bool) -> None:
        if sys.platform != "win32":
            sig = signal.SIGKILL if force else signal.SIGTERM
            try:
                os.killpg(self._pgid, sig)
            except ProcessLookupError:
                pass  # the whole group is already gone
            except PermissionError as exc:
                raise ConsoleError(f"cannot signal debugger pid {self.pid}: {exc}") from exc

    def _interrupt_windows(self) -> None:
        if self._shares_console:
            # os.kill with CTRL_BREAK_EVENT is GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid):
            # pid names the process group the child leads. (CTRL_BREAK_EVENT, not CTRL_C:
            # CREATE_NEW_PROCESS_GROUP turns Ctrl+C off in the new group.)
            try:
                os.kill(self.pid, win32.CTRL_BREAK_EVENT)
            except OSError as exc:
                raise ConsoleError(f"cannot send Ctrl+Break to debugger pid {self.pid}: {exc}") from exc
            return
        try:
            ctrl_helper.send_ctrl_event(
                self.pid, "break", env=child_environment(os.environ, {}), timeout=HELPER_TIMEOUT_SEC
            )
        except RuntimeError as exc:
            raise ConsoleError(f"cannot send Ctrl+Break to debugger pid {self.pid}: {exc}") from exc

    def _terminate_windows(self, force: bool) -> None:
        if self._process.poll() is not None:
            return
        if force:
            if win32.kill_process_tree(self.pid, timeout=TASKKILL_TIMEOUT_SEC):
                return
            # taskkill missing or refused: at least end the debugger itself.
            logger.warning("falling back to TerminateProcess for pid %d", self.pid)
        try:
            self._process.terminate()
        except OSError as exc:
            if self._process.poll() is None:
                raise ConsoleError(f"cannot terminate debugger pid {self.pid}: {exc}") from exc


def _join_job(process: subprocess.Popen[bytes], job: lifetime.KillOnCloseJob | None) -> None:
    """Put the new debugger in the server's kill-on-close job; a server that cannot (a job of its
    own that forbids nesting, before Windows 8) says so once per debugger and goes on."""
    try:
        (job or lifetime.children_job()).assign(int(getattr(process, "_handle")))  # noqa: B009
    except OSError as exc:
        logger.warning("debugger pid %d is not in a kill-on-close job (it may outlive a killed server): %s",
                       process.pid, exc)


def windows_creationflags(*, shares_console: bool) -> int:
    """CREATE_NEW_PROCESS_GROUP always (Ctrl+Break must reach kd, not the server);
    CREATE_NO_WINDOW when we have no console to share, so kd gets a hidden console the
    helper can attach to instead of a visible window popping up on the user's desktop.
    """
    flags = win32.CREATE_NEW_PROCESS_GROUP
    if not shares_console:
        flags |= win32.CREATE_NO_WINDOW
    return flags


def spawn(spec: SpawnSpec) -> PipeConsole:
    """Start a debugger on pipes (module-level alias of ``PipeConsole.spawn``)."""
    return PipeConsole.spawn(spec)
