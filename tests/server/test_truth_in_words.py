"""Results and errors that say what is true (issue 30, "truth in the words"), on the simulator.

An unknown register is an error; ``handles process=0`` counts per owning process and labels no
single one; a deferred breakpoint on a loaded module kd cannot resolve a name in says it may
never resolve; a refusal names the debugger that made it (cdb on a minidump); a bad
``decode_ioctl`` code reads as the caller's mistake, without pydantic's branch names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.helpers import CANARY_KEY, in_memory, make_app, read_error, result_data, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.process]

MINIDUMP = Path(__file__).resolve().parents[2] / "fixtures" / "dumps" / "null_read_av.dmp"


async def test_a_kernel_session_says_what_is_true():
    async with in_memory(make_app(structured=False)) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.content

        bad = read_error(await client.call_tool("registers", {"register": "foo"}))
        assert bad is not None and bad["category"] == "invalid_argument" and bad["message"].startswith("kd: ")
        one = text_of(await client.call_tool("registers", {"register": "rip"}))
        assert one.split("\n")[1].startswith("rip=")

        everyone = text_of(await client.call_tool("handles", {"process": "0", "limit": 2})).split("\n")
        assert " handles of 39 processes; " in everyone[1] and "System" not in everyone[1]
        assert everyone[2].startswith("per process: 0xffffe70f28a7d040 2651, ")
        assert all(row.endswith(" in 0xffffe70f28a7d040") for row in everyone[3:5])

        guessed = text_of(await client.call_tool("set_breakpoint", {"location": "myfault!DispatchDeviceControl"}))
        assert "warning: myfault is loaded (symbols: deferred) yet kd cannot resolve" in guessed
        assert "may never resolve" in guessed and "set when its module loads" not in guessed
        later = text_of(await client.call_tool("set_breakpoint", {"location": "nosuch!Foo"}))
        assert "set when its module loads" in later and "warning" not in later

        cleared = text_of(await client.call_tool("clear_breakpoints", {"ids": [0]})).split("\n")
        assert cleared[1] == "cleared 1 breakpoint (#0); 1 remaining"
        listed = text_of(await client.call_tool("list_sessions", {}))
        assert listed.startswith("[1 session, at most ")

        code = read_error(await client.call_tool("decode_ioctl", {"code": "zz"}))
        assert code == {"category": "invalid_argument",
                        "message": "code: 'zz' is not a hex control code (0x222003, 222003h, 0n2236419)"}
        wrong = read_error(await client.call_tool("decode_ioctl", {"code": [1]}))
        assert wrong is not None and "constrained" not in wrong["message"] and "(code)" in wrong["message"]


async def test_cdb_refuses_in_its_own_name():
    async with in_memory(make_app()) as client:
        opened = result_data(await client.call_tool("open_dump", {"path": str(MINIDUMP)}))
        assert opened["state"] == "broken", opened
        refused = read_error(await client.call_tool("read_type", {"type": "nosuch!_NOTHING"}))
        assert refused is not None and refused["message"].startswith("cdb: "), refused
