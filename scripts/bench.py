"""Benchmarks of the engine against the simulator, printed as figures (never asserted).

    python scripts/bench.py           # a table
    python scripts/bench.py --json    # one JSON object (keys documented in docs/performance.md)

Figures: small-command round trip through the engine next to a raw pipe round trip to a
trivial echo child (the floor); capture throughput for 1/10/100 MB and the 10x-size time
ratio (linear cost shows as ~10); break-in and go-confirmation latency; the peak RSS of a
fresh process that captures 100 MB through the engine; the policy verdict the server asks
for before every command (``--policy``: that section alone).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kdmcp.command import DEFAULT_NETWORK_ROOTS, check  # noqa: E402
from kdmcp.command.policy import _classify_cached  # noqa: E402
from kdmcp.engine import (  # noqa: E402
    DebuggerSession,
    KdnetTarget,
    SessionConfig,
    build_plan,
    simulator_command,
)
from kdmcp.engine.commands import validate  # noqa: E402
from kdmcp.secret import Secret  # noqa: E402

FAULTS = str(ROOT / "fixtures" / "scenarios" / "faults.yaml")

_ECHO_CHILD = r"""
import os, sys
os.write(1, b"0: kd> ")
buf = b""
while True:
    data = os.read(0, 65536)
    if not data:
        break
    buf += data
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        os.write(1, line + b"\r\n0: kd> ")
"""


def _session(backend: str) -> DebuggerSession:
    plan = build_plan(simulator_command("kd", FAULTS), KdnetTarget(port=50000, key=Secret("1.2.3.4")),
                      initial_break=True)
    session = DebuggerSession("bench", plan, SessionConfig(backend=backend))  # type: ignore[arg-type]
    session.start(30)
    return session


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_commands(backend: str, n: int) -> tuple[float, float]:
    s = _session(backend)
    try:
        for _ in range(20):
            s.execute(".echo warm")
        times = []
        for i in range(n):
            t0 = time.perf_counter()
            s.execute(f".echo {i}")
            times.append((time.perf_counter() - t0) * 1000)
    finally:
        s.stop()
        s.store.close()
    return statistics.median(times), _pct(times, 0.99)


def bench_raw_pipe(n: int, argv: list[str], request: str) -> float:
    """Median ms to write ``request`` and read back as many prompts as it has lines, raw."""
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None and child.stdout is not None
    out, inp = child.stdout.fileno(), child.stdin.fileno()
    lines = request.count("\n")

    def until_prompts(count: int) -> None:
        got = b""
        while got.count(b"kd> ") < count:
            got += os.read(out, 65536)

    until_prompts(1)
    times = []
    for i in range(n + 20):
        t0 = time.perf_counter()
        os.write(inp, request.format(i=i).encode())
        until_prompts(lines)
        if i >= 20:
            times.append((time.perf_counter() - t0) * 1000)
    child.stdin.close()
    child.kill()
    child.wait(10)
    child.stdout.close()
    return statistics.median(times)


def bench_capture(backend: str, mb: int) -> float:
    s = _session(backend)
    try:
        t0 = time.perf_counter()
        r = s.execute(f"!bulk{mb}", timeout=300)
        elapsed = time.perf_counter() - t0
        assert r.output_end - r.output_offset >= mb * 1024 * 1024
    finally:
        s.stop()
        s.store.close()
    return elapsed


def bench_break_continue(backend: str, n: int) -> tuple[float, float]:
    s = _session(backend)
    breaks, goes = [], []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            s.go()
            goes.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            s.break_in()
            breaks.append((time.perf_counter() - t0) * 1000)
    finally:
        s.stop()
        s.store.close()
    return statistics.median(breaks), statistics.median(goes)


# Plain commands agents send most, then two lines the full reader has to take apart.
POLICY_LINES = {
    "r": "r", "k": "k", "lm": "lm", "dt": "dt nt!_EPROCESS", "process": "!process 0 0",
    "block": ".block { r; k }; lm", "bp": 'bp nt!NtCreateFile "kb; g"',
}


def bench_policy(rounds: int) -> dict[str, float]:
    """µs per verdict as the server asks for it (``validate`` then ``check``), per line.

    ``first``: the line's first read (the reader's cache cleared before each call);
    ``cached``: the same line again. Each figure is the best of ``rounds`` rounds of 200
    calls, the lines interleaved round by round, so a busy machine's slow spells count
    against no line in particular.
    """
    best: dict[str, float] = {}
    for _ in range(rounds):
        for key, line in POLICY_LINES.items():
            for kind in ("first", "cached"):
                t0 = time.perf_counter()
                for _ in range(200):
                    if kind == "first":
                        _classify_cached.cache_clear()
                    validate(line)
                    check(line, "standard", DEFAULT_NETWORK_ROOTS)
                us = (time.perf_counter() - t0) / 200 * 1e6
                name = f"policy_{kind}_us_{key}"
                best[name] = min(us, best.get(name, us))
    return best


def rss_child() -> None:
    """Run in a fresh process: capture 100 MB and print this process's peak RSS in MB."""
    s = _session("pexpect" if sys.platform != "win32" else "pipe")
    try:
        s.execute("!bulk100", timeout=300)
    finally:
        s.stop()
        s.store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(peak / 1024)


