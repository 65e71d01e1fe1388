"""The local runner: N debuggers at once on this machine, one dump each, until the list is done or cancelled.

The work is the debuggers' (kd/cdb processes reading dumps, ``!analyze`` resolving symbols), so
the pool is threads, each driving one debugger through ``triage_dump``: Python only waits. N
defaults to the core count, bounded by ``max_jobs`` (the server passes its ``max_sessions``:
one triage never holds more debuggers than the server would) and by memory: ``!analyze -v`` on
a kernel dump takes a few hundred MB in dbgeng, so at most one debugger per ``MEMORY_PER_DEBUGGER``
of the memory available when the run starts.

A cancel (the client's, or Ctrl+C in the CLI) stops the open debuggers at once
(``Debuggers.cancel``: killed if they do not quit) and takes no further dump; dumps cut short
leave no record, so a rerun with the same file does them.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable, Sequence

from kdmcp.triage.finding import Found
from kdmcp.triage.models import DumpRecord, TriageSpec
from kdmcp.triage.one import Cancelled, Debuggers, triage_dump

__all__ = ["MEMORY_PER_DEBUGGER", "available_memory", "default_jobs", "run_local"]

MEMORY_PER_DEBUGGER = 512 * 1024 * 1024
_CANCEL_POLL_S = 0.1  # how soon a cancel reaches the open debuggers (the watcher's bounded wait)


def available_memory() -> int | None:
    """Bytes of memory available now, where the OS says cheaply (None: unknown)."""
    if sys.platform == "win32":
        import ctypes

        class MemoryStatus(ctypes.Structure):
            _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                        ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                        ("ullTotalPageFile", ctypes.c_ulonglong), ("ullAvailPageFile", ctypes.c_ulonglong),
                        ("ullTotalVirtual", ctypes.c_ulonglong), ("ullAvailVirtual", ctypes.c_ulonglong),
                        ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]

        status = MemoryStatus()
        status.dwLength = ctypes.sizeof(MemoryStatus)
        if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined,unused-ignore]
            return None
        return int(status.ullAvailPhys)
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def default_jobs(max_jobs: int, memory: int | None = None) -> int:
    """The core count, at most ``max_jobs``, at most one per ``MEMORY_PER_DEBUGGER`` available; at least 1."""
    jobs = min(os.cpu_count() or 1, max_jobs)
    memory = available_memory() if memory is None else memory
    if memory is not None:
        jobs = min(jobs, memory // MEMORY_PER_DEBUGGER)
    return max(1, jobs)


def run_local(items: Sequence[tuple[Found, str]], spec: TriageSpec, on_record: Callable[[DumpRecord], None],
              cancel: threading.Event, jobs: int) -> None:
    """Triage each ``(found, sha256)`` with ``jobs`` debuggers at once; ``on_record`` per dump as it
    completes (from the workers' threads). Returns when every dump is done, or soon after ``cancel``."""
    todo: queue.SimpleQueue[tuple[Found, str]] = queue.SimpleQueue()
    for item in items:
        todo.put(item)
    debuggers = Debuggers()
    finished = threading.Event()
    errors: list[BaseException] = []

    def work() -> None:
        while not debuggers.cancelled.is_set():
            try:
                found, sha256 = todo.get_nowait()
            except queue.Empty:
                return
            try:
                record = triage_dump(found.path, spec, found.name, sha256=sha256, debuggers=debuggers)
            except Cancelled:
                return
            try:
                on_record(record)
            except BaseException as exc:  # the store failed (a full disk): stop the run, say why
                errors.append(exc)
                debuggers.cancel()
                return

    def watch() -> None:
        while not finished.is_set():
            if cancel.wait(_CANCEL_POLL_S):
                debuggers.cancel()
                return

    workers = [threading.Thread(target=work, name=f"kdmcp-triage-{n}", daemon=True)
               for n in range(max(1, min(jobs, len(items))))]
    watcher = threading.Thread(target=watch, name="kdmcp-triage-cancel", daemon=True)
    watcher.start()
    for worker in workers:
        worker.start()
    try:
        for worker in workers:
            worker.join()
    except BaseException:  # Ctrl+C in the CLI's thread: the debuggers go with the run
        debuggers.cancel()
        for worker in workers:
            worker.join()
        raise
    finally:
        finished.set()
        watcher.join()
    if errors:
        raise errors[0]
