"""What the typed run-control tools cost beside the raw commands they compose, on the simulator.

Through the tools' own logic (no transport), on one simulated KDNET session broken in at a
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
from kdmcp.server import KdMcpApp, ServerOptions, run_control  # noqa: E402
from kdmcp.server.render import ok_result  # noqa: E402


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
    sid = app.start_kd(50000, "1.2.3.4", None, None, True, None, owner=None).session_id
    app.kd_command("r", sid, None, owner=None)  # the parsers' first build is start-up, not a call

    def typed_bp() -> BaseModel:
        out = run_control.set_breakpoint(app, sid, "nt!NtCreateFile", "code", "w", 1, None, None, False, None,
                                         owner=None)
        run_control.clear_breakpoints(app, sid, None, True, owner=None)
        return out

    def raw_bp() -> BaseModel:
        out = app.kd_command("bp nt!NtCreateFile", sid, None, owner=None)
        app.kd_command("bc *", sid, None, owner=None)
        return out

    pairs: dict[str, tuple[Callable[[], BaseModel], Callable[[], BaseModel]]] = {
        "set_breakpoint": (typed_bp, raw_bp),
        "breakpoints": (lambda: run_control.breakpoints(app, sid, owner=None),
                        lambda: app.kd_command("bl", sid, None, owner=None)),
        "location": (lambda: run_control.location(app, sid, owner=None),
                     lambda: app.kd_command("u @$ip L1", sid, None, owner=None)),
        "step_over": (lambda: run_control.step(app, sid, "over", 1, 10, None, owner=None),
                      lambda: app.kd_command("p", sid, None, owner=None)),
    }
    run_control.set_breakpoint(app, sid, "nt!NtCreateFile", "code", "w", 1, None, None, False, None, owner=None)
    app.continue_go(sid, "g", owner=None)
    run_control.wait_for_stop(app, sid, 10, None, owner=None)
    run_control.clear_breakpoints(app, sid, None, True, owner=None)
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
        run_control.set_breakpoint(app, sid, "nt!NtCreateFile", "code", "w", 1, None, None, False, None, owner=None)
        app.continue_go(sid, "g", owner=None)
        out = run_control.wait_for_stop(app, sid, 10, None, owner=None)
        run_control.clear_breakpoints(app, sid, None, True, owner=None)
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
