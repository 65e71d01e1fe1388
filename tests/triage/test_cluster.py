"""run_cluster on a real Dask LocalCluster (workers as processes) against the simulated debuggers.

Every dump of a corpus (kdmcp.sim.dump_corpus: varied minidumps, kernel dumps, bad files) ends
in the JSONL once; a worker killed mid-run leaves its dumps to the others and nothing is counted
twice; a cancelled run resumed with the same JSONL does only the rest; cancel stops the queue.
"""

from __future__ import annotations

import glob
import os
import signal
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import dask.config
import psutil
import pytest
from distributed import Client, LocalCluster

from kdmcp.sim.dump_corpus import CorpusEntry, build_corpus
from kdmcp.triage.cluster import run_cluster
from kdmcp.triage.models import DumpRecord
from kdmcp.triage.one import file_sha256
from kdmcp.triage.store import ResultStore
from tests.triage.cluster_helpers import BOUND_S, Recorder, debuggers_on, local_cluster, until
from tests.triage.helpers import fake_debugger, sim_spec

pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[LocalCluster, Client]]:
    with local_cluster() as both:
        yield both


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[list[tuple[str, str]], list[CorpusEntry]]:
    entries = build_corpus(tmp_path / "dumps", 16, seed=32, bad=3)
    return [(str(tmp_path / "dumps" / e.name), e.name) for e in entries], entries


def _accounted(store: ResultStore, entries: list[CorpusEntry]) -> list[DumpRecord]:
    """Every dump in the JSONL exactly once, the bad ones failed with a category, the rest ok."""
    records = list(store.records())
    assert sorted(r.name for r in records) == sorted(e.name for e in entries)
    assert len({r.sha256 for r in records}) == len(records)
    kinds = {e.name: e for e in entries}
    for r in records:
        if kinds[r.name].kind == "bad":
            assert r.status == "failed" and r.category in ("truncated", "not_a_dump"), r
        else:
            assert r.status == "ok", r
    return records


def test_every_dump_is_triaged_once_and_says_which_worker(cluster, corpus, tmp_path: Path) -> None:
    _cluster, client = cluster
    items, entries = corpus
    store = ResultStore(str(tmp_path / "out.jsonl"))
    recorder = Recorder(store)
    run_cluster(client, items, sim_spec(), recorder, threading.Event())
    records = _accounted(store, entries)
    assert recorder.calls == len(items)
    workers = set(client.scheduler_info()["workers"])
    assert {r.worker for r in records} == workers  # both workers took dumps, each named by its address
    assert len({r.bucket_key for r in records if r.status == "ok"}) >= 8  # the corpus' buckets differ


def test_a_scheduler_address_and_dumps_sent_with_the_task(cluster, corpus, tmp_path: Path) -> None:
    """An address string (the run's own client, closed after); small dumps shipped as bytes: the
    worker writes them to a temporary file of its own and removes it."""
    local, _client = cluster
    items, entries = corpus[0][:12], corpus[1][:12]
    store = ResultStore(str(tmp_path / "out.jsonl"))
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "kdmcp-triage-*")))
    run_cluster(local.scheduler_address, items, sim_spec(), store.add, threading.Event(), send_max_bytes=1 << 20)
    records = _accounted(store, entries)
    by_name = {r.name: r for r in records}
    assert all(by_name[name].path == path for path, name in items)  # the path as listed, not the temp copy
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "kdmcp-triage-*"))) <= before  # removed after


