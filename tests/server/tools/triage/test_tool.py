"""triage_dumps through real MCP clients on the simulator: buckets, progress per dump, the records
paged by read_output, resume, cancellation, dump_roots, a client's files its own; and the result of
1,000 dumps under 8 KB."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client, StdioServerParameters

from kdmcp.config import Config
from kdmcp.errors import InvalidArgument, SessionBusy, UnknownSession
from kdmcp.server import KdMcpApp, ServerOptions
from kdmcp.server.call import Call
from kdmcp.server.render import ok_result
from kdmcp.server.tools.output.reads import read_output
from kdmcp.server.tools.triage.running import records_file, run_triage
from kdmcp.server.tools.triage.tool import TriageResult, triage_dumps
from kdmcp.triage.buckets import summarise
from kdmcp.triage.models import DumpRecord
from kdmcp.triage.one import triage_dump
from kdmcp.triage.run_lock import run_lock
from tests.server.helpers import in_memory, make_app, server_argv, text_of
from tests.triage.helpers import KERNEL, USER, distinct_copies, sim_spec

pytestmark = [pytest.mark.anyio, pytest.mark.process]

ROOT = Path(__file__).resolve().parents[4]


def _corpus(folder: Path, count: int) -> int:
    distinct_copies(folder, count)
    (folder / "cut.dmp").write_bytes(USER[0].read_bytes()[:3000])
    (folder / "junk.dmp").write_text("not a dump")
    return count + 2


async def test_triage_dumps_over_stdio_reports_each_dump_and_pages_its_records(tmp_path: Path) -> None:
    total = _corpus(tmp_path / "dumps", 12)
    config = tmp_path / "kdmcp.yaml"
    config.write_text(f"triage:\n  records_dir: {tmp_path / 'records'}\n  jobs: 2\n")
    argv = server_argv("--simulate", "--config", str(config))
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total_: float | None, message: str | None) -> None:
        seen.append((progress, total_, message))

    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(ROOT))
    async with Client(params, read_timeout_seconds=120) as client:
        with anyio.fail_after(120):
            result = await client.call_tool("triage_dumps", {"paths": [str(tmp_path / "dumps")], "out": "lab"},
                                            progress_callback=on_progress)
        assert not result.is_error, text_of(result)
        data = result.structured_content
        assert data is not None
        assert data["dumps"] == total and data["failed"] == {"not_a_dump": 1, "truncated": 1}
        assert sum(b["count"] for b in data["buckets"]) + data.get("more_dumps", 0) == total - 2
        assert data["records"] == str(tmp_path / "records" / "lab.jsonl")
        assert len(result.model_dump_json(by_alias=True, exclude_none=True)) < 8192
        # one notification per dump, counting up to the total
        # first one per dump hashed, under 1 (MCP: a progress only increases), the total not yet known
        hashing, seen[:] = seen[:total], seen[total:]
        assert [m for _, _, m in hashing] == [f"hashing {n}/{total}" for n in range(1, total + 1)]
        assert {t for _, t, _ in hashing} == {None} and all(0 < p < 1 for p, _, _ in hashing)
        assert [p for p, _, _ in hashing] == sorted({p for p, _, _ in hashing})  # increasing
        assert [p for p, _, _ in seen] == [float(n) for n in range(1, total + 1)]
        assert {t for _, t, _ in seen} == {float(total)} and all(m and ": " in m for _, _, m in seen)
        text = text_of(result)
        assert f"[{total} dumps: {total - 2} in " in text and f"read_output output_id={data['output_id']}" in text
        # the records, paged by read_output in whole lines
        lines: list[str] = []
        offset = 0
        for _ in range(50):
            page = await client.call_tool("read_output", {"output_id": data["output_id"], "offset": offset,
                                                          "limit": 2048})
            chunk = page.structured_content
            assert chunk is not None and chunk["session_id"] == data["output_id"].split(":")[0]
            lines += chunk["text"].splitlines()
            offset = chunk["next_offset"]
            if chunk["eof"]:
                break
        records = [DumpRecord.model_validate_json(line) for line in lines]
        assert len(records) == total and len({r.sha256 for r in records}) == total
        # the same out again: nothing run twice, the same buckets
        seen.clear()
        with anyio.fail_after(60):
            again = await client.call_tool("triage_dumps", {"paths": [str(tmp_path / "dumps")], "out": "lab"},
                                           progress_callback=on_progress)
        assert again.structured_content is not None and again.structured_content["done_before"] == total
        assert again.structured_content["buckets"] == data["buckets"]
        assert [m for _, _, m in seen] == [f"hashing {n}/{total}" for n in range(1, total + 1)]  # nothing triaged


async def test_triage_refuses_paths_outside_dump_roots_and_names_that_are_paths(tmp_path: Path) -> None:
    inside = tmp_path / "inside"
    inside.mkdir()
    app = make_app(dump_roots=[str(inside)], triage={"records_dir": str(tmp_path / "r")})
    async with in_memory(app) as client:
        outside = await client.call_tool("triage_dumps", {"paths": [str(KERNEL)]})
        assert outside.is_error and "policy_denied" in text_of(outside)
        named = await client.call_tool("triage_dumps", {"paths": [str(inside)], "out": "../x"})
        assert named.is_error and "invalid_argument" in text_of(named)


def test_a_clients_records_are_its_own(tmp_path: Path) -> None:
    app = make_app(triage={"records_dir": str(tmp_path / "r")})
    try:
        mine = triage_dumps(Call(app, "alice"), [str(USER[0])], out="mine")
        assert mine.records == "mine.jsonl"  # the server's path is not the client's to see
        assert Path(records_file(app, "alice", "mine")).parent.name.startswith("client-")
        page = read_output(Call(app, "alice"), output_id=mine.output_id)
        assert page.eof and json.loads(page.text)["name"] == USER[0].name
        with pytest.raises(UnknownSession):
            read_output(Call(app, "bob"), output_id=mine.output_id)
        theirs = triage_dumps(Call(app, "bob"), [str(USER[0])], out="mine")
        assert theirs.done_before == 0 and Path(records_file(app, "bob", "mine")).exists()  # bob's own file
    finally:
        app.shutdown()


def test_one_run_a_records_file_at_a_time(tmp_path: Path) -> None:
    app = make_app(triage={"records_dir": str(tmp_path / "r")})
    started, release = threading.Event(), threading.Event()

    def hold(done: int, total: int, record: DumpRecord | None) -> None:
        started.set()
        release.wait(30)

    first = threading.Thread(target=run_triage, args=(app, None, [str(USER[0])]),
                             kwargs={"out": records_file(app, None, "lab"), "progress": hold})
    first.start()
    try:
        assert started.wait(30)
        with pytest.raises(SessionBusy, match=f"out: {records_file(app, None, 'lab')} is being written"):
            triage_dumps(Call(app, None), [str(USER[1])], out="lab")
    finally:
        release.set()
        first.join(30)
    try:
        assert triage_dumps(Call(app, None), [str(USER[0])], out="lab").done_before == 1  # the file is free again
    finally:
        app.shutdown()


def test_a_listener_client_busy_on_its_run_is_told_its_name_not_the_server_path(tmp_path: Path) -> None:
    app = make_app(triage={"records_dir": str(tmp_path / "r")})
    held = records_file(app, "alice", "lab")
    os.makedirs(os.path.dirname(held))
    try:
        with run_lock(held), pytest.raises(SessionBusy) as busy:  # another process's run on alice's file
            triage_dumps(Call(app, "alice"), [str(USER[0])], out="lab")
        assert busy.value.message.startswith("out: lab.jsonl is being written") and str(tmp_path) not in str(busy.value)
    finally:
        app.shutdown()


def test_an_out_that_is_a_directory_is_refused_by_its_argument(tmp_path: Path) -> None:
    app = make_app(triage={"records_dir": str(tmp_path / "r")})
    os.makedirs(records_file(app, None, "lab"))
    try:
        with pytest.raises(InvalidArgument, match=r"^out: 'lab' names a directory"):
            triage_dumps(Call(app, None), [str(USER[0])], out="lab")
    finally:
        app.shutdown()


def _hanging_cdb(folder: Path) -> str:
    script = folder / "cdb"
    script.write_text(f"#!{sys.executable}\nimport sys, time\nsys.stdout.write('0:000> ')\nsys.stdout.flush()\n"
                      "time.sleep(600)\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def _hanging(me: psutil.Process) -> list[psutil.Process]:
    found = []
    for child in me.children(recursive=True):
        try:
            if any(part.endswith(f"{os.sep}cdb") for part in child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


@pytest.mark.skipif(os.name == "nt", reason="the hanging debugger is a POSIX script")
async def test_a_cancelled_call_stops_its_debuggers(tmp_path: Path) -> None:
    config = Config.model_validate({"debuggers": {"cdb": _hanging_cdb(tmp_path)},
                                    "triage": {"records_dir": str(tmp_path / "r"), "timeout_s": 120, "jobs": 2}})
    app = KdMcpApp(ServerOptions(config=config, structured=True))
    me = psutil.Process()
    async with in_memory(app) as client:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:

                async def run() -> None:
                    await client.call_tool("triage_dumps", {"paths": [str(p) for p in USER[:4]]})

                tg.start_soon(run)
                while len(_hanging(me)) < 2:  # two debuggers hang on their dumps (jobs 2)
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
            while _hanging(me):  # the cancel stops them
                await anyio.sleep(0.05)
    assert not (tmp_path / "r" / "triage.jsonl").exists() or not (tmp_path / "r" / "triage.jsonl").read_text()


@pytest.fixture(scope="module")
def fixture_records() -> Iterator[list[DumpRecord]]:
    spec = sim_spec()
    yield [triage_dump(str(p), spec) for p in [KERNEL, *USER]]


def test_the_result_of_1000_dumps_is_under_8_kb_and_accounts_for_each(fixture_records: list[DumpRecord]) -> None:
    """Real records of the fixture dumps, replicated to 1,000 under distinct names: 300 bucket keys
    of falling size (a long tail, as fleets have), 5 % failed in three categories."""
    records: list[DumpRecord] = []
    for n in range(1000):
        base = fixture_records[n % len(fixture_records)]
        tail = int(300 * (((n * 7919) % 1000) / 1000) ** 2)  # low variants common, high ones rare
        update: dict[str, Any] = {"name": f"lab-{n // 100:02d}/{base.name.removesuffix('.dmp')}-{n:04d}.dmp",
                                  "sha256": f"{n:064x}", "bucket_key": f"{base.bucket_key}_v{tail}"}
        if n % 20 == 0:
            category = ("truncated", "debugger_timeout", "not_a_dump")[n % 3]
            update |= {"status": "failed", "category": category, "bucket_key": f"failed:{category}",
                       "error": "the read set did not finish within 300 s (at !analyze -v)"}
        records.append(base.model_copy(update=update))
    summary = summarise(records, "/home/lab/.local/state/kd-mcp/triage/client-0123456789abcdef/fleet.jsonl")
    assert summary.dumps == 1000 and sum(summary.failed.values()) == 50
    assert sum(b.count for b in summary.buckets) + summary.more_dumps + sum(summary.failed.values()) == 1000
    assert len(summary.buckets) + summary.more_buckets == len({r.bucket_key for r in records if r.status == "ok"})
    result = TriageResult(**summary.model_dump(), output_id="tr1:0-812345")
    app = make_app()
    try:
        for structured in (False, True):
            served = ok_result(result, app.redactor, structured=structured)
            size = len(served.model_dump_json(by_alias=True, exclude_none=True).encode())
            assert size <= 8192, (structured, size)
    finally:
        app.shutdown()
