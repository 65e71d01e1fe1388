"""The Streamable HTTP listener: refuses to start open, 401s strangers, keeps clients apart."""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from kdmcp.server.registry import tool_groups
from tests.server.helpers import CANARY_KEY, CANARY_WORD, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)

TOKEN_A = "t0kenAl1ce-0123456789abcdef"
TOKEN_B = "t0kenB0b-fedcba9876543210xx"
ROOT = Path(__file__).resolve().parents[2]



def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KDMCP_")}
    env.update(extra)
    return env


@contextmanager
def listener(*args: str, env: dict[str, str]) -> Iterator[tuple[str, list[bytes]]]:
    """Start ``kd-mcp --simulate --listen 127.0.0.1:0 ...``; yield its URL and its stderr lines."""
    proc = subprocess.Popen([sys.executable, "-m", "kdmcp", "--simulate", "--structured", "--listen", "127.0.0.1:0",
                             *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=ROOT)
    lines: list[bytes] = []
    try:
        assert proc.stderr is not None
        sel = selectors.DefaultSelector()
        sel.register(proc.stderr, selectors.EVENT_READ)
        deadline = time.monotonic() + 30
        url = None
        while url is None:
            assert time.monotonic() < deadline, b"".join(lines)
            if sel.select(deadline - time.monotonic()):
                line = proc.stderr.readline()
                assert line, b"".join(lines)  # exited before listening
                lines.append(line)
                m = re.search(rb"listening on (http://\S+)", line)
                url = m.group(1).decode() if m else None
        yield url, lines
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
        lines.append(err)
        lines.append(out)


class RecordingTransport(httpx2.AsyncBaseTransport):
    """Passes requests through and appends every response byte to a file (for the canary sweep)."""

    def __init__(self, record: Path) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.record = record

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        original, record = response.stream, self.record

        class Tee(httpx2.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in original:
                    with record.open("ab") as out:
                        out.write(chunk)
                    yield chunk

            async def aclose(self) -> None:
                await original.aclose()

        response.stream = Tee()
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def http_client(url: str, token: str, record: Path | None = None) -> AsyncIterator[Client]:
    transport = RecordingTransport(record) if record is not None else None
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30, transport=transport)
    async with http, Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client:
        yield client


async def call(client: Client, name: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    data = result_data(result)
    data["_is_error"] = bool(result.is_error)
    return data


def test_refuses_to_start_without_a_token():
    done = subprocess.run([sys.executable, "-m", "kdmcp", "--simulate", "--listen", "127.0.0.1:0"],
                          capture_output=True, timeout=30, env=_env(), cwd=ROOT, check=False)
    assert done.returncode == 2
    assert b"KDMCP_LISTEN_TOKEN" in done.stderr and b"never taken from the command line" in done.stderr


def test_refuses_short_tokens_and_remote_binds():
    done = subprocess.run([sys.executable, "-m", "kdmcp", "--simulate", "--listen", "127.0.0.1:0"],
                          capture_output=True, timeout=30, env=_env(KDMCP_LISTEN_TOKEN="short"), cwd=ROOT,
                          check=False)
    assert done.returncode == 2 and b"shorter than 16" in done.stderr
    done = subprocess.run([sys.executable, "-m", "kdmcp", "--simulate", "--listen", "0.0.0.0:0"],
                          capture_output=True, timeout=30, env=_env(KDMCP_LISTEN_TOKEN=TOKEN_A), cwd=ROOT,
                          check=False)
    assert done.returncode == 2 and b"not a loopback address" in done.stderr


async def test_unauthorized_requests_get_401_and_wrong_hosts_are_refused(tmp_path):
    with listener(env=_env(KDMCP_LISTEN_TOKEN=TOKEN_A)) as (url, lines):
        async with httpx2.AsyncClient(timeout=30) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            missing = await http.post(url, json=body)
            wrong = await http.post(url, json=body, headers={"Authorization": f"Bearer {TOKEN_B}"})
            basic = await http.post(url, json=body, headers={"Authorization": f"Basic {TOKEN_A}"})
            rebound = await http.post(url, json=body, headers={"Authorization": f"Bearer {TOKEN_A}",
                                                               "Host": "attacker.example:80"})
        for response in (missing, wrong, basic):
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert TOKEN_A not in response.text
        assert rebound.status_code in (400, 403, 421)
        async with http_client(url, TOKEN_A, tmp_path / "http-responses.bin") as client:
            listed = await call(client, "list_sessions")
            assert listed.get("sessions", []) == [] and not listed["_is_error"]
    assert TOKEN_A.encode() not in b"".join(lines)


async def test_clients_have_their_own_sessions_tools_and_policy(tmp_path):
    tokens = tmp_path / "clients.yaml"
    tokens.write_text(
        f"alice: {{token: {TOKEN_A}, tools: [control, commands, output], policy: standard}}\n"
        f"bob: {{token: {TOKEN_B}, tools: [output], policy: read_only}}\n"
    )
    tokens.chmod(0o600)
    with listener("--token-file", str(tokens), env=_env()) as (url, lines):
        async with http_client(url, TOKEN_A, tmp_path / "http-alice.bin") as alice, \
                http_client(url, TOKEN_B, tmp_path / "http-bob.bin") as bob:
            started = await call(alice, "start_kd", port=50000, key=CANARY_KEY, initial_break=True)
            assert not started["_is_error"], started
            sid = started["session_id"]
            out = await call(alice, "kd_command", command="version")
            assert "key=***" in out["_body"]

            bob_tools = {t.name for t in (await bob.list_tools()).tools}
            assert "kd_command" not in bob_tools and {"read_output", "list_sessions"} <= bob_tools
            refused = await call(bob, "kd_command", command="r", session_id=sid)
            assert refused["_is_error"] and refused["category"] == "policy_denied"
            assert "kd_command" in refused["message"]
            peek = await call(bob, "read_output", session_id=sid)
            assert peek["_is_error"] and peek["category"] == "unknown_session"
            assert (await call(bob, "list_sessions")).get("sessions", []) == []
            assert [s["session_id"] for s in (await call(alice, "list_sessions"))["sessions"]] == [sid]
            stopped = await call(alice, "stop_kd")
            assert stopped["state"] == "exited"
    responses = (tmp_path / "http-alice.bin").read_bytes() + (tmp_path / "http-bob.bin").read_bytes()
    assert b"key=***" in responses  # the recording saw the results (kd's version output)
    emitted = b"".join(lines) + responses
    for secret in (TOKEN_A, TOKEN_B, CANARY_WORD):
        assert secret.encode() not in emitted


async def test_stdio_tool_groups_limit_the_surface(tmp_path):
    from mcp import StdioServerParameters

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "kdmcp", "--simulate", "--structured",
                                                                 "--tools", "output"], cwd=str(ROOT))
    with anyio.fail_after(60):
        async with Client(params, read_timeout_seconds=30) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {*tool_groups()["session"], "read_output"}
            refused = await call(client, "kd_command", command="r")
            assert refused["category"] == "policy_denied"



