"""End to end over stdio: the typed inspection tools on the simulated world (issue 15).

``kd-mcp --simulate`` driven by the SDK's stdio client: a kernel at its initial break (threads,
read_memory equal to ``db``, unreadable rows, disassemble, evaluate, lookup_symbol, read_type,
set_symbol_path under the standard policy, exception refused, decode_error via ``!error``), an
attached process (``~``, the exception) and no session at all (decode_error from the table).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.test_run_tools_e2e import kernel
from tests.server.test_targets_e2e import stdio_server

pytestmark = [pytest.mark.anyio, pytest.mark.process]


async def test_the_inspection_tools_on_a_kernel(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        threads = await call("threads")
        assert threads["command"] == "!process -1 2" and threads["process"] == "0xfffff80062f33f40"
        assert [t.get("current", False) for t in threads["threads"]] == [True, False, False, False]
        assert threads["threads"][0]["address"] == "0xfffff80062f34a00"

        # read_memory equals db: the same bytes kd_command's db record holds
        mem = await call("read_memory", address="nt!NtCreateFile", length=64)
        db = await call("kd_command", command="db nt!NtCreateFile L0x40")
        assert [v for r in mem["rows"] for v in r["values"]] == [v for r in db["record"]["rows"] for v in r["values"]]
        assert mem["_body"].strip() == db["_body"].strip()
        bad = await call("read_memory", address="0", length=32)
        assert not bad["_is_error"] and [r.get("unreadable") for r in bad["rows"]] == [True, True]
        ptrs = await call("read_memory", address="@rsp", length=16, format="pointers")
        assert ptrs["command"] == "dps @rsp L0x2" and ptrs["rows"][0]["symbols"] == ["nt!KdCheckForDebugBreak+0x72"]

        code = await call("disassemble", address="nt!NtCreateFile", count=3)
        assert [i["mnemonic"] for i in code["instructions"]] == ["mov", "push", "sub"]
        assert code["instructions"][0]["symbol"] == "nt!NtCreateFile" and "symbol" not in code["instructions"][1]

        masm = await call("evaluate", expression="nt!NtCreateFile+10")
        assert masm["value"] == "0xfffff80062c3a1f0"
        dx = await call("evaluate", expression="@$curprocess.Name", evaluator="dx")
        assert dx["value"] == "Idle"
        assert (await call("evaluate", expression="1;g"))["category"] == "invalid_argument"

        # lookup_symbol by name (the stdio helper's own first parameter is "name"):
        # tests/server/tools/inspect/test_inspection.py
        near = await call("lookup_symbol", address="nt!NtCreateFile+5")
        assert near["symbols"][0]["offset"] == "0x5"
        assert (await call("lookup_symbol"))["category"] == "invalid_argument"

        typed = await call("read_type", type="nt!_LIST_ENTRY", address="fffff80062f33f40", depth=1)
        assert [f["name"] for f in typed["fields"]] == ["Flink", "Blink"]

        local = await call("set_symbol_path", path="C:\\sym", append=True)
        assert local["path"] == "srv*;C:\\sym"
        # a srv* path fetches from the network: the policy answers as it does for kd_command
        denied = await call("set_symbol_path", path="srv*C:\\cache*https://msdl.microsoft.com/download/symbols")
        raw = await call("kd_command", command=".sympath srv*C:\\cache*https://msdl.microsoft.com/download/symbols")
        assert denied.get("category") == raw.get("category")

        refused = await call("exception")
        assert refused["category"] == "invalid_argument" and "analyze" in refused["message"]

        live = await call("decode_error", code="c0000005")
        assert live["source"] == "!error" and live["name"] == "STATUS_ACCESS_VIOLATION"
        assert live["output"].startswith("Error code: (NTSTATUS) 0xc0000005 (3221225477) - ")


async def test_the_inspection_tools_on_a_process_and_without_a_session(tmp_path: Path) -> None:
    async with stdio_server(tmp_path, "allow_attach: true\n") as call:
        table = await call("decode_error", code="-1073741819")
        assert table["source"] == "table" and table["code"] == "0xc0000005" and table["severity"] == "error"
        win32 = await call("decode_error", code="0x80070005")
        assert win32["kind"] == "hresult" and win32["win32"] == 5 and win32["facility_name"] == "WIN32"
        assert (await call("decode_error", code="xyz"))["category"] == "invalid_argument"
        started = await call("attach_process", pid=4242, timeout_s=30)
        assert started["state"] == "broken", started
        try:
            threads = await call("threads")
            assert threads["command"] == "~" and [t["index"] for t in threads["threads"]] == [0, 1, 2]
            assert threads["threads"][2]["current"] is True
            exc = await call("exception")
            assert exc["code"] == "0x80000003" and exc["symbol"] == "ntdll!DbgBreakPoint"
            assert exc["command"] == ".exr -1; .ecxr; kb"
            five = await call("decode_error", code="5")
            assert five["kind"] == "win32" and five["message"] == "Access is denied."
        finally:
            await call("stop_kd")
