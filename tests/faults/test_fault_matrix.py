"""The fault matrix: each fault on the simulator, through the MCP server.

Every case checks the session's state and the error category, that the server keeps serving
another session meanwhile, and that no output byte was lost: the simulator appends every byte
it writes to a log (``KDMCP_SIM_EMIT_LOG``), which must equal what the session stored. The
pipe backend is used so the bytes are comparable one for one (a pty adds its echo).
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from kdmcp.engine import SessionState
from kdmcp.server import KdMcpApp
from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)



class Harness:
    """One server app, a session under test and a witness session that must keep answering."""

    def __init__(self, app: KdMcpApp, client: Any, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.app, self.client, self.tmp, self.mp = app, client, tmp, monkeypatch
        self.logs: dict[str, Path] = {}

    async def start(self, port: int, initial_break: bool = True) -> str:
        log = self.tmp / f"emitted-{port}.bin"
        self.mp.setenv("KDMCP_SIM_EMIT_LOG", str(log))
        result = await self.call("start_kd", port=port, key=CANARY_KEY, initial_break=initial_break)
        assert not result["_is_error"], result
        self.logs[result["session_id"]] = log
        return str(result["session_id"])

    async def call(self, name: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(name, args)
        data = result_data(result)
        data["_is_error"] = bool(result.is_error)
        return data

    def session(self, sid: str) -> Any:
        return self.app.manager.get(sid, include_ended=True)

    async def assert_witness_answers(self, witness: str) -> None:
        out = await self.call("kd_command", command=".echo witness", session_id=witness)
        assert not out["_is_error"] and out["output"].strip() == "witness"

    def tails(self, sid: str, size: int = 400) -> dict[str, bytes]:
        """The last bytes the simulator emitted and the session stored: what a failure needs."""
        session = self.session(sid)
        return {
            "emitted": self.logs[sid].read_bytes()[-size:],
            "stored": session.read_output(max(0, session.store.size - size), size),
        }

    def assert_nothing_lost(self, sid: str, *, killed: bool = False) -> None:
        """Everything the simulator emitted is stored; a killed one logged what it was about to write."""
        session = self.session(sid)
        stored = session.read_output(0, session.store.size)
        emitted = self.logs[sid].read_bytes()
        if killed:
            assert emitted.startswith(stored) and b"Scanning pool" in stored
        else:
            assert len(stored) == len(emitted) and stored == emitted


@asynccontextmanager
async def _serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **config: Any) -> AsyncIterator[Harness]:
    # The simulator's fault commands (!hang, !crash…) are unknown extensions, which the
    # standard policy refuses: these tests are about the engine, so the policy is full.
    app = make_app("faults", console_backend="pipe", policy="full", **config)
    async with in_memory(app) as client:
        yield Harness(app, client, tmp_path, monkeypatch)


@pytest.fixture
async def harness(tmp_path, monkeypatch):
    async with _serving(tmp_path, monkeypatch) as serving:
        yield serving


# A stop gives resume, quit and terminate a third of timeouts.stop each before it escalates. A
# debugger deaf to all of them spends each third in full (10 s in all by default), so the test
# of that escalation uses 3 s: a second is ample for a SIGTERMed simulator to exit, and the
# steps taken are the same.
QUICK_STOP = {"stop": 3.0}


@pytest.fixture
async def quick_stop_harness(tmp_path, monkeypatch):
    async with _serving(tmp_path, monkeypatch, timeouts=QUICK_STOP) as serving:
        yield serving


async def _waited(session: Any, predicate: Any, timeout: float = 20) -> bool:
    return await anyio.to_thread.run_sync(lambda: session.wait_for(predicate, timeout))


async def test_debugger_killed_mid_command(harness):
    witness = await harness.start(50001)
    sid = await harness.start(50002)
    session = harness.session(sid)
    outcome: dict[str, Any] = {}

    async def run() -> None:
        outcome.update(await harness.call("kd_command", command="!hang", session_id=sid, timeout_s=60))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        start = session.store.size
        assert await _waited(session, lambda: b"Scanning pool" in session.read_output(start, 4096))
        os.kill(session.pid, signal.SIGKILL)
    assert outcome["_is_error"] and outcome["category"] == "debugger_exited"
    assert session.state == SessionState.exited and session.exit_code == -signal.SIGKILL
    await harness.assert_witness_answers(witness)
    harness.assert_nothing_lost(sid, killed=True)
    harness.assert_nothing_lost(witness)


async def test_debugger_hangs_forever(quick_stop_harness):
    harness = quick_stop_harness
    witness = await harness.start(50001)
    sid = await harness.start(50002)
    hung = await harness.call("kd_command", command="!hardhang", session_id=sid, timeout_s=0.5)
    assert hung["_is_error"] and hung["category"] == "timeout" and hung["state"] == "busy"
    assert "Scanning pool" in hung["partial_output"] and hung["output_id"].startswith(f"{sid}:")
    busy = await harness.call("kd_command", command="r", session_id=sid)
    assert busy["category"] == "busy"
    stuck = await harness.call("break_in", session_id=sid, timeout_s=0.5)
    assert stuck["_is_error"] and stuck["category"] == "timeout"
    await harness.assert_witness_answers(witness)
    stopped = await harness.call("stop_kd", session_id=sid)
    assert stopped["state"] == "exited" and ("terminated" in stopped["actions"] or "killed" in stopped["actions"])
    harness.assert_nothing_lost(sid)


async def test_target_reboots_during_a_command(harness):
    witness = await harness.start(50001)
    sid = await harness.start(50002)
    out = await harness.call("kd_command", command="!rebootnow", session_id=sid, timeout_s=20)
    assert out["_is_error"] and out["category"] == "not_connected"
    session = harness.session(sid)
    assert await _waited(session, lambda: session.state == SessionState.broken)  # back, with -b
    kinds = [e.kind for e in session.events_since(0)]
    assert "reboot" in kinds and kinds.count("connected") == 2
    await harness.assert_witness_answers(witness)
    again = await harness.call("kd_command", command=".echo back", session_id=sid)
    assert again["output"].strip() == "back"
    harness.assert_nothing_lost(sid)


async def test_transport_loss(harness):
    witness = await harness.start(50001)
    sid = await harness.start(50002)
    out = await harness.call("kd_command", command="!lose", session_id=sid, timeout_s=20)
    assert out["_is_error"] and out["category"] == "not_connected"
    session = harness.session(sid)
    assert "transport_lost" in [e.kind for e in session.events_since(0)]
    assert await _waited(session, lambda: session.state == SessionState.broken)
    await harness.assert_witness_answers(witness)
    harness.assert_nothing_lost(sid)


async def test_invalid_utf8_nul_bytes_prompt_like_text_and_fake_markers(harness):
    witness = await harness.start(50001)
    sid = await harness.start(50002)
    raw = await harness.call("kd_command", command="!binary", session_id=sid)
    assert not raw["_is_error"] and "\ufffd" in raw["output"] and "\x00" in raw["output"]
    fake = await harness.call("kd_command", command="!fakeprompt", session_id=sid)
    assert fake["output"].replace("\r\n", "\n").endswith("KDMCPDEADBEEF\nkd> lkd> 0:000> \nlast line\n")
    assert fake["state"] == "broken"
    await harness.assert_witness_answers(witness)
    harness.assert_nothing_lost(sid)


@pytest.mark.slow
async def test_a_100_mb_output(harness):
    witness = await harness.start(50001)
    sid = await harness.start(50002)
    big = await harness.call("kd_command", command="!bulk100", session_id=sid, timeout_s=120)
    assert not big["_is_error"] and big["truncated"] and big["output_bytes"] >= 100 * 1024 * 1024
    last = await harness.call("read_output", output_id=big["output_id"], offset=big["output_bytes"] - 4096,
                              limit=4096)
    assert last["eof"] and last["text"].endswith("........\r\n")
    await harness.assert_witness_answers(witness)
    harness.assert_nothing_lost(sid)


async def test_break_in_storm(harness):
    sid = await harness.start(50002, initial_break=False)
    results: list[dict[str, Any]] = []

    async def one() -> None:
        results.append(await harness.call("break_in", session_id=sid))

    for _ in range(2):  # the storm, twice: running -> broken, then resumed and again
        results.clear()
        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(one)
        assert len(results) == 50 and all(not r["_is_error"] for r in results), results
        assert {r["state"] for r in results} == {"broken"}
        assert sum(not r["already_broken"] for r in results) >= 1
        resumed = await harness.call("continue_go", session_id=sid)
        assert resumed["state"] == "running"
    # right after a continue: a Ctrl+C that reaches kd before it has read the g is dropped
    # at its prompt, so break_in has to ask again
    final = await harness.call("break_in", session_id=sid)
    assert not final["_is_error"] and final["state"] == "broken", (final, harness.tails(sid))
    out = await harness.call("kd_command", command=".echo calm", session_id=sid)
    assert out["output"].strip() == "calm"
    harness.assert_nothing_lost(sid)


async def test_client_gone_mid_call_leaves_the_session_and_a_running_target(harness):
    sid = await harness.start(50002)
    progressed = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    async with anyio.create_task_group() as tg:

        async def wait_for_winrm() -> None:
            await harness.client.call_tool("resume_for_winrm", {"session_id": sid, "wait_s": 30},
                                           progress_callback=on_progress)

        tg.start_soon(wait_for_winrm)
        await progressed.wait()  # the guest was resumed and the server is waiting
        tg.cancel_scope.cancel()  # the client goes away
    session = harness.session(sid)
    assert session.state == SessionState.running  # resumed, not frozen at a break
    listed = await harness.call("list_sessions")
    assert [s["session_id"] for s in listed["sessions"] if s["live"]] == [sid]
    broke = await harness.call("break_in", session_id=sid)
    assert broke["state"] == "broken"
    harness.assert_nothing_lost(sid)
