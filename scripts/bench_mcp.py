"""MCP-level figures of kd-mcp on the simulator, through the official Python SDK client over stdio.

What a model-driven client pays: cold start to the first ``tools/list`` answer, the served
surface's bytes, the round trip of a small command (``r``), the bytes each result costs for
commands agents use, and ``read_output`` throughput for large outputs. Printed, never asserted
(docs/performance.md); ``--json`` prints one JSON object (``ours``, and with ``--peer`` also
``peer``, ``ratio`` = ours/peer, ``targets`` and ``setup``).

    python scripts/bench_mcp.py            # a table
    python scripts/bench_mcp.py --json     # machine-readable
    python scripts/bench_mcp.py --quick    # fewer rounds, 10 MB only
    python scripts/bench_mcp.py --peer     # side by side with mcp-windbg 1.6.0
    python scripts/bench_mcp.py --peer --engine-only   # only the engines' small command, side by side

``--peer`` installs mcp-windbg 1.6.0 from PyPI into a venv of its own (once; cached under the
user cache directory, or ``--peer-venv DIR``), runs it on POSIX with the shims in
``scripts/bench_peer/shims`` and points its ``--kd-path`` at ``scripts/bench_peer/kd``, which
runs kd-mcp's simulator as kd. Both servers then drive the same simulated kd (KDNET, same
scenario), and every figure is taken in alternating rounds, ours then the peer's, in one run.
The peer's engine (its ``KDSession.send_command``) is timed by ``scripts/bench_peer/peer_engine.py``
in the peer's venv, next to kd-mcp's ``DebuggerSession.execute`` in this process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import platformdirs
from mcp import Client, StdioServerParameters
from rich.console import Console
from rich.markup import escape
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
FAULTS = ROOT / "fixtures" / "scenarios" / "faults.yaml"
KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"
KDNET = f"net:port=50000,key={KEY}"
# The commands whose result sizes the token-economy budgets name.
SIZED = ("k", "r", "lm", "!process 0 0", "!analyze -v", "dt nt!_EPROCESS")

PEER_PACKAGE, PEER_VERSION = "mcp-windbg", "1.6.0"
PEER_HELPERS = Path(__file__).resolve().parent / "bench_peer"
PEER_KD = PEER_HELPERS / "kd"
PEER_SHIMS = PEER_HELPERS / "shims"
PEER_ENGINE = PEER_HELPERS / "peer_engine.py"
# mcp-windbg's open tools answer with "session_id: kd-1a2b3c4d" on the first line of their text.
PEER_SESSION_ID = re.compile(r"session_id: (\S+)")


def _scenario(directory: Path) -> Path:
    """faults.yaml plus a 50 MB bulk command (it has 1, 10 and 100 MB ones)."""
    text = FAULTS.read_text()
    anchor = '  "!bulk100":\n    bulk_mb: 100\n'
    assert anchor in text, "faults.yaml changed: update the anchor"
    path = directory / "bench-mcp.yaml"
    path.write_text(text.replace(anchor, anchor + '  "!bulk50":\n    bulk_mb: 50\n'))
    return path


def _config(directory: Path) -> Path:
    """The bulk commands are simulator extensions the standard policy refuses as unknown. The
    debugger on pipes, as mcp-windbg drives it (and as kd-mcp does on Windows): like for like."""
    path = directory / "bench-mcp-config.yaml"
    path.write_text("policy: full\nconsole_backend: pipe\n")
    path.chmod(0o600)
    return path


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


# ------------------------------------------------------------------------------------ the peer


def default_peer_venv() -> Path:
    """Where the peer's venv is kept between runs (both benches share it)."""
    return Path(platformdirs.user_cache_dir("kd-mcp")) / "bench-peer-venv"


def peer_python(venv: Path) -> Path:
    """The peer venv's interpreter, with mcp-windbg 1.6.0 installed into it on first use."""
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    probe = f"import importlib.metadata as m; print(m.version({PEER_PACKAGE!r}))"
    if python.exists():
        found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=False)
        if found.returncode == 0 and found.stdout.strip() == PEER_VERSION:
            return python
    print(f"installing {PEER_PACKAGE}=={PEER_VERSION} into {venv} ...", file=sys.stderr)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"{PEER_PACKAGE}=={PEER_VERSION}"], check=True)
    return python


