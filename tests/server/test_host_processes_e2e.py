"""``attach_process`` never debugs kd-mcp's own process tree, for any client (issue 28, item 5).

In process: the in-memory server *is* this test process, so its own pid, its parent and the
simulated debuggers it starts are real processes of this host. Over the HTTP listener: one
client may not attach to another client's debugger (nor a ``read_only`` client to anything).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.server.helpers import in_memory, make_app, result_data
from tests.server.test_listener import TOKEN_A, TOKEN_B, _env, call, http_client, listener

TOKEN_C = "t0kenCar0l-0123456789zyxwvu"

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)


@pytest.mark.parametrize("config", [{"policy": "full"}, {"allow_attach": True}], ids=["full", "allow_attach"])
async def test_attach_refuses_kd_mcp_its_parent_and_its_debuggers(config: dict[str, object]) -> None:
    async with in_memory(make_app(**config)) as client:
        async def attach(pid: int) -> dict[str, object]:
            return result_data(await client.call_tool("attach_process", {"pid": pid, "timeout_s": 30}))

        for pid, why in ((os.getpid(), "is kd-mcp itself"), (os.getppid(), "ancestor of kd-mcp")):
            refused = await attach(pid)
            assert refused["category"] == "policy_denied" and why in str(refused["message"]), refused
        kd = result_data(await client.call_tool("start_from_state", {"initial_break": True}))
        # The opt-in works: a process of someone else's (the simulator's pid 4242) is attached.
        other = await attach(4242)
        assert other.get("kind") == "process" and other["state"] == "broken", other
        sessions = result_data(await client.call_tool("list_sessions", {}))["sessions"]
        pids = {s["session_id"]: s["pid"] for s in sessions}  # type: ignore[union-attr,index]
        assert len(pids) == 2 and all(isinstance(p, int) for p in pids.values()), sessions
        for sid in (kd["session_id"], other["session_id"]):  # its kd child, and the cdb it just started
            refused = await attach(pids[sid])
            assert refused["category"] == "policy_denied", refused
            assert "a debugger kd-mcp started" in str(refused["message"]), refused


async def test_no_attach_without_the_opt_in_and_no_local_kernel_either() -> None:
    async with in_memory(make_app()) as client:
        refused = result_data(await client.call_tool("attach_process", {"pid": os.getpid()}))
        # The policy first: a caller without the opt-in learns nothing about the pid.
        assert refused["category"] == "policy_denied" and "allow_attach: true" in str(refused["message"])
        local = result_data(await client.call_tool("attach_local_kernel", {}))
        assert local["category"] == "policy_denied" and "allow_local_kernel: true" in str(local["message"])


async def test_a_listener_client_cannot_attach_to_another_clients_debugger(tmp_path: Path) -> None:
    tokens = tmp_path / "clients.yaml"
    tokens.write_text(
        f"alice: {{token: {TOKEN_A}, policy: full}}\n"
        f"bob: {{token: {TOKEN_B}, tools: [output], policy: read_only}}\n"
        f"carol: {{token: {TOKEN_C}, policy: full}}\n"
    )
    tokens.chmod(0o600)
    config = tmp_path / "kdmcp.yaml"
    config.write_text("allow_attach: true\nallow_local_kernel: true\n")  # the stdio client's: no listener client's
    with listener("--token-file", str(tokens), "--config", str(config), env=_env()) as (url, _lines):
        async with http_client(url, TOKEN_A) as alice, http_client(url, TOKEN_B) as bob, \
                http_client(url, TOKEN_C) as carol:
            started = await call(alice, "start_from_state", initial_break=True)
            assert not started["_is_error"], started
            pid = (await call(alice, "list_sessions"))["sessions"][0]["pid"]
            # bob, read_only with the output tools only, gets neither host power, whatever the config says
            for name, args in (("attach_process", {"pid": pid}), ("attach_process", {"pid": 4242}),
                               ("attach_local_kernel", {})):
                refused = await call(bob, name, **args)
                assert refused["category"] == "policy_denied" and "policy: full" in refused["message"], refused
            # carol, full, may attach -- but not to alice's debugger, nor to her own
            for who in (carol, alice):
                own = await call(who, "attach_process", pid=pid, timeout_s=30)
                assert own["category"] == "policy_denied" and "a debugger kd-mcp started" in own["message"], own
            attached = await call(carol, "attach_process", pid=4242, timeout_s=30)
            assert not attached["_is_error"] and attached["kind"] == "process", attached
            mine = (await call(carol, "list_sessions"))["sessions"][0]["pid"]
            theirs = await call(alice, "attach_process", pid=mine, timeout_s=30)
            assert theirs["category"] == "policy_denied" and "a debugger kd-mcp started" in theirs["message"], theirs
