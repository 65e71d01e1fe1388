"""Triage on a Dask distributed cluster: the same per-dump function, Dask's scheduler around it.

When one host is not enough (docs/triage-cluster.md, the deployment), the run hands its dumps to
a Dask scheduler instead of the local pool. kd-mcp supplies the task (:func:`triage_on_worker`,
which calls :func:`kdmcp.triage.one.triage_dump`) and the merge (``on_record``: the result
store's ``add``, which counts a content hash once); Dask does the rest, and it is why this is not
a home-made scheduler:

- distribution: one task per dump (``client.map``, ``pure=False``: two dumps with equal
  arguments are still two runs), placed by the scheduler on whichever worker is free;
- worker loss: when a worker dies (its host rebooted, its process killed), the scheduler
  reschedules the tasks it held on the other workers; a dump that takes
  ``distributed.scheduler.allowed-failures`` workers down with it (default 3) ends as
  ``KilledWorker`` -- recorded here as that dump's failure (``worker_lost``: a rerun tries it
  again, the host may have been short of memory), the run goes on;
- retries: a task that raised (a share that blinked) is run again up to ``retries`` times;
  ``triage_dump`` itself never raises for a dump's own failure, so this is for the machinery.

Results stream back in completion order (``as_completed``), each record handed to ``on_record``
as it lands, so a run killed half-way keeps what it finished and a rerun resumes. Setting
``cancel`` cancels every outstanding future (Dask drops the queued tasks) and sets a Dask
``Event`` of the run's own that each running task watches: its debugger is stopped at once
(:class:`kdmcp.triage.one.Debuggers`), not left to finish a dump for up to ``timeout_s``; Dask
cannot interrupt a running task by itself. Nothing is recorded after the cancel: a rerun does
those dumps.

Where the dump is: by default the path is opened on the worker as given (a share mounted at the
same path on every host, ``\\\\fileserver\\dumps\\...``). With ``send_max_bytes`` > 0, a dump no
larger is read here and shipped with its task; the worker writes it to a temporary directory of
its own, triages it there and removes it (the record keeps the path as listed). That is for small
minidumps from a machine the workers cannot see; a kernel dump of gigabytes belongs on a share.

Each record says which worker did it (``worker``: the Dask worker's address).

The debuggers and the symbol path are the worker host's when it names them: a Windows worker
keeps its Debugging Tools and its symbol cache where that host has them, so the spec's argv
(the requesting host's) is only the default. A worker names them in Dask's own configuration
(``~/.config/dask/kdmcp.yaml``, or ``DASK_KDMCP__...`` environment variables, read by
``dask.config`` in the worker process): ``kdmcp.debuggers.kd``, ``kdmcp.debuggers.cdb`` (the
executable's path) and ``kdmcp.symbol-path`` (``-y``), each checked as any argv value is.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kdmcp.argvalues import check_path, check_symbol_path
from kdmcp.triage.models import DumpRecord, Flavor, TriageSpec
from kdmcp.triage.one import Cancelled, Debuggers, failed_record, file_sha256, triage_dump, unreadable_key

if TYPE_CHECKING:
    from distributed import Client, Future

__all__ = ["DEFAULT_RETRIES", "run_cluster", "triage_on_worker", "worker_spec"]

DEFAULT_RETRIES = 2  # a task that raised runs again twice (worker loss is the scheduler's, not this count)
_CANCEL_POLL_S = 0.2  # how often the client's cancel watcher looks up from its wait (a bound, not a sleep)
_WORKER_POLL_S = 1.0  # each Event.wait of a running task's watcher (a long poll on the scheduler)


def triage_on_worker(path: str, name: str, spec: TriageSpec, data: bytes | None = None,
                     cancel_event: str | None = None, sha256: str | None = None) -> DumpRecord | None:
    """The task a Dask worker runs: :func:`triage_dump` on ``path`` (on a share), or on ``data``
    written to a temporary file of the worker's own (sent with the task), which is removed after.
    ``cancel_event``: the run's Dask ``Event``; once it is set the debugger is stopped and the task
    returns None (no record). ``sha256``: the hash the run took (the record's key, as the run
    counts it), so the worker does not read a dump of gigabytes off the share once more to hash it.
    Top-level, so Dask pickles it by reference (the workers import kd-mcp)."""
    spec = worker_spec(spec)
    with _cancel_watch(cancel_event) as debuggers:
        try:
            if data is None:
                record = triage_dump(path, spec, name, sha256=sha256, debuggers=debuggers)
            else:
                with tempfile.TemporaryDirectory(prefix="kdmcp-triage-") as tmp:
                    local = os.path.join(tmp, os.path.basename(path.replace("\\", "/")) or "dump.dmp")
                    with open(local, "wb") as f:
                        f.write(data)
                    record = triage_dump(local, spec, name, sha256=sha256, debuggers=debuggers)
                record = record.model_copy(update={"path": path})
        except Cancelled:
            return None
    return record.model_copy(update={"worker": _worker_address(record.worker)})


@contextlib.contextmanager
def _cancel_watch(name: str | None) -> Iterator[Debuggers]:
    """The task's debuggers, cancelled from a thread that waits on the run's Dask ``Event``.
    The thread is not joined: it ends at its next look-up after the task (within
    ``_WORKER_POLL_S``), and cancelling a finished task's ``Debuggers`` stops nothing."""
    debuggers = Debuggers()
    if name is None:
        yield debuggers
        return
    from distributed import Event, get_client

    try:
        # the worker's own client, taken here: the watching thread is none of the worker's, and an
        # Event finds its client lazily ("object not properly initialized" from another thread)
        event = Event(name, client=get_client())
    except ValueError:  # not inside a Dask worker: nothing to watch
        yield debuggers
        return
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                if event.wait(timeout=_WORKER_POLL_S):
                    debuggers.cancel()
                    return
            except Exception:  # the scheduler gone: the task ends with its dump (timeout_s bounds it)
                return

    threading.Thread(target=watch, daemon=True, name="kdmcp-triage-cancel-watch").start()
    try:
        yield debuggers
    finally:
        done.set()


