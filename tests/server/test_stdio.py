"""The event-loop stdio transport (``kdmcp/server/stdio.py``): the SDK's framing, no thread.

The server's own process tests (test_stdio_e2e and every stdio test) run on it, as their
servers' stdin and stdout are pipes; these drive it in-process over ``os.pipe`` pairs.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import LATEST_PROTOCOL_VERSION

from kdmcp.server import build_server, stdio
from tests.server.helpers import make_app

pytestmark = pytest.mark.anyio


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
            async with stdio.loop_streams(request_read, answer_write) as (read_stream, write_stream):
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
        assert stdio._pipe_or_socket(read) and stdio._pipe_or_socket(write)
        assert not stdio._pipe_or_socket(regular)  # stdin from a file: the SDK's transport reads it
        assert not stdio._pipe_or_socket(12345)  # no such descriptor
    finally:
        for fd in (read, write, regular):
            os.close(fd)