def _peer_env(scenario: Path) -> dict[str, str]:
    """The peer's shims on its path; what the fake kd needs to run the simulator."""
    return {
        "PYTHONPATH": str(PEER_SHIMS),
        "KDMCP_BENCH_PYTHON": sys.executable,
        "KDMCP_BENCH_SCENARIO": str(scenario),
    }


# ------------------------------------------------------------------------------ the two servers


def _sizes(result: Any) -> dict[str, int]:
    """Bytes of a tool result as the client receives them: text blocks and structuredContent."""
    text = sum(len(block.text.encode()) for block in result.content if getattr(block, "type", "") == "text")
    structured = 0
    if result.structured_content is not None:
        structured = len(json.dumps(result.structured_content, separators=(",", ":")).encode())
    return {"text": text, "structured": structured, "total": text + structured}


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@dataclass
class Side:
    """One server under test: how to start it, open a kd session, run a command, close it."""

    name: str
    params: StdioServerParameters
    describe: str
    open: Callable[[Client], Awaitable[str]]
    run: Callable[[Client, str, str], Awaitable[Any]]
    close: Callable[[Client, str], Awaitable[Any]]


def ours(scenario: Path) -> Side:
    config = _config(scenario.parent)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kdmcp", "--simulate", "--scenario", str(scenario), "--config", str(config)],
        cwd=str(ROOT),
    )

    async def open_(client: Client) -> str:
        started = await client.call_tool("start_kd", {"port": 50000, "key": KEY, "initial_break": True})
        assert not started.is_error, started.content
        sid = _field(started, "session_id")
        assert sid is not None, _text(started)[:500]
        return str(sid)

    async def run(client: Client, sid: str, command: str) -> Any:
        result = await client.call_tool("kd_command", {"command": command, "session_id": sid, "timeout_s": 300})
        assert not result.is_error, result.content
        return result

    async def close(client: Client, sid: str) -> Any:
        return await client.call_tool("stop_kd", {"session_id": sid})

    describe = (f"kd-mcp (this checkout): kdmcp.sim kd on pipes, KDNET, scenario {scenario.name} "
                "(faults.yaml + !bulk50)")
    return Side("ours", params, describe, open_, run, close)


def peer(scenario: Path, python: Path) -> Side:
    params = StdioServerParameters(
        command=str(python),
        args=["-m", "mcp_windbg", "--kd-path", str(PEER_KD)],
        env=_peer_env(scenario),
        cwd=str(ROOT),
    )

    async def open_(client: Client) -> str:
        opened = await client.call_tool("open_kd_session", {"connection_string": KDNET, "timeout_seconds": 60})
        assert not opened.is_error, opened.content
        found = PEER_SESSION_ID.search(_text(opened))
        assert found, _text(opened)[:500]
        return found.group(1)

    async def run(client: Client, sid: str, command: str) -> Any:
        result = await client.call_tool(
            "run_kd_command", {"session_id": sid, "command": command, "timeout_seconds": 300}
        )
        assert not result.is_error, result.content
        return result

    async def close(client: Client, sid: str) -> Any:
        # resume=False: the simulated target needs no "g"; a resume costs the peer ~2 s of sleeps.
        return await client.call_tool("close_kd_session", {"session_id": sid, "resume": False})

    describe = (
        f"{PEER_PACKAGE} {PEER_VERSION} ({python.parent.parent}): open_kd_session/run_kd_command on "
        f"scripts/bench_peer/kd = kdmcp.sim kd, KDNET, scenario {scenario.name}"
    )
    return Side("peer", params, describe, open_, run, close)


