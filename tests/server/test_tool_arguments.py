"""Every tool's argument validation, through an in-process SDK client: always a categorized error."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = pytest.mark.anyio



BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("start_from_state", {"state_file": 123}, "state_file"),
    ("start_from_state", {"timeout_s": -1}, "timeout_s"),
    ("start_from_state", {"timeout_s": "soon"}, "timeout_s"),
    ("start_from_state", {"initial_break": "maybe"}, "initial_break"),
    ("start_kd", {"port": 0, "key": CANARY_KEY}, "port"),
    ("start_kd", {"port": 70000, "key": CANARY_KEY}, "port"),
    ("start_kd", {"port": 50000, "key": "not a key"}, "key"),
    ("start_kd", {"port": 50000, "key": "a.b.c"}, "key"),
    ("start_kd", {"port": 50000, "key": CANARY_KEY, "target_host": "x; rm -rf /"}, "target_host"),
    ("kd_command", {}, "command"),
    ("kd_command", {"command": ""}, "command"),
    ("kd_command", {"command": 42}, "command"),
    ("kd_command", {"command": "r" * 4001}, "command"),
    ("kd_command", {"command": "r", "timeout_s": 0}, "timeout_s"),
    ("kd_command", {"command": "r", "session_id": "x" * 100}, "session_id"),
    ("break_in", {"timeout_s": 7200}, "timeout_s"),
    ("continue_go", {"command": ""}, "command"),
    ("resume_for_winrm", {"wait_s": -1}, "wait_s"),
    ("resume_for_winrm", {"wait_s": 601}, "wait_s"),
    ("read_output", {"offset": -1}, "offset"),
    ("read_output", {"limit": 0}, "limit"),
    ("read_output", {"limit": 2 * 1024 * 1024}, "limit"),
    ("stop_kd", {"resume": "perhaps"}, "resume"),
]


@pytest.mark.parametrize(("tool", "args", "field"), BAD_CALLS)
async def test_schema_violations_are_invalid_argument(tool, args, field):
    async with in_memory(make_app()) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    data = result_data(result)
    assert data["category"] == "invalid_argument", data
    assert field in data["message"]
    assert "Traceback" not in data["message"] and CANARY_KEY not in str(data)


LOGIC_ERRORS: list[tuple[str, dict[str, Any], str, str]] = [
    ("start_kd", {}, "invalid_argument", "needs port and key"),
    ("start_kd", {"port": 50000}, "invalid_argument", "needs port and key"),
    ("start_kd", {"connection": "lab", "port": 1}, "invalid_argument", "not both"),
    ("start_kd", {"connection": "nope"}, "invalid_argument", "no connection named 'nope'"),
    ("kd_command", {"command": "r"}, "unknown_session", "no session is live"),
    ("kd_command", {"command": "r", "session_id": "s42"}, "unknown_session", "no session 's42'"),
    ("break_in", {}, "unknown_session", "no session is live"),
    ("continue_go", {}, "unknown_session", "no session is live"),
    ("resume_for_winrm", {}, "unknown_session", "no session is live"),
    ("read_output", {}, "unknown_session", "no session is live"),
    ("read_output", {"output_id": "garbage"}, "invalid_argument", "malformed output_id"),
    ("stop_kd", {"session_id": "s9"}, "unknown_session", "no session 's9'"),
]


@pytest.mark.parametrize(("tool", "args", "category", "words"), LOGIC_ERRORS)
async def test_logic_errors_are_categorized(tool, args, category, words):
    async with in_memory(make_app()) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    data = result_data(result)
    assert data["category"] == category, data
    assert words in data["message"]


@pytest.mark.process
async def test_command_validation_inside_a_live_session():
    async with in_memory(make_app()) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.structured_content
        for command, words in [("r\nk", "line break"), ("r\x03", "control character"), ("   ", "empty")]:
            result = await client.call_tool("kd_command", {"command": command})
            assert result.is_error and result_data(result)["category"] == "invalid_argument"
            assert words in result_data(result)["message"]
        quit_ = await client.call_tool("kd_command", {"command": "q"})  # session_ending: stop_kd's job
        assert result_data(quit_)["category"] == "policy_denied"
        go = await client.call_tool("continue_go", {"command": "r"})
        assert result_data(go)["category"] == "invalid_argument"
        past = await client.call_tool("read_output", {"offset": 10**9})
        assert result_data(past)["category"] == "invalid_argument"
        ok = await client.call_tool("kd_command", {"command": ".echo fine"})
        assert not ok.is_error and ok.structured_content["output"].strip() == "fine"


async def test_results_carry_structured_content_and_a_text_rendering_of_it():
    """The text block is for the model: lines saying what the structured result says, not its JSON."""
    async with in_memory(make_app()) as client:
        health = await client.call_tool("health_check", {})
        assert not health.is_error
        data = health.structured_content
        assert data["simulated"] and data["debuggers"][0]["found"]
        (block,) = health.content
        lines = block.text.splitlines()
        assert lines[0] == ("[ok simulated]" if data["ok"] else "[not ok simulated]")
        assert [line.split(":")[0] for line in lines[1 : 1 + len(data["debuggers"])]] == [
            d["name"] for d in data["debuggers"]]
        assert not block.text.lstrip().startswith("{")


@pytest.mark.process
async def test_state_file_warnings_reach_the_result(tmp_path):
    import json
    import time

    from tests.server.helpers import write_state

    state = write_state(tmp_path / "kd-session.json", created_at_unix=time.time() - 3 * 86400)
    state.chmod(0o644)
    async with in_memory(make_app()) as client:
        started = await client.call_tool("start_from_state", {"state_file": str(state)})
        assert not started.is_error, started.structured_content
        warnings = " ".join(started.structured_content["warnings"]).lower()
        assert "readable" in warnings and "old" in warnings
        assert started.structured_content["state_file"] == str(state)
        assert CANARY_KEY not in json.dumps(started.structured_content)