def test_a_worker_killed_mid_run(cluster, corpus, tmp_path: Path) -> None:
    """Once results are arriving, the worker process running a dump is SIGKILLed: the scheduler
    gives its dumps to the other worker (and the nanny's restart), every dump is recorded once."""
    _cluster, client = cluster
    client.wait_for_workers(2, timeout=BOUND_S)
    items, entries = corpus
    store = ResultStore(str(tmp_path / "out.jsonl"))
    recorder = Recorder(store, signal_after=4)
    done = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            run_cluster(client, items, sim_spec(), recorder, threading.Event())
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)
        finally:
            done.set()

    runner = threading.Thread(target=run)
    runner.start()
    try:
        assert recorder.arrived.wait(BOUND_S)
        processing = {w: keys for w, keys in client.processing().items() if keys}
        victim = sorted(processing)[0]  # a worker with a dump in hand
        pids = client.run(os.getpid, workers=[victim])
        os.kill(pids[victim], signal.SIGKILL)
        before_kill = recorder.calls
        assert done.wait(BOUND_S)
    finally:
        runner.join(BOUND_S)
    assert not errors
    records = _accounted(store, entries)
    assert recorder.calls == len(items) and recorder.duplicates == 0
    assert victim not in client.scheduler_info()["workers"]  # the scheduler saw it go
    after = [r.worker for r in records[before_kill:]]
    assert after and victim not in after[1:]  # the rest were done elsewhere (one result may have been in flight)
    # the killed worker's debugger went with it (its console closed under it)
    _gone, alive = psutil.wait_procs(debuggers_on(str(tmp_path)), timeout=BOUND_S)
    assert not alive


def test_a_cancelled_run_resumes_with_the_same_jsonl(cluster, corpus, tmp_path: Path) -> None:
    _cluster, client = cluster
    client.wait_for_workers(2, timeout=BOUND_S)
    items, entries = corpus
    out = str(tmp_path / "out.jsonl")
    cancel = threading.Event()
    first = Recorder(ResultStore(out), signal_after=5, cancel=cancel)
    run_cluster(client, items, sim_spec(), first, cancel)
    assert first.calls == 5  # nothing recorded once cancel was set
    assert _scheduler_drained(client)  # the queued dumps were cancelled, not left to run
    # the rerun: a new store on the same file, only the dumps it has not done
    store = ResultStore(out)
    done = store.done()
    assert len(done) == 5
    rest = [(p, n) for p, n in items if file_sha256(p) not in done]
    second = Recorder(store)
    run_cluster(client, rest, sim_spec(), second, threading.Event())
    assert second.calls == len(items) - 5 and second.duplicates == 0
    _accounted(store, entries)


def _scheduler_drained(client: Client) -> bool:
    """Whether the scheduler holds no task within the bound (a cancelled future is forgotten at
    once; a running one is released and its worker's result dropped)."""
    return until(lambda: client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0)


def test_cancel_stops_the_debuggers_running_on_the_workers(cluster, corpus, tmp_path: Path) -> None:
    """Debuggers that never answer (timeout 600 s): a cancel stops them at once, through the
    run's Dask Event each running task watches, and the run returns with nothing recorded."""
    _cluster, client = cluster
    client.wait_for_workers(2, timeout=BOUND_S)
    items, entries = corpus
    good = [item for item, e in zip(items, entries, strict=True) if e.kind != "bad"][:6]
    hang = fake_debugger(tmp_path, "hang")
    spec = sim_spec(timeout_s=600).model_copy(update={"debuggers": {"kd": hang, "cdb": hang}})
    cancel, done = threading.Event(), threading.Event()
    calls: list[DumpRecord] = []

    def run() -> None:
        try:
            run_cluster(client, good, spec, calls.append, cancel)
        finally:
            done.set()

    runner = threading.Thread(target=run)
    runner.start()
    folder = str(tmp_path / "dumps")
    try:
        assert until(lambda: len(debuggers_on(folder)) == 2)  # one hung debugger on each worker
        hung = debuggers_on(folder)
        cancel.set()
        assert done.wait(BOUND_S)
    finally:
        cancel.set()
        runner.join(BOUND_S)
    _gone, alive = psutil.wait_procs(hung, timeout=30)  # well before their 600 s
    assert not alive and not calls
    assert _scheduler_drained(client)
    assert until(lambda: not debuggers_on(folder), 30)  # and no queued dump started one after the cancel


