"""What the cluster tests share: a quiet LocalCluster on loopback, a counting on_record."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

import psutil
from distributed import Client, LocalCluster

from kdmcp.triage.models import DumpRecord
from kdmcp.triage.store import ResultStore

BOUND_S = 120.0  # the bound of every wait in these tests (a run of 16 dumps on two workers takes ~10 s)


@contextlib.contextmanager
def local_cluster(workers: int = 2) -> Iterator[tuple[LocalCluster, Client]]:
    """Workers as processes (a nanny each), one thread each, on 127.0.0.1, logs silenced; every
    process stopped on leaving. The scheduler's HTTP server (the dashboard, /health) binds a free
    port: with ``dashboard_address=None`` it still binds 8787, and two test runs side by side
    would meet there ("Port 8787 is already in use", a warning)."""
    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                     dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster,
        Client(cluster, set_as_default=False) as client,
    ):
        yield cluster, client


class Recorder:
    """on_record: the store's add, counted; ``arrived`` is set (and ``cancel``, when given) at
    the ``signal_after``-th record."""

    def __init__(self, store: ResultStore, signal_after: int = 0, cancel: threading.Event | None = None) -> None:
        self.store = store
        self.signal_after = signal_after
        self.cancel = cancel
        self.calls = 0
        self.duplicates = 0
        self.arrived = threading.Event()

    def __call__(self, record: DumpRecord) -> None:
        if not self.store.add(record):
            self.duplicates += 1
        self.calls += 1
        if self.calls == self.signal_after:
            if self.cancel is not None:
                self.cancel.set()
            self.arrived.set()


def debuggers_on(folder: str) -> list[psutil.Process]:
    """The debuggers (simulated or fake) opening a dump under ``folder`` (their -z argument), anywhere."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info["cmdline"] or []
        if any(arg == "-z" and i + 1 < len(cmd) and cmd[i + 1].startswith(folder) for i, arg in enumerate(cmd)):
            found.append(p)
    return found


def until(condition: Callable[[], bool], bound_s: float = BOUND_S) -> bool:
    """Whether ``condition`` holds within ``bound_s``, looked at every 50 ms (for what no event
    announces: a process appearing)."""
    pause = threading.Event()
    for _ in range(int(bound_s / 0.05)):
        if condition():
            return True
        pause.wait(0.05)
    return condition()
