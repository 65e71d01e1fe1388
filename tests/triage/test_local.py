"""The local pool against the simulator: N debuggers at once, every dump once, a cancel that stops them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil
import pytest

from kdmcp.triage import local
from kdmcp.triage.finding import Found
from kdmcp.triage.models import DumpRecord
from kdmcp.triage.one import file_sha256
from tests.triage.helpers import USER, distinct_copies, fake_debugger, sim_spec

pytestmark = pytest.mark.process


def test_default_jobs_is_bounded_by_max_sessions_and_memory() -> None:
    assert local.default_jobs(1) == 1
    assert local.default_jobs(64, memory=3 * local.MEMORY_PER_DEBUGGER) <= 3
    assert local.default_jobs(64, memory=0) == 1


def test_two_jobs_triage_every_dump_once_with_two_debuggers_at_once(tmp_path: Path) -> None:
    dumps = distinct_copies(tmp_path / "d", 8)
    items = [(Found(str(p), p.name), file_sha256(str(p))) for p in dumps]
    records: list[DumpRecord] = []
    workers: set[str] = set()
    lock = threading.Lock()
    peak = 0
    me = psutil.Process()

    def on_record(record: DumpRecord) -> None:
        nonlocal peak
        with lock:
            records.append(record)
            workers.add(record.worker or "")
            peak = max(peak, sum(1 for c in me.children(recursive=True) if "kdmcp.sim" in " ".join(c.cmdline())))

    local.run_local(items, sim_spec(), on_record, threading.Event(), jobs=2)
    assert sorted(r.name for r in records) == sorted(p.name for p in dumps)
    assert all(r.status == "ok" for r in records)
    assert {r.sha256 for r in records} == {sha for _, sha in items}
    assert peak <= 2  # never more debuggers than jobs (the one being counted may have quit already)


def test_a_cancel_stops_the_running_debuggers_and_takes_no_more_dumps(tmp_path: Path) -> None:
    hang = sim_spec(timeout_s=120).model_copy(update={"debuggers": {"cdb": fake_debugger(tmp_path, "hang")}})
    items = [(Found(str(p), p.name), file_sha256(str(p))) for p in USER[:4]]
    cancel = threading.Event()
    records: list[DumpRecord] = []
    done = threading.Event()

    def run() -> None:
        local.run_local(items, hang, records.append, cancel, jobs=2)
        done.set()

    runner = threading.Thread(target=run)
    runner.start()
    me = psutil.Process()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and sum("fake_hang" in " ".join(c.cmdline()) for c in me.children()) < 2:
        done.wait(0.05)  # both debuggers are up (bounded wait)
    cancel.set()
    assert done.wait(30)
    runner.join()
    assert records == []  # the dumps cut short have no record: a rerun does them
    assert not [c for c in me.children(recursive=True) if "fake_hang" in " ".join(c.cmdline())]