async def _cold_start(side: Side) -> tuple[float, int, int]:
    """Seconds from spawning the server to the first ``tools/list`` answer; its bytes and tool count."""
    t0 = time.perf_counter()
    async with Client(side.params, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        elapsed = time.perf_counter() - t0
    surface = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
    return elapsed, surface, len(listed.tools)


def _field(result: Any, name: str) -> Any:
    """A field of our result, from structuredContent, else from the text: the header's session
    (``[s1 broken …]``), else a ``name: value`` or ``name=value`` in it."""
    data = result.structured_content or {}
    if name in data:
        return data[name]
    if name == "session_id" and (head := re.match(r"\[(s\d+) ", _text(result))):
        return head.group(1)
    found = re.search(rf"\b{re.escape(name)}\b[\"']?\s*[:=]\s*[\"']?([\w.:-]+)", _text(result))
    return found.group(1) if found else None


async def _read_output(client: Client, sid: str, done: Any) -> int:
    """Page one output to the client through ``read_output``, 1 MiB at a time; the bytes read."""
    output_id = _field(done, "output_id")
    assert output_id is not None, "no output_id in the bulk command's result"
    offset, total = 0, 0
    while True:
        chunk = await client.call_tool(
            "read_output", {"session_id": sid, "output_id": output_id, "offset": offset, "limit": 1 << 20}
        )
        assert not chunk.is_error, chunk.content
        data = chunk.structured_content or {}
        if not data:  # the default server: the header says where the page lies, the text follows it
            head, _, text = _text(chunk).partition("\n")
            where = re.search(r"bytes (\d+)-(\d+) of (\d+)", head)
            assert where is not None, head
            data = {"text": text, "next_offset": int(where.group(2)), "eof": head.endswith(" eof]")}
        text = str(data.get("text", ""))
        total += len(text.encode())
        # next_offset answers in the request's frame (within the output_id's output): sent back as is.
        if "next_offset" in data:
            offset = int(data["next_offset"])
        else:
            offset += len(text.encode())
        if data.get("eof", not text) or not text:
            return total


async def measure_mcp(sides: list[Side], quick: bool) -> dict[str, dict[str, Any]]:
    figures: dict[str, dict[str, Any]] = {side.name: {} for side in sides}
    rounds = 3 if quick else 7
    colds: dict[str, list[float]] = {side.name: [] for side in sides}
    for i in range(rounds):  # alternating; who goes first swaps every round
        for side in sides if i % 2 == 0 else sides[::-1]:
            elapsed, surface, tools = await _cold_start(side)
            colds[side.name].append(elapsed)
            figures[side.name].update(
                tools_list_bytes=surface, tools_count=tools, tools_list_bytes_per_tool=round(surface / max(1, tools))
            )
    for side in sides:
        figures[side.name]["cold_start_to_tools_list_ms"] = _ms(statistics.median(colds[side.name]))

    trips_total, batch = (100, 20) if quick else (500, 50)
    async with contextlib.AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        sids: dict[str, str] = {}
        for side in sides:
            clients[side.name] = await stack.enter_async_context(Client(side.params, read_timeout_seconds=300))
            sids[side.name] = await side.open(clients[side.name])
        for side in sides:
            for _ in range(20):  # warm-up: imports, caches, the simulator's first answers
                await side.run(clients[side.name], sids[side.name], "r")

        trips: dict[str, list[float]] = {side.name: [] for side in sides}
        for i in range(trips_total // batch):
            for side in sides if i % 2 == 0 else sides[::-1]:
                client, sid = clients[side.name], sids[side.name]
                for _ in range(batch):
                    t0 = time.perf_counter()
                    await side.run(client, sid, "r")
                    trips[side.name].append(time.perf_counter() - t0)
        for side in sides:
            figures[side.name]["r_round_trip_p50_ms"] = _ms(statistics.median(trips[side.name]))
            figures[side.name]["r_round_trip_p99_ms"] = _ms(_p99(trips[side.name]))

        for command in SIZED:
            for side in sides:
                sizes = _sizes(await side.run(clients[side.name], sids[side.name], command))
                for kind, size in sizes.items():
                    figures[side.name][f"result_{kind}_bytes[{command}]"] = size

        for mb in (10,) if quick else (10, 50):
            for side in sides:
                client, sid = clients[side.name], sids[side.name]
                t0 = time.perf_counter()
                done = await side.run(client, sid, f"!bulk{mb}")
                if side.name == "ours":
                    t1 = time.perf_counter()
                    delivered = await _read_output(client, sid, done)
                    paging = time.perf_counter() - t1
                    # What the server says the output holds, to check the pages against.
                    figures["ours"][f"bulk_output_bytes_{mb}mb"] = int(_field(done, "output_bytes") or delivered)
                    figures["ours"][f"read_output_s_{mb}mb"] = round(paging, 3)
                    figures["ours"][f"read_output_mb_s_{mb}mb"] = round(delivered / 2**20 / paging, 2)
                else:  # the peer has no paging: what its run command returns is all the client gets
                    delivered = len(_text(done).encode())
                elapsed = time.perf_counter() - t0
                figures[side.name][f"bulk_delivered_bytes_{mb}mb"] = delivered
                figures[side.name][f"bulk_s_{mb}mb"] = round(elapsed, 3)
                figures[side.name][f"bulk_delivered_mb_s_{mb}mb"] = round(delivered / 2**20 / elapsed, 2)
            reference = figures["ours"].get(f"bulk_output_bytes_{mb}mb") or mb * 2**20
            for side in sides:
                delivered = figures[side.name][f"bulk_delivered_bytes_{mb}mb"]
                figures[side.name][f"bulk_delivered_fraction_{mb}mb"] = round(delivered / reference, 4)
        for side in sides:
            with contextlib.suppress(Exception):
                await side.close(clients[side.name], sids[side.name])
    return figures


# ------------------------------------------------------------------------------- engine only


@contextlib.contextmanager
def _peer_engine(python: Path, scenario: Path) -> Iterator[subprocess.Popen[str]]:
    """scripts/bench_peer/peer_engine.py in the peer's venv, stopped (and killed if need be) on exit."""
    env = {**os.environ, **_peer_env(scenario)}
    proc = subprocess.Popen(
        [str(python), str(PEER_ENGINE), KDNET], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(OSError, ValueError):
            assert proc.stdin is not None
            proc.stdin.write("quit\n")
            proc.stdin.close()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _ask(proc: subprocess.Popen[str], request: str | None) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    if request is not None:
        proc.stdin.write(request + "\n")
        proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"peer engine exited ({proc.poll()}) before answering {request!r}")
    answer: dict[str, Any] = json.loads(line)
    return answer


def measure_engine(scenario: Path, python: Path | None, quick: bool) -> dict[str, dict[str, Any]]:
    """``r`` through kd-mcp's ``DebuggerSession`` (in process) and mcp-windbg's ``KDSession``, alternating."""
    sys.path.insert(0, str(ROOT))
    from kdmcp.console import BackendName
    from kdmcp.engine import DebuggerSession, KdnetTarget, SessionConfig, build_plan, simulator_command
    from kdmcp.secret import Secret

    def start(backend: BackendName) -> DebuggerSession:
        plan = build_plan(
            simulator_command("kd", str(scenario)), KdnetTarget(port=50000, key=Secret(KEY)), initial_break=True
        )
        started = DebuggerSession(f"bench-mcp-{backend}", plan, SessionConfig(backend=backend))
        started.start(30)
        return started

    figures: dict[str, dict[str, Any]] = {"ours": {}}
    total, batch = (300, 50) if quick else (1000, 100)
    # "ours" is the default backend (a pty on POSIX, what the server uses); "ours_pipe" the pipe backend, the
    # transport mcp-windbg uses; "peer" its KDSession.
    times: dict[str, list[float]] = {"ours": [], "ours_pipe": [], "peer": []}
    with contextlib.ExitStack() as stack:
        sessions: dict[str, DebuggerSession] = {}
        backends: tuple[tuple[str, BackendName], ...] = (("ours", "auto"), ("ours_pipe", "pipe"))
        for name, backend in backends:
            sessions[name] = start(backend)
            stack.callback(sessions[name].store.close)
            stack.callback(sessions[name].stop)
        session = sessions["ours"]
        proc = stack.enter_context(_peer_engine(python, scenario)) if python else None
        if proc is not None:
            figures["peer"] = {"engine_open_ms": _ms(_ask(proc, None)["open_s"])}
        for each in sessions.values():
            for _ in range(20):
                each.execute("r")
        names = list(times)
        for i in range(total // batch):
            for name in names[i % len(names) :] + names[: i % len(names)]:  # rotate who goes first
                if name in sessions:
                    for _ in range(batch):
                        t0 = time.perf_counter()
                        sessions[name].execute("r")
                        times[name].append(time.perf_counter() - t0)
                elif proc is not None:
                    times["peer"].extend(_ask(proc, f"r {batch}")["times_s"])
        for command in SIZED:
            out = session.execute(command)
            figures["ours"][f"raw_bytes[{command}]"] = (
                out.output_end - out.output_offset if out.truncated else len(out.output.encode())
            )
            if proc is not None:
                figures["peer"][f"raw_bytes[{command}]"] = _ask(proc, f"size {command}")["bytes"]
    for name, values in times.items():
        if values:
            side, suffix = ("ours", "_pipe") if name == "ours_pipe" else (name, "")
            figures[side][f"engine_r_p50_ms{suffix}"] = _ms(statistics.median(values))
            figures[side][f"engine_r_p99_ms{suffix}"] = _ms(_p99(values))
    return figures


# ---------------------------------------------------------------------------------- reporting


def _ratios(ours_: dict[str, Any], peer_: dict[str, Any]) -> dict[str, float]:
    # Our pipe backend is set against the peer's engine too: pipes are the peer's transport.
    peer_ = peer_ | {f"{key}_pipe": peer_[key] for key in ("engine_r_p50_ms", "engine_r_p99_ms") if key in peer_}
    return {
        key: round(value / peer_[key], 3)
        for key, value in ours_.items()
        if isinstance(value, (int, float)) and isinstance(peer_.get(key), (int, float)) and peer_[key]
    }


def _targets(ours_: dict[str, Any], ratio: dict[str, float]) -> dict[str, bool | None]:
    """The token-economy issue's targets (issue 12): met, missed, or not measured (None)."""

    def at_most(key: str, bound: float) -> bool | None:
        return ratio[key] <= bound if key in ratio else None

    mb_s = ours_.get("read_output_mb_s_10mb")
    return {
        "r round trip <= 1.0x peer": at_most("r_round_trip_p50_ms", 1.0),
        # pipes against pipes: the peer's transport (and kd-mcp's on Windows)
        "engine small command <= 1.0x peer": at_most("engine_r_p50_ms_pipe", 1.0),
        "read_output >= 20 MB/s": None if mb_s is None else mb_s >= 20,
        "cold start <= 1.0x peer": at_most("cold_start_to_tools_list_ms", 1.0),
    }


def measure(quick: bool, python: Path | None, engine_only: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kdmcp-bench-mcp-") as tmp:
        scenario = _scenario(Path(tmp))
        sides = [ours(scenario)] + ([peer(scenario, python)] if python else [])
        mcp = {side.name: {} for side in sides} if engine_only else anyio.run(measure_mcp, sides, quick)
        engine = measure_engine(scenario, python, quick)
    result: dict[str, Any] = {
        "setup": {side.name: side.describe for side in sides} | {"quick": quick, "engine_only": engine_only},
    }
    for name in mcp:
        result[name] = mcp[name] | engine.get(name, {})
    if python:
        result["ratio"] = _ratios(result["ours"], result["peer"])
        result["targets"] = _targets(result["ours"], result["ratio"])
    return result


def _print_table(result: dict[str, Any]) -> None:
    console = Console()
    has_peer = "peer" in result
    for name, describe in result["setup"].items():
        if name not in ("quick", "engine_only"):
            console.print(f"[bold]{name}[/]: {describe}")
    table = Table(title="MCP over stdio (Python SDK client) on the simulator" + (", side by side" if has_peer else ""))
    table.add_column("figure")
    table.add_column("ours", justify="right")
    if has_peer:
        table.add_column("mcp-windbg", justify="right")
        table.add_column("ours/peer", justify="right")
    keys = list(result["ours"]) + [k for k in result.get("peer", {}) if k not in result["ours"]]
    for key in keys:
        row = [escape(key), str(result["ours"].get(key, "-"))]
        if has_peer:
            row += [str(result["peer"].get(key, "-")), str(result["ratio"].get(key, "-"))]
        table.add_row(*row)
    console.print(table)
    for target, met in result.get("targets", {}).items():
        console.print(f"{target}: {'not measured' if met is None else 'met' if met else 'MISSED'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, 10 MB only")
    parser.add_argument(
        "--peer",
        action="store_true",
        help=f"side by side with {PEER_PACKAGE} {PEER_VERSION} (POSIX: its kd is a sh script)",
    )
    parser.add_argument(
        "--peer-venv",
        type=Path,
        default=None,
        help="the peer's venv; implies --peer (default: <user cache>/kd-mcp/bench-peer-venv; created if missing)",
    )
    parser.add_argument(
        "--engine-only",
        action="store_true",
        help="only the engine figures (the small command through each engine, alternating): no MCP, no cold start",
    )
    args = parser.parse_args()
    # A TERM unwinds like Ctrl+C, so the context managers stop every server and debugger started.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    python = None
    if args.peer or args.peer_venv:
        venv = args.peer_venv or default_peer_venv()
        python = peer_python(venv.resolve())
    result = measure(args.quick, python, args.engine_only)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