def worker_spec(spec: TriageSpec) -> TriageSpec:
    """``spec`` with this host's debuggers and symbol path where its Dask configuration names
    them (``kdmcp.debuggers.kd`` / ``.cdb``, ``kdmcp.symbol-path``)."""
    import dask.config

    update: dict[str, object] = {}
    debuggers: dict[Flavor, list[str]] = dict(spec.debuggers)
    for flavor in ("kd", "cdb"):
        path = dask.config.get(f"kdmcp.debuggers.{flavor}", default=None)
        if path:
            debuggers[flavor] = [check_path(str(path))]
    if debuggers != spec.debuggers:
        update["debuggers"] = debuggers
    symbols = dask.config.get("kdmcp.symbol-path", default=None)
    if symbols:
        update["symbol_path"] = check_symbol_path(str(symbols))
    return spec.model_copy(update=update) if update else spec


def _worker_address(default: str | None) -> str | None:
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:  # not inside a Dask worker (called directly)
        return default


def _lost(path: str, name: str, error: str, sha256: str | None = None) -> DumpRecord:
    """A dump whose task never came back (its workers died running it, or it raised past its
    retries): a failed record of its own, ``worker_lost`` (the error names what Dask said), under
    the hash the run took (``sha256``), else hashed here when this host can read the file."""
    try:
        size = os.stat(path).st_size
        sha = sha256 or file_sha256(path)
    except OSError:  # the key the run gave it too (kdmcp/triage/run.py)
        size, sha = 0, sha256 or unreadable_key(path)
    return failed_record({"name": name, "path": path, "sha256": sha, "size": size}, "worker_lost", error, 0.0)


@contextlib.contextmanager
def _client(address: str | object) -> Iterator[Client]:
    """A client on ``address``: a scheduler address (this run's own client, closed after), a
    ``LocalCluster`` (likewise) or a ``Client`` the caller owns (left open)."""
    from distributed import Client

    if isinstance(address, Client):
        yield address
        return
    client = Client(address, set_as_default=False)
    try:
        yield client
    finally:
        client.close()


def _payload(path: str, send_max_bytes: int) -> bytes | None:
    if send_max_bytes <= 0:
        return None
    try:
        if os.stat(path).st_size > send_max_bytes:
            return None
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None  # the worker opens the path and records why it cannot


def run_cluster(address: str | object, items: list[tuple[str, str]], spec: TriageSpec,
                on_record: Callable[[DumpRecord], None], cancel: threading.Event, *,
                retries: int = DEFAULT_RETRIES, send_max_bytes: int = 0,
                hashes: Mapping[str, str] | None = None) -> None:
    """Triage ``items`` ((path, name) pairs) on the Dask cluster at ``address`` ('tcp://host:8786',
    a ``distributed.LocalCluster`` or ``Client``), handing each record to ``on_record`` as it
    completes; returns when every dump has a record, or when ``cancel`` is set (the outstanding
    futures cancelled). ``send_max_bytes``: dumps no larger are shipped with their task.
    ``hashes``: path -> the content hash the run took (else the worker hashes the file)."""
    if not items or cancel.is_set():
        return
    from distributed import as_completed
    from distributed.client import FutureCancelledError

    event = f"kdmcp-triage-cancel-{uuid.uuid4().hex}"
    with _client(address) as client:
        futures: list[Future[DumpRecord | None]] = [
            client.submit(triage_on_worker, path, name, spec, _payload(path, send_max_bytes), event,
                          (hashes or {}).get(path), pure=False, retries=retries)
            for path, name in items
        ]
        where = {f.key: item for f, item in zip(futures, items, strict=True)}
        finished = threading.Event()
        watcher = threading.Thread(target=_watch, args=(client, futures, event, cancel, finished), daemon=True,
                                   name="kdmcp-triage-cancel")
        watcher.start()
        completed = False
        try:
            for future in as_completed(futures, loop=client.loop):
                if cancel.is_set():
                    break
                if future.status == "cancelled":
                    continue
                try:
                    record = future.result()
                except FutureCancelledError:
                    continue
                except Exception as exc:  # KilledWorker, or a task that raised past its retries
                    path, name = where[future.key]
                    record = _lost(path, name, f"{type(exc).__name__}: {exc}", (hashes or {}).get(path))
                finally:
                    future.release()
                if record is not None:  # None: the task saw the cancel
                    on_record(record)
            completed = True
        finally:
            finished.set()
            watcher.join()
            # cancelled (again: it may have been set as the watcher ended), or left by an exception
            # (Ctrl+C in the CLI, a store that cannot write): nothing goes on running for this run
            if cancel.is_set() or not completed:
                _stop(client, futures, event)


def _watch(client: Client, futures: list[Future[Any]], event: str, cancel: threading.Event,
           finished: threading.Event) -> None:
    """Once ``cancel`` is set: the run's ``Event`` set (the running tasks stop their debuggers),
    the outstanding futures cancelled. The loop above may be waiting on a dump that takes
    minutes; ``as_completed`` yields a cancelled future at once."""
    while not finished.is_set():
        if cancel.wait(_CANCEL_POLL_S):
            _stop(client, futures, event)
            return


def _stop(client: Client, futures: list[Future[Any]], event: str) -> None:
    from distributed import Event

    with contextlib.suppress(Exception):  # the scheduler gone: nothing runs there any more
        Event(event, client=client).set()
    client.cancel([f for f in futures if not f.done()])