def test_a_run_left_by_an_exception_stops_its_debuggers(cluster, corpus, tmp_path: Path) -> None:
    """on_record raises (a full disk; Ctrl+C in the CLI comes the same way): the run ends with it,
    and the debugger still running a dump (cdb hangs here, kd answers) is stopped, not left for 600 s.

    The kernel dump's record is the one that raises, once the hung debugger runs: on the other
    worker, or on the same one after the kernel dump (Dask places the two tasks as it likes; with
    two hung dumps, both workers could hold one and the kernel dump would wait behind them for
    the 600 s the test would then take)."""
    _cluster, client = cluster
    client.wait_for_workers(2, timeout=BOUND_S)
    items, entries = corpus
    kernel = next(item for item, e in zip(items, entries, strict=True) if e.kind == "kernel")
    user = next(item for item, e in zip(items, entries, strict=True) if e.kind == "user")
    spec = sim_spec(timeout_s=600).model_copy(update={"debuggers": {**sim_spec().debuggers,
                                                                     "cdb": fake_debugger(tmp_path, "hang")}})
    folder = str(tmp_path / "dumps")
    hung: list[bool] = []

    def full_disk(record: DumpRecord) -> None:
        hung.append(until(lambda: len(debuggers_on(folder)) == 1))
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        run_cluster(client, [kernel, user], spec, full_disk, threading.Event())
    assert hung == [True]  # the hung dump's debugger ran when the run was left
    assert until(lambda: not debuggers_on(folder), 30)
    assert _scheduler_drained(client)


def test_cancel_before_start_submits_nothing(cluster, corpus) -> None:
    _cluster, client = cluster
    items, _entries = corpus
    cancel = threading.Event()
    cancel.set()
    calls: Counter[str] = Counter()
    run_cluster(client, items, sim_spec(), lambda r: calls.update([r.name]), cancel)
    assert not calls


def test_no_process_is_left(cluster) -> None:
    """The runs' debuggers are gone: only the cluster's own processes remain under this one."""
    local, _client = cluster
    nannies = {p.pid for p in psutil.Process().children()}
    for child in psutil.Process().children(recursive=True):
        if child.pid not in nannies:  # a worker process under its nanny, nothing under a worker
            assert child.ppid() in nannies, child.cmdline()
    assert len(local.workers) == 2


POISON = """\
import os, signal, sys
if any("poison" in arg for arg in sys.argv[1:]):  # this dump takes its worker down with it
    os.kill(os.getppid(), signal.SIGKILL)
    sys.exit(1)
os.execv(sys.executable, [sys.executable, "-m", "kdmcp.sim", "cdb", *sys.argv[1:]])
"""


def test_a_dump_that_kills_every_worker_it_runs_on_is_a_failure_of_its_own(corpus, tmp_path: Path) -> None:
    """A dump whose debugger kills its worker (each time): Dask gives up on it after
    ``allowed-failures`` deaths (KilledWorker), its record says so, the others are triaged.
    worker-saturation 1.0: a worker holds only the task it runs, so no dump queued behind the
    poison is blamed for the deaths."""
    items, entries = corpus
    poison = tmp_path / "dumps" / "poison.dmp"
    poison.write_bytes((tmp_path / "dumps" / next(e.name for e in entries if e.kind == "user")).read_bytes()[:-1])
    script = tmp_path / "poison_cdb.py"
    script.write_text(POISON)
    spec = sim_spec().model_copy(update={"debuggers": {**sim_spec().debuggers, "cdb": [sys.executable, str(script)]}})
    store = ResultStore(str(tmp_path / "out.jsonl"))
    config = {"distributed.scheduler.allowed-failures": 1, "distributed.scheduler.worker-saturation": 1.0}
    with dask.config.set(config), local_cluster() as (_local, client):
        run_cluster(client, [*items[:6], (str(poison), "poison.dmp")], spec, store.add, threading.Event())
    records = {r.name: r for r in store.records()}
    assert len(records) == 7
    lost = records.pop("poison.dmp")
    assert (lost.status, lost.category) == ("failed", "worker_lost") and "KilledWorker" in (lost.error or "")
    assert lost.sha256 == file_sha256(str(poison))
    assert all(r.status == "ok" or r.category in ("truncated", "not_a_dump") for r in records.values())
