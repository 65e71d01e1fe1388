"""Typed reads (registers, backtrace, modules, processes, analyze, vertarget) and kd_command records."""

from __future__ import annotations

import pytest

from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so one session serves every test here (each leaves it broken in, as it found it)."""
    return "asyncio"


@pytest.fixture(scope="module")
async def client(anyio_backend):
    async with in_memory(make_app()) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.structured_content
        yield client


async def test_each_typed_tool_returns_its_record(client):

    regs = (await client.call_tool("registers", {})).structured_content
    assert regs["command"] == "r" and regs["record"]["kind"] == "registers"
    assert regs["record"]["registers"]["rip"] == "0xfffff80062a05c20"
    one = (await client.call_tool("registers", {"register": "rip"})).structured_content
    assert one["command"] == "r rip" and one["record"]["registers"] == {"rip": "0xfffff80062a05c20"}

    stack = (await client.call_tool("backtrace", {"limit": 3})).structured_content
    assert stack["command"] == "kn" and stack["record"]["kind"] == "stack"
    assert len(stack["record"]["frames"]) == 3 and stack["lists"]["frames"] == {"total": 13, "returned": 3}
    first = stack["record"]["frames"][0]
    assert first["index"] == 0 and first["module"] == "nt" and first["function"] == "DbgBreakPointWithStatus"
    kb = (await client.call_tool("backtrace", {"variant": "kb"})).structured_content
    assert kb["record"]["frames"][0]["args"]

    mods = (await client.call_tool("modules", {"limit": 5})).structured_content
    assert mods["command"] == "lm" and mods["lists"]["modules"]["total"] > 5
    assert len(mods["record"]["modules"]) == 5
    nt = (await client.call_tool("modules", {"pattern": "nt", "verbose": True})).structured_content
    assert nt["command"] == "lmv m nt"
    assert [m["name"] for m in nt["record"]["modules"]] == ["nt"]
    assert nt["record"]["modules"][0]["image_path"]

    procs = (await client.call_tool("processes", {})).structured_content
    images = [p["image"] for p in procs["record"]["processes"]]
    assert images[0] == "System" and "lsass.exe" in images

    analysis = (await client.call_tool("analyze", {})).structured_content
    assert analysis["record"]["kind"] == "analysis"
    # a live target broken in by hand: no bugcheck; .bugcheck's zeros say so, !analyze -v does not
    # run (tests/server/tools/commands/test_not_crashed.py)
    assert analysis["record"]["bugcheck"]["code"] == "0x0"
    assert analysis["command"] == ".bugcheck" and analysis["crashed"] is False

    target = (await client.call_tool("vertarget", {})).structured_content
    assert target["record"]["kind"] == "target" and target["record"]["build"] == 19041
    assert target["record"]["processors"] == 4


async def test_typed_tool_arguments_cannot_smuggle_commands(client):
    for tool, args in [("registers", {"register": "rip; .shell calc"}), ("modules", {"pattern": "nt;q"}),
                       ("processes", {"name": "a b"}), ("backtrace", {"variant": "k; g"}),
                       ("backtrace", {"limit": 0})]:
        result = await client.call_tool(tool, args)
        assert result.is_error and result_data(result)["category"] == "invalid_argument", (tool, args)


async def test_kd_command_results_carry_the_record(client):
    out = (await client.call_tool("kd_command", {"command": "lm m nt"})).structured_content
    assert out["record"]["kind"] == "modules" and out["record"]["modules"][0]["name"] == "nt"
    assert "raw" not in out["record"] and "record_partial" not in out  # defaults are left out
    err = (await client.call_tool("kd_command", {"command": "dd nowhere"})).structured_content
    # kd: "Couldn't resolve error at 'nowhere'" -- no such symbol
    assert err["record"]["kind"] == "error" and err["record"]["errors"][0]["category"] == "unresolved_symbol"
    go = (await client.call_tool("kd_command", {"command": "g"})).structured_content
    assert "record" not in go and go["state"] == "running"
    assert (await client.call_tool("break_in", {})).structured_content["state"] == "broken"
