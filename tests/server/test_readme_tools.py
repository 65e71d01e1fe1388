"""The tools kd-mcp serves are exactly the ones the README's tool table lists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kdmcp.server.registry import all_tools, tool_groups
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
    assert len(documented) == len(all_tools())
    assert sorted(served) == sorted(documented)


async def test_every_tool_has_a_description_schema_and_honest_annotations():
    async with in_memory(make_app()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object"
        # No outputSchema, by choice (docs/results.md); results are documented there instead.
        assert tool.output_schema is None, tool.name
        # no annotation title: the tool's name says it (kdmcp/server/schema.py)
        assert tool.annotations is None or tool.annotations.title is None
    read_only = {name for name, tool in tools.items() if hint(tool, "read_only_hint")}
    assert read_only == {"read_output", "list_sessions", "health_check", *tool_groups()["inspect"]}
    assert hint(tools["stop_kd"], "destructive_hint") and hint(tools["kd_command"], "destructive_hint")
    assert not hint(tools["break_in"], "destructive_hint") and hint(tools["break_in"], "idempotent_hint")
    connects = {name for name, tool in tools.items() if hint(tool, "open_world_hint")}
    assert connects == {"start_from_state", "start_kd", "launch", "join_remote", "share_session"}


# The spec's value of a hint a tool leaves out (ToolAnnotations: "Default: ...").
SPEC_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False,
                 "open_world_hint": True}


def hint(tool, name: str) -> bool:
    value = getattr(tool.annotations, name)
    return SPEC_DEFAULTS[name] if value is None else value
