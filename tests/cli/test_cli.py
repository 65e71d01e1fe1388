"""The ``kd-mcp`` entry point."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kdmcp import __version__
from kdmcp.cli import main


def test_version_and_bare_invocation(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"kd-mcp {__version__}"
    assert main([]) == 2
    assert "sim" in capsys.readouterr().err


def test_sim_subcommand_runs_the_simulator():
    done = subprocess.run(
        [sys.executable, "-c", "from kdmcp.cli import main; raise SystemExit(main())",
         "sim", "kd", "-b", "-k", "net:port=50000,key=1.2.3.4"],
        input=b".echo from the cli\nq\n", capture_output=True, timeout=30, check=False,
    )
    assert done.returncode == 0
    assert b"0: kd> from the cli\r\n0: kd> quit:\r\n" in done.stdout
