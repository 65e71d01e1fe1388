"""Every command the README shows is run here, or names the test that runs it.

The README is the first thing a user follows: a command that no longer works there is a broken
promise (issue 31 found 4 of 13 concrete claims false). Each command is found in the README's
text — inline code and the lines of plain code blocks that start with a program the project
ships or uses — and must be in ``RUN`` (run here, as ``python -m kdmcp``, with the placeholders
filled in and the exit code the README promises on this machine) or in ``COVERED`` (run by
another test or by CI itself, which is named and must exist). A command added to the README
without either fails ``test_every_command_the_readme_shows_is_run_or_covered``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # runs the commands (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PROGRAMS = ("kd-mcp", "python", "pytest", "pip", "pipx", "uvx", "npm", "claude")
INLINE_RE = re.compile(r"`((?:{})(?=[ `])[^`]*)`".format("|".join(re.escape(p) for p in PROGRAMS)))
BLOCK_RE = re.compile(r"^```\n(.*?)^```", re.DOTALL | re.MULTILINE)

# command as the README shows it -> (arguments of `python -m kdmcp`, or a script and its arguments,
# exit code on this machine).
# {tmp} is a fresh folder, {state} a state file written there, {sample} a real kd output, {dumps} the fixture dumps.
RUN: dict[str, tuple[list[str], int]] = {
    "kd-mcp": ([], 0),  # the stdio server: end of input ends it
    "kd-mcp --simulate": (["--simulate"], 0),
    "kd-mcp --help": (["--help"], 0),
    "kd-mcp doctor": (["doctor"], 1),  # no kd.exe on this machine: the report says what to do, exit 1
    "kd-mcp selftest": (["selftest"], 3),  # no debugger here: one error line, exit 3
    "kd-mcp demo": (["demo"], 0),
    "kd-mcp watch": (["watch", "--once", "--transcript", "{tmp}/run.jsonl"], 3),  # no transcript yet: says how
    "kd-mcp serve --transcript ~/kd-mcp/run.jsonl": (["serve", "--simulate", "--transcript", "{tmp}/run.jsonl"], 0),
    "kd-mcp serve --listen 127.0.0.1:8765": (["serve", "--simulate", "--listen", "127.0.0.1:8765", "--help"], 0),
    "kd-mcp parse FILE [--command CMD]": (["parse", "{sample}", "--command", "k"], 0),
    "kd-mcp triage PATH… [--jobs N] [--scheduler ADDRESS] [--out FILE] [--json]": (
        ["triage", "--simulate", "{dumps}", "--jobs", "2", "--out", "{tmp}/t.jsonl", "--json"], 0),
    "kd-mcp state write": (["state", "write", "--path", "{tmp}/s.yaml", "--guest-host", "guest", "--host-ip",
                            "192.0.2.1", "--port", "50000"], 0),
    "python scripts/bench.py": (["scripts/bench.py", "--policy", "--quick", "--json"], 0),  # its quick section
    "kd-mcp state write --guest-host … --host-ip … --port …": (
        ["state", "write", "--path", "{tmp}/t.yaml", "--guest-host", "guest", "--host-ip", "192.0.2.1", "--port",
         "50001"], 0),
}
# command -> the test (or CI step) that runs it; the file must exist.
COVERED: dict[str, str] = {
    "pip install -e \".[dev]\"": ".ci/run",
    "pytest": ".ci/run",
    "kd-mcp triage": "tests/test_triage_cli.py",  # named in the docs list; its forms are run there
    "kd-mcp selftest --simulate": "tests/cli/test_selftest.py",  # the README's sample is held to a run there
    "uvx --from dist/kd_mcp-0.1.0-py3-none-any.whl kd-mcp --simulate": "tests/interop/test_packaging.py",
    "pytest -m \"not process\"": "tests/tiers.py",
    "npm ci --prefix tests/interop": ".ci/run",
    "python -m build": "tests/interop/test_packaging.py",
    "python scripts/build_mcpb.py": "tests/interop/test_mcpb.py",
    "python -m kdmcp": "tests/test_readme_clients.py",
    "python -m venv .venv && . .venv/bin/activate": ".ci/run",
    "pip install kd-mcp": "tests/interop/test_packaging.py",  # the wheel, installed and served
    "pipx install kd-mcp": "tests/interop/test_packaging.py",
    "uvx kd-mcp": "tests/interop/test_packaging.py",
    "uvx": "tests/test_readme_clients.py",  # named as the other way to start it, no PATH assumed
    "pipx install dist/kd_mcp-0.1.0-py3-none-any.whl": "tests/interop/test_packaging.py",
    "claude mcp add kd-mcp -- C:\\kd-mcp\\.venv\\Scripts\\python.exe -m kdmcp": "tests/test_readme_clients.py",
    "claude mcp add kd-mcp -- uvx kd-mcp": "tests/test_readme_clients.py",
}


def shown() -> set[str]:
    """The commands in the README: inline code, and plain code blocks' command lines (comments cut)."""
    found = {" ".join(m.group(1).split()) for m in INLINE_RE.finditer(README)}
    for block in BLOCK_RE.finditer(README):
        for line in block.group(1).splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith(PROGRAMS) and not line.startswith("kd-mcp selftest ("):  # a report's title
                found.add(" ".join(line.split()))
    return found


def test_every_command_the_readme_shows_is_run_or_covered() -> None:
    unknown = sorted(shown() - RUN.keys() - COVERED.keys())
    assert not unknown, f"README commands neither run nor covered (add them to RUN or COVERED): {unknown}"
    for where in COVERED.values():
        assert (ROOT / where).exists(), where


def _env(tmp: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("KDMCP_")}
    return {**env, "KDMCP_KDNET_KEY": "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0",
            "KDMCP_STATE_FILE": str(tmp / "none.json"), "XDG_CONFIG_HOME": str(tmp), "COLUMNS": "200"}


@pytest.mark.parametrize("command", sorted(RUN), ids=sorted(RUN))
def test_a_readme_command_does_what_the_readme_says(command: str, tmp_path: Path) -> None:
    if command not in shown():
        pytest.fail(f"{command!r} is no longer in the README: remove it from RUN")
    args, code = RUN[command]
    sample = ROOT / "fixtures" / "corpus" / "stack" / "01.txt"
    dumps = ROOT / "fixtures" / "dumps"
    args = [a.replace("{tmp}", str(tmp_path)).replace("{sample}", str(sample)).replace("{dumps}", str(dumps))
            for a in args]
    argv = [str(ROOT / args[0]), *args[1:]] if args and args[0].endswith(".py") else ["-m", "kdmcp", *args]
    done = subprocess.run([sys.executable, *argv], cwd=tmp_path, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, check=False, env=_env(tmp_path))
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, (command, done.returncode, done.stderr[-2000:])
    if code != 0:  # every failure is one error line (README, "Exit codes")
        assert len([ln for ln in done.stderr.splitlines() if ln.startswith("kd-mcp: error:")]) == 1, done.stderr
