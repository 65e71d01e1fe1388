"""Long waits report progress when asked, and a cancelled call leaves the session usable."""

from __future__ import annotations

import sys
import threading
from types import FrameType

import anyio
import pytest

from kdmcp.engine import SessionState
from kdmcp.server import KdMcpApp
from tests.server.helpers import CANARY_KEY, in_memory, make_app

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)


async def _until_state(app: KdMcpApp, state: SessionState, timeout_s: float = 20.0) -> None:
    """Poll until the app's only session is in ``state``; fail after ``timeout_s``."""
    with anyio.fail_after(timeout_s):
        while [info.state for info in app.manager.infos()] != [state]:
            await anyio.sleep(0.02)


def _running(function: str) -> int | None:
    """The thread running ``function`` now (its frames say so)."""
    for ident, frame in sys._current_frames().items():
        walk: FrameType | None = frame
        while walk is not None:
            if walk.f_code.co_name == function:
                return ident
            walk = walk.f_back
    return None


async def test_resume_for_winrm_reports_progress():
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with in_memory(make_app()) as client:
        await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        with anyio.fail_after(30):
            # 3.5 s, not 2.5: the second tick is due after 2 s of waiting plus the first tick's send;
            # with 2.5 s, a send held up half a second (a loaded machine) would lose that tick.
            result = await client.call_tool("resume_for_winrm", {"wait_s": 3.5}, progress_callback=on_progress)
        assert not result.is_error
        assert result.structured_content["waited_s"] >= 3.5
    assert [p for p, _, _ in seen][:2] == [1.0, 2.0]
    assert seen[0][1] == 3.5 and "letting the guest run" in (seen[0][2] or "")


async def test_cancelled_command_is_broken_off_and_the_session_stays_usable():
    progressed = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    app = make_app("faults", policy="full")  # !hang is an unknown extension to the standard policy
    async with in_memory(app) as client:
        await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        session = app.manager.get()
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:

                async def hang() -> None:
                    await client.call_tool("kd_command", {"command": "!hang", "timeout_s": 60},
                                           progress_callback=on_progress)

                tg.start_soon(hang)
                await progressed.wait()  # the command is running inside the server
                hang_worker = _running("kd_command")
                assert hang_worker is not None
                tg.cancel_scope.cancel()
        # The server broke the hang off with Ctrl+C on its own: the session is at a prompt again.
        broken = await anyio.to_thread.run_sync(
            lambda: session.wait_for(lambda: session.state == SessionState.broken, 20)
        )
        assert broken
        # and the worker thread that ran it is gone once its work ended, not at a later call
        with anyio.fail_after(20):
            while any(t.ident == hang_worker and t.is_alive() for t in threading.enumerate()):
                await anyio.sleep(0.02)
        after = await client.call_tool("kd_command", {"command": ".echo alive"})
        assert not after.is_error and after.structured_content["output"].strip() == "alive"


async def test_cancelled_connect_stops_the_waiting_debugger(tmp_path):
    from tests.server.helpers import write_state

    progressed = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    app = make_app("strict_key")  # accepts another key: kd waits forever
    state = write_state(tmp_path / "kd-session.json", port=50005)
    async with in_memory(app) as client:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:

                async def connect() -> None:
                    await client.call_tool("start_from_state", {"state_file": str(state), "timeout_s": 60},
                                           progress_callback=on_progress)

                tg.start_soon(connect)
                await progressed.wait()  # the start is under way inside the server
                # The first tick comes after a second of wall time, whatever the debugger did by
                # then: under load kd may still be ``starting``. Wait for the state itself.
                await _until_state(app, SessionState.waiting_for_target)
                tg.cancel_scope.cancel()
        session = app.manager.get("s1", include_ended=True)
        assert await anyio.to_thread.run_sync(lambda: session.wait_for(lambda: session.state == SessionState.exited,
                                                                        20))
        listed = await client.call_tool("list_sessions", {})
        assert [s["live"] for s in listed.structured_content["sessions"]] == [False]
