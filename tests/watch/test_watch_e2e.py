"""End to end: ``kd-mcp serve --simulate --transcript X`` on stdio under the SDK client, watched by
``kd-mcp watch --once --transcript X`` in another process while it runs.

The target's DbgPrint lines, printed while it runs between two tool calls, reach the session log
(and so the view) with no further call: the server's LogFlusher copied them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import scenario
from tests.server.helpers import CANARY_WORD, write_state

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)
ROOT = Path(__file__).resolve().parents[2]
DBGPRINT = "EchoDriver: DriverEntry called"  # fixtures/scenarios/running.yaml, printed after g


async def watch_once(transcript: Path, *args: str) -> str:
    done = await anyio.run_process(
        [sys.executable, "-m", "kdmcp", "watch", "--once", "--transcript", str(transcript), *args],
        check=False,
        cwd=ROOT,
        env={"COLUMNS": "140", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


async def log_shows(log: Path, text: str) -> None:
    """Wait (bounded) until ``text`` is in the session log: the flusher ticks every 0.5 s."""
    with anyio.fail_after(10):
        while not (log.exists() and text in log.read_text(encoding="utf-8", errors="replace")):
            await anyio.sleep(0.05)


async def test_watch_shows_the_session_its_commands_and_what_the_target_printed_between_calls(tmp_path):
    state = write_state(tmp_path / "kd-session.json")
    transcript = tmp_path / "run.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(ROOT),
        args=["-m", "kdmcp", "serve", "--simulate", "--structured",
              "--scenario", scenario("running"), "--transcript", str(transcript)],
    )
    with anyio.fail_after(90):
        async with Client(params, read_timeout_seconds=30) as client:
            started = await client.call_tool(
                "start_from_state", {"state_file": str(state), "initial_break": True, "timeout_s": 20}
            )
            assert started.structured_content["state"] == "broken", started
            sid = started.structured_content["session_id"]
            listed = await client.call_tool("kd_command", {"command": "lm m nt"})
            assert "nt" in listed.content[0].text

            frame = await watch_once(transcript)
            assert f"\u25b6 {sid}" in frame and "broken" in frame and "following" in frame
            assert "kdnet KDNET port 50000" in frame  # the kind and what it is attached to
            assert '"lm m nt"' in frame and "start_from_state" in frame
            assert "0: kd> lm m nt" in frame and "(pdb symbols)" in frame

            await client.call_tool("continue_go", {})
            await log_shows(transcript.with_name(f"run.jsonl.{sid}.log"), DBGPRINT)  # no tool call since
            frame = await watch_once(transcript, sid, "--lines", "40")
            assert DBGPRINT in frame and "continue_go" in frame

    stopped = await watch_once(transcript)
    assert "server stopped at" in stopped and "ended" in stopped
    every = transcript.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("run.jsonl.*.log"))
    assert CANARY_WORD.encode() not in every and CANARY_WORD not in frame + stopped