def peak_rss_100mb() -> float:
    out = subprocess.run([sys.executable, __file__, "--rss-child"], capture_output=True, text=True, timeout=300,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def run(quick: bool) -> dict[str, float]:
    n = 100 if quick else 300
    backend = "pexpect" if sys.platform != "win32" else "pipe"
    figures: dict[str, float] = {}
    figures["cmd_p50_ms"], figures["cmd_p99_ms"] = bench_commands(backend, n)
    figures["cmd_p50_ms_pipe"], figures["cmd_p99_ms_pipe"] = bench_commands("pipe", n)
    figures["raw_pipe_p50_ms"] = bench_raw_pipe(n, [sys.executable, "-c", _ECHO_CHILD], "echo {i}\n")
    # The same two lines the engine sends (command + .echo marker), raw, to the simulator:
    # what the debugger itself costs, before any engine work.
    sim = [*simulator_command("kd", FAULTS), "-b", "-k", "net:port=50000,key=1.2.3.4"]
    figures["raw_sim_p50_ms"] = bench_raw_pipe(n, sim, ".echo {i}\n.echo KDMCP0123456789ABCDEF01234\n")
    figures["cmd_vs_floor_ratio"] = figures["cmd_p50_ms"] / figures["raw_pipe_p50_ms"]
    figures["engine_overhead_p50_ms"] = figures["cmd_p50_ms_pipe"] - figures["raw_sim_p50_ms"]
    t1 = bench_capture(backend, 1)
    t10 = bench_capture(backend, 10)
    t100 = bench_capture(backend, 100)
    figures["capture_s_1mb"], figures["capture_s_10mb"], figures["capture_s_100mb"] = t1, t10, t100
    figures["capture_mb_s_1mb"] = 1 / t1
    figures["capture_mb_s_10mb"] = 10 / t10
    figures["capture_mb_s_100mb"] = 100 / t100
    figures["capture_ratio_10x"] = t100 / t10
    figures["capture_mb_s_100mb_pipe"] = 100 / bench_capture("pipe", 100)
    figures["break_in_ms"], figures["continue_ms"] = bench_break_continue(backend, 10 if quick else 30)
    figures["peak_rss_mb_100mb"] = peak_rss_100mb()
    figures.update(bench_policy(10 if quick else 30))
    try:
        sys.path.insert(0, str(ROOT / "scripts"))
        from bench_parse import measure  # type: ignore[import-not-found]

        figures.update(measure())
    except ImportError:
        pass
    return {k: round(v, 3) for k, v in figures.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--policy", action="store_true", help="only the policy verdict figures")
    parser.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        rss_child()
        return 0
    t0 = time.perf_counter()
    figures = bench_policy(30) if args.policy else run(args.quick)
    figures = {k: round(v, 3) for k, v in figures.items()}
    figures["bench_seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(figures))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title="kd-mcp engine on the simulator")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, f"{value:g}")
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
