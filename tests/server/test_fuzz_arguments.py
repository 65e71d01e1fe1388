"""Hypothesis fuzz of every tool's arguments: always a result, errors always categorized.

Wrong types, huge strings, control characters, newlines and CR inside commands, unicode,
unknown extra arguments — whatever arrives, the server answers with a result whose error (if
any) carries a known category and no traceback, and it keeps serving.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_types import CallToolResult, TextContent, Tool

from kdmcp.errors import ERROR_CATEGORIES
from kdmcp.server import KdMcpServer, build_server
from tests.server.helpers import make_app

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)

nasty_text = st.one_of(
    st.text(max_size=50),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=31), max_size=20),
    st.sampled_from(["r\nk", "r\rk", "g\n.shell x", "\x03", "\x02\n", "", " ", "s1", "s9999", "s1:0-10",
                     "1.2.3.4", "k" * 5000, "\u202e", "\uff32\uff29\uff30", "🙂" * 10, "$$<x", "!analyze -v"]),
)
json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
              st.floats(allow_nan=True, allow_infinity=True), nasty_text),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=5,
)


def argument_names(tool: Tool) -> list[str]:
    """The parameters the tool's inputSchema declares, plus one it does not."""
    return [*sorted(tool.input_schema.get("properties", {})), "bogus_extra"]


def calls(tools: list[Tool]) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """A tool the server lists, called with any subset of its declared arguments (any values)."""

    @st.composite
    def call(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
        tool = draw(st.sampled_from(tools))
        names = argument_names(tool)
        chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
        return tool.name, {name: draw(json_value) for name in chosen}

    return call()


# An error's first text block when errors carry no structuredContent: ``error[<category>]: <message>``.
ERROR_TEXT = re.compile(r"error\[([a-z_]+)\]: (.*)", re.DOTALL)


def error_of(result: CallToolResult) -> tuple[str | None, str]:
    """An error result's category and message, wherever the server puts them.

    From ``structuredContent`` when the result has one; else from the first text block, read as
    ``error[category]: message`` or as a JSON object. The test holds whichever shape errors take.
    """
    data = result.structured_content
    if isinstance(data, dict) and "category" in data:
        return data["category"], str(data.get("message") or "")
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    first = texts[0] if texts else ""
    if match := ERROR_TEXT.fullmatch(first):
        return match[1], match[2]
    try:
        data = json.loads(first)
    except ValueError:
        data = None
    if isinstance(data, dict) and "category" in data:
        return data["category"], str(data.get("message") or "")
    return None, first


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory):
    # Short bounds: the examples probe answers, not waits (resume_for_winrm with no wait_s lets the
    # guest run continue_wait_sec). triage_dumps given "." would triage what it finds there: its
    # records go to a folder of the test's.
    app = make_app(**{"timeouts": {"startup": 2.0, "command": 2.0, "break_in": 1.0, "stop": 3.0,
                                   "continue_wait_sec": 0.5},
                      "triage": {"records_dir": str(tmp_path_factory.mktemp("triage")), "timeout_s": 5.0}})
    yield app
    app.shutdown()


@pytest.fixture(scope="module")
def fuzz_server(fuzz_app) -> KdMcpServer:
    """One server for every example (building one costs more than most calls): the app behind it,
    and so the sessions, were always shared; each example still connects a client of its own."""
    return build_server(fuzz_app)


@pytest.fixture(scope="module")
def listed_tools(fuzz_server) -> list[Tool]:
    """The tools exactly as a client sees them: ``tools/list``, with their inputSchemas."""

    async def listing() -> list[Tool]:
        with anyio.fail_after(30):
            async with Client(fuzz_server) as client:
                return (await client.list_tools()).tools

    tools = anyio.run(listing)
    assert tools and all(t.input_schema.get("type") == "object" for t in tools)
    return sorted(tools, key=lambda t: t.name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_arguments_get_a_categorized_answer(fuzz_server, listed_tools, data):
    batch = data.draw(st.lists(calls(listed_tools), min_size=1, max_size=4), label="batch")
    server = fuzz_server

    async def run() -> None:
        with anyio.fail_after(60):
            async with Client(server) as client:
                for tool, args in batch:
                    result = await client.call_tool(tool, args)
                    text = " ".join(getattr(c, "text", "") for c in result.content)
                    assert "Traceback" not in text
                    if result.is_error:
                        category, message = error_of(result)
                        assert category in ERROR_CATEGORIES, (tool, args, text)
                        assert category != "internal", (tool, args, text)
                        assert message, (tool, args, text)

    anyio.run(run)
