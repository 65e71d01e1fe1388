"""The cluster's task off the cluster (fast tier): the worker's own debuggers and symbol path, a
dump sent with its task, the record of a dump whose task never came back."""

from __future__ import annotations

import glob
import hashlib
import os
import tempfile
from pathlib import Path

import dask.config
import pytest

from kdmcp.triage.cluster import _lost, triage_on_worker, worker_spec
from kdmcp.triage.one import file_sha256, unreadable_key
from tests.triage.helpers import sim_spec

CDB = r"C:\Program Files (x86)\Windows Kits\10\Debuggers\x64\cdb.exe"
SYMBOLS = r"srv*C:\symcache*https://msdl.microsoft.com/download/symbols"


def test_the_spec_is_kept_where_the_worker_names_nothing() -> None:
    spec = sim_spec()
    assert worker_spec(spec) is spec


def test_the_worker_names_its_debuggers_and_symbol_path() -> None:
    spec = sim_spec()
    with dask.config.set({"kdmcp.debuggers.cdb": CDB, "kdmcp.symbol-path": SYMBOLS}):
        mine = worker_spec(spec)
    assert mine.debuggers["cdb"] == [CDB] and mine.debuggers["kd"] == spec.debuggers["kd"]
    assert mine.symbol_path == SYMBOLS


@pytest.mark.parametrize("key", ["kdmcp.debuggers.kd", "kdmcp.symbol-path"])
def test_a_worker_value_is_checked_as_any_argv_value(key: str) -> None:
    with dask.config.set({key: '-z "C:\\other.dmp"'}), pytest.raises(ValueError):
        worker_spec(sim_spec())


def test_a_dump_sent_with_its_task_is_triaged_from_a_temporary_file_removed_after(tmp_path: Path) -> None:
    """(A file no debugger would open: the record is made without starting one.)"""
    data = b"not a dump at all\n"
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "kdmcp-triage-*")))
    record = triage_on_worker(r"\\fileserver\dumps\a.dmp", "a.dmp", sim_spec(), data)
    assert (record.status, record.category) == ("failed", "not_a_dump")
    assert record.path == r"\\fileserver\dumps\a.dmp" and record.name == "a.dmp"
    assert record.size == len(data) and record.sha256 == hashlib.sha256(data).hexdigest()
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "kdmcp-triage-*"))) <= before


def test_the_task_keys_its_record_by_the_hash_the_run_took(tmp_path: Path) -> None:
    """(The worker does not read the dump again to hash it: a kernel dump of gigabytes on a share.)"""
    dump = tmp_path / "a.dmp"
    dump.write_bytes(b"not a dump at all\n")
    record = triage_on_worker(str(dump), "a.dmp", sim_spec(), sha256="0" * 64)
    assert record is not None and (record.sha256, record.category) == ("0" * 64, "not_a_dump")


def test_a_lost_task_is_a_failed_record_of_its_dump(tmp_path: Path) -> None:
    dump = tmp_path / "poison.dmp"
    dump.write_bytes(b"MDMP" + bytes(60))
    record = _lost(str(dump), "poison.dmp", "KilledWorker:  Attempted to run task\n on 2 workers")
    assert (record.status, record.category, record.bucket_key) == ("failed", "worker_lost", "failed:worker_lost")
    assert record.sha256 == file_sha256(str(dump)) and record.size == 64
    assert record.error == "KilledWorker: Attempted to run task on 2 workers"
    unseen = _lost(str(tmp_path / "gone.dmp"), "gone.dmp", "KilledWorker")
    assert (unseen.sha256, unseen.size) == (unreadable_key(str(tmp_path / "gone.dmp")), 0)
    # the hash the run took is the record's key: the dump is not read again to hash it
    assert _lost(str(dump), "poison.dmp", "KilledWorker", "ab" * 32).sha256 == "ab" * 32
