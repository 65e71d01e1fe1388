"""The tools module (kdmcp/server/tools.py): one registry, the groups' names, found by name from outside."""

from __future__ import annotations

import inspect

from kdmcp.server import tools
from kdmcp.server.surface import ALL_TOOLS, TOOL_GROUPS


def test_every_tool_is_in_one_group_and_every_grouped_name_is_a_tool():
    grouped = [name for names in TOOL_GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(set(grouped)) == sorted(tools.TOOLS) == sorted(ALL_TOOLS)


def test_each_tool_is_a_module_level_coroutine_under_its_own_name():
    for name, tool in tools.TOOLS.items():
        assert getattr(tools, name) is tool.fn and inspect.iscoroutinefunction(tool.fn), name
        assert tool.fn.__doc__ and tool.annotations.title, name


def test_read_tools_are_marked_read_only_and_idempotent():
    read = {name for name, tool in tools.TOOLS.items() if tool.annotations.read_only_hint}
    assert read == {*TOOL_GROUPS["inspect"], "read_output", "list_sessions", "health_check"}
    assert all(tools.TOOLS[name].annotations.idempotent_hint for name in read)
