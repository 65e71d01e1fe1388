"""End to end over stdio: the pool and page-table tools on the simulated world (issue 16).

``kd-mcp --simulate`` driven by the SDK's stdio client: a kernel at its initial break (``pool`` of
myfault's pending IRP and of an address in no pool, ``pool_find`` of ``Irp`` -- sent as its
TagValue -- and of ``Proc``, one block per process of ``!process 0 0``, ``pool_usage`` agreeing with
both, ``pte`` of a mapped and an unmapped address), arguments refused before kd sees them, and an
attached process, where all four are refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.test_run_tools_e2e import kernel
from tests.server.test_targets_e2e import stdio_server

pytestmark = [pytest.mark.anyio, pytest.mark.process]

IRP = 0xFFFFE70F2ED94D70  # myfault's pending IRP (kdmcp/sim/world/drivers.py)


async def test_pool_and_pool_find_and_pool_usage_agree_on_the_world(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        held = await call("pool", address=f"{IRP:x}")
        assert held["command"] == f"!pool {IRP:x}" and held["in_pool"] and held["region"] == "Nonpaged pool"
        block = held["block"]
        assert (block["address"], block["tag"], block["state"]) == ("0xffffe70f2ed94d60", "Irp", "Allocated")
        assert (block["description"], block["binary"]) == ("Io, IRP packets", "nt!io")
        assert held["offset"] == "0x10"  # the IRP follows its 16-byte pool header
        start, size = int(block["address"], 16), int(block["size"], 16)
        assert start <= IRP < start + size
        # its neighbours are the page's blocks on either side, as the raw walk lists them
        rows = [line for line in held["_body"].splitlines() if " size: " in line]
        at = next(i for i, line in enumerate(rows) if line.startswith("*"))
        assert held["page_blocks"] == len(rows) and held["page_free"] == sum("(Free)" in r for r in rows)
        assert rows[at - 1].split()[0] == held["previous"]["address"][2:] and "(Free)" in rows[at - 1]
        assert held["previous"]["state"] == "Free" and rows[at + 1].split()[0] == held["next"]["address"][2:]

        nowhere = await call("pool", address="fffff800`60db5010")
        assert not nowhere["_is_error"] and not nowhere["in_pool"] and "block" not in nowhere
        assert nowhere["region"] == "Unknown" and "could not be read" in nowhere["warnings"][-1]
        assert (await call("pool", address="nosuchsymbol"))["category"] == "invalid_argument"

        # "Irp " ends in a blank: kd is asked for its TagValue, and finds the block !pool showed
        irp = await call("pool_find", tag="Irp")
        assert irp["command"] == "!poolfind 0x20707249 0" and irp["found"] == 1
        assert [b["address"] for b in irp["blocks"]] == ["0xffffe70f2ed94d60"] and irp["blocks"][0]["tag"] == "Irp"
        assert "for tag 0x20707249 (Irp )" in irp["_body"]
        wild = await call("pool_find", tag="Ir?")
        assert wild["command"] == "!poolfind Ir?? 0" and [b["address"] for b in wild["blocks"]] == [
            "0xffffe70f2ed94d60"
        ]

        # one Proc block per process of !process 0 0, each holding its EPROCESS
        procs = await call("processes", limit=100)
        eprocess = [int(p["address"], 16) for p in procs["record"]["processes"]]
        found = await call("pool_find", tag="Proc")
        assert found["command"] == "!poolfind Proc 0" and found["found"] == len(eprocess) == 40
        spans = [(int(b["address"], 16), int(b["size"], 16) + 0x10) for b in found["blocks"]]
        assert all(any(a <= p < a + n for a, n in spans) for p in eprocess)
        capped = await call("pool_find", tag="Proc", limit=3)
        assert capped["found"] == 40 and len(capped["blocks"]) == 3 and capped["command"] == "!poolfind Proc 0"
        assert " : tag Proc, " not in capped["_body"]  # the whole list left the text block; its output_id reads it
        whole = await call("read_output", output_id=capped["output_id"])
        assert whole["text"].count(" : tag Proc, ") == 40
        assert (await call("pool_find", tag="Proc", pool="paged"))["found"] == 0

        # !poolused counts what !poolfind and !pool see: 40 Proc blocks, one IRP of 0x130 bytes
        proc = await call("pool_usage", tag="Proc")
        assert [(r["tag"], r["nonpaged_allocs"]) for r in proc["rows"]] == [("Proc", 40)]
        assert proc["total"]["nonpaged_allocs"] == 40
        one = await call("pool_usage", tag="Irp")
        assert one["command"] == "!poolused 2 Irp?" and one["tags"] == 1 and "total" not in one
        assert (one["rows"][0]["nonpaged_allocs"], one["rows"][0]["nonpaged_bytes"]) == (1, size)
        assert one["rows"][0]["description"].startswith("Io, IRP packets")
        none = await call("pool_usage", tag="Ddk")  # an unknown tag is an empty table, not an error
        assert not none["_is_error"] and none["tags"] == 0 and "rows" not in none
        top = await call("pool_usage", limit=5)
        assert top["command"] == "!poolused 2" and len(top["rows"]) == 5 and top["tags"] > 5
        assert "TOTAL" not in top["_body"].split("\n", 2)[-1] and top["total"]["tag"] == "TOTAL"
        by = [r["nonpaged_bytes"] for r in top["rows"]]
        assert by == sorted(by, reverse=True) and by[0] >= top["total"]["nonpaged_bytes"] // top["tags"]
        paged = await call("pool_usage", sort="paged", limit=3)
        assert paged["command"] == "!poolused 4"
        assert [r["paged_bytes"] for r in paged["rows"]] == sorted(
            (r["paged_bytes"] for r in paged["rows"]), reverse=True
        )


async def test_pte_walks_to_the_physical_address_or_the_level_that_is_not_valid(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        mapped = await call("pte", address=f"{IRP:x}")
        assert mapped["command"] == f"!pte {IRP:x}" and mapped["mapped"]
        levels = mapped["levels"]
        assert [lv["level"] for lv in levels] == ["PXE", "PPE", "PDE", "PTE"] and all(lv["valid"] for lv in levels)
        pte = levels[3]
        assert pte["flags"] == "-G-DA--KW-V"
        assert pte["flag_names"] == ["global", "dirty", "accessed", "kernel", "writable", "no_execute", "valid"]
        # the frame is bits 12-51 of what the PTE contains; the offset is the address's low 12 bits
        frame = (int(pte["contains"], 16) >> 12) & ((1 << 40) - 1)
        assert pte["pfn"] == hex(frame) and mapped["physical_address"] == hex(frame * 0x1000 + (IRP & 0xFFF))
        assert mapped["page_size"] == "4K"

        unmapped = await call("pte", address="fffff800`60db5010")
        assert not unmapped.get("mapped") and "physical_address" not in unmapped
        assert [lv.get("valid") for lv in unmapped["levels"]] == [True, True, True, False]
        assert "pfn" not in unmapped["levels"][3] and unmapped["levels"][3]["contains"] == "0x0000000000000000"

        image = await call("pte", address="nt")  # the kernel's image: read-only, executable
        assert {"read_only", "executable", "global"} <= set(image["levels"][3]["flag_names"])
        assert (await call("pte", address="nosuchsymbol"))["category"] == "invalid_argument"


async def test_bad_arguments_are_refused_before_kd_sees_them(tmp_path: Path) -> None:
    async with kernel(tmp_path) as call:
        for tag in ("Irp ", "a;b", 'a"b', "Procs", ""):
            refused = await call("pool_find", tag=tag)
            assert refused["category"] == "invalid_argument" and "pool_find" in refused["message"], tag
        assert (await call("pool_usage", tag="x y"))["category"] == "invalid_argument"
        assert (await call("pool_find", tag="Proc", limit=0))["category"] == "invalid_argument"
        assert (await call("pool_find", tag="Proc", pool="special"))["category"] == "invalid_argument"
        assert (await call("pool", address="ffff L100"))["category"] == "invalid_argument"
        assert (await call("pte", address="1;g"))["category"] == "invalid_argument"
        # none of it reached kd: the session's output holds no !poolfind, !poolused, !pool or !pte
        whole = await call("read_output", offset=0, limit=1024 * 1024)
        assert not any(c in whole["text"] for c in ("!poolfind", "!poolused", "!pool ", "!pte")), whole["text"][-500:]


async def test_the_pool_and_pte_tools_are_refused_on_a_process(tmp_path: Path) -> None:
    async with stdio_server(tmp_path, "allow_attach: true\n") as call:
        started = await call("attach_process", pid=1234, timeout_s=30)
        assert started["state"] == "broken", started
        try:
            for tool, args in (
                ("pool", {"address": "0"}),
                ("pool_find", {"tag": "Proc"}),
                ("pool_usage", {}),
                ("pte", {"address": "0"}),
            ):
                refused = await call(tool, **args)
                assert refused["category"] == "invalid_argument" and "user mode" in refused["message"], tool
        finally:
            await call("stop_kd")
