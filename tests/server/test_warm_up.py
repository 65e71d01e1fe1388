"""The warm-up (``mcp_server.warm_up``): once the tools are listed, the tool families are imported
in a thread of their own, so that a start from the kept listing does not make the first call pay
for them; ``KDMCP_NO_WARM_UP=1`` leaves them to the first call."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from kdmcp.server import mcp_server
from tests.server.test_schema_e2e import FAMILIES, ROOT, _imported, _start

pytestmark = pytest.mark.anyio


def test_warm_up_imports_the_families_in_a_thread_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(mcp_server.ENV_NO_WARM_UP, raising=False)
    seen: list[str] = []
    monkeypatch.setattr(mcp_server, "load_families", lambda: seen.append(threading.current_thread().name))
    thread = mcp_server.warm_up()
    assert thread is not None
    thread.join(10)
    assert seen == ["kdmcp-warm-up"]


def test_warm_up_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(mcp_server.ENV_NO_WARM_UP, "1")
    monkeypatch.setattr(mcp_server, "load_families", lambda: pytest.fail("warmed up while off"))
    assert mcp_server.warm_up() is None


def test_a_failed_warm_up_is_a_warning_not_a_crash(monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv(mcp_server.ENV_NO_WARM_UP, raising=False)

    def broken() -> None:
        raise ImportError("no such family")

    monkeypatch.setattr(mcp_server, "load_families", broken)
    thread = mcp_server.warm_up()
    assert thread is not None
    thread.join(10)
    assert "warm-up: the tool families could not be imported" in caplog.text


@pytest.mark.process
async def test_listing_the_tools_imports_the_families_before_any_call(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    await _start(cache, tmp_path / "first.err")  # keeps the listing: the next start lists without the families
    stderr = tmp_path / "second.err"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "KDMCP_NO_PRELUDE": "1"}
    env.pop("KDMCP_NO_SURFACE_CACHE", None)
    env.pop(mcp_server.ENV_NO_WARM_UP, None)
    params = StdioServerParameters(
        command="/bin/sh", args=["-c", 'exec "$0" -X importtime -m kdmcp --simulate 2>"$1"', sys.executable,
                                 str(stderr)], env=env, cwd=str(ROOT))
    with anyio.fail_after(60):
        async with Client(params, read_timeout_seconds=30) as client:
            await client.list_tools()
            # No call is made: the families arrive by the warm-up alone. -X importtime writes a
            # line per module as it is imported, so the file is read until the families' line is in it.
            while FAMILIES not in _imported(stderr):
                await anyio.sleep(0.05)
            assert "kdmcp.engine" in _imported(stderr)