def _lifetime_listener(tmp_path: Path, idle_stop_minutes: float):
    tokens = tmp_path / "clients.yaml"
    tokens.write_text(f"alice: {{token: {TOKEN_A}, policy: standard}}\nbob: {{token: {TOKEN_B}, policy: standard}}\n")
    tokens.chmod(0o600)
    config = tmp_path / "kdmcp.yaml"
    config.write_text(f"max_sessions: 2\nidle_stop_minutes: {idle_stop_minutes}\n")
    return listener("--token-file", str(tokens), "--config", str(config), "--transcript",
                    str(tmp_path / "run.jsonl"), env=_env())


async def test_a_clients_sessions_outlive_its_connection_and_are_listed_on_reconnect(tmp_path):
    """Sessions belong to the token's client, not to a connection: a reconnect is told of them,
    another client is not, and the limit says who holds the slots and what frees one."""
    with _lifetime_listener(tmp_path, idle_stop_minutes=0) as (url, _lines):
        async with http_client(url, TOKEN_A) as alice:
            assert "earlier connection" not in (alice.instructions or "")
            started = await call(alice, "start_kd", port=50000, key=CANARY_KEY, initial_break=True)
            assert not started["_is_error"], started
        async with http_client(url, TOKEN_B) as bob:  # another client: not told of alice's
            assert "earlier connection" not in (bob.instructions or "")
            await call(bob, "start_kd", port=50001, key=CANARY_KEY, initial_break=True)
            full = await call(bob, "start_kd", port=50002, key=CANARY_KEY, initial_break=True)
            assert full["category"] == "capacity"
            assert "yours: s2 (kdnet, broken); 1 of another client's; stop_kd session_id=s2" in full["message"]
            await call(bob, "stop_kd")
        async with http_client(url, TOKEN_A) as alice:  # a new connection, the same client
            assert "still live: s1 (kdnet, broken)" in (alice.instructions or "")
            assert [s["session_id"] for s in (await call(alice, "list_sessions"))["sessions"]] == ["s1"]
            assert not (await call(alice, "kd_command", command="r"))["_is_error"]  # no session_id needed
            await call(alice, "stop_kd")


async def test_a_session_no_call_uses_is_stopped_with_its_guest_resumed(tmp_path):
    with _lifetime_listener(tmp_path, idle_stop_minutes=0.05) as (url, _lines):  # 3 s; looked at every second
        async with http_client(url, TOKEN_A) as alice:
            started = await call(alice, "start_kd", port=50000, key=CANARY_KEY, initial_break=True)
            assert not started["_is_error"], started
        async with http_client(url, TOKEN_A) as alice:
            with anyio.fail_after(30):  # nobody uses it: the idle stop resumes the guest and quits kd
                while (await call(alice, "list_sessions"))["sessions"][0]["state"] != "exited":
                    await anyio.sleep(0.5)
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    (stop,) = [r for r in records if r.get("kind") == "session" and r.get("event") == "stopped"]
    assert stop["session_id"] == "s1" and stop["reason"] == "idle for 0.05 minutes"
    assert stop["actions"][0].startswith("resumed target") and "running" in stop["how"]
