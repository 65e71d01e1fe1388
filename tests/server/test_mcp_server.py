"""The protocol as the MCP spec asks: capabilities with content only, unknown tools and methods as
JSON-RPC errors, and errors as results every client reads (no ``structuredContent``; docs/clients.md).

The same is checked from the TypeScript SDK in tests/interop.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, LATEST_PROTOCOL_VERSION, METHOD_NOT_FOUND
from pydantic import ValidationError

from kdmcp.prelude import pipe_or_socket
from kdmcp.server import build_server, mcp_server
from kdmcp.server.render import read_error
from kdmcp.validation import place
from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"


async def test_the_tools_and_prompts_capabilities_are_advertised_not_resources():
    async with in_memory(make_app()) as client:
        caps = client.server_capabilities
        assert caps.tools is not None and caps.prompts is not None and caps.resources is None, caps


async def test_resources_are_unknown_methods_and_log_no_traceback(caplog):
    # The prompts' own protocol errors (-32602) are tests/server/test_prompts.py's.
    caplog.set_level(logging.DEBUG)
    async with in_memory(make_app()) as client:
        with anyio.fail_after(10):
            for request in (client.list_resources, client.list_resource_templates):
                with pytest.raises(MCPError) as raised:
                    await request()
                assert raised.value.error.code == METHOD_NOT_FOUND, raised.value.error
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text


async def test_an_unknown_tool_is_a_json_rpc_error_not_a_result(caplog):
    async with in_memory(make_app()) as client:
        with anyio.fail_after(10), pytest.raises(MCPError) as raised:
            await client.call_tool("no_such_tool", {})
        assert raised.value.error.code == INVALID_PARAMS
        assert raised.value.error.message == "Unknown tool: no_such_tool"
        assert not (await client.call_tool("list_sessions", {})).is_error  # and it keeps serving
    assert "Traceback" not in caplog.text


async def test_an_unknown_tool_is_answered_in_the_transcript_too(tmp_path):
    # Without its result record, `kd-mcp watch` showed the call as running for ever (issue 31).
    from kdmcp.config import Config
    from kdmcp.server import KdMcpApp, ServerOptions
    from kdmcp.server.transcript import read_records

    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, transcript=str(tmp_path / "run.jsonl")))
    async with in_memory(app) as client:
        with anyio.fail_after(10), pytest.raises(MCPError):
            await client.call_tool("no_such_tool", {"session_id": "s1"})
    records = [r for r in read_records(tmp_path / "run.jsonl") if r.get("tool") == "no_such_tool"]
    assert [(r["kind"], r.get("status"), r.get("category")) for r in records] == [
        ("request", None, None), ("result", "error", "protocol_error")]
    assert records[1]["text"] == "Unknown tool: no_such_tool"


async def test_a_tool_outside_the_surface_is_policy_denied_not_unknown():
    app = make_app()
    app.options.tools = frozenset({"list_sessions"})
    async with in_memory(app) as client:
        result = await client.call_tool("break_in", {})
    assert result_data(result)["category"] == "policy_denied"


@pytest.mark.process
async def test_errors_carry_the_category_as_text_and_no_structured_content():
    async with in_memory(make_app()) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY})
        sid = started.structured_content["session_id"]
        running = await client.call_tool("kd_command", {"command": "r"})
        bare = await client.call_tool("start_kd", {})
    assert running.is_error and running.structured_content is None
    first, second = (block.text for block in running.content)
    assert first == "error[target_running]: the target is running: break in first"
    assert json.loads(second) == {"session_id": sid, "state": "running"}
    # docs/clients.md shows this very result, and its regular expression reads it.
    doc = DOC.read_text(encoding="utf-8")
    assert f"content[0]  text  {first}" in doc and f"content[1]  text  {second}" in doc
    pattern = re.search(r"one regular expression, `([^`]+)`", doc)
    assert pattern is not None and re.match(pattern[1], first)[1] == "target_running"
    # Nothing beyond category and message: one block.
    assert [b.text for b in bare.content] == [f"error[invalid_argument]: {read_error(bare)['message']}"]
    assert read_error(started) is None and read_error(bare)["category"] == "invalid_argument"


def test_the_sdks_logging_setup_runs_only_where_it_would_do_something(monkeypatch):
    """MCPServer() calls the SDK's configure_logging, whose logging.basicConfig ignores its (rich)
    handler once the root logger has one: kd-mcp skips it there, and only there."""
    import logging

    import mcp.server.mcpserver.server as sdk_server

    from kdmcp.server import mcp_server

    assert sdk_server.configure_logging is mcp_server._sdk_logging_unless_configured  # type: ignore[attr-defined]
    calls: list[str] = []
    monkeypatch.setattr(mcp_server, "sdk_configure_logging", calls.append)
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [logging.NullHandler()])
    mcp_server._sdk_logging_unless_configured("WARNING")
    assert calls == []
    monkeypatch.setattr(root, "handlers", [])
    mcp_server._sdk_logging_unless_configured("WARNING")
    assert calls == ["WARNING"]


# tools/call's own handler (KdMcpServer._handle_tools_call) against the SDK's tool layer it replaced:
# each call's answer, every kind of argument mistake, and the SDK's pre-parse of JSON in a string.
SAME_AS_THE_SDK = [
    ("list_sessions", {}),
    ("decode_ioctl", {"code": 0x222003}),
    ("decode_ioctl", {"code": "0x222003"}),
    ("decode_ioctl", {"code": "IOCTL_NOPE"}),  # the tool's own invalid_argument
    ("kd_command", {"command": "r"}),  # no session: the tool's error
    ("kd_command", {"command": "r", "timeout_s": "5"}),  # JSON in a string, pre-parsed as the SDK does
    ("kd_command", {"command": "r", "unknown": 1}),  # an argument no tool has is left out, as before
    ("kd_command", {"command": "r", "session_id": "s1"}),  # a string for str | None: no JSON, as it is
    ("kd_command", {"command": "r", "session_id": " null"}),  # JSON null in it: None, as the SDK reads it
    ("modules", {"verbose": "true", "limit": "3"}),
]
INVALID = [
    ("kd_command", {}, ["command"]),
    ("kd_command", {"command": ""}, ["command"]),
    ("kd_command", {"command": 5, "timeout_s": "soon"}, ["command", "timeout_s"]),
    ("decode_ioctl", {"code": [1]}, ["code"]),
    ("read_output", {"output_id": 7, "max_bytes": -1}, None),
    ("modules", {"verbose": "[1]"}, ["verbose"]),  # JSON in a string, pre-parsed to a list: no boolean
]


async def test_tools_call_answers_as_the_sdks_tool_layer_did(monkeypatch):
    from mcp.server.mcpserver.exceptions import ToolError

    from kdmcp.server import build_server

    app = make_app()
    server = build_server(app)
    seen: list[tuple[str, Any, Any]] = []
    lean = server.call_tool

    async def both(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        result = await lean(name, arguments, context)
        try:  # the SDK's path: ToolManager -> Tool.run (argument model, then the tool's function)
            sdk: Any = await server._tool_manager.call_tool(name, arguments, context, convert_result=True)
        except ToolError as exc:
            sdk = exc
        seen.append((name, result, sdk))
        return result

    monkeypatch.setattr(server, "call_tool", both)
    try:
        async with Client(server) as client:
            for name, arguments in SAME_AS_THE_SDK:
                await client.call_tool(name, arguments)
            for name, arguments, _ in INVALID:
                await client.call_tool(name, arguments)
    finally:
        await anyio.to_thread.run_sync(app.shutdown)
    for (name, result, sdk), (_, arguments) in zip(seen, SAME_AS_THE_SDK, strict=False):
        assert result.model_dump() == sdk.model_dump(), (name, arguments)
    for (name, result, sdk), (_, arguments, fields) in zip(seen[len(SAME_AS_THE_SDK):], INVALID, strict=True):
        assert isinstance(sdk, ToolError) and isinstance(sdk.__cause__, ValidationError), (name, arguments)
        # the fields as the SDK's error names them, without pydantic's branch names (as before)
        named = sorted({".".join(str(p) for p in place(err["loc"])) for err in sdk.__cause__.errors()})
        assert fields is None or named == fields
        error = read_error(result)
        assert error is not None and error["category"] == "invalid_argument", result
        assert error["message"].startswith(f"invalid arguments for {name} ({', '.join(named)}): "), error


async def test_tools_call_does_not_go_through_the_sdks_tool_layer(monkeypatch):
    from mcp.server.mcpserver.tools import Tool

    async def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Tool.run is the SDK's path")

    monkeypatch.setattr(Tool, "run", refused)
    async with in_memory(make_app()) as client:
        listed = await client.call_tool("list_sessions", {})
        invalid = await client.call_tool("kd_command", {})
    assert not listed.is_error and read_error(invalid)["category"] == "invalid_argument"


async def test_a_tool_that_fails_unexpectedly_is_an_internal_error_in_the_transcript_too(tmp_path, monkeypatch, caplog):
    from kdmcp.config import Config
    from kdmcp.server import KdMcpApp, ServerOptions
    from kdmcp.server import call as calls
    from kdmcp.server.transcript import read_records

    async def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(calls, "serve_call", broken)
    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, transcript=str(tmp_path / "run.jsonl")))
    async with in_memory(app) as client:
        result = await client.call_tool("list_sessions", {})
    assert result.content[0].text == "error[internal]: list_sessions failed unexpectedly; see the server log"
    assert "a bug" not in result.content[0].text and "RuntimeError: a bug" in caplog.text
    records = [r for r in read_records(tmp_path / "run.jsonl") if r.get("tool") == "list_sessions"]
    assert [(r["kind"], r.get("category")) for r in records] == [("request", None), ("result", "internal")]


# ------------------------------------------------------------------ stdio on the event loop
# (KdMcpServer.run_stdio_async). Every process test of the server runs on it, as its servers' stdin
# and stdout are pipes; these drive it in-process over os.pipe pairs.

def _request(number: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


INITIALIZE = {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
              "clientInfo": {"name": "test", "version": "0"}}


async def _serve(lines: list[bytes]) -> list[dict[str, Any]]:
    """The server on pipes: each of ``lines`` written to its input, a request's answer awaited
    before the next line (then end of input, which ends the server); the answers read."""
    app = make_app()
    server = build_server(app)
    request_read, request_write = os.pipe()
    answer_read, answer_write = os.pipe()
    answers: list[dict[str, Any]] = []

    def client() -> None:  # a blocking client on its own thread, as a real one is another process
        with os.fdopen(request_write, "wb") as out, os.fdopen(answer_read, "rb") as answer:
            for line in lines:
                out.write(line)
                out.flush()
                if b'"id"' in line[:40]:
                    answers.append(json.loads(answer.readline()))

    thread = threading.Thread(target=client)
    thread.start()
    try:
        with anyio.fail_after(20):
            async with mcp_server.loop_streams(request_read, answer_write) as (read_stream, write_stream):
                await server._lowlevel_server.run(read_stream, write_stream,
                                                  server._lowlevel_server.create_initialization_options())
    finally:
        os.close(request_read)
        os.close(answer_write)
        thread.join(10)
        await anyio.to_thread.run_sync(app.shutdown)
    return answers


async def test_requests_are_answered_in_order_and_end_of_input_ends_the_server():
    lines = [
        _request(1, "initialize", INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n",
        # a line that is no JSON-RPC message is reported, and the next one still answered
        b"this is not json\n",
        # a long line, sent in pieces (the reader's buffer takes it whole), and \r\n ends one too
        _request(2, "tools/call", {"name": "kd_command", "arguments": {"command": "x" * 200_000}})[:-1]
        + b"\r\n",
        _request(3, "tools/list"),
        # an undecodable byte is replaced, as the SDK's reader does: the request is still read
        _request(4, "tools/call", {"name": "list_sessions", "arguments": {}}).replace(b"{}", b'{"x": "\xff"}'),
    ]
    answers = await _serve(lines)
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4]
    by_id = {answer["id"]: answer for answer in answers}
    assert by_id[1]["result"]["serverInfo"]["name"] == "kd-mcp"
    assert by_id[2]["result"]["isError"] is True  # the long argument reached the tool, which refused it
    assert by_id[2]["result"]["content"][0]["text"].startswith("error[invalid_argument]: invalid arguments for "
                                                               "kd_command (command)")
    assert "kd_command" in {tool["name"] for tool in by_id[3]["result"]["tools"]}
    assert "result" in by_id[4]


def test_it_serves_pipes_and_sockets_only(tmp_path: Path):
    read, write = os.pipe()
    regular = os.open(tmp_path / "requests.jsonl", os.O_RDWR | os.O_CREAT)
    try:
        assert pipe_or_socket(read) and pipe_or_socket(write)
        assert not pipe_or_socket(regular)  # stdin from a file: the SDK's transport reads it
        assert not pipe_or_socket(12345)  # no such descriptor
    finally:
        for fd in (read, write, regular):
            os.close(fd)
