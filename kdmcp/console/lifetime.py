"""Debugger children die with the server, whatever kills it.

A server that exits cleanly stops every session first (``KdMcpApp.shutdown``). A server that is
killed (``kill -9``, an OOM kill, a crash, a closed console on Windows) runs no code at all, and a
debugger left behind holds its KDNET port, spins on a closed input or sits frozen forever. So
the operating system is asked to end the debugger when the server goes:

* **Linux**: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in the child between fork and exec. SIGKILL,
  not SIGTERM: a hung debugger may ignore or block SIGTERM, and a stopped one (SIGSTOP) would
  only queue it. The signal fires when the *thread* that forked the child ends, not the
  process ("the parent" is the creating thread, prctl(2)), and tools run in worker threads
  that the thread pool retires when idle: every debugger is therefore forked by one
  long-lived thread of this module (``on_spawner_thread``). A child whose parent died before
  the ``prctl`` (the race prctl(2) warns about) sees a new parent id and exits at once.
* **Windows**: one job object with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` for the server's
  life; every debugger is assigned to it right after it starts (``KillOnCloseJob``). Only the
  server holds the job's handle, so when the server ends, however it ends, Windows closes the
  handle and terminates every process in the job -- kd and anything kd started after the
  assignment (``.shell`` children inherit the job).
* **Other POSIX systems** (macOS): no parent-death signal exists; the debugger leads its own
  process group and is ended by the clean shutdown only.

A debugger's own children started in the few instructions between ``CreateProcess`` and the
assignment (Windows), or grandchildren on Linux (the death signal is not inherited), are
outside this; kd starts none on its own.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from kdmcp.console import win32

__all__ = ["KillOnCloseJob", "children_job", "die_with_parent", "on_spawner_thread"]

T = TypeVar("T")

PR_SET_PDEATHSIG = 1  # linux/prctl.h

_requests: queue.SimpleQueue[tuple[Callable[[], Any], queue.SimpleQueue[tuple[bool, Any]]]] = queue.SimpleQueue()
_spawner: threading.Thread | None = None
_spawner_lock = threading.Lock()


def _serve_spawns() -> None:
    while True:
        work, reply = _requests.get()
        try:
            reply.put((True, work()))
        except BaseException as exc:  # handed to the caller, raised there
            reply.put((False, exc))


def on_spawner_thread(work: Callable[[], T]) -> T:
    """Run ``work`` (a fork) on the one thread that lives as long as the server, and return its result.

    The parent-death signal is tied to the forking thread: a debugger forked by a pool worker
    would be killed when the pool retires that worker, minutes into a healthy session.
    """
    global _spawner  # noqa: PLW0603 - one spawner per process
    if threading.current_thread() is _spawner:
        return work()
    with _spawner_lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_serve_spawns, name="kdmcp-spawner", daemon=True)
            _spawner.start()
    reply: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    _requests.put((work, reply))
    ok, value = reply.get()
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    prctl: Callable[..., int] = libc.prctl
    return prctl


_prctl = _load_prctl()  # looked up here: the child between fork and exec only calls it


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child die with this process (Linux), or None where the
    system has no such thing. Call it in the thread that forks: it records that thread's process."""
    prctl = _prctl
    if prctl is None or not sys.platform.startswith("linux"):
        return None
    parent = os.getpid()

    def in_child() -> None:
        if prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:  # the server died before the prctl: nobody will stop us
            os._exit(1)

    return in_child


class KillOnCloseJob:
    """A Windows job object whose processes end when its last handle closes (the server's exit)."""

    def __init__(self, kernel32: win32.JobKernel32 | None = None) -> None:
        self._k = kernel32 if kernel32 is not None else win32.load_job_kernel32()
        self.handle = win32.create_kill_on_close_job(self._k)

    def assign(self, process_handle: int) -> None:
        """Put a started debugger in the job; it and what it starts from now on die with the server."""
        win32.assign_to_job(self.handle, process_handle, self._k)

    def close(self) -> None:
        """Close the handle: every process still in the job is terminated (tests; the server never does)."""
        win32.close_handle(self.handle, self._k)


_job: KillOnCloseJob | None = None
_job_lock = threading.Lock()


def children_job(kernel32: win32.JobKernel32 | None = None) -> KillOnCloseJob:
    """The server's one job for its debuggers (Windows), made on first use."""
    global _job  # noqa: PLW0603 - one job per server process
    with _job_lock:
        if _job is None:
            _job = KillOnCloseJob(kernel32)
        return _job
