"""``kd-mcp --simulate`` typed at a terminal: it says what it is, and Ctrl+C ends it."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)

pexpect = pytest.importorskip("pexpect", reason="needs a POSIX pty (pexpect)")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty (pexpect)")
def test_simulate_on_a_terminal_explains_itself_and_ends_on_ctrl_c() -> None:
    child = pexpect.spawn(sys.executable, ["-m", "kdmcp", "--simulate"], timeout=30, encoding="utf-8")
    try:
        child.expect(r"Ctrl\+C \(or Ctrl\+D\) ends it")
        said = " ".join(child.before.split())
        assert "MCP server for the simulated kd.exe/cdb.exe" in said
        # the interpreter by its absolute path: a client's PATH need not hold the venv
        assert f"claude mcp add kd-mcp -- {sys.executable} -m kdmcp --simulate" in said
        assert f'"command": {json.dumps(sys.executable)}, "args": ["-m", "kdmcp", "--simulate"]' in said
        if sys.platform.startswith("linux"):  # Ctrl+C can only work if SIGINT is neither ignored nor blocked
            status = dict(line.split(":\t", 1) for line in Path(f"/proc/{child.pid}/status").read_text().splitlines()
                          if ":\t" in line)
            sigint = 1 << (2 - 1)
            assert not int(status["SigIgn"], 16) & sigint, status["SigIgn"]
            assert not int(status["SigBlk"], 16) & sigint, status["SigBlk"]
        t0 = time.monotonic()
        child.sendintr()
        child.expect("stopping the sessions and exiting", timeout=15)
        child.expect(pexpect.EOF, timeout=15)
        assert time.monotonic() - t0 < 15
        assert "Traceback" not in child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty (pexpect)")
def test_end_of_input_on_a_terminal_ends_it_too() -> None:
    child = pexpect.spawn(sys.executable, ["-m", "kdmcp", "--simulate"], timeout=30, encoding="utf-8")
    try:
        child.expect(r"ends it")
        child.sendeof()
        child.expect(pexpect.EOF, timeout=15)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
