"""A run end to end on the simulator: failures are records, a rerun resumes, nothing is counted twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kdmcp.triage.models import DumpRecord
from kdmcp.triage.run import triage_run
from kdmcp.triage.store import ResultStore
from tests.triage.helpers import KERNEL, USER, distinct_copies, sim_spec

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]


def _corpus(folder: Path, count: int) -> list[Path]:
    dumps = distinct_copies(folder, count)
    (folder / "cut.dmp").write_bytes(USER[0].read_bytes()[:3000])
    (folder / "junk.dmp").write_text("not a dump")
    (folder / "same-as-first.dmp").write_bytes(dumps[0].read_bytes())
    return dumps


def test_a_run_records_every_dump_and_buckets_them(tmp_path: Path) -> None:
    dumps = _corpus(tmp_path / "d", 8)
    seen: list[tuple[int, int]] = []
    hashed: list[tuple[int, int]] = []

    def progress(done: int, total: int, record: DumpRecord | None) -> None:
        if record is None:
            assert not seen, "a dump hashed after the first was triaged"
        (hashed if record is None else seen).append((done, total))

    summary = triage_run([str(tmp_path / "d")], sim_spec(), out=str(tmp_path / "run.jsonl"), jobs=2,
                         progress=progress)
    assert summary.dumps == len(dumps) + 2 and summary.same_content == 1
    assert summary.failed == {"not_a_dump": 1, "truncated": 1}
    assert sum(b.count for b in summary.buckets) + summary.more_dumps == summary.bucketed == len(dumps)
    assert sorted(seen) == [(n, len(dumps) + 2) for n in range(1, len(dumps) + 3)]
    assert hashed == [(n, len(dumps) + 3) for n in range(1, len(dumps) + 4)]  # every file found, the copy too
    kernel = next(b for b in summary.buckets if b.key == "AV_myfault!unknown_function")
    assert kernel.count == 2 and kernel.frames[0] == "myfault+0x1981"  # 8 copies of 7 fixtures: the kernel one twice
    assert len(list(ResultStore(summary.records).records())) == summary.dumps


def test_a_rerun_with_everything_done_still_shows_the_hashing(tmp_path: Path) -> None:
    junk = [tmp_path / f"junk{n}.dmp" for n in range(3)]
    for n, path in enumerate(junk):
        path.write_text(f"not a dump {n}")
    out = str(tmp_path / "r.jsonl")
    triage_run([str(p) for p in junk], sim_spec(), out=out)
    seen: list[tuple[int, int, DumpRecord | None]] = []
    again = triage_run([str(p) for p in junk], sim_spec(), out=out,
                       progress=lambda done, total, record: seen.append((done, total, record)))
    assert again.done_before == 3 and seen == [(1, 3, None), (2, 3, None), (3, 3, None)]


def test_a_cancelled_run_resumes_and_counts_nothing_twice(tmp_path: Path) -> None:
    _corpus(tmp_path / "d", 10)
    out = str(tmp_path / "run.jsonl")
    cancel = threading.Event()

    def stop_after_three(done: int, total: int, record: DumpRecord | None) -> None:
        if record is not None and done >= 3:
            cancel.set()

    first = triage_run([str(tmp_path / "d")], sim_spec(), out=out, jobs=1, cancel=cancel, progress=stop_after_three)
    assert 3 <= first.dumps < 12 and first.not_done == 12 - first.dumps
    again = triage_run([str(tmp_path / "d")], sim_spec(), out=out, jobs=2)
    assert again.done_before == first.dumps and again.dumps == 12 and again.not_done == 0
    shas = [r.sha256 for r in ResultStore(out).records()]
    assert len(shas) == len(set(shas)) == 12


@pytest.mark.skipif(os.name == "nt", reason="kills a process group (POSIX)")
def test_a_killed_cli_run_resumes_past_its_torn_last_line(tmp_path: Path) -> None:
    """The CLI killed (with its debuggers, SIGKILL to its process group) after a few records, a torn
    line added as a kill mid-write leaves one; the same command finishes the rest, each dump once."""
    _corpus(tmp_path / "d", 8)
    out = tmp_path / "run.jsonl"
    argv = [sys.executable, "-m", "kdmcp", "triage", "--simulate", str(tmp_path / "d"), "--out", str(out),
            "--jobs", "1", "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and first.poll() is None:
            if out.exists() and out.read_text().count("\n") >= 3:
                break
            time.sleep(0.05)  # polling the file the run appends to, bounded by the deadline
        assert out.read_text().count("\n") >= 3, "the run wrote no records"
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    kept = out.read_text().count("\n")
    assert kept < 10, "the run finished before it was killed"
    with open(out, "a") as f:
        f.write('{"name":"torn')
    second = subprocess.run([*argv[:-3], "--jobs", "2", "--json"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert second.returncode == 0, second.stderr
    summary = json.loads(second.stdout)
    assert summary["done_before"] == kept and summary["dumps"] == 10 and summary["same_content"] == 1
    shas = [r.sha256 for r in ResultStore(str(out)).records()]
    assert len(shas) == len(set(shas)) == 10
    assert all(line.startswith("{") and line.endswith("}") for line in out.read_text().splitlines())


def test_a_rerun_retries_the_failures_of_the_machine_and_keeps_those_of_the_file(tmp_path: Path) -> None:
    """No kd configured: the kernel dump fails (debugger_error), the user one is cdb's. Rerun with
    kd there: the kernel dump is done again and its record replaced; the junk file stays not_a_dump."""
    junk = tmp_path / "junk.dmp"
    junk.write_text("not a dump")
    paths, out = [str(KERNEL), str(USER[0]), str(junk)], str(tmp_path / "r.jsonl")
    spec = sim_spec().model_copy(update={"debuggers": {"cdb": sim_spec().debuggers["cdb"]}})
    summary = triage_run(paths, spec, out=out)
    assert summary.bucketed == 1 and summary.failed == {"debugger_error": 1, "not_a_dump": 1}
    failed = next(r for r in ResultStore(summary.records).records() if r.category == "debugger_error")
    assert failed.kind == "kernel" and "no kd" in (failed.error or "")
    seen: list[str] = []
    again = triage_run(paths, sim_spec(), out=out,
                       progress=lambda done, total, record: seen.append(record.name if record else "#"))
    assert seen == ["#"] * 3 + [KERNEL.name] and again.done_before == 2  # three dumps hashed, one triaged
    assert again.bucketed == 2 and again.failed == {"not_a_dump": 1}
    assert [(r.name, r.status) for r in ResultStore(out).records()] == [
        (USER[0].name, "ok"), ("junk.dmp", "failed"), (KERNEL.name, "ok")]
