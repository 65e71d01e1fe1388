"""Answer cost: what a model reads to answer debugging questions, kd-mcp and mcp-windbg side by side.

``python scripts/bench_answers.py [--json] [--peer-venv DIR]``

Each task is a question about the simulated world with its answer, solved on each server by a
fixed sequence of calls — what a competent agent would call with that server's tools (kd-mcp's
typed tools; mcp-windbg's ``run_kd_command`` with the kd command that answers it). A task holds
when its answer is in what the model reads. One conversation is the ``tools/list`` answer, the
session's opening call and every task's calls, on one live KDNET guest (the simulator as kd, as
``scripts/bench_mcp.py --peer`` runs both servers; docs/performance.md).

Model-visible bytes are counted under both display policies of MCP clients (docs/clients.md):

* ``text``: the client shows the text blocks (most clients; Cursor, the SDK samples);
* ``structured``: the client shows ``structuredContent`` instead whenever a result has it
  (Claude Code since 2.0.21, VS Code), the text blocks otherwise.

kd-mcp is measured as served by default (one text block per result) and, as ``ours_structured``,
started with ``--structured`` (for programs), to show what that mode would cost a model.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_mcp

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Task:
    """A question, its answer (a regex the model-visible text must hold), each server's calls."""

    name: str
    question: str
    answer: str
    ours: list[Call]
    peer: list[Call]


def _kd(command: str) -> Call:
    """A peer call: ``run_kd_command`` (the session id is filled in when it runs)."""
    return ("run_kd_command", {"command": command, "timeout_seconds": 120})


TASKS = [
    Task("process_count", "How many processes are running?", r"\b40 processes\b|(?:^PROCESS .*\n(?:.*\n){3}\n?){40}",
         [("processes", {"limit": 1})], [_kd("!process 0 0")]),
    Task("lsass_handles", "How many handles does lsass.exe hold?", r"handles 1[0-9]{3}\b|HandleCount: +1[0-9]{3}\.",
         [("processes", {"name": "lsass.exe"})], [_kd("!process 0 0 lsass.exe")]),
    Task("symbols", "Which modules have symbols loaded?", r"symbols loaded: nt\b|\bnt +\(pdb symbols\)",
         [("modules", {"limit": 1})], [_kd("lm")]),
    Task("where", "Where is the target stopped?", r"nt!DbgBreakPointWithStatus",
         [("location", {})], [_kd("r")]),
    Task("stack", "What are the top 5 frames of the stack?", r"nt!KeClockInterruptNotify",
         [("backtrace", {"limit": 5})], [_kd("kn 5")]),
    Task("myfault_device", "Which device does myfault create, and which majors does it handle?",
         r"IRP_MJ_DEVICE_CONTROL",
         [("driver_object", {"name": "myfault"})], [_kd("!drvobj myfault 7")]),
    Task("myfault_ioctls", "Which IOCTL codes does myfault handle?", r"(?i)8336e00b",
         [("ioctl_map", {"driver": "myfault"})],
         [_kd("!drvobj myfault 2"), _kd("uf myfault+0x1e00")]),
    Task("system_handles", "How many handles does the System process hold?", r"\b2651\b",
         [("processes", {"name": "System", "limit": 1})], [_kd("!process 0 0 System")]),
]


@dataclass
class Tally:
    """One server's conversation: bytes under each policy, calls, wall time, answers found."""

    text: int = 0
    structured: int = 0
    calls: int = 0
    wall_s: float = 0.0
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, result: Any) -> tuple[int, int, str]:
        texts = [b.text for b in result.content if getattr(b, "type", "") == "text"]
        text = sum(len(t.encode()) for t in texts)
        shown = text
        if result.structured_content is not None:
            shown = len(json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False).encode())
        self.text += text
        self.structured += shown
        self.calls += 1
        visible = "\n".join(texts) + json.dumps(result.structured_content or {})
        return text, shown, visible


def _surface_bytes(listed: Any) -> int:
    return len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())


