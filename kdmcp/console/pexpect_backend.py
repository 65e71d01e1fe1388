"""POSIX pty backend over pexpect: the debugger sees a real terminal.

A pty gives what a Windows console gives kd.exe: typed input is echoed, Ctrl+C is a
character the terminal turns into SIGINT for the debugger's process group, and the child's
stdout is line-buffered rather than block-buffered.

The child dies with the server whatever ends it (``kdmcp.console.lifetime``): it is forked,
through pexpect's pty fork, on the one thread that lives as long as the server, with a
parent-death signal set between fork and exec.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import termios

import pexpect

from kdmcp.console import lifetime
from kdmcp.console.base import ConsoleClosed, ConsoleError, SpawnSpec, child_environment, unread_input
from kdmcp.console.process_wait import wait_for_exit

# pexpect's default 80x24 only matters to programs that ask; kd does not wrap its output.
_DIMENSIONS = (50, 4000)
_WRITE_STALL_S = 10.0


class PexpectConsole:
    """One debugger on a pseudo-terminal."""

    echoes_input = True

    def __init__(self, child: pexpect.spawn) -> None:
        self._child = child
        self._status: int | None = None

    @classmethod
    def spawn(cls, spec: SpawnSpec) -> PexpectConsole:
        if not spec.argv:
            raise ConsoleError("empty argv")
        def start() -> pexpect.spawn:
            return pexpect.spawn(
                spec.argv[0],
                list(spec.argv[1:]),
                env=child_environment(os.environ, spec.env),
                cwd=spec.cwd,
                encoding=None,
                echo=True,
                dimensions=_DIMENSIONS,
                use_poll=True,
                preexec_fn=lifetime.die_with_parent(),
            )

        try:
            child = lifetime.on_spawner_thread(start)
        except (pexpect.ExceptionPexpect, OSError) as exc:
            raise ConsoleError(f"cannot start {spec.argv[0]}: {exc}") from exc
        # pexpect sleeps 50 ms before every send by default (for slow curses programs):
        # that alone would cost a kd command 50 ms.
        child.delaybeforesend = None
        _configure_tty(child.child_fd)
        # Non-blocking: read() can then take what is there without a poll first.
        os.set_blocking(child.child_fd, False)
        return cls(child)

    @property
    def pid(self) -> int:
        return int(self._child.pid)

    def read(self, max_bytes: int, timeout: float) -> bytes:
        """Read the pty directly: pexpect's ``read_nonblocking`` calls ``waitpid`` twice per
        read, a third of a small command's cost."""
        try:
            data = os.read(self._child.child_fd, max_bytes)
        except BlockingIOError:
            if timeout <= 0 or not self.wait_readable(timeout):
                return b""
            return self.read(max_bytes, 0)
        except OSError as exc:  # Linux reports the closed slave side as EIO
            raise ConsoleClosed(f"pty closed: {exc}") from exc
        if not data:
            raise ConsoleClosed("pty closed")
        return data

    def wait_readable(self, timeout: float) -> bool:
        poller = select.poll()
        poller.register(self._child.child_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        try:
            return bool(poller.poll(max(0.0, timeout) * 1000))
        except OSError:  # descriptor closed under us: let read() report the end
            return True

    def write(self, data: bytes) -> None:
        """Write everything; the descriptor is non-blocking, so wait for room when it is full."""
        view = memoryview(data)
        fd = self._child.child_fd
        try:
            while view:
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    poller = select.poll()
                    poller.register(fd, select.POLLOUT)
                    if not poller.poll(_WRITE_STALL_S * 1000):
                        raise ConsoleError(
                            f"the debugger has not read its input for {_WRITE_STALL_S:g}s"
                        ) from None
        except OSError as exc:
            raise ConsoleError(f"cannot write to the debugger: {exc}") from exc

    def input_pending(self) -> int | None:
        """The typed lines the debugger has not read: ``FIONREAD`` on the pty's slave side, which
        holds what the terminal queued for it (Linux: the slave is the debugger's stdin, named in
        ``/proc``).

        The slave is opened only for the question: a descriptor of ours kept open on it would
        keep the pty from reporting the debugger's end.
        """
        try:
            slave = os.readlink(f"/proc/{self.pid}/fd/0")
            if not slave.startswith("/dev/pts/"):
                return None
            fd = os.open(slave, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:  # not Linux, or the debugger is gone
            return None
        try:
            return unread_input(fd)
        finally:
            os.close(fd)

    def interrupt(self) -> None:
        """Type the terminal's interrupt character (^C), as a person at a console would."""
        try:
            self._child.sendintr()
        except OSError as exc:
            raise ConsoleError(f"cannot interrupt the debugger: {exc}") from exc

    def is_alive(self) -> bool:
        return bool(self._child.isalive())

    def exit_status(self) -> int | None:
        if self._child.isalive():
            return None
        if self._child.signalstatus is not None:
            return -int(self._child.signalstatus)
        return int(self._child.exitstatus) if self._child.exitstatus is not None else None

    def terminate(self, force: bool = False) -> None:
        """SIGTERM the process group, or SIGKILL it when ``force``: kd's children go too."""
        sig = signal.SIGKILL if force else signal.SIGTERM
        with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
            os.killpg(os.getpgid(self.pid), sig)

    def wait(self, timeout: float) -> int | None:
        """Wait for exit without reading the pty (the pump owns the output stream)."""
        if self._child.isalive():
            wait_for_exit(self.pid, timeout)
        return self.exit_status()

    def close(self) -> None:
        with contextlib.suppress(pexpect.ExceptionPexpect):
            self._child.close(force=True)


def _configure_tty(fd: int) -> None:
    """Make the pty lose nothing on Ctrl+C and not print it.

    NOFLSH: by default the terminal discards queued input and output when ^C arrives; that
    would drop debugger output we have not read yet. ~ECHOCTL: a Windows console does not
    print ``^C``, and glued to ``Break instruction exception ...`` it would hide the banner's
    line start.
    """
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHOCTL
    attrs[3] |= termios.NOFLSH
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
