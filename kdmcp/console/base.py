"""The ``Console`` protocol: one debugger process and its byte stream.

The engine needs exactly these operations from a backend, whatever the platform: write
bytes to the debugger's input, read whatever output is available (bounded wait), send the
console break (Ctrl+C / Ctrl+Break), end the process, and learn how it ended. Everything
platform-specific (pty, pipes, Win32 console control events) stays behind this seam.

Backends whose reads block on a thread (pipes, wexpect's console) hand the chunks to the
engine through one bounded :class:`OutputQueue`, defined here so neither backend imports
the other.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

OUTPUT_BUFFER_LIMIT = 1024 * 1024  # bytes read ahead of the engine's pump


class ConsoleClosed(Exception):
    """The debugger's output stream reached end of file (the process exited or closed it)."""


class ConsoleError(Exception):
    """A backend could not start, write to, interrupt or stop the debugger process."""


@dataclass(frozen=True)
class SpawnSpec:
    """How to start a debugger: argv, environment additions and working directory.

    ``env`` entries are added to the allowlisted part of the server's environment (see
    ``child_environment``): a debugger child never inherits our secrets.
    """

    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None


@runtime_checkable
class Console(Protocol):
    """One running debugger process.

    ``read`` returns ``b""`` when nothing arrived within ``timeout`` and raises
    ``ConsoleClosed`` at end of stream. Callers serialise ``read`` themselves (the engine
    reads under one lock); ``wait_readable`` may be called by several threads at once.
    ``write``, ``interrupt`` and ``terminate`` may be called from any thread.
    """

    @property
    def pid(self) -> int: ...

    @property
    def echoes_input(self) -> bool:
        """Whether typed input comes back in the output stream (pty, Windows console)."""
        ...

    def read(self, max_bytes: int, timeout: float) -> bytes: ...

    def wait_readable(self, timeout: float) -> bool:
        """Block until output (or end of stream) is ready to ``read``, at most ``timeout`` s.

        Lets whichever thread needs the output next do the reading itself: a command's
        caller waits here directly instead of being woken by the pump thread, which saves
        a thread handoff (~45 µs under the GIL) per command.
        """
        ...

    def write(self, data: bytes) -> None: ...

    def interrupt(self) -> None:
        """Deliver the console break the debugger treats as Ctrl+C (break in / cancel)."""
        ...

    def input_pending(self) -> int | None:
        """How many bytes written to the debugger it has not read yet; None where the backend
        cannot tell. Zero after a ``g`` is the evidence that kd read it: kd prints nothing when
        the target resumes, and a frozen (SIGSTOPped) or hung debugger is just as silent."""
        ...

    def is_alive(self) -> bool: ...

    def exit_status(self) -> int | None:
        """The exit code once the process has ended (negative: killed by that signal)."""
        ...

    def terminate(self, force: bool = False) -> None:
        """Ask the process to end (``force``: kill it and its process tree)."""
        ...

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for exit; the exit status, or None if still alive."""
        ...

    def close(self) -> None:
        """Release descriptors and handles; the process must already have ended."""
        ...


# What a debugger child may inherit from the server's environment, and nothing else: a
# name-based scrub (``*KEY*``, ``*TOKEN*``...) let ``DB_PASS``, ``GITHUB_PAT`` and every other
# secret without those words through, and kd's ``.shell set`` prints them. Names compare
# upper-cased: Windows environment names are case-insensitive (``Path``, ``SystemRoot``).
CHILD_ENV_NAMES = frozenset({
    # Windows: what a Win32 console program needs to start, load DLLs and write temporary files;
    # symsrv's default downstream store lives under ProgramData / LocalAppData.
    "PATH", "PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "TEMP", "TMP",
    "USERPROFILE", "USERNAME", "COMPUTERNAME", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA",
    "PROCESSOR_ARCHITECTURE", "PROCESSOR_ARCHITEW6432", "NUMBER_OF_PROCESSORS",
    # POSIX, where the simulator stands in for kd.
    "HOME", "TMPDIR", "LANG", "LANGUAGE", "TZ",
    # Python children (the simulator, the Ctrl+Break helper, the wexpect launcher) find kdmcp
    # and write their output as the server's own Python was told to (unbuffered, UTF-8).
    "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
})
CHILD_ENV_PREFIXES = (
    "_NT_",  # the debuggers' own: _NT_SYMBOL_PATH, _NT_ALT_SYMBOL_PATH, _NT_SOURCE_PATH, ...
    "DBGHELP_",  # DBGHELP_LOG, DBGHELP_DBGOUT: dbghelp's diagnostics
    "LC_",  # locale
    "KDMCP_SIM_",  # the simulator's knobs (KDMCP_SIM_EMIT_LOG): tests and demos set them
)


def child_environment(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The environment a debugger child gets: the allowlisted part of ``base``, plus ``extra``.

    kd.exe has no business seeing ``KDMCP_LISTEN_TOKEN``, a database password or anything else
    the server holds that kd does not need; a ``.shell`` command would print it. ``extra`` (the
    spawn spec's own entries) is kept as given.
    """
    env = {name: value for name, value in base.items() if _inherited(name)}
    env.update(extra)
    return env


