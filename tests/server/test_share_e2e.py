"""share_session → join_remote, end to end on the simulator's debugging servers (issue 14).

Over stdio: one agent shares its KDNET session and joins it from a second session; what one
session types shows up in the other's output; leaving the client leaves the server running;
stopping the sharer closes the listener. Over the HTTP listener: another client can neither
join nor share a session it does not own.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import scenario
from tests.server.helpers import CANARY_KEY, CANARY_WORD, TEE, result_data
from tests.server.test_listener import TOKEN_A, TOKEN_B, _env, http_client, listener
from tests.server.test_stdio_e2e import emitted, stdio_server

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)

assert TEE.exists()


async def call(client: Any, name: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    data = result_data(result)
    data["_is_error"] = bool(result.is_error)
    data["_text"] = result.content[0].text if result.content else ""
    return data


def _port(connection: str) -> int:
    return int(connection.rsplit("port=", 1)[1])


def _refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return False
    except ConnectionRefusedError:
        return True


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "kdmcp.yaml"
    path.write_text(text)
    path.chmod(0o600)
    return str(path)


async def _output(client: Any, session_id: str) -> str:
    return str((await call(client, "read_output", session_id=session_id, limit=1024 * 1024))["text"])


async def test_share_join_mirror_leave_and_stop(tmp_path):
    config = _config(tmp_path, "allow_share: true\n")
    async with stdio_server(tmp_path, "--config", config) as client:
        sharer = await call(client, "start_kd", port=50000, key=CANARY_KEY, initial_break=True)
        sid = sharer["session_id"]

        shared = await call(client, "share_session", session_id=sid)
        assert not shared["_is_error"], shared
        connection = shared["connection"]
        assert connection.startswith("tcp:server=127.0.0.1,port=")
        assert shared["listener"] == f"127.0.0.1:{_port(connection)}"
        assert shared["join"] == [f"windbg -remote {connection}", f"kd -remote {connection}"]
        assert f"windbg -remote {connection}" in shared["_text"]
        again = await call(client, "share_session", session_id=sid)
        assert again["connection"] == connection  # one server per session: sharing twice says where it is

        listed = {s["session_id"]: s for s in (await call(client, "list_sessions"))["sessions"]}
        assert listed[sid]["shared"] == connection and listed[sid]["kind"] == "kdnet"

        joined = await call(client, "join_remote", connection=connection)
        assert not joined["_is_error"], joined
        jid = joined["session_id"]
        assert joined["kind"] == "remote" and joined["state"] == "broken" and joined["prompt"] == "0: kd> "
        listed = {s["session_id"]: s for s in (await call(client, "list_sessions"))["sessions"]}
        assert listed[jid]["kind"] == "remote" and listed[jid]["attached_to"] == connection

        # a command in the joined session runs on the sharer's debugger, and both see it
        from_client = await call(client, "kd_command", session_id=jid, command=".echo typed-by-the-client")
        assert from_client["output"].strip() == "typed-by-the-client"
        # The server printed the client's line on its own console while it ran it, before it reads
        # its next line: once a command of the sharer's is answered, that line is in the sharer's
        # store (read at once, it may still be in the pipe: the sharer's pump drains it on its own).
        await call(client, "kd_command", session_id=sid, command=".echo settled")
        sharer_side = await _output(client, sid)
        assert "] 0: kd> .echo typed-by-the-client" in sharer_side
        assert sharer_side.index(".echo typed-by-the-client") < sharer_side.index(".echo settled")
        # and the other way round
        from_sharer = await call(client, "kd_command", session_id=sid, command=".echo typed-by-the-sharer")
        assert from_sharer["output"].strip() == "typed-by-the-sharer"
        # The server sent that to the client before it runs the client's next line: once this
        # command is answered, the mirrored output is in the client session's store (no waiting),
        # before the answer ("sync"), which comes down the same connection after it. Not before the
        # line ".echo sync" itself: on a pty the line discipline echoes it the moment it is written,
        # which may be before the client prints what the server sent (seen under load).
        await call(client, "kd_command", session_id=jid, command=".echo sync")
        assert "0: kd> .echo typed-by-the-sharer\r\n" in (mirrored := await _output(client, jid))
        assert mirrored.index("typed-by-the-sharer\r\n0: kd> ") < mirrored.rindex("\nsync\r\n")
        registers = await call(client, "registers", session_id=jid, register="rip")
        assert registers["record"]["registers"]["rip"] == "0xfffff80062a05c20"

        # the client leaves; the server's session goes on
        left = await call(client, "stop_kd", session_id=jid)
        assert left["actions"] == ["sent .remote_exit (left the server's session, which goes on)"]
        still = await call(client, "kd_command", session_id=sid, command=".echo still-here")
        # the server's "... disconnected at ..." line comes when it comes: maybe inside this output
        assert still["output"].strip().splitlines()[-1] == "still-here"

        # break_in is refused nowhere here, but .server typed by the agent is: share_session is the door
        typed = await call(client, "kd_command", session_id=sid, command=".server tcp:port=5005")
        assert typed["_is_error"] and typed["category"] == "policy_denied"
        typed = await call(client, "kd_command", session_id=sid, command=".endsrv 0")
        assert typed["_is_error"] and typed["category"] == "policy_denied"

        stopped = await call(client, "stop_kd", session_id=sid)
        assert stopped["actions"][-1] == f"closed the debugging server on 127.0.0.1:{_port(connection)}"
        assert _refused(_port(connection))
    assert CANARY_WORD.encode() not in emitted(tmp_path)


async def test_joining_a_running_session_and_breaking_in_from_the_client(tmp_path):
    config = _config(tmp_path, "allow_share: true\n")
    async with stdio_server(tmp_path, "--config", config) as client:
        sid = (await call(client, "start_kd", port=50000, key=CANARY_KEY, initial_break=True))["session_id"]
        connection = (await call(client, "share_session", session_id=sid))["connection"]
        assert (await call(client, "continue_go", session_id=sid))["state"] == "running"

        joined = await call(client, "join_remote", connection=connection)
        assert not joined["_is_error"], joined
        jid = joined["session_id"]
        # no prompt while the server's target runs: the join is done when the server announces it
        assert joined["state"] == "running" and "connected" in [e["kind"] for e in joined.get("events", [])]

        broke = await call(client, "break_in", session_id=jid)  # Ctrl+C at a client breaks the server's target
        assert broke["state"] == "broken" and broke["prompt"] == "0: kd> "
        # The sharer's debugger stopped too; its session learns so when it reads the banner, which
        # may still be on its way: break_in waits for that stop (bounded) instead of racing it.
        stopped_too = await call(client, "break_in", session_id=sid)
        assert stopped_too["state"] == "broken"
        seen = await call(client, "kd_command", session_id=sid, command=".echo sharer-sees-the-stop")
        assert seen["state"] == "broken"
        kinds = [e["kind"] for e in [*stopped_too.get("events", []), *seen.get("events", [])]]
        assert "client_connected" in kinds and "break_in" in kinds  # a person joined, then the stop
        await call(client, "stop_kd", session_id=jid)
        await call(client, "stop_kd", session_id=sid)


async def test_a_session_whose_debugger_died_shares_nothing_any_more(tmp_path):
    config = _config(tmp_path, "policy: full\n")  # the faults scenario's !crash is no command standard knows
    async with stdio_server(tmp_path, "--config", config, "--scenario", str(scenario("faults"))) as client:
        sid = (await call(client, "start_kd", port=50000, key=CANARY_KEY, initial_break=True))["session_id"]
        connection = (await call(client, "share_session", session_id=sid))["connection"]
        crashed = await call(client, "kd_command", session_id=sid, command="!crash")  # the debugger exits
        assert crashed["_is_error"] and crashed["category"] == "debugger_exited"
        listed = {s["session_id"]: s for s in (await call(client, "list_sessions"))["sessions"]}
        assert listed[sid]["state"] == "exited" and "shared" not in listed[sid]
        assert _refused(_port(connection))


async def test_sharing_needs_the_policy_and_a_prompt(tmp_path):
    async with stdio_server(tmp_path) as client:  # standard, no allow_share
        await call(client, "start_kd", port=50000, key=CANARY_KEY)  # running: no initial break
        refused = await call(client, "share_session")
        assert refused["_is_error"] and refused["category"] == "policy_denied"
        assert "allow_share" in refused["message"]
        launch = await call(client, "launch", command_line=["C:\\app.exe"])
        assert launch["_is_error"] and launch["category"] == "policy_denied" and "allow_launch" in launch["message"]
    config = _config(tmp_path, "policy: full\n")
    async with stdio_server(tmp_path, "--config", config) as client:
        await call(client, "start_kd", port=50000, key=CANARY_KEY)
        running = await call(client, "share_session")
        assert running["_is_error"] and running["category"] == "invalid_argument"
        assert "break_in first" in running["message"]
        bad = await call(client, "join_remote", connection="tcp:server=127.0.0.1;evil,port=1")
        assert bad["_is_error"] and bad["category"] == "invalid_argument" and "connection" in bad["message"]


async def test_another_listener_client_cannot_join_or_share_a_session_it_does_not_own(tmp_path):
    tokens = tmp_path / "clients.yaml"
    tokens.write_text(f"alice: {{token: {TOKEN_A}, policy: full}}\nbob: {{token: {TOKEN_B}, policy: full}}\n")
    tokens.chmod(0o600)
    with listener("--token-file", str(tokens), env=_env()) as (url, _lines):
        async with http_client(url, TOKEN_A) as alice, http_client(url, TOKEN_B) as bob:
            started = await call(alice, "start_kd", port=50000, key=CANARY_KEY, initial_break=True)
            sid = started["session_id"]
            shared = await call(alice, "share_session", session_id=sid)
            assert not shared["_is_error"], shared

            joined = await call(bob, "join_remote", connection=shared["connection"])
            assert joined["_is_error"] and joined["category"] == "policy_denied", joined
            assert "another client's session" in joined["message"]
            theirs = await call(bob, "share_session", session_id=sid)
            assert theirs["_is_error"] and theirs["category"] == "unknown_session"
            assert (await call(bob, "list_sessions")).get("sessions", []) == []

            mine = await call(alice, "join_remote", connection=shared["connection"])
            assert not mine["_is_error"], mine  # the owner may join its own share
            await call(alice, "stop_kd", session_id=mine["session_id"])
            stopped = await call(alice, "stop_kd", session_id=sid)
            assert "closed the debugging server" in stopped["actions"][-1]
