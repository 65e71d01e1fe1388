"""Hypothesis fuzz of every tool's arguments: always a result, errors always categorized.

Wrong types, huge strings, control characters, newlines and CR inside commands, unicode,
unknown extra arguments — whatever arrives, the server answers with a result whose error (if
any) carries a known category and no traceback, and it keeps serving.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from kdmcp.server import build_server
from kdmcp.server.models import ERROR_CATEGORIES
from tests.server.helpers import make_app

TOOLS = {
    "start_from_state": ["state_file", "initial_break", "use_target_host", "timeout_s"],
    "start_kd": ["port", "key", "target_host", "connection", "initial_break", "timeout_s"],
    "kd_command": ["command", "session_id", "timeout_s"],
    "break_in": ["session_id", "timeout_s"],
    "continue_go": ["session_id", "command"],
    "resume_for_winrm": ["session_id", "wait_s"],
    "read_output": ["session_id", "output_id", "offset", "limit"],
    "stop_kd": ["session_id", "resume"],
    "list_sessions": [],
    "health_check": [],
    "registers": ["session_id", "register"],
    "backtrace": ["session_id", "variant", "limit"],
    "modules": ["session_id", "pattern", "verbose", "limit"],
    "processes": ["session_id", "name", "limit"],
    "analyze": ["session_id", "timeout_s"],
    "vertarget": ["session_id"],
}

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


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(TOOLS)))
    names = TOOLS[tool] + ["bogus_extra"]
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    return tool, {name: draw(json_value) for name in chosen}


@pytest.fixture(scope="module")
def fuzz_app():
    app = make_app(**{"timeouts": {"startup": 2.0, "command": 2.0, "break_in": 1.0, "stop": 3.0}})
    yield app
    app.shutdown()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.lists(calls(), min_size=1, max_size=4))
def test_any_arguments_get_a_categorized_answer(fuzz_app, batch):
    server = build_server(fuzz_app)

    async def run() -> None:
        with anyio.fail_after(60):
            async with Client(server) as client:
                for tool, args in batch:
                    result = await client.call_tool(tool, args)
                    text = " ".join(getattr(c, "text", "") for c in result.content)
                    assert "Traceback" not in text
                    if result.is_error:
                        data = result.structured_content
                        assert data is not None, (tool, args, text)
                        assert data["category"] in ERROR_CATEGORIES, data
                        assert data["category"] != "internal", (tool, args, data)
                        assert data["message"]

    anyio.run(run)
