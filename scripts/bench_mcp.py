"""MCP-level figures of kd-mcp on the simulator, through the official Python SDK client over stdio.

What a model-driven client pays: cold start to the first ``tools/list`` answer, the served
surface's bytes, the round trip of a small command (``r``), the bytes each result costs for
commands agents use, and ``read_output`` throughput for large outputs. Printed, never asserted
(docs/performance.md); ``--json`` prints one JSON object.

    python scripts/bench_mcp.py            # a table
    python scripts/bench_mcp.py --json     # machine-readable
    python scripts/bench_mcp.py --quick    # fewer rounds, 10 MB only

The peer comparison the token-economy issue asks for (``--peer``) is not here yet.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
FAULTS = ROOT / "fixtures" / "scenarios" / "faults.yaml"
KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"
# The commands whose result sizes the token-economy budgets name.
SIZED = ("k", "r", "lm", "!process 0 0", "!analyze -v", "dt nt!_EPROCESS")


def _scenario(directory: Path) -> Path:
    """faults.yaml plus a 50 MB bulk command (it has 1, 10 and 100 MB ones)."""
    text = FAULTS.read_text()
    anchor = '  "!bulk100":\n    bulk_mb: 100\n'
    assert anchor in text, "faults.yaml changed: update the anchor"
    path = directory / "bench-mcp.yaml"
    path.write_text(text.replace(anchor, anchor + '  "!bulk50":\n    bulk_mb: 50\n'))
    return path


def _config(directory: Path) -> Path:
    """The bulk commands are simulator extensions the standard policy refuses as unknown."""
    path = directory / "bench-mcp-config.yaml"
    path.write_text("policy: full\n")
    path.chmod(0o600)
    return path


def _params(scenario: Path) -> StdioServerParameters:
    config = _config(scenario.parent)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "kdmcp", "--simulate", "--scenario", str(scenario), "--config", str(config)],
        cwd=str(ROOT),
    )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


async def _cold_starts(scenario: Path, rounds: int) -> tuple[float, int]:
    """Median ms from spawning the server to the first ``tools/list`` answer; the surface's bytes."""
    times: list[float] = []
    surface = 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        async with Client(_params(scenario), read_timeout_seconds=60) as client:
            listed = await client.list_tools()
            times.append(time.perf_counter() - t0)
            surface = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
    return _ms(statistics.median(times)), surface


def _sizes(result: Any) -> dict[str, int]:
    text = sum(len(block.text.encode()) for block in result.content if getattr(block, "type", "") == "text")
    structured = len(json.dumps(result.structured_content or {}, separators=(",", ":")).encode())
    raw = len(str((result.structured_content or {}).get("output", "")).encode())
    return {"raw": raw, "text": text, "structured": structured}


async def _session_figures(scenario: Path, rounds: int, sizes_mb: tuple[int, ...]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    async with Client(_params(scenario), read_timeout_seconds=300) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": KEY, "initial_break": True})
        assert not started.is_error, started.content
        sid = (started.structured_content or {})["session_id"]

        async def kd(command: str) -> Any:
            result = await client.call_tool("kd_command", {"command": command, "session_id": sid, "timeout_s": 300})
            assert not result.is_error, result.content
            return result

        for _ in range(20):  # warm-up: imports, caches, the simulator's first answers
            await kd("r")
        trips: list[float] = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            await kd("r")
            trips.append(time.perf_counter() - t0)
        trips.sort()
        figures["r_round_trip_p50_ms"] = _ms(statistics.median(trips))
        figures["r_round_trip_p99_ms"] = _ms(trips[min(len(trips) - 1, int(0.99 * len(trips)))])

        for command in SIZED:
            for kind, size in _sizes(await kd(command)).items():
                figures[f"bytes_{kind}[{command}]"] = size

        for mb in sizes_mb:
            done = await kd(f"!bulk{mb}")
            output_id = (done.structured_content or {})["output_id"]
            offset, total, t0 = 0, 0, time.perf_counter()
            while True:
                chunk = await client.call_tool(
                    "read_output", {"session_id": sid, "output_id": output_id, "offset": offset, "limit": 1 << 20}
                )
                assert not chunk.is_error, chunk.content
                data = chunk.structured_content or {}
                total += len(str(data.get("text", "")).encode())
                offset = int(data.get("next_offset", offset))
                if data.get("eof", True) or not data.get("text"):
                    break
            elapsed = time.perf_counter() - t0
            figures[f"read_output_mb_s_{mb}mb"] = round(total / 2**20 / elapsed, 2)
            figures[f"read_output_s_{mb}mb"] = round(elapsed, 3)
        await client.call_tool("stop_kd", {"session_id": sid})
    return figures


async def measure(quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kdmcp-bench-mcp-") as tmp:
        scenario = _scenario(Path(tmp))
        cold_ms, surface = await _cold_starts(scenario, 3 if quick else 7)
        figures: dict[str, Any] = {"cold_start_to_tools_list_ms": cold_ms, "tools_list_bytes": surface}
        figures.update(await _session_figures(scenario, 100 if quick else 500, (10,) if quick else (10, 50)))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, 10 MB only")
    args = parser.parse_args()
    figures = anyio.run(measure, args.quick)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    table = Table(title="kd-mcp over MCP (stdio, Python SDK client) on the simulator")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name, value in figures.items():
        table.add_row(name, str(value))
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
