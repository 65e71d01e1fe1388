"""End to end over stdio: walk_list and handles on the simulated kernel (issue 16).

``kd-mcp --simulate`` driven by the SDK's stdio client: the active process list walked equals
``!process 0 0``; the limit, unreadable and null stops; a loop and a broken Blink written with
``eq``; a dotted link field (a process's threads through ``Tcb.ThreadListEntry``); the System
process's 2651 handles counted beyond the inline cap, rows capped by ``limit``; the refusals
(arguments, kd's own, a user-mode session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.test_run_tools_e2e import kernel
from tests.server.test_targets_e2e import stdio_server

pytestmark = [pytest.mark.anyio, pytest.mark.process]

PROCESSES = {"head": "nt!PsActiveProcessHead", "type": "nt!_EPROCESS", "link_field": "ActiveProcessLinks"}
SYSTEM = "ffffe70f28a7d040"
# myfault's jump table (kdmcp/sim/world/drivers.py): its first qword reads as Flink 0x00001ee0`00001ed0,
# not a pointer; 0x10 further on, two zero qwords
JUMP_TABLE, ZEROS = "fffff80060da3000", "fffff80060da3010"


async def test_walk_list_over_the_active_processes_is_exactly_process_0_0(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        walked = await call("walk_list", **PROCESSES, fields=["UniqueProcessId", "ImageFileName"])
        listed = (await call("processes", limit=1000))["record"]["processes"]
        assert walked["stopped"] == "complete" and walked["link_offset"] == "0x448", walked
        assert walked["head"] == "0xfffff8006321e0f0" and len(listed) == 40
        assert [e["entry"] for e in walked["entries"]] == [p["address"] for p in listed]
        # ImageFileName is UCHAR[15] (14 characters and a NUL); !process prints the whole image
        # name ("Image: WindowsInspector.Controller.exe", corpus process_thread/03)
        assert [e["fields"]["ImageFileName"] for e in walked["entries"]] == [p["image"][:14] for p in listed]
        assert [int(e["fields"]["UniqueProcessId"], 16) for e in walked["entries"]] == [
            int(p["cid"], 16) for p in listed
        ]
        assert not any("bad_blink" in e or "unreadable" in e for e in walked["entries"])
        # one dt for the layout, one dp for the head, one dt per process
        assert walked["round_trips"] == 42 and walked["command"].startswith("dt nt!_EPROCESS ActiveProcessLinks")


async def test_walk_list_stops(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        cut = await call("walk_list", **PROCESSES, limit=3)
        assert cut["stopped"] == "limit" and len(cut["entries"]) == 3 and cut["round_trips"] == 5
        # the Flink not followed is the fourth process's ActiveProcessLinks
        fourth = (await call("walk_list", **PROCESSES, limit=4))["entries"][3]["entry"]
        assert int(cut["next"], 16) == int(fourth, 16) + 0x448

        bad = await call("walk_list", head=JUMP_TABLE, type="nt!_EPROCESS", link_field="ActiveProcessLinks")
        assert bad["stopped"] == "unreadable", bad
        assert bad["entries"] == [{"index": 0, "entry": f"0x{0x00001EE000001ED0 - 0x448:016x}", "unreadable": True}]

        null = await call("walk_list", head=ZEROS, type="nt!_EPROCESS", link_field="ActiveProcessLinks")
        assert null["stopped"] == "null" and "entries" not in null and null["round_trips"] == 2

        # a dotted link field: System's threads, by Pcb.ThreadListHead -> _ETHREAD Tcb.ThreadListEntry
        threads = await call(
            "walk_list",
            head=f"{SYSTEM}+0x30",
            type="nt!_ETHREAD",
            link_field="Tcb.ThreadListEntry",
            fields=["Cid.UniqueThread"],
        )
        listed = (await call("threads", process=SYSTEM))["threads"]
        assert threads["stopped"] == "complete" and threads["link_offset"] == "0x2f8"
        assert [e["entry"] for e in threads["entries"]] == [t["address"] for t in listed]
        assert [int(e["fields"]["Cid.UniqueThread"], 16) for e in threads["entries"]] == [
            int(t["id"].split(".")[1], 16) for t in listed
        ]


async def test_walk_list_on_a_list_corrupted_with_eq_stops_loop_and_flags_the_blink(tmp_path: Path) -> None:
    # smss's Flink (its ActiveProcessLinks at ffffe70f2c0ab040+0x448) back to System's node; Registry's
    # Blink (ffffe70f28b0e080+0x448+8) to nowhere: kd's own eq writes both (the sim's memory is the walk's)
    async with kernel(tmp_path) as call:
        for line in ("eq ffffe70f2c0ab488 ffffe70f28a7d488", "eq ffffe70f28b0e4d0 ffffe70f00000010"):
            assert not (await call("kd_command", command=line))["_is_error"]
        walked = await call("walk_list", **PROCESSES, fields=["ImageFileName"])
        assert walked["stopped"] == "loop" and walked["next"] == "0xffffe70f28a7d488", walked
        assert [e["fields"]["ImageFileName"] for e in walked["entries"]] == ["System", "Registry", "smss.exe"]
        assert [e.get("bad_blink") for e in walked["entries"]] == [None, "0xffffe70f00000010", None]


async def test_walk_list_refusals(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        for args in (
            {**PROCESSES, "head": "nt!PsActiveProcessHead L10"},  # a blank would add an argument
            {**PROCESSES, "type": "nt!*"},  # dt would list types
            {**PROCESSES, "link_field": "Active;g"},
            {**PROCESSES, "fields": ["Image FileName"]},
            {**PROCESSES, "limit": 1025},
            {**PROCESSES, "limit": 0},
        ):
            refused = await call("walk_list", **args)
            assert refused["category"] == "invalid_argument" and "invalid arguments" in refused["message"], args
        # kd's own refusals
        for args, said in (
            ({**PROCESSES, "head": "nt!NoSuchHead"}, "Couldn't resolve error"),
            ({**PROCESSES, "type": "nt!_NOSUCH"}, "Symbol nt!_NOSUCH not found"),
            ({**PROCESSES, "link_field": "NoSuchLinks"}, "Cannot find specified field members"),
            ({**PROCESSES, "fields": ["NoSuchField"]}, "Cannot find specified field members"),
            ({**PROCESSES, "link_field": "UniqueProcessId"}, "not a _LIST_ENTRY"),
        ):
            refused = await call("walk_list", **args)
            assert refused["category"] == "invalid_argument" and said in refused["message"], (args, refused)


async def test_handles_of_the_system_process(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        system = await call("handles", process="4", limit=5)
        assert system["total"] == 2651 and len(system["handles"]) == 5, system
        assert system["image"] == "System" and system["process"] == f"0x{SYSTEM}"
        assert system["handles"][0] == {
            "handle": "0x0004",
            "type": "Event",
            "access": "0x001f0003",
            "object": "0xffffe70f38000240",
            "name": "ShellReadyEvent",
        }
        # the raw output (730 KB) stays out of the result: read_output has all of it
        assert len(system["_body"]) < 20_000
        assert system["output_bytes"] > 700_000 and system["command"] == "!handle 0 3 4"
        tail = await call(
            "read_output", output_id=system["output_id"], offset=system["output_bytes"] - 4096, limit=4096
        )
        assert "Object:" in tail["text"]

        one = await call("handles", process=SYSTEM, handle="8")
        assert one["total"] == 1 and one["handles"][0]["name"] == "KnownDlls"
        events = await call("handles", process="4", type="Event", limit=1)
        assert events["total"] > 1 and events["handles"][0]["type"] == "Event"
        assert events["command"] == "!handle 0 3 4 Event"
        current = await call("handles", limit=1)  # the current process: Idle, whose table is the kernel's
        assert current["command"] == "!handle 0 3 -1" and current["image"] == "Idle"

        for args in ({"handle": "zz"}, {"process": "4 0"}, {"type": "File;g"}, {"limit": 0}):
            refused = await call("handles", **args)
            assert refused["category"] == "invalid_argument" and "invalid arguments" in refused["message"], args
        refused = await call("handles", process="ffffe70f28a7d041")
        assert refused["category"] == "invalid_argument" and "Invalid process" in refused["message"], refused


async def test_a_user_mode_session_is_refused_a_kernel_list(tmp_path: Path) -> None:
    # cdb's dt is not the simulated process's (kdmcp/sim/world/cmd_types.py); handles on user mode
    # runs cdb's own !handle: tests/server/tools/lists/test_user_handles.py
    async with stdio_server(tmp_path, "allow_attach: true\n") as call:
        attached = await call("attach_process", pid=1234)
        assert attached["state"] == "broken", attached
        try:
            refused = await call("walk_list", **PROCESSES)
            assert refused["category"] == "invalid_argument" and "user mode" in refused["message"], refused
        finally:
            await call("stop_kd")
