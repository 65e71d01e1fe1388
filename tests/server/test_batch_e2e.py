"""debug_batch end to end over stdio, on the simulated kernel world (issue 15's acceptance).

A real server process (``python -m kdmcp --simulate``) on a KDNET session started with
``start_from_state`` and an initial break. Every path ends the same way — the ``always``
steps, then unless committed the rollback — which each test checks afterwards with the
session's own ``bl``, ``r`` and ``db``: a batch that fails, times out or is cancelled leaves no
breakpoint of its own behind and the target as it was.

The breakpoints the tests set are on routines the world's running cycle never calls
(``nt!NtWriteFile``, ``nt!KeBugCheckEx``: docs/simulator.md, "While the target runs"), so a
target let run stays running until something breaks in.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import scenario
from tests.server.helpers import result_data, server_argv, write_state

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[2]
Call = Callable[..., Awaitable[dict[str, Any]]]
UNHIT = ("nt!NtWriteFile", "nt!KeBugCheckEx")


@asynccontextmanager
async def kernel_session(
    tmp_path: Path, policy: str = "standard", scenario_name: str | None = None
) -> AsyncIterator[tuple[Client, Call]]:
    """A stdio server under ``policy`` and one KDNET session broken in at its initial break."""
    config = tmp_path / "kdmcp.yaml"
    config.write_text(f"policy: {policy}\n")
    args = ["--simulate", "--config", str(config)]
    if scenario_name is not None:
        args += ["--scenario", scenario(scenario_name)]
    argv = server_argv(*args)
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(ROOT))
    state = write_state(tmp_path / "kd-session.json")
    async with Client(params, read_timeout_seconds=60) as client:

        async def call(name: str, **arguments: Any) -> dict[str, Any]:
            with anyio.fail_after(60):
                result = await client.call_tool(name, arguments)
            data = result_data(result)
            data["_is_error"] = bool(result.is_error)
            data["_text"] = "\n".join(getattr(c, "text", "") for c in result.content)
            return data

        started = await call("start_from_state", state_file=str(state), initial_break=True, timeout_s=20)
        assert started["state"] == "broken", started
        try:
            yield client, call
        finally:
            await call("stop_kd")


async def breakpoints(call: Call) -> list[dict[str, Any]]:
    listed = await call("kd_command", command="bl")
    assert not listed["_is_error"], listed
    return list(listed["record"].get("breakpoints", []))


async def where(call: Call) -> tuple[str, str | None]:
    """The state and the instruction pointer (rip), as ``r rip`` says it."""
    regs = await call("registers", register="rip")
    return regs["state"], regs["record"]["registers"]["rip"]


async def whole_output(call: Call) -> str:
    data = await call("read_output", limit=1024 * 1024)
    return str(data["text"])


# --------------------------------------------------------------------------- failure


async def test_a_batch_that_fails_midway_leaves_no_breakpoint_and_the_target_as_it_was(tmp_path):
    async with kernel_session(tmp_path) as (_, call):
        before = await where(call)
        assert await breakpoints(call) == []
        result = await call(
            "debug_batch",
            steps=[
                {"command": f"bp {UNHIT[0]}"},
                {"tool": "kd_command", "arguments": {"command": f"bp {UNHIT[1]}"}},
                {"tool": "continue_go"},
                {"command": "r"},  # the target runs: target_running, the batch fails here
                {"command": ".echo never-run"},
            ],
            always=[{"tool": "read_output", "arguments": {"limit": 16}}],
        )
        assert not result["_is_error"], result
        assert result["outcome"] == "failed" and result["failed_step"] == 4
        steps = result["steps"]
        assert [(s["index"], s["ok"], s.get("always", False)) for s in steps] == [
            (1, True, False),
            (2, True, False),
            (3, True, False),
            (4, False, False),
            (1, True, True),
        ]
        assert steps[3]["error"]["category"] == "target_running"
        assert steps[3]["unmet"] == "expected ok, got error[target_running]"
        assert steps[2]["summary"] == "confirmed running"
        assert result["rolled_back"] == ["break_in", "bc 0 1"]
        assert result["state"] == "broken"
        lines = result["_text"].splitlines()
        assert lines[0].endswith("failed at step 4]")
        assert "4 FAILED `r`: expected ok, got error[target_running]" in lines[4]
        assert "rolled back: break_in; bc 0 1" in lines

        assert await breakpoints(call) == []
        assert await where(call) == before
        assert "never-run" not in await whole_output(call)


async def test_a_committed_batch_keeps_its_breakpoints_and_rolls_nothing_back(tmp_path):
    async with kernel_session(tmp_path) as (_, call):
        result = await call(
            "debug_batch",
            steps=[
                {"command": f"bp {UNHIT[0]}"},
                {"command": "bl", "expect": {"contains": UNHIT[0], "fields": {"state": "broken"}}},
            ],
            always=[{"command": ".echo always-committed"}],
        )
        assert result["outcome"] == "committed", result
        assert "failed_step" not in result and "rolled_back" not in result
        assert [s["ok"] for s in result["steps"]] == [True, True, True]
        assert result["steps"][2]["summary"] == "always-committed"
        assert [b["symbol"] for b in await breakpoints(call)] == [UNHIT[0]]


async def test_expect_variants(tmp_path):
    async with kernel_session(tmp_path) as (_, call):
        result = await call(
            "debug_batch",
            steps=[
                {"command": "!hang", "expect": {"error": "policy_denied"}},  # an unknown extension: standard denies it
                {
                    "tool": "registers",
                    "arguments": {"register": "rip"},
                    "expect": {"contains": "rip=", "state": "broken", "fields": {"state": "broken"}},
                },
                {"command": "bp nt!NoSuchRoutineAnywhere", "expect": {"ok": True}},
                {"tool": "continue_go", "expect": {"fields": {"confirmed": "running"}, "state": "running"}},
                {"command": "r", "expect": {"ok": False}},
                {"command": "r", "expect": {"error": "target_running", "contains": "break in"}},
                {"tool": "break_in", "expect": {"state": "running"}},  # it stops the target: unmet
                {"command": ".echo never-run"},
            ],
        )
        assert result["outcome"] == "failed" and result["failed_step"] == 7, result
        assert [s["ok"] for s in result["steps"]] == [True] * 6 + [False]
        assert result["steps"][0]["error"]["category"] == "policy_denied"
        assert result["steps"][6]["unmet"] == "expected state running, got broken"
        assert "summary" not in result["steps"][6]  # event lines are the batch's: listed once, in its events
        assert result["rolled_back"] == ["bc 0"]  # the deferred bp of step 3
        assert await breakpoints(call) == []


async def test_steps_the_read_only_policy_denies(tmp_path):
    async with kernel_session(tmp_path, policy="read_only") as (_, call):
        denied = await call("debug_batch", steps=[{"command": "r"}, {"command": f"bp {UNHIT[0]}"}])
        assert denied["outcome"] == "failed" and denied["failed_step"] == 2
        assert denied["steps"][1]["error"]["category"] == "policy_denied"
        go = await call("debug_batch", steps=[{"tool": "continue_go"}])
        assert go["steps"][0]["error"]["category"] == "policy_denied"
        expected = await call(
            "debug_batch",
            steps=[{"command": f"bp {UNHIT[0]}", "expect": {"error": "policy_denied"}}, {"command": "bl"}],
        )
        assert expected["outcome"] == "committed"
        assert await where(call) == ("broken", "0xfffff80062a05c20")


async def test_session_tools_and_unknown_tools_are_refused_before_anything_runs(tmp_path):
    async with kernel_session(tmp_path) as (_, call):
        for bad in (
            {"tool": "stop_kd"},
            {"tool": "share_session"},
            {"tool": "debug_batch"},
            {"tool": "start_from_state"},
            {"tool": "no_such_tool"},
            {"tool": "kd_command", "arguments": {"command": "bl", "session_id": "s9"}},
        ):
            refused = await call("debug_batch", steps=[{"command": f"bp {UNHIT[0]}"}, bad])
            assert refused["_is_error"] and refused["category"] == "invalid_argument", refused
            assert refused["message"].startswith("steps[2]: ")
        assert await breakpoints(call) == []  # step 1 never ran
        unknown = await call("debug_batch", steps=[{"command": "bl"}], session_id="s9")
        assert unknown["_is_error"] and unknown["category"] == "unknown_session"


async def test_registers_and_memory_are_restored_when_asked(tmp_path):
    async with kernel_session(tmp_path) as (_, call):
        rax = (await call("registers", register="rax"))["record"]["registers"]["rax"]
        stack = (await call("kd_command", command="db @rsp L10"))["record"]
        result = await call(
            "debug_batch",
            steps=[
                {"command": "r rax=0x1234"},
                {"command": "eb @rsp+2 11 22 33"},
                {"command": "r rax", "expect": {"contains": "rax=0000000000009999"}},
            ],
            restore={"registers": True, "memory": [{"address": "@rsp", "length": 16}]},
        )
        assert result["outcome"] == "failed" and result["failed_step"] == 3
        undone = result["rolled_back"]
        assert undone[0] == "r rax=0x0" and len(undone) == 2
        assert undone[1].startswith("eb 0xfffff80066c0ef3a ") and len(undone[1].split()) == 5
        assert (await call("registers", register="rax"))["record"]["registers"]["rax"] == rax
        assert (await call("kd_command", command="db @rsp L10"))["record"] == stack


# ---------------------------------------------------------------- timeout, cancellation


async def test_a_batch_that_times_out_is_rolled_back(tmp_path):
    async with kernel_session(tmp_path, policy="full", scenario_name="faults") as (_, call):
        before = await where(call)
        result = await call(
            "debug_batch",
            steps=[
                {"command": f"bp {UNHIT[0]}"},
                {"command": "!hang"},  # prints, then never prompts until Ctrl+C
                {"command": ".echo never-run"},
            ],
            always=[{"command": ".echo always-timed-out"}],
            timeout_s=1.5,
        )
        assert result["outcome"] == "timed_out" and result["failed_step"] == 2, result
        assert result["steps"][1]["error"] == {"category": "timeout", "message": "the batch's timeout_s (1.5s) ran out"}
        assert result["steps"][2]["always"] and result["steps"][2]["ok"]
        assert result["rolled_back"] == ["bc 0"]
        assert await breakpoints(call) == []
        assert await where(call) == before
        output = await whole_output(call)
        assert "always-timed-out" in output and "never-run" not in output


async def test_a_cancelled_batch_runs_always_and_rolls_back(tmp_path):
    async with kernel_session(tmp_path, policy="full", scenario_name="faults") as (client, call):
        before = await where(call)
        progressed = anyio.Event()
        messages: list[str] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")
            progressed.set()

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:

                async def batch() -> None:
                    await client.call_tool(
                        "debug_batch",
                        {
                            "steps": [{"command": f"bp {UNHIT[0]}"}, {"command": "!hang"}],
                            "always": [{"command": ".echo always-cancelled"}],
                            "timeout_s": 60,
                        },
                        progress_callback=on_progress,
                    )

                tg.start_soon(batch)
                await progressed.wait()  # step 2 is hanging inside the server
                tg.cancel_scope.cancel()
        assert messages[0].startswith("step 2/2 `!hang`: running '!hang'")
        # The rollback runs in the server after the cancellation: wait (bounded) for it.
        with anyio.fail_after(30):
            while await breakpoints(call) != [] or "always-cancelled" not in await whole_output(call):
                await anyio.sleep(0.05)
        assert await where(call) == before
