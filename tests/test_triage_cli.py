"""``kd-mcp triage``: the progress bar and the bucket table, --json for scripts, and every failure one error line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kdmcp.triage.models import DumpRecord
from kdmcp.triage.run_lock import run_lock
from kdmcp.triage_cli import describe

pytestmark = pytest.mark.process  # runs the CLI (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[1]
DUMPS = ROOT / "fixtures" / "dumps"


def _run(tmp: Path, *args: str, **more_env: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("KDMCP_")}
    env |= {"XDG_CONFIG_HOME": str(tmp), "COLUMNS": "160", "PYTHONPATH": str(ROOT), **more_env}
    return subprocess.run([sys.executable, "-m", "kdmcp", "triage", *args], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)


def test_the_table_then_json_from_the_same_records(tmp_path: Path) -> None:
    # rich draws its bar where stderr is a terminal: TTY_COMPATIBLE says it is one (NO_COLOR: plain text)
    table = _run(tmp_path, "--simulate", str(DUMPS / "null_read_av.dmp"), str(DUMPS / "kernel-header-only.dmp"),
                 TTY_COMPATIBLE="1", NO_COLOR="1")
    assert table.returncode == 0, table.stderr
    frames = table.stderr.replace("\r", "\n")  # redrawn in place, 10 times a second, and once at the end:
    assert re.search(r"triage .* 2/2 .* (null_read_av|kernel-header-only)\.dmp: ", frames), frames[-500:]
    assert "2 dumps: 2 in 2 buckets" in table.stdout
    assert "NULL_POINTER_READ_c0000005_crashme.exe!Unknown" in table.stdout
    assert f"records: {tmp_path / 'triage.jsonl'}" in table.stdout  # the default --out, in the current folder
    again = _run(tmp_path, "--simulate", str(DUMPS / "null_read_av.dmp"), str(DUMPS / "kernel-header-only.dmp"),
                 "--json")
    summary = json.loads(again.stdout)
    assert summary["done_before"] == 2 and summary["dumps"] == 2 and len(summary["buckets"]) == 2


@pytest.mark.parametrize(("args", "code", "says"), [
    (["--simulate", "nowhere"], 3, "invalid_argument: paths: no such file or directory: nowhere"),
    (["--simulate", str(DUMPS), "--jobs", "0"], 2, "invalid_argument: --jobs: from 1 to 64"),
    # no port: distributed would raise from a thread it leaves running, and the command never end
    (["--simulate", str(DUMPS), "--scheduler", "tcp://sched"], 2, "invalid_argument: scheduler: an address such"),
    (["--simulate", "--config", "{tmp}/roots.yaml", str(DUMPS)], 2, "policy_denied: path: outside the directories"),
    (["--simulate", str(DUMPS), "--out", "{tmp}"], 2, "invalid_argument: --out: {tmp} is a directory"),
])
def test_every_failure_is_one_error_line(tmp_path: Path, args: list[str], code: int, says: str) -> None:
    (tmp_path / "roots.yaml").write_text(f"dump_roots: [{json.dumps(str(tmp_path))}]\n")
    done = _run(tmp_path, *[a.replace("{tmp}", str(tmp_path)) for a in args])
    errors = [line for line in done.stderr.splitlines() if line.startswith("kd-mcp: error:")]
    assert done.returncode == code and len(errors) == 1 and says.replace("{tmp}", str(tmp_path)) in errors[0], \
        done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_second_process_on_the_same_out_is_busy_at_once(tmp_path: Path) -> None:
    out = tmp_path / "fleet.jsonl"
    with run_lock(str(out)):  # this process's run holds it; the CLI is another process
        done = _run(tmp_path, "--simulate", str(DUMPS / "null_read_av.dmp"), "--out", str(out))
    errors = [line for line in done.stderr.splitlines() if line.startswith("kd-mcp: error:")]
    assert done.returncode == 3 and len(errors) == 1, done.stderr
    assert f"busy: out: {out} is being written by another triage run" in errors[0]
    assert not out.exists() and not (tmp_path / "fleet.jsonl.lock").exists()  # nothing written, nothing left


def test_the_bar_says_hashing_before_any_dump_is_triaged() -> None:
    # rich redraws 10 times a second: a small run's hashing is over before a frame, so the text is checked here
    assert describe(3, 1000, None) == "hashing 3/1000"
    record = DumpRecord(name="a.dmp", path="/d/a.dmp", sha256="0" * 64, size=1, status="ok",
                        bucket_key="0xd1 x!y", stack_hash="0" * 16, seconds=1.0)
    assert describe(1, 999, record) == "a.dmp: 0xd1 x!y"