def _inherited(name: str) -> bool:
    upper = name.upper()
    return upper in CHILD_ENV_NAMES or upper.startswith(CHILD_ENV_PREFIXES)


@runtime_checkable
class Delivering(Protocol):
    """A console whose reader thread can hand each chunk to the engine itself (``deliver_to``).

    Where reads block on a thread anyway (pipes), the engine then stores and scans each chunk on
    that thread and wakes a waiting caller once its answer is complete, as mcp-windbg's reader
    does: no queue between the reader and a caller that would read the chunk again.
    """

    def deliver_to(self, sink: Callable[[bytes], None]) -> None:
        """From now on give every chunk to ``sink`` (what was queued first), then ``b""`` at end of
        stream; ``read`` and ``wait_readable`` then see nothing but the end."""
        ...


class OutputQueue:
    """Turns a reader thread's chunks into ``Console.read(max_bytes, timeout)``.

    A bounded byte buffer: when the pump falls behind, the reader thread waits, the pipe
    fills and kd waits too, so memory stays at ``limit`` whatever the output size. An
    unbounded queue let 100 MB of output pile up 60 MB here before the pump caught up.
    ``close()`` releases a reader waiting for room once nobody will read any more.
    ``deliver_to`` hands the chunks to a sink instead, on the reader's thread.
    """

    def __init__(self, limit: int = OUTPUT_BUFFER_LIMIT) -> None:
        self._cond = threading.Condition()
        self._buf = bytearray()
        self._limit = limit
        self._eof = False
        self._closed = False
        self._sink: Callable[[bytes], None] | None = None

    def deliver_to(self, sink: Callable[[bytes], None]) -> None:
        """Hand every chunk to ``sink`` from now on (``Delivering``); what is queued goes first, under
        the lock, so a ``put`` waiting for it cannot overtake it."""
        with self._cond:
            if self._buf:
                data, self._buf = bytes(self._buf), bytearray()
                sink(data)
            self._sink = sink
            if self._eof:
                sink(b"")
            self._cond.notify_all()

    def put(self, chunk: bytes) -> None:
        if self._sink is None:
            with self._cond:
                self._cond.wait_for(lambda: len(self._buf) < self._limit or self._closed or self._sink is not None)
                if self._sink is None:
                    if not self._closed:
                        self._buf += chunk
                        self._cond.notify_all()
                    return
        self._sink(chunk)  # set once, by deliver_to, which has delivered what was queued before

    def put_eof(self) -> None:
        with self._cond:
            self._eof = True
            self._cond.notify_all()
            sink = self._sink
        if sink is not None:
            sink(b"")

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def wait_readable(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: bool(self._buf) or self._eof, max(0.0, timeout))

    def read(self, max_bytes: int, timeout: float, *, what: str) -> bytes:
        """Up to ``max_bytes`` of buffered output, waiting at most ``timeout`` for the first byte.

        ``b""`` on timeout; ``ConsoleClosed`` only once everything before the end was returned.
        """
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        with self._cond:
            if not self._buf and not self._eof:
                self._cond.wait_for(lambda: bool(self._buf) or self._eof, max(0.0, timeout))
            if self._buf:
                data = bytes(self._buf[:max_bytes])
                del self._buf[:max_bytes]  # bytearray drops its front in O(1)
                self._cond.notify_all()
                return data
            if self._eof:
                raise ConsoleClosed(f"{what}: end of output")
            return b""


def unread_input(fd: int) -> int | None:
    """``FIONREAD`` on ``fd`` (a pipe's writing end, or a pty's slave): the bytes nobody has
    read yet; None where the system cannot say."""
    try:
        import fcntl
        import termios
    except ImportError:  # Windows
        return None
    buf = bytearray(4)
    try:
        fcntl.ioctl(fd, termios.FIONREAD, buf)
    except OSError:
        return None
    return int.from_bytes(buf, sys.byteorder)
