"""The simulated debugger's console: what it writes, what it reads, and Ctrl+C.

One thread, one ``select``: on the debugger's input, and on a self-pipe woken by SIGINT
(Ctrl+C from a pty or a signal to the process group), bounded by the deadline of the next
scripted target event (:mod:`~kdmcp.sim.target`). Input is read even while the target runs,
as kd's input thread sees Ctrl+B then; lines are executed only at a prompt.

Line ends: kd on Windows writes ``\\r\\n``. Under a pty the terminal turns ``\\n`` into
``\\r\\n`` itself, so the simulator writes bare ``\\n`` there and ``\\r\\n`` to pipes; either way
the reader sees what it would see from kd.exe.

While a debugging server is open (:mod:`~kdmcp.sim.remoting`) the same ``select`` watches
its listeners and clients: every byte written to stdout also goes to each client (as
``\\r\\n`` text), and lines from any of them join one queue with the console's own, run in
the order they arrived.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import time
from collections import deque
from collections.abc import Callable
from typing import Literal

from kdmcp.sim.remoting import Peer, Remoting
from kdmcp.sim.session_log import SessionLog

__all__ = ["DEFAULT_OUTMASK", "EMIT_LOG_ENV", "KD_ERROR_RE", "PROMPT_OUTPUT", "WRITE_CHUNK", "ConsoleIO"]

DEFAULT_OUTMASK = 0x3F7  # ".outmask /d ... is equivalent to .outmask 0x3F7"
NORMAL_OUTPUT, PROMPT_OUTPUT = 0x1, 0x10
WRITE_CHUNK = 65536
# kd's error for a command, as dbgeng prints it ("       ^ Syntax error in 'x'", "Bad register error in
# 'r foo'", "Couldn't resolve error at 'nt!Nope'", "No runnable debuggees error in 'g'"): the error
# ends the line ("If .catch is not used, an error will terminate the entire debugger command
# program", .catch).
KD_ERROR_RE = re.compile(r"^[ \t]*(?:\^ )?[A-Z][\w' ]* error (?:in|at) '", re.MULTILINE)
# Set to a path: every byte written to stdout is also appended there (fault tests' ground truth).
EMIT_LOG_ENV = "KDMCP_SIM_EMIT_LOG"


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class ConsoleIO:
    """The debugger process's stdin/stdout and its Ctrl+C, as kd.exe's console sees them."""

    def __init__(self, in_fd: int = 0, out_fd: int = 1) -> None:
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.crlf = not os.isatty(out_fd)
        self.pending_input = b""  # the console's unfinished line
        self.input_eof = False
        # Complete lines in arrival order, each with who typed it (None: the server's console).
        self.lines: deque[tuple[Peer | None, str]] = deque()
        self.remoting = Remoting()
        self._prompt_all = True  # the next prompt goes to every client (after a stop)
        self._line_origin: Peer | None = None  # who typed the line now running
        self._prompt: str | None = None  # the prompt shown while waiting for a line
        self._console_at_prompt = False
        self.interrupts = 0
        self._outbuf = bytearray()
        self.outmask = DEFAULT_OUTMASK
        self._in_command = False
        self.command_failed = False  # the command running printed kd's error for it
        self._captured: list[str] | None = None
        self.log = SessionLog()  # .logopen's file: it gets what the console shows
        # Tests of "nothing lost" compare what the engine stored with what was really written.
        emit_path = os.environ.get(EMIT_LOG_ENV)
        self._emit_log = open(emit_path, "ab") if emit_path else None  # noqa: SIM115 (lives with the process)
        # A Ctrl+C wakes the select() in wait(): the C-level signal handler writes to this
        # pipe (signal.set_wakeup_fd), so a signal that lands just before select() blocks is
        # not lost; both ends non-blocking, the read end drained by wait().
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    # ----------------------------------------------------------------- output

    def out(self, text: str) -> None:
        """Write text as the console would show it (line ends per pty/pipe).

        A command's output is normal output: with bit 1 cleared by ``.outmask-`` it is not shown.
        """
        if self._in_command and KD_ERROR_RE.search(text):
            self.command_failed = True  # the rest of its line does not run (interpreter.py)
        if self._in_command and not self.outmask & NORMAL_OUTPUT:
            return
        if self._captured is not None:
            self._captured.append(text)
            return
        if self.crlf:
            text = text.replace("\n", "\r\n")
        self.out_bytes(text.encode("utf-8", errors="replace"))

    def out_bytes(self, data: bytes) -> None:
        """Queue output; it goes out when the debugger next waits (or the queue is large).

        One write per burst, as a console program's buffered stdout does: a command's output,
        the prompt and the next queued command's output leave together.
        """
        self._outbuf += data
        self.log.write(data)
        if data:
            self._console_at_prompt = False
        if self.remoting.peers:
            self.remoting.queue(self._wire(data))
        if len(self._outbuf) >= WRITE_CHUNK:
            self.flush()

    def _wire(self, data: bytes) -> bytes:
        """Console bytes as a client receives them: kd's own ``\\r\\n`` text."""
        return data if self.crlf else data.replace(b"\n", b"\r\n")

    def out_prompt(self, text: str) -> None:
        """The prompt: on the console, and to the clients that see it (remoting's rule: the
        one whose line just ran, or everyone after a stop)."""
        self._prompt = text
        data = text.encode("utf-8", errors="replace")
        self._outbuf += data
        self.log.write(data)
        self._console_at_prompt = True
        if self.remoting.peers:
            origin = self._line_origin
            audience = None if self._prompt_all else [origin] if origin is not None else []
            self.remoting.queue(self._wire(data), audience, prompt=True)
        self._prompt_all = False

    def prompt_everyone(self) -> None:
        """The target stopped: the next prompt is everyone's."""
        self._prompt_all = True

    def flush(self) -> None:
        data, self._outbuf = bytes(self._outbuf), bytearray()
        if self._emit_log is not None and data:
            # Logged *before* it is written: a SIGKILL between the two leaves the log ahead of
            # the pipe (what the engine stored is then a prefix of it), never behind.
            self._emit_log.write(data)
            self._emit_log.flush()
        view = memoryview(data)
        while view:
            n = os.write(self.out_fd, view)
            view = view[n:]
        if self.remoting.peers:
            self.remoting.flush()

    def capture(self, run: Callable[[], None]) -> str:
        """What ``run`` prints, kept instead of shown (``.foreach``'s input commands)."""
        saved, self._captured = self._captured, []
        try:
            run()
            return "".join(self._captured)
        finally:
            self._captured = saved

    # --------------------------------------------------------------- signals

    def _on_sigint(self, signum: int, frame: object) -> None:
        del signum, frame
        self.interrupts += 1

    def take_interrupt(self) -> bool:
        if self.interrupts:
            self.interrupts = 0
            return True
        return False

    def _drain_wake(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._wake_r, 4096):
                pass

    def wait(self, timeout: float | None, want_input: bool) -> Literal["input", "interrupt", "timeout"]:
        """Block until an input line (if wanted), a Ctrl+C, or the timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.take_interrupt():
                return "interrupt"
            if want_input and (self.lines or self.input_eof):
                return "input"
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if remaining == 0.0:
                return "timeout"
            # Input is read even while the target runs (kd's input thread sees Ctrl+B), but
            # lines are only executed at a prompt.
            fds = [self._wake_r] + ([] if self.input_eof else [self.in_fd]) + self.remoting.read_fds()
            if self._outbuf:
                self.flush()
            ready, writable, _ = select.select(fds, self.remoting.write_fds(), [], remaining)
            if self._wake_r in ready:
                self._drain_wake()  # the interrupt itself is counted by _on_sigint
            if self.in_fd in ready:
                data = os.read(self.in_fd, 65536)
                if data:
                    self.pending_input += data
                    self._check_quit_key()
                    *complete, self.pending_input = self.pending_input.split(b"\n")
                    self.lines.extend((None, _decode(raw)) for raw in complete)
                else:
                    self.input_eof = True
            if self.remoting.active and (ready or writable):
                self._serve_clients(ready, writable)

    def _serve_clients(self, ready: list[int], writable: list[int]) -> None:
        events = self.remoting.service(ready, writable)
        for peer in events.connected:
            # the published transcript: "0:000> wenwaz2016\\pear (tcp 127.0.0.1:63141) connected at ..."
            self.out(f"{peer.who} connected at {time.ctime()}\n")
            if self._prompt is not None:  # joined at a prompt: it gets one to type at
                self.remoting.queue(_crlf(self._prompt), [peer], prompt=True)
        self.lines.extend(events.lines)
        self.interrupts += events.interrupts  # Ctrl+C from a client: a break-in, as SIGINT is
        for peer in events.disconnected:
            self.out(f"{peer.who} disconnected at {time.ctime()}\n")

    def _check_quit_key(self) -> None:
        """Ctrl+B then Enter quits kd/cdb at once, whatever the target is doing."""
        head, nl, _ = self.pending_input.rpartition(b"\n")
        if nl and b"\x02" in head:
            raise _Exit(0)

    def read_line(self) -> str | None:
        """The next typed line (the console's or a client's), or None at end of input."""
        while self.wait(None, want_input=True) == "interrupt":
            pass  # Ctrl+C at a prompt: nothing to break into, kd keeps waiting
        if not self.lines:
            return None
        origin, line = self.lines.popleft()
        self._line_origin = origin
        self.log.write((line + ("\r\n" if self.crlf else "\n")).encode("utf-8", errors="replace"))  # what was typed
        if self.remoting.peers:
            self._echo(origin, line)
        self._prompt = None
        return line

    def _echo(self, origin: Peer | None, line: str) -> None:
        """Show a line to the participants who did not type it (remoting's rule): a client's
        behind its ``[MACHINE\\user]`` tag on a line of its own, the console's as typed."""
        prompt = self._prompt or ""
        others = [p for p in self.remoting.peers if p is not origin]
        if origin is None:
            for peer in others:
                text = f"{line}\n" if peer.at_prompt else f"{prompt}{line}\n"
                self.remoting.queue(_crlf(text), [peer])
            return
        tagged = f"[{origin.identity}] {prompt}{line}\n"
        lead = "\n" if self._console_at_prompt else ""
        self._outbuf += (lead + tagged).replace("\n", "\r\n" if self.crlf else "\n").encode("utf-8", "replace")
        self._console_at_prompt = False
        for peer in others:
            text = ("\n" if peer.at_prompt else "") + tagged
            self.remoting.queue(_crlf(text), [peer])

    def end_remoting(self) -> None:
        """The debugger ends: its clients get the last output, then every socket closes."""
        self.remoting.close()

    def catch_interrupts(self) -> None:
        """Count each SIGINT and wake ``wait``'s select through the self-pipe."""
        signal.signal(signal.SIGINT, self._on_sigint)
        signal.set_wakeup_fd(self._wake_w)


def _crlf(text: str) -> bytes:
    """Text as a client receives it: kd's ``\\r\\n`` line ends."""
    return text.replace("\n", "\r\n").encode("utf-8", errors="replace")


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r")
