"""``kd-mcp selftest --simulate``: the report, its verdicts, and the README's copy of it.

The runs that start debuggers are real ``python -m kdmcp selftest`` children (process tier); the
refusal that starts nothing and the README check run in this process (fast tier).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kdmcp.cli import EXIT_CHECK_FAILED, EXIT_ENVIRONMENT, EXIT_OK
from tests.cli.conftest import RunMain

process = pytest.mark.process  # starts processes (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[2]
VERDICT = re.compile(r"^(PASS|FAIL|SKIP)  (.+?) \[(.+?)\]: (.*)$", re.MULTILINE)
CHECKS = {"start and prompt detection", "command round trip", "pipe buffering (answers not held back)",
          "marker completion", "1 MB capture", "continue latency", "break-in (console break delivery) latency",
          "stop"}


def _env() -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("KDMCP_CONFIG", None)
    return env


def selftest(*args: str) -> subprocess.CompletedProcess[str]:
    env = _env()
    return subprocess.run([sys.executable, "-m", "kdmcp", "selftest", *args], capture_output=True, text=True,
                          timeout=180, check=False, stdin=subprocess.DEVNULL, env=env)


@process
def test_selftest_on_the_simulator_passes_every_check() -> None:
    done = selftest("--simulate")
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    report = done.stdout
    for field in ("kd-mcp", "python", "platform", "debugger", "command", "backends"):
        assert re.search(rf"^  {field} +\S", report, re.MULTILINE), field
    verdicts = VERDICT.findall(report)
    assert {name for _, name, _, _ in verdicts} == CHECKS
    assert {mark for mark, _, _, _ in verdicts} == {"PASS"}
    assert len({variant for _, _, variant, _ in verdicts}) == 2  # a console and pipes
    capture = next(figures for _, name, _, figures in verdicts if name == "1 MB capture")
    assert "16384/16384 lines" in capture
    assert re.search(r"result: \d+ passed, 0 failed, 0 skipped", report)
    assert "Traceback" not in done.stderr
    # The README's sample is this report, but for figures, paths and the machine: a change to
    # what a check says (or to the checks) fails here until the README shows a fresh run.
    assert _shape(_readme_sample()) == _shape(report)


def _readme_sample() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Self-test", 1)[1].split("\n## ", 1)[0]
    return section.split("```\n", 2)[1]


def _shape(report: str) -> list[str]:
    """The report without what differs between runs and machines: figures, paths, the platform."""
    lines = []
    for line in report.strip().splitlines():
        line = re.sub(r"^  (python|platform|debugger|command) .*", r"  \1 ...", line)
        line = re.sub(r"'\d+:\d+> '", "'PROMPT'", line)
        lines.append(re.sub(r"\d+(?:[.,]\d+)*", "N", line))
    return lines


@process
def test_selftest_of_kd_on_the_simulated_guest_passes() -> None:
    done = selftest("--simulate", "--debugger", "kd")
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert "prompt '0: kd> '" in done.stdout


@process
def test_a_failed_check_fails_the_run_with_the_reason_in_the_report(tmp_path: Path) -> None:
    not_a_dump = tmp_path / "crash.dmp"
    not_a_dump.write_text("not a dump\n")
    done = selftest("--simulate", "--dump", str(not_a_dump))
    assert done.returncode == EXIT_CHECK_FAILED
    assert "FAIL  start and prompt detection" in done.stdout
    assert "Could not open dump file" in done.stdout
    assert re.search(r"result: 0 passed, [1-9]\d* failed", done.stdout)
    # the report is printed whole, then the verdict as the one error line (stderr)
    (line,) = done.stderr.splitlines()
    assert line.startswith("kd-mcp: error: selftest: 2 of 2 checks failed: start and prompt detection [")


def test_a_debugger_that_does_not_exist_is_one_error_line(run_main: RunMain) -> None:
    done = run_main("selftest", "--debugger-path", "/nonexistent/cdb.exe", env=_env())
    assert done.returncode == EXIT_ENVIRONMENT
    assert done.stdout == ""
    assert done.stderr.splitlines() == ["kd-mcp: error: debugger: --debugger-path /nonexistent/cdb.exe: no such file"]


def test_the_readme_shows_a_report_of_the_current_checks() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Self-test", 1)[1].split("\n## ", 1)[0]
    verdicts = VERDICT.findall(section)
    assert {name for _, name, _, _ in verdicts} == CHECKS
    assert {mark for mark, _, _, _ in verdicts} == {"PASS"}
