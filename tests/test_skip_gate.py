"""The skip gate in tests/conftest.py: a skip for a missing fixture fails the run, a platform skip does not.

Each case is a tiny test file run by a child pytest with the suite's conftest loaded as a plugin
(``-p tests.conftest``), so what is checked is the exit status CI would see.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)

ROOT = Path(__file__).resolve().parent.parent


def run_child(tmp_path: Path, body: str, *args: str, ini: str = "") -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_child.py").write_text("import sys\n\nimport pytest\n\n\n" + body, encoding="utf-8")
    ini = "asyncio_default_fixture_loop_scope = function\n" + ini  # as pyproject.toml sets it
    (tmp_path / "pytest.ini").write_text("[pytest]\n" + ini, encoding="utf-8")
    # Not a worker of this run's xdist, if it has one: the child is a run of its own.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = str(ROOT)
    # Plugins the gate does not touch stay out: hypothesis's alone is a third of a child's start-up.
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
               "-p", "no:hypothesispytest", "-p", "no:xdist", f"--basetemp={tmp_path / 'basetemp'}", "-q", *args]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)


MISSING = (
    'def test_call():\n    pytest.skip("fixture missing: fixtures/corpus/stack/04.txt")\n\n\n'
    '@pytest.mark.skipif(True, reason="shared corpus not beside the checkout")\ndef test_mark():\n    pass\n\n\n'
    'def test_import():\n    pytest.importorskip("no_such_module_kdmcp")\n\n\n'
    'def test_plain():\n    pass\n'
)
PLATFORM = (
    '@pytest.mark.skipif(True, reason="POSIX permission bits")\ndef test_modes():\n    pass\n\n\n'
    'def test_ctrl_break():\n    pytest.skip("on Windows this would really send Ctrl+Break")\n\n\n'
    'def test_proc():\n    pytest.skip("/sys/kernel/mm/transparent_hugepage does not exist here")\n\n\n'
    '@pytest.mark.xfail(reason="a known bug")\ndef test_known():\n    assert False\n\n\n'  # an xfail is no skip
    'def test_plain():\n    pass\n'
)


def test_a_skip_for_a_missing_fixture_fails_the_run(tmp_path: Path) -> None:
    done = run_child(tmp_path, MISSING, "test_child.py")
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "1 passed, 3 skipped" in done.stdout
    named = done.stdout.split("skipped, and not for the platform")[1]
    for test in ("test_call", "test_mark", "test_import"):
        assert f"test_child.py::{test}: " in named, done.stdout


def test_a_module_skipped_at_collection_fails_the_run(tmp_path: Path) -> None:
    done = run_child(tmp_path, 'pytest.skip("corpus absent", allow_module_level=True)\n', "test_child.py")
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "test_child.py: corpus absent" in done.stdout


def test_platform_skips_pass(tmp_path: Path) -> None:
    done = run_child(tmp_path, PLATFORM, "test_child.py")
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
    assert "1 passed, 3 skipped, 1 xfailed" in done.stdout
    assert "not for the platform" not in done.stdout


CANARY_SKIP = 'def test_sweep():\n    pytest.skip("no kd-mcp output files in this run (run the whole suite)")\n'


def test_the_canary_sweep_may_skip_in_a_partial_run_only(tmp_path: Path) -> None:
    # Named on the command line: a partial run, where the sweep has nothing to look at.
    assert run_child(tmp_path, CANARY_SKIP, "test_child.py").returncode == pytest.ExitCode.OK
    # Run on the configured testpaths (bare ``pytest``, as CI runs it): the whole suite, so it fails.
    done = run_child(tmp_path, CANARY_SKIP, ini="testpaths = test_child.py\n")
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
