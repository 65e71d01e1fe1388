"""The README's client configurations start kd-mcp without assuming a PATH, with arguments it accepts.

A client starts a server with the client's own PATH (Claude Code: "ENOENT: Executable not found in
$PATH" for a bare ``kd-mcp`` that lives in a venv), so every configuration names either an
interpreter by its absolute path running ``-m kdmcp``, or ``uvx kd-mcp``; and every argument after
that must be one ``kd-mcp``'s own parser takes.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import tomllib

from kdmcp.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Client configuration\n"):README.index("## Self-test\n")]
BLOCK_RE = re.compile(r"```(?P<lang>\w*)\n(?P<body>.*?)```", re.DOTALL)
ABSOLUTE_RE = re.compile(r"(?:[A-Za-z]:\\|/)\S*python(?:3)?(?:\.exe)?")


def _launches() -> list[tuple[str, list[str]]]:
    """(command, args) of every configuration in the section."""
    found: list[tuple[str, list[str]]] = []
    for block in BLOCK_RE.finditer(SECTION):
        lang, body = block["lang"], block["body"]
        if lang == "json":
            data = json.loads(body)
            for server in (data.get("mcpServers") or data.get("servers")).values():
                found.append((server["command"], server.get("args", [])))
        elif lang == "toml":
            for server in tomllib.loads(body)["mcp_servers"].values():
                found.append((server["command"], server.get("args", [])))
        else:
            for line in body.splitlines():
                words = shlex.split(line.replace("\\", "\\\\"))
                assert words[:4] == ["claude", "mcp", "add", "kd-mcp"] and words[4] == "--", line
                found.append((words[5], words[6:]))
    return found


LAUNCHES = _launches()


def test_the_section_has_a_configuration_for_each_client() -> None:
    for client in ("Claude Code", "Claude Desktop", "Cursor", "VS Code", "Codex"):
        assert client in SECTION, client
    assert len(LAUNCHES) >= 6


@pytest.mark.parametrize(("command", "args"), LAUNCHES, ids=[" ".join([c, *a])[:60] for c, a in LAUNCHES])
def test_a_configuration_names_no_bare_executable_and_only_arguments_kd_mcp_takes(command: str,
                                                                               args: list[str]) -> None:
    if command == "uvx":
        assert args[:1] == ["kd-mcp"], args
        rest = args[1:]
    else:
        assert ABSOLUTE_RE.fullmatch(command), f"{command!r}: name the interpreter by its absolute path, or uvx"
        assert args[:2] == ["-m", "kdmcp"], args
        rest = args[2:]
    # kd-mcp with no command is `kd-mcp serve` (cli.main); argparse exits on what serve does not take
    build_parser().parse_args(["serve", *rest])


def test_the_terminal_banner_names_this_interpreter() -> None:
    # kdmcp/cli.py prints the same shape with sys.executable (tests/cli/test_terminal.py reads it)
    assert ABSOLUTE_RE.fullmatch(sys.executable) or sys.platform == "win32"
