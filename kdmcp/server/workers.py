"""The threads a tool's work runs in: one hop from the event loop and one back, nothing else.

A call's work runs off the event loop (a hung kd must not stop every other call, ``break_in``
among them: ``call.invoke``), as ``anyio.to_thread.run_sync`` would run it. That costs, per call,
a checkpoint (one more turn of the loop), a capacity limiter, a cancel scope and a
``queue.Queue`` (a condition variable and two locks) on top of the two thread wake-ups the hop
needs; measured on the 2-core bench machine, 58-84 µs a hop against 17-30 µs for a thread
waiting on its own ``SimpleQueue`` and answering with ``call_soon_threadsafe``, which is all
this is (docs/performance.md, "Over MCP: one kd_command r").

As with anyio's ``abandon_on_cancel``: a caller cancelled while the work runs stops waiting at
once; the work runs on, and its thread ends when it is done instead of serving another call
(nothing else waits on it). The work runs in a copy of the caller's context (``contextvars``),
as anyio's does: the asker of the call is found there (``asking.asking_with``). An idle thread
ends after ``IDLE_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

IDLE_S = 10.0  # as anyio's idle workers

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Callable[[], Any]]


class _Worker(threading.Thread):
    def __init__(self, pool: Workers) -> None:
        super().__init__(name="kdmcp-call", daemon=True)  # daemon: a hung debugger's call holds no exit
        self.pool = pool
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                loop, future, context, fn = self.jobs.get(timeout=IDLE_S)
            except queue.Empty:
                if self.pool.retire(self):
                    return
                continue  # taken for a call meanwhile: its job is on the way
            result: Any = None
            error: BaseException | None = None
            if not future.cancelled():  # the caller gave up before it started: it is not started
                try:
                    result = context.run(fn)
                except BaseException as exc:  # handed to the caller, as anyio does
                    error = exc
            if future.cancelled():
                return  # the caller gave up on this work: the thread ends with it
            self.pool.idle(self)
            with contextlib.suppress(RuntimeError):  # the loop is closed: the server has ended
                loop.call_soon_threadsafe(_settle, future, result, error)
            del result, error, fn, context, future


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class Workers:
    """A pool of threads, each taking one job at a time from its own queue."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a worker thread, in a copy of the current context; its result or exception."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
            worker.start()
        worker.jobs.put((loop, future, contextvars.copy_context(), fn))
        return await future

    def idle(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def retire(self, worker: _Worker) -> bool:
        """Whether idle ``worker`` may end (False: it was just taken for a call)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


WORKERS = Workers()
