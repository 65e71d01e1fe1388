"""The registry (kdmcp/server/registry.py): one registration per tool, the groups, found by name from outside."""

from __future__ import annotations

import inspect
import sys

import pytest

from kdmcp.server import registry as tools
from kdmcp.server.registry import all_tools, tool_groups


def test_every_tool_is_in_one_group_and_every_grouped_name_is_a_tool():
    grouped = [name for names in tool_groups().values() for name in names]
    assert sorted(grouped) == sorted(set(grouped)) == sorted(tools.TOOLS) == sorted(all_tools())


def test_each_tool_is_its_modules_function_under_its_own_name():
    for name, tool in tools.TOOLS.items():
        module = sys.modules[tool.fn.__module__]
        assert tool.name == name == tool.fn.__name__ and getattr(module, name) is tool.fn, name
        assert module.__name__.startswith("kdmcp.server.tools."), name
        assert tool.fn.__doc__ and tool.annotations.title, name
        assert next(iter(inspect.signature(tool.fn).parameters)) == "call", name


def test_read_tools_are_marked_read_only_and_idempotent():
    read = {name for name, tool in tools.TOOLS.items() if tool.annotations.read_only_hint}
    assert read == {*tool_groups()["inspect"], "read_output", "list_sessions", "health_check"}
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
