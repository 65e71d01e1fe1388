"""``kd-mcp watch`` on the command line: where the transcript comes from, and its one error line."""

from __future__ import annotations

import os

import pytest

from kdmcp.cli import EXIT_ENVIRONMENT, EXIT_OK, EXIT_USAGE
from tests.cli.conftest import RunMain
from tests.watch.helpers import write_transcript


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KDMCP_TRANSCRIPT"}
    return {**env, "COLUMNS": "120", **extra}


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("kd-mcp: error:")]


def test_once_prints_a_frame_of_the_transcript_named(tmp_path, run_main: RunMain):
    path = write_transcript(tmp_path)
    done = run_main("watch", "--once", "--lines", "3", "--transcript", str(path), env=_env())
    assert done.returncode == EXIT_OK, done.stderr
    assert "server pid 4242" in done.stdout and "s1 console — last 3 of" in done.stdout and '"lm"' in done.stdout


def test_the_servers_variable_names_the_transcript_and_a_session_can_be_chosen(tmp_path, run_main: RunMain):
    path = write_transcript(tmp_path)
    done = run_main("watch", "s1", "--once", env=_env(KDMCP_TRANSCRIPT=str(path)))
    assert done.returncode == EXIT_OK and "s1 console" in done.stdout
    other = run_main("watch", "s9", "--once", env=_env(KDMCP_TRANSCRIPT=str(path)))
    assert other.returncode == EXIT_OK and "no session s9 (sessions: s1)" in other.stdout


def test_no_transcript_named_says_how_to_start_the_server_with_one(run_main: RunMain):
    done = run_main("watch", "--once", env=_env())
    assert done.returncode == EXIT_USAGE
    (line,) = _error_lines(done.stderr)
    assert "kd-mcp serve --transcript PATH" in line and "KDMCP_TRANSCRIPT" in line


def test_a_missing_transcript_is_one_line_saying_how_to_start_the_server_with_one(tmp_path, run_main: RunMain):
    done = run_main("watch", "--once", "--transcript", str(tmp_path / "run.jsonl"), env=_env())
    assert done.returncode == EXIT_ENVIRONMENT and done.stdout == ""
    (line,) = _error_lines(done.stderr)
    assert f"no transcript at {tmp_path / 'run.jsonl'}: start the server with one (kd-mcp serve --transcript" in line


@pytest.mark.skipif(os.name != "posix", reason="modes are POSIX; Windows files carry the directory's ACL")
def test_a_transcript_others_may_read_is_refused(tmp_path, run_main: RunMain):
    path = write_transcript(tmp_path)
    path.chmod(0o644)
    done = run_main("watch", "--once", "--transcript", str(path), env=_env())
    assert done.returncode == EXIT_ENVIRONMENT and done.stdout == ""
    (line,) = _error_lines(done.stderr)
    assert f"refusing to read {path}: others may read or write it (mode 0644)" in line and "chmod 600" in line


@pytest.mark.parametrize("lines", ["0", "-3", "many"])
def test_lines_must_be_a_positive_number(tmp_path, run_main: RunMain, lines: str):
    done = run_main("watch", "--once", "--lines", lines, "--transcript", str(tmp_path / "t"), env=_env())
    assert done.returncode == EXIT_USAGE and len(_error_lines(done.stderr)) == 1
