"""Transcripts: JSONL records of a whole stdio session, session logs, show and cast — no secret in any."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from kdmcp.server.transcript import cap, read_records
from tests.server.helpers import CANARY_WORD, write_state

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)
ROOT = Path(__file__).resolve().parents[2]



def test_cap_marks_what_it_cuts():
    value, cut = cap({"a": "x" * 5000, "b": ["y" * 10], "c": 3})
    assert cut and len(value["a"]) == 4096 and value["b"] == ["y" * 10] and value["c"] == 3
    assert cap({"a": "short"}) == ({"a": "short"}, False)


async def test_a_whole_session_is_transcribed_without_the_key(tmp_path):
    state = write_state(tmp_path / "kd-session.json")
    transcript = tmp_path / "run.jsonl"
    env = {**os.environ, "KDMCP_TRANSCRIPT": str(transcript)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "kdmcp", "--simulate", "--structured"], env=env,
                                   cwd=str(ROOT))
    with anyio.fail_after(90):
        async with Client(params, read_timeout_seconds=30) as client:
            started = await client.call_tool("start_from_state", {"state_file": str(state), "timeout_s": 20})
            sid = started.structured_content["session_id"]
            await client.call_tool("break_in", {})
            await client.call_tool("kd_command", {"command": "version"})  # kd prints the key here
            await client.call_tool("kd_command", {"command": "!bogus"})
            await client.call_tool("kd_command", {"command": "r\nk"})  # an error result
            await client.call_tool("resume_for_winrm", {"wait_s": 0.2})
            fresh = "fr35hk3y00000.aaaa.bbbb.cccc"  # a key the server has not seen before this call
            await client.call_tool("start_kd", {"port": 50001, "key": fresh, "timeout_s": 20})
            await client.call_tool("stop_kd", {"session_id": sid})
    records = read_records(transcript)
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "start" and records[0]["pid"] > 0 and records[0]["version"]
    assert kinds[-1] == "stop"
    requests = [r for r in records if r["kind"] == "request"]
    assert [r["tool"] for r in requests][:3] == ["start_from_state", "break_in", "kd_command"]
    assert any(r["kind"] == "request" and r["args"].get("key") == "***" for r in records)
    results = [r for r in records if r["kind"] == "result"]
    assert any(r["status"] == "error" and r["category"] == "invalid_argument" for r in results)
    assert all("elapsed_ms" in r for r in results)
    assert any(r["kind"] == "session" and r["event"] == "stopped" and r["actions"] for r in records)
    assert {"connected", "break_in"} <= {r["event"] for r in records if r["kind"] == "event"}
    log = transcript.with_name(f"run.jsonl.{sid}.log").read_text()
    assert "Using NET for debugging" in log and "command line:" in log and "key=***" in log
    every = transcript.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("run.jsonl.*.log"))
    assert CANARY_WORD.encode() not in every and b"fr35hk3y00000" not in every

    shown = subprocess.run([sys.executable, "-m", "kdmcp", "transcript", "show", str(transcript)],
                           capture_output=True, timeout=30, check=True, cwd=ROOT)
    assert b"start_from_state" in shown.stdout and CANARY_WORD.encode() not in shown.stdout
    cast = tmp_path / "run.cast"
    subprocess.run([sys.executable, "-m", "kdmcp", "transcript", "cast", str(transcript), "-o", str(cast)],
                   capture_output=True, timeout=30, check=True, cwd=ROOT)
    lines = cast.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["version"] == 2 and header["width"] > 0
    frames = [json.loads(line) for line in lines[1:]]
    assert all(f[1] == "o" for f in frames) and [f[0] for f in frames] == sorted(f[0] for f in frames)
    assert any("kd-mcp>" in f[2] and "kd_command" in f[2] for f in frames)
    assert CANARY_WORD not in cast.read_text()


async def test_shutdown_with_a_transcript_frees_every_spill_file(tmp_path):
    """Ended sessions stay readable for the final session logs, then their spill files close."""
    from kdmcp.config import Config
    from kdmcp.server import KdMcpApp, ServerOptions
    from kdmcp.server.call import Call
    from kdmcp.server.tools.sessions.kdnet import start_kd
    from tests.server.helpers import CANARY_KEY

    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, transcript=str(tmp_path / "run.jsonl")))
    started = await anyio.to_thread.run_sync(
        lambda: start_kd(Call(app, None), 50000, CANARY_KEY, None, None, True, 20)
    )
    session = app.manager.get(started.session_id)
    await anyio.to_thread.run_sync(app.shutdown)
    assert session.store._closed
