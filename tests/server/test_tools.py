"""The tools module (kdmcp/server/tools.py): one registry, the groups' names, found by name from outside."""

from __future__ import annotations

import inspect

import pytest

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


@pytest.mark.process
def test_serving_the_tools_builds_no_record_model_or_parser_before_the_first_command():
    # Cold start: a client waits for them before its first tools/list (docs/performance.md).
    import subprocess
    import sys

    probe = ("import sys, kdmcp.server.tools, kdmcp.cli; "
             "print(sorted(m for m in sys.modules if m.startswith(('kdmcp.parse.models', 'kdmcp.parse.dispatch'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout
