"""What the typed kernel-object tools cost beside the raw commands they read, on the simulator.

Through the tools' own logic (no transport), on one simulated KDNET session at its initial
break: each typed tool's median call time next to ``kd_command`` running the extension it reads,
the commands (round trips) each made, and the bytes each result serves (structuredContent JSON
and the text block: what a client and a model pay for). Medians of ``--runs`` rounds, ms.

    python scripts/bench_kernel_tools.py [--runs 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402

from kdmcp.config import Config  # noqa: E402
from kdmcp.server import KdMcpApp, ServerOptions  # noqa: E402
from kdmcp.server.call import Call  # noqa: E402
from kdmcp.server.render import ok_result  # noqa: E402
from kdmcp.server.tools.commands.commands import kd_command  # noqa: E402
from kdmcp.server.tools.kobjects.drivers import device_object, driver_object, irp  # noqa: E402
from kdmcp.server.tools.sessions.kdnet import start_kd  # noqa: E402

Case = tuple[Callable[[], BaseModel], str]  # the typed call, and the raw command it reads


def cases(app: KdMcpApp, sid: str) -> dict[str, Case]:
    return {
        "driver_object": (lambda: driver_object(Call(app, None), "myfault", session_id=sid), "!drvobj myfault 7"),
        "device_object": (lambda: device_object(Call(app, None), name="\\Device\\Harddisk0\\DR0", session_id=sid),
                          "!devobj \\Device\\Harddisk0\\DR0"),
        "irp": (lambda: irp(Call(app, None), "ffffe70f2ed94d70", session_id=sid), "!irp ffffe70f2ed94d70"),
    }


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
    sid = start_kd(Call(app, None), 50000, "1.2.3.4", initial_break=True).session_id

    def raw(command: str) -> BaseModel:
        return kd_command(Call(app, None), command, session_id=sid)

    raw("r")  # the parsers' first build is start-up, not a call
    figures: dict[str, dict[str, float]] = {}
    for name, (typed, command) in cases(app, sid).items():
        times: dict[str, list[float]] = {"typed": [], "raw": []}
        row: dict[str, float] = {}
        for _ in range(args.runs):
            for label, fn in (("typed", typed), ("raw", partial(raw, command))):
                ms, out = _timed(fn)
                times[label].append(ms)
                served = ok_result(out, app.redactor)
                row[f"{label}_json_b"] = len(json.dumps(served.structured_content))
                row[f"{label}_text_b"] = len(served.content[0].text)  # type: ignore[union-attr]
                if label == "typed":
                    row["commands"] = len(str(getattr(out, "command", "")).split("; "))
        figures[name] = {"typed_ms": round(statistics.median(times["typed"]), 2),
                         "raw_ms": round(statistics.median(times["raw"]), 2), **row}
    app.shutdown()
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, fig in figures.items():
            print(f"{name:14} " + "  ".join(f"{k} {v}" for k, v in fig.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
