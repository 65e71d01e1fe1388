"""Shared pieces of the server tests: in-process apps, state files, a stdio tee."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp_types import CallToolResult

from kdmcp.config import Config
from kdmcp.server import KdMcpApp, ServerOptions, build_server
from kdmcp.server.render import read_error
from tests.conftest import scenario

CANARY_KEY = "c4n4ryk3y0000.q7w8e9r0t1y2u.zx9cv8bn7m6lk.poi8uy7tr6e5w"
CANARY_WORD = "c4n4ryk3y0000"
TEE = Path(__file__).with_name("stdio_tee.py")


def write_state(path: Path, *, key: str = CANARY_KEY, port: int = 50000, **extra: Any) -> Path:
    doc = {"schema": "winrm-kd-session-v1", "guest_host": "127.0.0.2", "host_ip": "127.0.0.1", "port": port,
           "key": key, "created_by": "tests"}
    doc.update(extra)
    path.write_text(json.dumps(doc))
    path.chmod(0o600)
    return path


def make_app(scenario_name: str | None = None, *, structured: bool = True, **config: Any) -> KdMcpApp:
    """A simulated app; ``structured``: it sends structuredContent, as a server started for
    programs does (``--structured``) — what most tests read; the default server sends text only."""
    cfg = Config.model_validate(config) if config else Config()
    return KdMcpApp(ServerOptions(config=cfg, simulate=True, scenario=scenario(scenario_name) if scenario_name
                                  else None, structured=structured))


def text_of(result: CallToolResult) -> str:
    """A result's text blocks, joined: what a model reads (the raw output is here, not in
    structuredContent)."""
    return "\n".join(block.text for block in result.content if block.type == "text")


@asynccontextmanager
async def in_memory(app: KdMcpApp) -> AsyncIterator[Client]:
    """An SDK client connected in-process to a server on ``app``; every session stopped after."""
    try:
        async with Client(build_server(app)) as client:
            yield client
    finally:
        await anyio.to_thread.run_sync(app.shutdown)


def result_data(result: CallToolResult) -> dict[str, Any]:
    """What a program reads from a result: its ``structuredContent``, or an error's category,
    message and other fields (errors carry them as text, docs/clients.md); and, as ``_body``,
    what the text block says under its header line (the debugger's output, where a model reads
    it: ``structuredContent`` leaves it out beside a record of it)."""
    if result.is_error:
        data = read_error(result)
        assert data is not None, f"an error result without error[category]: {result.content}"
        assert result.structured_content is None, result.structured_content
        return data
    return {**(result.structured_content or {}), "_body": text_of(result).partition("\n")[2]}


def server_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "kdmcp", *args, "--structured"]  # these tests read structuredContent
