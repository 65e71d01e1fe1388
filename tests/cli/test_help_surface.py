"""Help texts and docs that list the tool groups say what the registry (kdmcp.server.registry) says, in full."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kdmcp.cli import build_parser
from kdmcp.server.registry import tool_groups

ROOT = Path(__file__).resolve().parents[2]


def test_serve_help_lists_every_group_and_its_tools(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    listed = text.split("Groups: ", 1)[1].split(" (default: all)", 1)[0]
    groups = {name: tuple(tools.split(", ")) for name, tools in re.findall(r"(\w+) \(([^)]*)\)", listed)}
    assert groups == tool_groups()


def test_remote_listener_doc_lists_every_group_and_its_tools() -> None:
    text = " ".join((ROOT / "docs" / "remote-listener.md").read_text(encoding="utf-8").split())
    listed = text.split("**has its own tool surface**", 1)[1].split("Tools outside the surface", 1)[0]
    groups = {
        name: tuple(re.findall(r"`(\w+)`", tools))
        for name, tools in re.findall(r"`(\w+)` \(((?:always: )?`[^)]*)\)", listed)
    }
    assert groups == tool_groups()
