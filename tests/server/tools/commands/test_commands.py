"""``kd_command`` of a line that runs commands, then the target (``bp nt!NtCreateFile; bl; g``): the
result is the commands' output, with its own ``output_id``; what the target prints after it comes
as its DbgPrint events (issue 29, item 1's class; kdmcp/engine/run_line.py)."""

from __future__ import annotations

import pytest

from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # starts the simulator (tests/tiers.py)

BL_ROW = "     0 e Disable Clear  fffff800`62c3a1e0     0001 (0001) nt!NtCreateFile"


async def test_the_commands_before_g_are_the_result_and_what_the_target_prints_its_events():
    async with in_memory(make_app()) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started
        went = result_data(await client.call_tool("kd_command", {"command": "bp nt!NtCreateFile; bl; g"}))
        assert went["output"].splitlines() == [BL_ROW], went
        assert went.get("record") is None and went["state"] in ("running", "broken")
        assert not [e for e in went.get("events", []) if e["kind"] == "dbgprint"]  # nothing of it is DbgPrint
        whole = result_data(await client.call_tool("read_output", {"output_id": went["output_id"]}))
        assert BL_ROW in whole["_body"] and "KDMCP" not in whole["_body"].split(BL_ROW)[1]
        stop = result_data(await client.call_tool("wait_for_stop", {"timeout_s": 20}))
        assert stop["stop"]["reason"] == "breakpoint", stop
        events = went.get("events", []) + stop.get("events", [])
        prints = [e["text"] for e in events if e["kind"] == "dbgprint"]
        assert [p.strip() for p in prints] == ["myfault: IOCTL 0x83362000 received"], events
        # an error before g ends the line: the answer is kd's error, and the target stays stopped
        refused = result_data(await client.call_tool("kd_command", {"command": "r foo; g"}))
        assert refused["state"] == "broken" and "Bad register error in 'r foo'" in refused["output"], refused
