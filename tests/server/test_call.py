"""The call wrapper (``kdmcp/server/call.py``): progress is reported while the work runs, and none after."""

from __future__ import annotations

import contextvars
import threading
import types

import anyio
import pytest

from kdmcp.server import call
from kdmcp.server.redaction import Redactor

pytestmark = pytest.mark.anyio


async def test_stopping_waits_for_every_report_in_flight(monkeypatch):
    monkeypatch.setattr(call, "PROGRESS_EVERY_S", 0.001)
    first = anyio.Event()
    release = anyio.Event()
    begun: list[float] = []
    finished: list[float] = []

    class Ctx:
        async def report_progress(self, progress, total, message):
            begun.append(progress)
            first.set()
            await release.wait()
            assert message == f"waiting ({progress:.0f}s)"
            finished.append(progress)

    work = call.Call(types.SimpleNamespace(redactor=Redactor()), None)
    work.progress("waiting", 10.0)
    stop = call._every_second(Ctx(), work)
    with anyio.fail_after(10):
        await first.wait()
        release.set()
        for task in stop():  # the reports on their way, which invoke awaits before its answer
            await task
    # Every report begun was sent before the answer: none can follow it.
    assert begun and sorted(finished) == sorted(begun)
    count = len(begun)
    await anyio.lowlevel.checkpoint()
    assert len(begun) == count  # the timer is cancelled: nothing new is begun


# ------------------------------------------------------------------ the worker threads (call.Workers)

_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="none")


async def test_the_work_runs_off_the_loop_in_the_callers_context_and_its_thread_is_reused():
    pool = call.Workers()
    loop_thread = threading.get_ident()
    _SEEN.set("the caller's")
    ran: list[tuple[int, str]] = []

    def work() -> int:
        ran.append((threading.get_ident(), _SEEN.get()))
        return 42

    assert await pool.run(work) == 42
    assert await pool.run(work) == 42
    assert ran[0][0] != loop_thread and ran[0][1] == "the caller's"
    assert ran[1][0] == ran[0][0]  # one call at a time: one thread


async def test_an_exception_is_the_callers():
    def work() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await call.Workers().run(work)


async def test_calls_at_once_each_get_a_thread():
    pool = call.Workers()
    both = threading.Barrier(2, timeout=10)

    def work() -> int:
        both.wait()  # each waits for the other: they run at the same time or not at all
        return threading.get_ident()

    results: list[int] = []

    async def one() -> None:
        results.append(await pool.run(work))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(one)
            tg.start_soon(one)
    assert len(set(results)) == 2


async def test_a_cancelled_caller_stops_waiting_and_the_thread_ends_with_its_work():
    pool = call.Workers()
    started, release = threading.Event(), threading.Event()
    threads: list[threading.Thread] = []

    def work() -> None:
        threads.append(threading.current_thread())
        started.set()
        release.wait(20)

    with anyio.fail_after(20):
        with anyio.move_on_after(20) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(pool.run, work)
                await anyio.to_thread.run_sync(started.wait)
                tg.cancel_scope.cancel()  # the caller gives up while the work still runs
        assert not scope.cancelled_caught
        assert threads[0].is_alive()
        release.set()
        await anyio.to_thread.run_sync(threads[0].join, 10)
    assert not threads[0].is_alive()  # not kept for another call: nothing waits on it
    assert await pool.run(threading.current_thread) is not threads[0]
