"""The call wrapper (``kdmcp/server/call.py``): progress is reported while the work runs, and none after."""

from __future__ import annotations

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
