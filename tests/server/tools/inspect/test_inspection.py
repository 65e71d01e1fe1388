"""The inspection tools through the in-memory client (fast tier): lookup_symbol by name, the
arguments refused before kd sees them; and called directly, kd's refusals."""

from __future__ import annotations

import pytest

from kdmcp.errors import InvalidArgument
from kdmcp.server.call import Call
from kdmcp.server.tools.inspect.inspection import evaluate, lookup_symbol, read_memory, read_type
from kdmcp.server.tools.sessions.kdnet import start_kd
from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]


async def test_lookup_by_name_and_refused_arguments() -> None:
    async with in_memory(make_app()) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error
        found = result_data(await client.call_tool("lookup_symbol", {"name": "nt!NtCreate*"}))
        assert found["symbols"] == [{"address": "0xfffff80062c3a1e0", "name": "nt!NtCreateFile"}]
        for tool, args in (
            ("read_memory", {"address": "nt!x L100", "length": 16}),
            ("read_memory", {"address": "0", "length": 65537}),
            ("disassemble", {"address": "0", "count": 1001}),
            ("evaluate", {"expression": 'a"b'}),
            ("read_type", {"type": "nt!_X;g"}),
            ("decode_error", {"code": "0x1ffffffff"}),
        ):
            result = await client.call_tool(tool, args)
            assert result.is_error, (tool, args)


def test_the_tool_functions_called_directly_read_kds_records() -> None:
    # the tool function is the logic: called with a Call, no client between
    app = make_app()
    try:
        sid = start_kd(Call(app, None), 50000, CANARY_KEY, None, None, True, None).session_id
        call = Call(app, None)
        found = lookup_symbol(call, address="nt!NtCreateFile+5", session_id=sid)
        assert [(s.name, s.offset) for s in found.symbols] == [("nt!NtCreateFile+0x5", "0x5"),
                                                               ("nt!IopCreateFile", None)]
        mem = read_memory(call, "0", 32, session_id=sid)
        assert [r.unreadable for r in mem.rows] == [True, True] and mem.command == "db 0 L0x20"
        # kd's error record ("Symbol nt!_NOSUCH not found.") is refused through typed.refuse_error
        with pytest.raises(InvalidArgument, match=r"^kd: Symbol nt!_NOSUCH not found\.$"):
            read_type(call, "nt!_NOSUCH", session_id=sid)
        with pytest.raises(InvalidArgument, match=r"^kd: Couldn't resolve error at 'nosuch'$"):
            evaluate(call, "nosuch", session_id=sid)
        # dx's own complaint is text, not an error record
        with pytest.raises(InvalidArgument, match=r"^dx: Error: Unable to bind name '@\$nosuch'$"):
            evaluate(call, "@$nosuch", "dx", session_id=sid)
    finally:
        app.shutdown()


async def test_a_user_dump_answers_read_memory_at_the_pc_and_set_symbol_path() -> None:
    # the dump world used to answer both with a syntax error ("db @$ip L0x10", ".sympath srv*...")
    from pathlib import Path

    dump = Path(__file__).resolve().parents[4] / "fixtures" / "dumps" / "null_read_av.dmp"
    async with in_memory(make_app(policy="full")) as client:
        started = result_data(await client.call_tool("open_dump", {"path": str(dump), "timeout_s": 30}))
        sid = started["session_id"]
        pc = result_data(await client.call_tool("evaluate", {"expression": "@$ip", "session_id": sid}))["value"]
        mem = result_data(await client.call_tool("read_memory", {"address": "@$ip", "length": 16, "session_id": sid}))
        assert mem["command"] == "db @$ip L0x10" and mem["rows"][0]["address"] == pc, mem
        assert len(mem["rows"][0]["values"]) == 16
        server = "srv*C:\\sym*https://msdl.microsoft.com/download/symbols"
        set_path = result_data(await client.call_tool("set_symbol_path", {"path": server, "session_id": sid}))
        assert set_path["path"] == server, set_path
        added = result_data(await client.call_tool(
            "set_symbol_path", {"path": "C:\\mine", "append": True, "reload": True, "session_id": sid}))
        assert added["path"] == f"{server};C:\\mine" and added["reloaded"] is True, added
        assert "Reloading current modules" in added["_body"]
