"""A triage run, the one implementation behind the ``triage_dumps`` tool and ``kd-mcp triage``.

lock the records file for the run (``run_lock``: one run a file, across processes) -> find the
dumps -> hash each (the resume and dedupe key), with a progress call per dump (a fleet of
multi-GB dumps takes minutes to hash) -> skip what the JSONL holds already, but for failures a
rerun retries (``RETRIED_CATEGORIES``: their records dropped, the dumps done again) -> hand the
rest to a runner (the local pool, or a Dask cluster when a scheduler is named) -> each record
into the store as it completes, with a progress call -> the summary of every dump the request
named, from the store (a resumed run's summary covers the dumps done before too).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Sequence

from kdmcp.triage.buckets import TriageSummary, summarise
from kdmcp.triage.finding import Found, find_dumps
from kdmcp.triage.local import run_local
from kdmcp.triage.models import DumpRecord, TriageSpec
from kdmcp.triage.one import file_sha256, unreadable_key
from kdmcp.triage.run_lock import run_lock
from kdmcp.triage.store import ResultStore

__all__ = ["Progress", "triage_run"]

# done (records added by this run), total (dumps this run triages), the record just added; while the
# dumps are hashed, before any is triaged: done (dumps hashed), total (dumps found), None
Progress = Callable[[int, int, DumpRecord | None], None]


def triage_run(paths: Sequence[str], spec: TriageSpec, *, out: str, glob: str | None = None,
               limit: int | None = None, jobs: int = 1, scheduler: object | None = None,
               roots: Sequence[str] = (), cancel: threading.Event | None = None,
               progress: Progress | None = None, found: Sequence[Found] | None = None) -> TriageSummary:
    """Triage the dumps under ``paths`` into the JSONL ``out``; the summary of every one of them.

    ``scheduler``: a Dask scheduler address (``tcp://host:8786``) or a ``distributed`` cluster or
    client, else the local pool of ``jobs`` debuggers. ``found``: the dumps, when the caller found
    them already (``paths``, ``glob``, ``limit`` and ``roots`` are then not read again).
    """
    cancel = cancel or threading.Event()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with run_lock(out):
        return _run(paths, spec, out=out, glob=glob, limit=limit, jobs=jobs, scheduler=scheduler, roots=roots,
                    cancel=cancel, progress=progress, found=found)


def _run(paths: Sequence[str], spec: TriageSpec, *, out: str, glob: str | None, limit: int | None, jobs: int,
         scheduler: object | None, roots: Sequence[str], cancel: threading.Event, progress: Progress | None,
         found: Sequence[Found] | None) -> TriageSummary:
    dumps = list(found) if found is not None else find_dumps(paths, glob=glob, limit=limit, roots=roots)
    store = ResultStore(out)
    done = store.done()
    requested: set[str] = set()
    retried: set[str] = set()  # the hashes of records to drop: failures this run does again
    todo: list[tuple[Found, str]] = []
    same_content = done_before = 0
    for hashed, dump in enumerate(dumps, 1):
        if cancel.is_set():
            break
        try:
            sha256 = file_sha256(dump.path)
        except OSError:
            sha256 = unreadable_key(dump.path)  # triage_dump records it as unreadable, under this key
        if progress is not None:
            progress(hashed, len(dumps), None)
        if sha256 in requested:
            same_content += 1
            continue
        requested.add(sha256)
        if sha256 in done:
            done_before += 1
            continue
        todo.append((dump, sha256))
        # a failure to retry; or the file could not be read last time, its record under its path's key
        retried.update(key for key in (sha256, unreadable_key(dump.path)) if key in store)
    if retried and not cancel.is_set():
        store.forget(retried)
    lock = threading.Lock()
    added = 0

    def on_record(record: DumpRecord) -> None:
        nonlocal added
        with lock:  # the progress call too: its counts must reach the client in order (MCP: progress increases)
            if not store.add(record):
                return  # a dump a lost Dask worker had finished, run again elsewhere: counted once
            added += 1
            if progress is not None:
                progress(added, len(todo), record)

    if todo and not cancel.is_set():
        if scheduler is not None:
            # Dask is imported only when a run uses it (kdmcp/triage/cluster.py, docs/triage-cluster.md)
            cluster = importlib.import_module("kdmcp.triage.cluster")
            cluster.run_cluster(scheduler, [(dump.path, dump.name) for dump, _ in todo], spec, on_record, cancel,
                                hashes={dump.path: sha256 for dump, sha256 in todo})
        else:
            run_local(todo, spec, on_record, cancel, jobs)
    summary = summarise((r for r in store.records() if r.sha256 in requested), store.path,
                        done_before=done_before, same_content=same_content)
    summary.not_done = len(requested) - summary.dumps
    return summary