async def _conversation(params: StdioServerParameters, open_call: Call, sid_of: Callable[[Any], str],
                        calls_of: Callable[[Task], list[Call]], sid_arg: str, close: Call) -> Tally:
    tally = Tally()
    t0 = time.perf_counter()
    async with Client(params, read_timeout_seconds=300) as client:
        listed = await client.list_tools()
        surface = _surface_bytes(listed)
        tally.text += surface
        tally.structured += surface
        opened = await client.call_tool(*open_call)
        assert not opened.is_error, opened.content
        tally.add(opened)
        sid = sid_of(opened)
        for task in TASKS:
            seen, text, shown, t1 = "", 0, 0, time.perf_counter()
            for name, args in calls_of(task):
                result = await client.call_tool(name, {**args, sid_arg: sid})
                t, s, visible = tally.add(result)
                text, shown, seen = text + t, shown + s, seen + visible
            tally.tasks[task.name] = {
                "answered": re.search(task.answer, seen, re.MULTILINE) is not None,
                "text_bytes": text, "structured_bytes": shown, "calls": len(calls_of(task)),
                "wall_ms": round((time.perf_counter() - t1) * 1000, 1),
            }
        with contextlib.suppress(Exception):
            await client.call_tool(close[0], {**close[1], sid_arg: sid})
    tally.wall_s = round(time.perf_counter() - t0, 2)
    tally.tasks["tools/list"] = {"text_bytes": surface, "structured_bytes": surface}
    return tally


def _ours(scenario: Path, structured: bool) -> Any:
    config = bench_mcp._config(scenario.parent)
    args = ["-m", "kdmcp", "--simulate", "--scenario", str(scenario), "--config", str(config)]
    params = StdioServerParameters(command=sys.executable, args=args + (["--structured"] if structured else []),
                                   cwd=str(bench_mcp.ROOT))
    return _conversation(params, ("start_kd", {"port": 50000, "key": bench_mcp.KEY, "initial_break": True}),
                         lambda r: str(bench_mcp._field(r, "session_id")), lambda t: t.ours, "session_id",
                         ("stop_kd", {}))


def _peer(scenario: Path, python: Path) -> Any:
    params = StdioServerParameters(command=str(python), args=["-m", "mcp_windbg", "--kd-path", str(bench_mcp.PEER_KD)],
                                   env=bench_mcp._peer_env(scenario), cwd=str(bench_mcp.ROOT))

    def sid_of(result: Any) -> str:
        found = bench_mcp.PEER_SESSION_ID.search(bench_mcp._text(result))
        assert found, bench_mcp._text(result)[:300]
        return found.group(1)

    return _conversation(params, ("open_kd_session", {"connection_string": bench_mcp.KDNET, "timeout_seconds": 60}),
                         sid_of, lambda t: t.peer, "session_id", ("close_kd_session", {"resume": False}))


async def measure(python: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        scenario = bench_mcp._scenario(Path(tmp))
        sides = {"ours": await _ours(scenario, False), "peer": await _peer(scenario, python),
                 "ours_structured": await _ours(scenario, True)}
    out: dict[str, Any] = {"tasks": {t.name: t.question for t in TASKS}}
    for name, tally in sides.items():
        out[name] = {"text_bytes": tally.text, "structured_bytes": tally.structured, "calls": tally.calls,
                     "wall_s": tally.wall_s, "answered": sum(1 for t in tally.tasks.values() if t.get("answered")),
                     "per_task": tally.tasks}
    peer = out["peer"]
    out["ratio"] = {f"{side}_{policy}": round(out[side][f"{policy}_bytes"] / peer[f"{policy}_bytes"], 3)
                    for side in ("ours", "ours_structured") for policy in ("text", "structured")}
    return out


def _print(result: dict[str, Any]) -> None:
    sides = ("ours", "ours_structured", "peer")
    print(f"{'task':<16}" + "".join(f"{s + ' text/struct B':>30}" for s in sides))
    for task in [*result["tasks"], "tools/list"]:
        row = f"{task:<16}"
        for side in sides:
            t = result[side]["per_task"][task]
            mark = "" if t.get("answered", True) else " (no answer)"
            row += f"{str(t['text_bytes']) + ' / ' + str(t['structured_bytes']) + mark:>30}"
        print(row)
    for side in sides:
        r = result[side]
        print(f"{side}: conversation {r['text_bytes']:,} B (text) / {r['structured_bytes']:,} B (structured), "
              f"{r['calls']} calls, {r['wall_s']} s, {r['answered']}/{len(result['tasks'])} answered")
    print("ours / peer: " + ", ".join(f"{k} {v}" for k, v in result["ratio"].items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--peer-venv", type=Path, default=None,
                        help="mcp-windbg's venv (default: <user cache>/kd-mcp/bench-peer-venv; created if missing)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    venv = args.peer_venv or bench_mcp.default_peer_venv()
    result = anyio.run(measure, bench_mcp.peer_python(venv.resolve()))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
