"""Cold start, two figures: spawn -> the first ``tools/list`` answer, and spawn -> the first tool result.

The stdio prelude (kdmcp.prelude) answers the opening requests while the SDK loads; a tool call
still waits for the SDK. This prints both figures for kd-mcp with the prelude (its answers kept
by a warm-up start), without it (``KDMCP_NO_PRELUDE=1``; the tool listing is kept either way),
and, with ``--peer``, for mcp-windbg 1.6.0 (``scripts/bench_mcp.py --peer`` sets its venv up),
in alternating rounds, through the SDK's client over stdio. The first call: ``list_sessions``
(ours), ``list_dumps`` of an empty directory (the peer's cheapest tool). Printed, never asserted.

    python scripts/bench_first_call.py [--peer] [--rounds N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_mcp  # the peer's venv and setup, one place


@dataclass
class Side:
    name: str
    params: StdioServerParameters
    call: tuple[str, dict[str, Any]]
    listed: list[float] = field(default_factory=list)
    called: list[float] = field(default_factory=list)


async def _once(side: Side) -> None:
    t0 = time.perf_counter()
    with anyio.fail_after(120):
        async with Client(side.params, read_timeout_seconds=60) as client:
            await client.list_tools()
            side.listed.append(time.perf_counter() - t0)
            result = await client.call_tool(*side.call)
            side.called.append(time.perf_counter() - t0)
            assert not result.is_error, result.content


def _sides(peer: bool, empty: Path) -> list[Side]:
    args = ["-m", "kdmcp", "--simulate"]
    env = {name: value for name, value in os.environ.items() if name not in ("KDMCP_NO_PRELUDE",
                                                                              "KDMCP_NO_SURFACE_CACHE")}
    sides = [Side("ours (prelude)", StdioServerParameters(command=sys.executable, args=args, env=env,
                                                          cwd=str(bench_mcp.ROOT)), ("list_sessions", {})),
             Side("ours (no prelude)", StdioServerParameters(command=sys.executable, args=args,
                                                             env={**env, "KDMCP_NO_PRELUDE": "1"},
                                                             cwd=str(bench_mcp.ROOT)), ("list_sessions", {}))]
    if peer:
        python = bench_mcp.peer_python(bench_mcp.default_peer_venv().resolve())
        params = bench_mcp.peer(bench_mcp.FAULTS, python).params
        sides.append(Side("peer", params, ("list_dumps", {"directory_path": str(empty)})))
    return sides


async def measure(peer: bool, rounds: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as empty:
        sides = _sides(peer, Path(empty))
        await _once(sides[0])  # warm-up: keeps our answers (and the listing) for these options
        sides[0].listed.clear()
        sides[0].called.clear()
        for i in range(rounds):  # alternating; the order turns every round
            for side in sides[i % len(sides):] + sides[: i % len(sides)]:
                await _once(side)
    return {side.name: {"cold_start_to_tools_list_ms": round(statistics.median(side.listed) * 1000, 1),
                        "cold_start_to_first_call_ms": round(statistics.median(side.called) * 1000, 1)}
            for side in sides}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--peer", action="store_true", help="also mcp-windbg 1.6.0 (its venv: bench_mcp.py --peer)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = anyio.run(measure, args.peer, args.rounds)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, values in figures.items():
            print(f"{name:20} tools/list {values['cold_start_to_tools_list_ms']:8.1f} ms   "
                  f"first call {values['cold_start_to_first_call_ms']:8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
