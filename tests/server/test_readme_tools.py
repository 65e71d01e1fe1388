"""The tools kd-mcp serves are exactly the ones the README's tool table lists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.server.helpers import in_memory, make_app

pytestmark = pytest.mark.anyio

README = Path(__file__).resolve().parents[2] / "README.md"



def readme_tools() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Tools", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE)


async def test_served_tools_match_the_readme_table():
    async with in_memory(make_app()) as client:
        served = [tool.name for tool in (await client.list_tools()).tools]
    documented = readme_tools()
    assert len(documented) == 16
    assert sorted(served) == sorted(documented)


async def test_every_tool_has_a_description_schema_and_honest_annotations():
    async with in_memory(make_app()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object"
        assert tool.output_schema is not None, tool.name
        assert tool.annotations is not None
    read_only = {name for name, tool in tools.items() if tool.annotations.read_only_hint}
    assert read_only == {"read_output", "list_sessions", "health_check", "registers", "backtrace", "modules",
                         "processes", "analyze", "vertarget"}
    assert tools["stop_kd"].annotations.destructive_hint and tools["kd_command"].annotations.destructive_hint
