"""What the typed run-control tools cost beside the raw commands they compose, on the simulator.

Through the tools' own functions (no transport), on one simulated KDNET session broken in at a
breakpoint: each typed tool's median call time next to ``kd_command`` running the command it
is built on, and the bytes each result serves (its structuredContent JSON and its text block:
what a client and a model pay for). Medians of ``--runs`` rounds, milliseconds.

    python scripts/bench_run_control.py [--runs 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402

from kdmcp.config import Config  # noqa: E402
from kdmcp.server import KdMcpApp, ServerOptions  # noqa: E402
from kdmcp.server.call import Call  # noqa: E402
from kdmcp.server.render import ok_result  # noqa: E402
from kdmcp.server.tools.commands.commands import kd_command  # noqa: E402
from kdmcp.server.tools.run.breakpoints import breakpoints, clear_breakpoints, set_breakpoint  # noqa: E402
from kdmcp.server.tools.run.stops import location, step, wait_for_stop  # noqa: E402
from kdmcp.server.tools.run.target import continue_go  # noqa: E402
from kdmcp.server.tools.sessions.kdnet import start_kd  # noqa: E402


def _timed(fn: Callable[[], BaseModel]) -> tuple[float, BaseModel]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    app = KdMcpApp(ServerOptions(config=Config(), simulate=True))
    sid = start_kd(Call(app, None), 50000, "1.2.3.4", None, None, True, None).session_id
    kd_command(Call(app, None), "r", sid)  # the parsers' first build is start-up, not a call

    def typed_bp() -> BaseModel:
        out = set_breakpoint(Call(app, None), "nt!NtCreateFile", session_id=sid)
        clear_breakpoints(Call(app, None), all=True, session_id=sid)
        return out

    def raw_bp() -> BaseModel:
        out = kd_command(Call(app, None), "bp nt!NtCreateFile", sid)
        kd_command(Call(app, None), "bc *", sid)
        return out

    pairs: dict[str, tuple[Callable[[], BaseModel], Callable[[], BaseModel]]] = {
        "set_breakpoint": (typed_bp, raw_bp),
        "breakpoints": (lambda: breakpoints(Call(app, None), sid), lambda: kd_command(Call(app, None), "bl", sid)),
        "location": (lambda: location(Call(app, None), sid), lambda: kd_command(Call(app, None), "u @$ip L1", sid)),
        "step_over": (lambda: step(Call(app, None), "over", 1, 10, sid), lambda: kd_command(Call(app, None), "p", sid)),
    }
    set_breakpoint(Call(app, None), "nt!NtCreateFile", session_id=sid)
    continue_go(Call(app, None), sid, "g")
    wait_for_stop(Call(app, None), 10, sid)
    clear_breakpoints(Call(app, None), all=True, session_id=sid)
    figures: dict[str, dict[str, float]] = {}
    for name, (typed, raw) in pairs.items():
        times: dict[str, list[float]] = {"typed": [], "raw": []}
        sizes: dict[str, int] = {}
        for _ in range(args.runs):
            for label, fn in (("typed", typed), ("raw", raw)):
                ms, out = _timed(fn)
                times[label].append(ms)
                served = ok_result(out, app.redactor)
                sizes[f"{label}_json_b"] = len(json.dumps(served.structured_content))
                sizes[f"{label}_text_b"] = len(served.content[0].text)  # type: ignore[union-attr]
        figures[name] = {"typed_ms": round(statistics.median(times["typed"]), 2),
                         "raw_ms": round(statistics.median(times["raw"]), 2), **sizes}

    def cycle() -> BaseModel:
        set_breakpoint(Call(app, None), "nt!NtCreateFile", session_id=sid)
        continue_go(Call(app, None), sid, "g")
        out = wait_for_stop(Call(app, None), 10, sid)
        clear_breakpoints(Call(app, None), all=True, session_id=sid)
        return out

    cycles = [_timed(cycle)[0] for _ in range(max(3, args.runs // 4))]
    figures["bp_go_wait_cycle"] = {"typed_ms": round(statistics.median(cycles), 2)}
    app.shutdown()
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, row in figures.items():
            print(f"{name:18} " + "  ".join(f"{k} {v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
