"""End to end: ``kd-mcp --simulate`` as a subprocess, driven by the SDK's stdio client.

Each test runs the server behind a tee that records every byte it writes to stdout and
stderr, so the canary key can be looked for in all of it, not just in parsed results.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import scenario
from tests.server.helpers import CANARY_KEY, CANARY_WORD, TEE, result_data, write_state

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)



@asynccontextmanager
async def stdio_server(tmp_path: Path, *args: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(TEE), str(tmp_path), "--", sys.executable, "-m", "kdmcp", "--simulate", "--structured", *args],
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    with anyio.fail_after(60):
        async with Client(params, read_timeout_seconds=30) as client:
            yield client


def emitted(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp_path.glob("std*.bin"))


async def call(client: Client, name: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    data = result_data(result)
    assert data, result
    data["_is_error"] = bool(result.is_error)
    return data


async def test_whole_loop_on_an_smp_target(tmp_path):
    state = write_state(tmp_path / "kd-session.json")
    async with stdio_server(tmp_path) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"start_from_state", "kd_command", "resume_for_winrm", "break_in", "stop_kd"} <= tools

        started = await call(client, "start_from_state", state_file=str(state), timeout_s=20)
        assert not started["_is_error"], started
        assert started["state"] == "running"
        assert "key=***" in started["command_line"]
        sid = started["session_id"]

        running = await call(client, "kd_command", command="r")
        assert running["_is_error"] and running["category"] == "target_running"

        broke = await call(client, "break_in")
        assert broke["state"] == "broken" and broke["prompt"] == "0: kd> "
        assert "break_in" in [e["kind"] for e in broke["events"]]

        stack = await call(client, "kd_command", command="k")
        assert stack["state"] == "broken" and "nt!DbgBreakPointWithStatus" in stack["_body"]
        switched = await call(client, "kd_command", command="~2s")
        assert switched["prompt"] == "2: kd> "
        version = await call(client, "kd_command", command="version")
        assert "command line:" in version["_body"] and "key=***" in version["_body"]

        resumed = await call(client, "resume_for_winrm", wait_s=0.3)
        assert resumed["state"] == "running" and resumed["confirmed"] == "running"
        assert "retry the WinRM call" in resumed["hint"] and resumed["waited_s"] >= 0.3

        again = await call(client, "break_in")
        assert again["state"] == "broken"

        whole = await call(client, "read_output", session_id=sid, offset=0, limit=1024 * 1024)
        assert "Using NET for debugging" in whole["text"] and whole["eof"]

        stopped = await call(client, "stop_kd")
        assert stopped["actions"][0].startswith("resumed target") and stopped["state"] == "exited"
        listed = await call(client, "list_sessions")
        assert [s["state"] for s in listed["sessions"]] == ["exited"]
    everything = emitted(tmp_path)
    assert b'"start_from_state"' in everything  # the tee saw the traffic
    assert CANARY_WORD.encode() not in everything
    assert CANARY_KEY.split(".")[1].encode() not in everything


async def test_wrong_key_is_not_connected_within_the_timeout(tmp_path):
    state = write_state(tmp_path / "kd-session.json", port=50005)  # strict_key wants another key
    async with stdio_server(tmp_path, "--scenario", scenario("strict_key")) as client:
        t0 = time.monotonic()
        result = await call(client, "start_from_state", state_file=str(state), timeout_s=1.5)
        elapsed = time.monotonic() - t0
        assert result["_is_error"] and result["category"] == "not_connected"
        assert "Waiting to reconnect" in result["message"]
        assert elapsed < 10
        assert (await call(client, "list_sessions"))["sessions"][0]["state"] == "exited"
    assert CANARY_WORD.encode() not in emitted(tmp_path)


async def test_a_fifth_session_is_refused(tmp_path):
    async with stdio_server(tmp_path) as client:
        for port in range(50001, 50005):
            started = await call(client, "start_kd", port=port, key=CANARY_KEY, timeout_s=20)
            assert not started["_is_error"], started
        fifth = await call(client, "start_kd", port=50005, key=CANARY_KEY, timeout_s=20)
        assert fifth["_is_error"] and fifth["category"] == "capacity"
        assert "the limit (max_sessions 4)" in fifth["message"]
        unnamed = await call(client, "kd_command", command="r")
        assert unnamed["_is_error"] and unnamed["category"] == "unknown_session"
    assert CANARY_WORD.encode() not in emitted(tmp_path)


async def test_state_file_defects_are_named(tmp_path):
    good = {"schema": "winrm-kd-session-v1", "guest_host": "g", "host_ip": "h", "port": 50000, "key": CANARY_KEY}
    cases: dict[str, tuple[str | None, str]] = {
        "missing": (None, "not found"),
        "directory": ("DIR", "directory"),
        "bad_yaml": ("schema: [unclosed\n", "YAML"),
        "not_mapping": ("- a\n- b\n", "mapping"),
        "no_schema": ("guest_host: g\nhost_ip: h\nport: 50000\nkey: a.b.c.d\n", "schema"),
        "wrong_schema": ("schema: other-v2\nguest_host: g\nhost_ip: h\nport: 1\nkey: a.b.c.d\n", "schema"),
        "port_text": (None, "port"),
        "port_range": (None, "port"),
        "bad_key": (None, "key"),
        "empty_host": (None, "guest_host"),
    }
    async with stdio_server(tmp_path) as client:
        for name, (content, defect) in cases.items():
            path = tmp_path / f"{name}.yaml"
            if content == "DIR":
                path.mkdir()
            elif content is not None:
                path.write_text(content)
            elif name != "missing":
                doc = dict(good)
                doc.update({"port_text": {"port": "fifty"}, "port_range": {"port": 70000},
                            "bad_key": {"key": CANARY_WORD + ".only-two"}, "empty_host": {"guest_host": " "}}[name])
                write_state(path, **doc)
            result = await call(client, "start_from_state", state_file=str(path))
            assert result["_is_error"] and result["category"] == "state_file", (name, result)
            assert defect.lower() in result["message"].lower(), (name, result["message"])
            assert str(path) in result["message"]
    assert CANARY_WORD.encode() not in emitted(tmp_path)


async def test_debugger_crash_mid_command(tmp_path):
    state = write_state(tmp_path / "kd-session.json")
    config = tmp_path / "kdmcp.yaml"
    config.write_text("policy: full  # !crash is an unknown extension to the standard policy\n")
    async with stdio_server(tmp_path, "--scenario", scenario("faults"), "--config", str(config)) as client:
        started = await call(client, "start_from_state", state_file=str(state), initial_break=True, timeout_s=20)
        assert started["state"] == "broken"
        crashed = await call(client, "kd_command", command="!crash")
        assert crashed["_is_error"] and crashed["category"] == "debugger_exited"
        assert crashed["exit_code"] == 3
        out = await call(client, "read_output", session_id=started["session_id"])
        assert "Loading extension...\r\nWalking 4096 entries" in out["text"]
        after = await call(client, "kd_command", command="r", session_id=started["session_id"])
        assert after["_is_error"] and after["category"] in ("unknown_session", "debugger_exited")
