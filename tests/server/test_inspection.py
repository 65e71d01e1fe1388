"""The inspection tools through the in-memory client (fast tier): lookup_symbol by name, the
arguments refused before kd sees them."""

from __future__ import annotations

import pytest

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
