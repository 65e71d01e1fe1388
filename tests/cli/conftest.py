"""``kd-mcp`` run in this process: ``kdmcp.cli.main`` as ``python -m kdmcp`` runs it, without the start-up.

A child Python costs about a second of CPU before ``main`` runs (the MCP SDK's import alone is
most of it) and tells a test about argument handling nothing the in-process call does not. So
tests of what a command says and returns call ``main`` here; tests/cli/test_cli.py,
test_cli_errors.py and test_terminal.py keep real ``python -m kdmcp`` runs for the path end to end.
"""

from __future__ import annotations

import io
import logging
import os
import sys
from collections.abc import Callable
from typing import NamedTuple

import pytest

from kdmcp.cli import main


class Ran(NamedTuple):
    """What ``python -m kdmcp`` would have left: its exit status and what it wrote."""

    returncode: int
    stdout: str
    stderr: str


RunMain = Callable[..., Ran]


@pytest.fixture
def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> RunMain:
    """Call ``main(argv)`` with exactly ``env`` as the environment and ``stdin`` as its input.

    SystemExit (argparse's usage errors and --help) becomes the exit status, as
    ``raise SystemExit(main())`` would make it. ``serve`` puts its own handler on the root
    logger: this process's logging is put back after, so the next test's log capture is pytest's.
    """

    def run(*argv: str, env: dict[str, str] | None = None, stdin: bytes = b"") -> Ran:
        wanted = dict(os.environ if env is None else env)
        with monkeypatch.context() as patch:
            for name in [*os.environ]:
                patch.delenv(name)
            for name, value in wanted.items():
                patch.setenv(name, value)
            patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
            root = logging.getLogger()
            handlers, level = root.handlers[:], root.level
            capsys.readouterr()
            try:
                code: object = main(list(argv))
            except SystemExit as exc:
                code = 0 if exc.code is None else exc.code
            finally:
                for handler in root.handlers[:]:
                    if handler not in handlers:
                        root.removeHandler(handler)
                        handler.close()
                for handler in handlers:
                    if handler not in root.handlers:
                        root.addHandler(handler)
                root.setLevel(level)
            out, err = capsys.readouterr()
        assert isinstance(code, int), code
        return Ran(code, out, err)

    return run
