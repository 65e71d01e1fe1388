"""``handles`` on user-mode sessions through the in-memory client, on the simulator: an attached
and a launched process (cdb's ``!handle`` over the simulated process), a dump with a handle data
stream (its descriptors, as the ``minidump`` package reads them) and one without (refused with
the reason), each row labelled with its process, the total cdb's own count."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.server.helpers import in_memory, make_app, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]

DUMPS = Path(__file__).resolve().parents[4] / "fixtures" / "dumps"


async def _call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    return result_data(await client.call_tool(tool, args))


def _stream(name: str) -> Any:
    from minidump.minidumpfile import MinidumpFile

    logging.disable(logging.CRITICAL)  # the package's PEB traceback on small dumps
    try:
        return MinidumpFile.parse_bytes((DUMPS / name).read_bytes()).handles
    finally:
        logging.disable(logging.NOTSET)


async def test_handles_of_an_attached_and_a_launched_process() -> None:
    async with in_memory(make_app(allow_launch=True, allow_attach=True)) as client:
        attached = await _call(client, "attach_process", pid=4242, timeout_s=30)
        launched = await _call(client, "launch", command_line=["C:\\tools\\app.exe"], timeout_s=30)
        for started, pid in ((attached, "0x1092"), (launched, None)):
            sid = started["session_id"]
            every = await _call(client, "handles", session_id=sid, limit=5)
            assert every["command"] == "!handle 0 f" and len(every["handles"]) == 5, every
            assert every["total"] == sum(every["types"].values()) > 5
            assert {h["process"] for h in every["handles"]} == {every["process"]}  # each row names its pid
            if pid is not None:
                assert every["process"] == pid
            assert every["image"].endswith(".exe")
            mutant = await _call(client, "handles", session_id=sid, type="Mutant")
            assert mutant["total"] == every["types"]["Mutant"] == 1
            assert mutant["handles"][0]["name"].startswith("\\Sessions\\1\\BaseNamedObjects\\")
            one = await _call(client, "handles", session_id=sid, handle=mutant["handles"][0]["handle"])
            assert one["total"] == 1 and one["handles"][0]["type"] == "Mutant" and one["command"] == "!handle 0x60 f"
            files = await _call(client, "handles", session_id=sid, type="File", limit=1)
            assert files["total"] == every["types"]["File"] and len(files["handles"]) == 1
            missing = await _call(client, "handles", session_id=sid, handle="999")
            assert missing["category"] == "invalid_argument" and "no handle 999" in missing["message"]
            kernel_only = await _call(client, "handles", session_id=sid, process="4")
            assert kernel_only["category"] == "invalid_argument" and "leave process out" in kernel_only["message"]


async def test_handles_of_user_dumps_with_and_without_handle_data() -> None:
    stream = _stream("tiny-exe-with-cet-xsave.dmp").handles
    assert _stream("null_read_av.dmp") is None
    async with in_memory(make_app()) as client:
        with_data = await _call(client, "open_dump", path=str(DUMPS / "tiny-exe-with-cet-xsave.dmp"), timeout_s=30)
        sid = with_data["session_id"]
        every = await _call(client, "handles", session_id=sid, limit=len(stream))
        assert every["total"] == len(stream) == len(every["handles"])
        by_value = {int(h["handle"], 16): h for h in every["handles"]}
        assert sorted(by_value) == sorted(h.Handle for h in stream)
        for h in stream:
            row = by_value[h.Handle]
            assert int(row["access"], 16) == h.GrantedAccess and row.get("type") == (h.TypeName or None)
        assert every["types"] == dict(Counter(h.TypeName or "(none)" for h in stream).most_common())
        assert {h["process"] for h in every["handles"]} == {every["process"]}
        files = await _call(client, "handles", session_id=sid, type="File", limit=2)
        assert files["total"] == sum(h.TypeName == "File" for h in stream) and len(files["handles"]) == 2

        without = await _call(client, "open_dump", path=str(DUMPS / "null_read_av.dmp"), timeout_s=30)
        refused = await _call(client, "handles", session_id=without["session_id"])
        assert refused["category"] == "invalid_argument"
        assert refused["message"].startswith("cdb: Unable to read handle information (the dump was written without")
