"""LogFlusher: session logs grow between tool calls, under the transcript's lock, and stop with the server."""

from __future__ import annotations

import logging
import threading

import pytest

from kdmcp.server.transcript import LogFlusher

BOUND_S = 10  # every wait below ends on an event long before this


class Flushes:
    """A stand-in for ``KdMcpApp.flush_session_logs``: counts the calls, each made under ``lock``."""

    def __init__(self, lock: threading.RLock, fail_first: int = 0) -> None:
        self.lock = lock
        self.calls = 0
        self.fail_first = fail_first
        self.reached = threading.Event()

    def __call__(self) -> None:
        assert self.lock._is_owned()  # type: ignore[attr-defined]  # the copy holds the transcript's lock
        self.calls += 1
        if self.calls >= 3:
            self.reached.set()
        if self.calls <= self.fail_first:
            raise OSError("disk full")


def test_it_flushes_periodically_until_stopped():
    lock = threading.RLock()
    flush = Flushes(lock)
    flusher = LogFlusher(flush, lock, interval=0.01)
    flusher.start()
    assert flush.reached.wait(BOUND_S)
    flusher.stop()
    calls = flush.calls
    assert not flusher._thread.is_alive()
    assert flush.calls == calls  # nothing after stop


def test_stop_wakes_it_at_once_and_a_stopped_flusher_never_flushes():
    lock = threading.RLock()
    flush = Flushes(lock)
    flusher = LogFlusher(flush, lock, interval=3600)  # would sleep an hour: stop must not wait for it
    flusher.start()
    flusher.stop(timeout=BOUND_S)
    assert not flusher._thread.is_alive() and flush.calls == 0


def test_a_failing_copy_is_logged_once_and_retried(caplog: pytest.LogCaptureFixture):
    lock = threading.RLock()
    flush = Flushes(lock, fail_first=2)
    flusher = LogFlusher(flush, lock, interval=0.01)
    with caplog.at_level(logging.ERROR, logger="kdmcp.server.transcript"):
        flusher.start()
        assert flush.reached.wait(BOUND_S)
        flusher.stop()
    assert [r.getMessage() for r in caplog.records].count(
        "copying session output to the transcript logs failed (retrying)"
    ) == 1


@pytest.mark.process  # starts the simulated kd (tests/tiers.py)
def test_copies_at_once_never_write_the_same_output_twice(tmp_path):
    """The flusher's copy and a tool call's copy may run together: each byte is logged once."""
    from kdmcp.config import Config
    from kdmcp.server import KdMcpApp, ServerOptions
    from kdmcp.server.call import Call
    from kdmcp.server.tools.sessions.kdnet import start_kd
    from tests.server.helpers import CANARY_KEY

    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, transcript=str(tmp_path / "run.jsonl")))
    try:
        started = start_kd(Call(app, None), 50000, CANARY_KEY, None, None, True, 20)
        barrier = threading.Barrier(8)

        def copy() -> None:
            barrier.wait(BOUND_S)
            app.flush_session_logs()

        threads = [threading.Thread(target=copy) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(BOUND_S)
        log = app.transcript.session_log_path(started.session_id).read_text(encoding="utf-8")
    finally:
        app.shutdown()
    assert log.count("Microsoft (R) Windows Debugger") == 1
