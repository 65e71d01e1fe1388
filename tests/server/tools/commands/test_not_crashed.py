"""``analyze`` on a live target that has not crashed (kdmcp/server/tools/commands/not_crashed.py),
end to end through the in-memory client on the simulator: a kernel at its initial break, an
attached process at its break-in and a launched one at its initial break answer in one short
success (``crashed: false``, a note, the stop command's own output); the same launched process
after its access violation, and the kernel after ``.crash``, get ``!analyze -v`` as before."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]


async def _call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    return result_data(await client.call_tool(tool, args))


async def test_a_target_that_has_not_crashed_says_so_in_one_line() -> None:
    async with in_memory(make_app(allow_launch=True, policy="full")) as client:
        kernel = (await _call(client, "start_kd", port=50000, key=CANARY_KEY, initial_break=True))["session_id"]
        attached = (await _call(client, "attach_process", pid=4242, timeout_s=30))["session_id"]
        launched = (await _call(client, "launch", command_line=["C:\\tools\\app.exe"], timeout_s=30))["session_id"]
        for sid, command in ((kernel, ".bugcheck"), (attached, ".lastevent"), (launched, ".lastevent")):
            result = await client.call_tool("analyze", {"session_id": sid})
            data = result_data(result)
            assert not result.is_error and data["crashed"] is False and data["command"] == command, data
            assert data["note"].startswith("not crashed: ") and "backtrace" in data["note"]
            assert len(result.content[0].text) < 400  # was 4 KB of "Unknown bugcheck code (0)"
            assert data["note"] in result.content[0].text
        assert (await _call(client, "analyze", session_id=kernel))["record"]["bugcheck"]["code"] == "0x0"

        # the launched process runs into its access violation: now there is a crash to analyse
        await _call(client, "continue_go", session_id=launched)
        stop = await _call(client, "wait_for_stop", session_id=launched, timeout_s=20)
        assert stop["state"] == "broken", stop
        crashed = await _call(client, "analyze", session_id=launched)
        assert crashed["command"] == "!analyze -v" and "crashed" not in crashed and "note" not in crashed
        assert crashed["record"]["exception"]["code"] == "0xc0000005", crashed["record"]

        await _call(client, "kd_command", session_id=kernel, command=".crash")
        bugcheck = await _call(client, "analyze", session_id=kernel)
        # .bugcheck now names the E2: the analysis runs (its text is the simulator's, kdmcp/sim)
        assert bugcheck["command"] == "!analyze -v" and "crashed" not in bugcheck and "note" not in bugcheck
