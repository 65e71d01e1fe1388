"""triage_dump against the simulator: a record per dump, failures with categories, the debugger always stopped."""

from __future__ import annotations

import pickle
import threading
import time
from pathlib import Path

import psutil
import pytest

from kdmcp.triage.models import FAILURE_CATEGORIES, DumpRecord
from kdmcp.triage.one import Cancelled, Debuggers, file_sha256, triage_dump
from tests.triage.helpers import KERNEL, USER, fake_debugger, sim_spec

pytestmark = pytest.mark.process

NULL_READ = next(p for p in USER if p.name == "null_read_av.dmp")


def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def test_a_kernel_dump_yields_its_bugcheck_culprit_frames_and_bucket() -> None:
    before = _children()
    record = triage_dump(str(KERNEL), sim_spec(), "k.dmp")
    assert record.status == "ok" and record.kind == "kernel" and record.name == "k.dmp"
    assert record.bugcheck is not None and record.bugcheck.code == "0xd1"
    assert record.bugcheck.name == "DRIVER_IRQL_NOT_LESS_OR_EQUAL" and len(record.bugcheck.args) == 4
    # the culprit skips nt!KeBugCheckEx / KiBugCheckDispatch / KiPageFault
    assert (record.module, record.function, record.offset) == ("myfault", None, "0x1981")
    assert record.frames[0] == "nt!KeBugCheckEx" and len(record.frames) == 8
    assert record.failure_bucket == record.bucket_key == "AV_myfault!unknown_function"
    assert record.process == "notmyfault64.exe" and len(record.stack_hash) == 16
    assert record.sha256 == file_sha256(str(KERNEL)) and record.size == KERNEL.stat().st_size
    assert _children() <= before  # the debugger is gone


def test_a_user_dump_yields_its_exception_and_bucket() -> None:
    record = triage_dump(str(NULL_READ), sim_spec(frames=3))
    assert record.status == "ok" and record.kind == "user" and record.name == "null_read_av.dmp"
    assert record.exception is not None
    assert (record.exception.code, record.exception.description) == ("0xc0000005", "Access violation")
    assert record.frames == ["crashme+0xa6cd", "crashme+0x83d8", "crashme+0x821f"]
    assert record.bucket_key == "NULL_POINTER_READ_c0000005_crashme.exe!Unknown"
    assert record.thread == "4a8" and record.process == "crashme.exe"


def test_without_analyze_the_key_is_the_stop_class_and_culprit() -> None:
    record = triage_dump(str(KERNEL), sim_spec(analyze=False))
    assert record.failure_bucket is None and record.bucket_key == "0xd1 myfault+0x1981"
    user = triage_dump(str(NULL_READ), sim_spec(analyze=False))
    assert user.bucket_key == "0xc0000005 crashme+0xa6cd"


def test_per_dump_failures_are_records_with_categories(tmp_path: Path) -> None:
    cut = tmp_path / "cut.dmp"
    cut.write_bytes(NULL_READ.read_bytes()[:3000])
    text = tmp_path / "notes.txt"
    text.write_text("not a dump")
    spec = sim_spec()
    got = {p.name: triage_dump(str(p), spec) for p in (cut, text, tmp_path / "gone.dmp")}
    assert {name: r.category for name, r in got.items()} == {
        "cut.dmp": "truncated", "notes.txt": "not_a_dump", "gone.dmp": "unreadable"}
    for r in got.values():
        assert r.status == "failed" and r.bucket_key == f"failed:{r.category}" and "\n" not in (r.error or "")
    assert set(FAILURE_CATEGORIES) >= {r.category for r in got.values()}


def test_a_hung_debugger_is_a_timeout_record_and_is_killed(tmp_path: Path) -> None:
    before = _children()
    spec = sim_spec(timeout_s=1.5).model_copy(update={"debuggers": {"cdb": fake_debugger(tmp_path, "hang")}})
    t0 = time.monotonic()
    record = triage_dump(str(NULL_READ), spec)
    assert record.status == "failed" and record.category == "debugger_timeout", record
    assert time.monotonic() - t0 < 1.5 + 15  # the timeout, and the stop's own bound
    assert _children() <= before


def test_a_debugger_that_dies_is_a_debugger_error(tmp_path: Path) -> None:
    spec = sim_spec().model_copy(update={"debuggers": {"cdb": fake_debugger(tmp_path, "die")}})
    record = triage_dump(str(NULL_READ), spec)
    assert record.category == "debugger_error" and "HRESULT 0x80004005" in (record.error or "")
    missing = sim_spec().model_copy(update={"debuggers": {"kd": ["/no/such/kd.exe"]}})
    assert triage_dump(str(KERNEL), missing).category == "debugger_error"


def test_cancel_stops_the_open_debugger_and_yields_no_record(tmp_path: Path) -> None:
    spec = sim_spec(timeout_s=60).model_copy(update={"debuggers": {"cdb": fake_debugger(tmp_path, "hang")}})
    debuggers = Debuggers()
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["record"] = triage_dump(str(NULL_READ), spec, debuggers=debuggers)
        except Cancelled:
            box["cancelled"] = True

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 20
    while not debuggers._open and time.monotonic() < deadline:  # the debugger is open: wait on it, bounded
        worker.join(0.05)
    debuggers.cancel()
    worker.join(30)
    assert not worker.is_alive() and box == {"cancelled": True}


def test_records_and_specs_survive_pickling() -> None:
    spec = sim_spec()
    record = triage_dump(str(NULL_READ), spec)
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert pickle.loads(pickle.dumps(record)) == record
    assert DumpRecord.model_validate_json(record.model_dump_json()) == record
