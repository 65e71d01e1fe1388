"""Every ``kd-mcp`` subcommand, given bad input, ends in one ``kd-mcp: error:`` line and its exit code.

Each case runs ``kdmcp.cli.main`` in this process, as ``python -m kdmcp`` would run it (its own
environment, stdin at end of input, SystemExit caught as the exit code; tests/cli/conftest.py): a traceback, a second
error line, or an exit code other than the documented one fails it. Starting a Python per case
cost a second of CPU each (the MCP SDK's import) and told nothing more; a few cases still run as
a real subprocess, and must say byte for byte what the in-process run says, which keeps the
in-process harness honest. The fast tier refuses a process or a listener, so a case that would
start one fails here unless it is marked (the one that needs a port another socket listens on).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdmcp.cli import EXIT_CHECK_FAILED, EXIT_CODES, EXIT_ENVIRONMENT, EXIT_USAGE, build_parser
from tests.cli.conftest import Ran, RunMain

TOKEN = "selftest-token-0123456789abcdef0123"
KEY = "1.2.3.4"

# (subcommand path, arguments, exit code). ``{tmp}`` is a fresh directory, ``{file}`` a regular
# file in it (so ``{file}/x`` is a path under a file), ``{port}`` a port another socket holds.
CASES: list[tuple[str, list[str], int]] = [
    ("(top level)", ["--bogus"], EXIT_USAGE),
    ("serve", ["serve", "--log-level", "LOUD"], EXIT_USAGE),
    ("serve", ["serve", "--tools", "session,bogus"], EXIT_USAGE),
    # A file the command line names that is not there: EXIT_ENVIRONMENT, whichever option named it.
    ("serve", ["serve", "--config", "{tmp}/missing.yaml"], EXIT_ENVIRONMENT),
    ("serve", ["serve", "--config", "{file}"], EXIT_USAGE),  # there, but not a valid config
    ("serve", ["serve", "--simulate", "--scenario", "{tmp}/missing.yaml"], EXIT_ENVIRONMENT),
    ("serve", ["serve", "--simulate", "--listen", "nohostport"], EXIT_USAGE),
    ("serve", ["serve", "--simulate", "--listen", "127.0.0.1:99999"], EXIT_USAGE),
    ("serve", ["serve", "--simulate", "--listen", "127.0.0.1:{port}"], EXIT_ENVIRONMENT),  # needs BUSY
    ("serve", ["serve", "--simulate", "--listen", "127.0.0.1:0", "--token-file", "{tmp}/none.yaml"],
     EXIT_ENVIRONMENT),
    ("serve", ["serve", "--simulate", "--transcript", "{file}/x.jsonl"], EXIT_ENVIRONMENT),
    ("serve", ["serve", "--simulate", "--transcript", "{tmp}/no/such/folder/x.jsonl"], EXIT_ENVIRONMENT),
    ("doctor", ["doctor", "--config", "{tmp}/missing.yaml"], EXIT_ENVIRONMENT),
    ("doctor", ["doctor"], EXIT_CHECK_FAILED),  # no kd.exe here, no state file: the report, then the line
    ("doctor", ["doctor", "--simulate", "--scenario", "{file}"], EXIT_USAGE),
    ("demo", ["demo", "--scenario", "{tmp}/missing.yaml"], EXIT_ENVIRONMENT),
    ("demo", ["demo", "--scenario", "{file}"], EXIT_USAGE),
    ("selftest", ["selftest", "--debugger", "windbg"], EXIT_USAGE),
    ("selftest", ["selftest", "--debugger-path", "{tmp}/cdb.exe"], EXIT_ENVIRONMENT),
    ("selftest", ["selftest", "--simulate", "--scenario", "{tmp}/missing.yaml"], EXIT_ENVIRONMENT),
    ("selftest", ["selftest", "--simulate", "--dump", "{tmp}/missing.dmp"], EXIT_ENVIRONMENT),
    ("selftest", ["selftest", "--debugger", "kd", "--state-file", "{tmp}/none.json", "--debugger-path", "{file}"],
     EXIT_ENVIRONMENT),
    ("triage", ["triage"], EXIT_USAGE),  # no PATH
    ("triage", ["triage", "--simulate", "{tmp}/missing"], EXIT_ENVIRONMENT),
    ("triage", ["triage", "--simulate", "--jobs", "0", "{tmp}"], EXIT_USAGE),
    ("triage", ["triage", "--config", "{tmp}/missing.yaml", "{tmp}"], EXIT_ENVIRONMENT),
    ("state", ["state"], EXIT_USAGE),
    ("state write", ["state", "write", "--guest-host", "g"], EXIT_USAGE),
    ("state write", ["state", "write", "--path", "{tmp}/s.json", "--guest-host", "g", "--host-ip", "10.0.0.1",
                     "--port", "99999"], EXIT_USAGE),
    ("state write", ["state", "write", "--path", "{tmp}/s.json", "--guest-host", "g", "--host-ip", "10.0.0.1",
                     "--port", "nine"], EXIT_USAGE),
    ("state write", ["state", "write", "--path", "{file}/s.json", "--guest-host", "g", "--host-ip", "10.0.0.1",
                     "--port", "50000"], EXIT_ENVIRONMENT),
    ("transcript", ["transcript"], EXIT_USAGE),
    ("transcript show", ["transcript", "show", "{tmp}/nonexistent"], EXIT_ENVIRONMENT),
    ("transcript show", ["transcript", "show", "{tmp}"], EXIT_ENVIRONMENT),
    ("transcript cast", ["transcript", "cast", "{tmp}/nonexistent", "-o", "{tmp}/x.cast"], EXIT_ENVIRONMENT),
    ("transcript cast", ["transcript", "cast", "{file}"], EXIT_USAGE),
    ("transcript cast", ["transcript", "cast", "{transcript}", "-o", "{file}/x.cast"], EXIT_ENVIRONMENT),
    ("watch", ["watch", "--once", "--transcript", "{tmp}/none.jsonl"], EXIT_ENVIRONMENT),
    ("watch", ["watch", "--once", "--transcript", "{tmp}"], EXIT_ENVIRONMENT),
    ("watch", ["watch", "--lines", "0"], EXIT_USAGE),
    ("parse", ["parse", "/nonexistent"], EXIT_ENVIRONMENT),
    ("parse", ["parse", "{tmp}"], EXIT_ENVIRONMENT),
    ("parse", ["parse", "--bogus"], EXIT_USAGE),
    ("sim", ["sim"], EXIT_USAGE),
    ("sim", ["sim", "windbg"], EXIT_USAGE),
    ("sim", ["sim", "kd", "-kl", "--scenario", "{tmp}/missing.yaml"], EXIT_ENVIRONMENT),
]


# Cases that need a port another socket listens on: the listener makes them process tier.
NEEDS_A_LISTENER = {n for n, case in enumerate(CASES) if any("{port}" in arg for arg in case[1])}
# Cases run as a real ``python -m kdmcp`` too, one per way an error reaches the line: argparse
# (top level and a subcommand), a KdMcpError of each exit code, an OSError, and the simulator's own.
THROUGH_A_SUBPROCESS = ("--bogus", "serve --log-level LOUD", "serve --simulate --scenario {tmp}/missing.yaml",
                        "demo --scenario {tmp}/missing.yaml",
                        "state write --path {file}/s.json --guest-host g --host-ip 10.0.0.1 --port 50000",
                        "parse /nonexistent", "sim kd -kl --scenario {tmp}/missing.yaml")


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port another socket is listening on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _expand(args: list[str], tmp: Path, port: int) -> list[str]:
    file = tmp / "plain.txt"
    file.write_text("not: [a scenario\n")
    transcript = tmp / "t.jsonl"
    transcript.write_text('{"t": 1.0, "kind": "request", "tool": "break_in", "args": {}}\n')
    values = {"{tmp}": str(tmp), "{file}": str(file), "{port}": str(port), "{transcript}": str(transcript)}
    out = []
    for arg in args:
        for name, value in values.items():
            arg = arg.replace(name, value)
        out.append(arg)
    return out


def _env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "KDMCP_LISTEN_TOKEN": TOKEN, "KDMCP_KDNET_KEY": KEY, "XDG_CONFIG_HOME": str(tmp),
           "KDMCP_STATE_FILE": str(tmp / "none.json"), "COLUMNS": "200"}
    env.pop("KDMCP_CONFIG", None)
    env.pop("KDMCP_TRACEBACK", None)
    return env


def _run_subprocess(args: list[str], tmp: Path, port: int) -> Ran:
    done = subprocess.run([sys.executable, "-m", "kdmcp", *_expand(args, tmp, port)],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False, env=_env(tmp))
    return Ran(done.returncode, done.stdout.decode("utf-8", errors="replace"),
               done.stderr.decode("utf-8", errors="replace"))


def _assert_one_error_line(command: str, done: Ran, code: int) -> None:
    errors = [line for line in done.stderr.splitlines() if line.startswith("kd-mcp: error:")]
    assert "Traceback" not in done.stderr, done.stderr
    assert len(errors) == 1, done.stderr
    assert done.returncode == code, (command, done.stderr)
    assert code in EXIT_CODES


@pytest.mark.parametrize("case", [
    pytest.param(n, marks=[pytest.mark.process] if n in NEEDS_A_LISTENER else [], id=" ".join(c[1]))
    for n, c in enumerate(CASES)
])
def test_bad_input_is_one_error_line_and_the_documented_code(
    request: pytest.FixtureRequest, tmp_path: Path, run_main: RunMain, case: int
) -> None:
    command, args, code = CASES[case]
    port = request.getfixturevalue("busy_port") if case in NEEDS_A_LISTENER else 0
    _assert_one_error_line(command, run_main(*_expand(args, tmp_path, port), env=_env(tmp_path)), code)


@pytest.mark.process
def test_the_real_command_says_what_the_in_process_run_says(tmp_path: Path, run_main: RunMain) -> None:
    """A sample of the cases through ``python -m kdmcp``: same code, same error line, no traceback."""
    by_line = {" ".join(case[1]): n for n, case in enumerate(CASES)}
    for n in (by_line[line] for line in THROUGH_A_SUBPROCESS):
        command, args, code = CASES[n]
        tmp = tmp_path / f"case{n}"
        tmp.mkdir()
        real = _run_subprocess(args, tmp, 0)
        _assert_one_error_line(command, real, code)
        in_process = run_main(*_expand(args, tmp, 0), env=_env(tmp))
        said = [line for line in real.stderr.splitlines() if line.startswith("kd-mcp: error:")]
        assert in_process.returncode == real.returncode, command
        assert [line for line in in_process.stderr.splitlines() if line.startswith("kd-mcp: error:")] == said


def test_every_subcommand_has_a_bad_input_case() -> None:
    """A subcommand added to the parser without a case here fails this."""
    parser = build_parser()
    commands: set[str] = set()

    def walk(p: argparse.ArgumentParser, prefix: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    path = f"{prefix} {name}".strip()
                    commands.add(path)
                    walk(child, path)

    walk(parser, "")
    assert commands <= {case[0] for case in CASES}


def test_help_documents_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for code, meaning in EXIT_CODES.items():
        assert f"{code} {' '.join(meaning.split())}" in text


@pytest.mark.process
def test_port_in_use_names_the_address(busy_port: int) -> None:
    env = {**os.environ, "KDMCP_LISTEN_TOKEN": TOKEN}
    done = subprocess.run([sys.executable, "-m", "kdmcp", "--simulate", "--listen", f"127.0.0.1:{busy_port}"],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False, env=env)
    assert done.returncode == EXIT_ENVIRONMENT
    assert done.stderr.decode().strip().endswith("holds it)")
    assert f"cannot listen on 127.0.0.1:{busy_port}" in done.stderr.decode()
    assert b"Errno" not in done.stderr


def test_a_transcript_folder_that_is_not_there_is_not_made(tmp_path: Path, run_main: RunMain) -> None:
    done = run_main("serve", "--simulate", "--transcript", str(tmp_path / "typo" / "x.jsonl"), env=_env(tmp_path))
    assert done.returncode == EXIT_ENVIRONMENT
    assert "no such folder for the transcript" in done.stderr
    assert not (tmp_path / "typo").exists()


def test_doctor_prints_its_report_on_stdout_and_the_verdict_as_the_error_line(tmp_path: Path,
                                                                              run_main: RunMain) -> None:
    done = run_main("doctor", env=_env(tmp_path))
    assert "doctor" in done.stdout and "kd.exe" in done.stdout  # the report: stdout
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("kd-mcp: error:")]
    assert line.startswith("kd-mcp: error: doctor found a problem: kd.exe not found")
    assert "kd.exe" not in done.stderr.replace(line, "")

