"""How a session's output reaches it: the pump, a caller reading for itself, or the console's reader thread.

A mixin of ``DebuggerSession`` (session.py), kept apart so that module stays one idea: this one
moves bytes from the console into the output store and the state machine, in order, and wakes
whoever waits for what they mean. Three ways, by backend (docs/architecture.md, "The engine"):

* a console that delivers (pipes, ``console.base.Delivering``): its reader thread stores and scans
  each chunk (``_deliver``) and wakes the caller whose answer it completes; nobody else reads;
* otherwise (a pty) the caller of a command reads the console itself while it waits
  (``_read_until``), which saves the thread switch a pump would cost it;
* and the pump thread reads whenever no caller does (a running target's output, the exit).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kdmcp.console import Console, ConsoleClosed, ConsoleError
from kdmcp.engine.events import SessionState
from kdmcp.engine.machine import PendingMarker, SessionMachine
from kdmcp.engine.output_store import OutputStore
from kdmcp.engine.results import CommandOutput

_log = logging.getLogger(__name__)
_READ_CHUNK = 65536
_COALESCE_FROM = 2048  # a shorter read means the debugger had nothing more queued
_PUMP_WAKE_S = 0.25  # bounded read so the pump notices a stop request


class Asked:
    """A command waiting for its answer: what ``DebuggerSession._answer`` builds its result from, and
    that result once built — by the thread that stored the bytes that completed the answer
    (``Reading._ingest``): on pipes the console's reader thread, while the bytes and the machine's
    state are still in its core's caches. The caller, woken on the other core, took 3-4x as long
    to build the same result (docs/performance.md, "The engine: one ``r`` over pipes")."""

    __slots__ = ("command", "marker", "pending", "result", "start", "t0")

    def __init__(self, command: str, marker: bytes, pending: PendingMarker, start: int, t0: float) -> None:
        self.command, self.marker, self.pending, self.start, self.t0 = command, marker, pending, start, t0
        self.result: CommandOutput | None = None


class Reading:
    """The session's reading path; the attributes below are the session's (set in its ``__init__``)."""

    session_id: str
    store: OutputStore
    machine: SessionMachine
    on_output: Callable[[], None] | None
    _console: Console | None
    _lock: threading.RLock
    _cond: threading.Condition
    _pump_cond: threading.Condition
    _io_lock: threading.Lock
    _readers: int
    _eof: bool
    _stop_pump: bool
    _quitting: bool
    _delivered: bool
    _asked: Asked | None  # the command whose answer is awaited (``DebuggerSession._immediate``)

    if TYPE_CHECKING:
        @property
        def state(self) -> SessionState: ...
        def _answer(self, asked: Asked, chunk: bytes = b"", at: int = 0) -> CommandOutput: ...

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` (evaluated under the lock) holds; False on timeout."""
        with self._lock:
            return self._cond.wait_for(predicate, timeout=max(0.0, timeout))

    # ---------------------------------------------------------------- pump

    def _pump_loop(self) -> None:
        """Drain the console whenever no caller is reading it; then record the exit."""
        console = self._console
        assert console is not None
        if self._delivered:  # the console's reader stores every chunk: wait for the end (or a stop)
            with self._cond:
                while not self._stop_pump and not self._eof:
                    self._pump_cond.wait(_PUMP_WAKE_S)
        while not self._stop_pump and not self._eof:
            wait = _PUMP_WAKE_S
            with self._cond:
                if (self._readers or self.state == SessionState.broken) and not self._quitting:
                    # A command's caller reads for itself, or the debugger sits at a prompt
                    # and prints nothing: stand aside, so the caller that sends the next
                    # command does not race the pump for its answer. At a prompt, still look
                    # for unsolicited output (a remote session's other clients) now and then.
                    if self._pump_cond.wait(_PUMP_WAKE_S) or self._readers or self._stop_pump:
                        continue  # woken by a change: look at the state again
                    wait = 0.0
            self._drain_once(wait, pump=True)
        code = console.wait(5.0)
        if code is not None:
            console.close()  # the process is gone: release its pipes or pty now
        with self._cond:
            self.machine.eof(code)
            self._cond.notify_all()
        self._output_arrived()  # the end: what was held back can be decided now

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
                if self._eof:
                    self._pump_cond.notify()  # the pump records the exit
            if data:
                self._output_arrived()  # still under the read lock: the copies go in order

    def _deliver(self, data: bytes) -> None:
        """A chunk from the console's reader thread (``Delivering``), stored and scanned there; ``b""``:
        the end of the stream, which the pump records. Callers waiting for their answer are woken
        once it has come, and read nothing themselves."""
        try:
            # One thread delivers, in order, and nobody else reads: no read lock (``_io_lock``) to take.
            with self._lock:
                if data:
                    self._ingest(data)
                else:
                    self._eof = True
                    self._pump_cond.notify()  # the pump records the exit
                self._cond.notify_all()
            if data and self.on_output is not None:
                self._output_arrived()
        except Exception:  # the reader thread must go on (a store closed by a stop that did not wait)
            _log.exception("storing output of %s failed", self.session_id)

    def _read_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """``wait_for``, but this thread reads the console itself while it waits.

        The caller has announced itself (``_readers``), so the pump stands aside.
        Without this, every command pays a wake-up of the caller by the pump thread,
        several times the cost of a pipe round trip. A console that delivers its chunks
        (``_deliver``) has its reader thread store them: then this only waits.
        """
        if self._delivered:
            return self.wait_for(predicate, timeout)
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            with self._cond:
                if predicate():
                    return True
                if self._eof:
                    # The pump records the exit; wait for it there.
                    return self._cond.wait_for(predicate, max(0.0, deadline - time.monotonic()))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            # Output already there (the pump may have stopped mid-way) returns at once.
            self._drain_once(min(remaining, _PUMP_WAKE_S), pump=False)

    def _start_reading(self) -> None:
        """This thread reads the answer to what it is about to write, so the pump stands aside
        (lock held: announced *before* writing, so the pump cannot wake up on the answer and
        take it first). A console that delivers has its reader thread store the answer: nothing."""
        if not self._delivered:
            self._readers += 1

    def _done_reading(self) -> None:
        """Undo ``_start_reading``."""
        if self._delivered:
            return
        with self._cond:
            self._readers -= 1
            self._cond.notify_all()
            if not self._readers and self.state != SessionState.broken:
                # The output is the pump's again (a running target, a timed-out command).
                # At a prompt the debugger prints nothing: the pump sleeps on.
                self._pump_cond.notify()

    def _output_arrived(self) -> None:
        """Tell ``on_output`` (the transcript's session log: written as kd prints, so a server
        killed with -9 leaves it complete); its failure is logged, never the reader's."""
        if self.on_output is not None:
            try:
                self.on_output()
            except Exception:
                _log.exception("copying %s's output to its log failed", self.session_id)

    def _ingest(self, data: bytes) -> None:
        """Store a chunk and let the state machine say what it means (lock held); if that completed
        the answer a caller waits for, build the caller's result here (``Asked``)."""
        at = self.store.size
        self.store.append(data)
        self.machine.feed(data)
        asked = self._asked
        if asked is not None and asked.pending.done and asked.result is None and asked.pending.hit is not None:
            try:
                asked.result = self._answer(asked, data, at)
            except Exception:  # the caller builds it again, and gets the error itself
                _log.debug("building the answer of %s while storing it failed", self.session_id, exc_info=True)
