"""How long each kind of target takes to start and to stop, through the tools' own logic, on the simulator.

For every kind: the start tool's call until its result (``open_dump`` includes the summary's
three commands), then ``stop_kd`` until the debugger has exited; medians of ``--runs`` runs,
in milliseconds. Sharing: ``share_session`` on a broken-in KDNET session, then ``join_remote``
into it, and one command through the client.

    python scripts/bench_targets.py [--runs 5] [--json]
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

from kdmcp.config import Config  # noqa: E402
from kdmcp.server import KdMcpApp, ServerOptions, models, targets  # noqa: E402


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def _share_round(app: KdMcpApp) -> dict[str, float]:
    """share_session, join_remote, then one command through the client and one on the sharer."""
    kd = app.start_kd(50000, "1.2.3.4", None, None, True, None, owner=None)
    out: dict[str, float] = {}
    out["share_session_ms"], shared = _timed(lambda: targets.share_session(app, kd.session_id, owner=None))
    assert isinstance(shared, models.ShareResult)
    out["join_remote_ms"], joined = _timed(lambda: targets.join_remote(app, shared.connection, None, None,
                                                                         owner=None))
    assert isinstance(joined, models.StartResult)
    out["command_via_client_ms"], _ = _timed(lambda: app.kd_command(".echo x", joined.session_id, None, owner=None))
    out["command_on_sharer_ms"], _ = _timed(lambda: app.kd_command(".echo x", kd.session_id, None, owner=None))
    app.stop_kd(joined.session_id, True, owner=None)
    app.stop_kd(kd.session_id, True, owner=None)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    app = KdMcpApp(ServerOptions(config=Config(policy="full"), simulate=True))
    kernel_dump = ROOT / "fixtures" / "dumps" / "kernel-header-only.dmp"
    user_dump = ROOT / "fixtures" / "dumps" / "null_read_av.dmp"
    starts: dict[str, Callable[[], models.StartResult]] = {
        "open_dump_user": lambda: targets.open_dump(app, str(user_dump), None, None, owner=None),
        "open_dump_kernel": lambda: targets.open_dump(app, str(kernel_dump), None, None, owner=None),
        "attach_process": lambda: targets.attach_process(app, 4242, False, None, None, owner=None),
        "launch": lambda: targets.launch(app, ["C:\\app.exe"], True, None, None, owner=None),
        "attach_local_kernel": lambda: targets.attach_local_kernel(app, None, None, owner=None),
    }
    figures: dict[str, list[float]] = {}
    try:
        for name, start in starts.items():
            for _ in range(args.runs):
                ms, started = _timed(start)
                assert isinstance(started, models.StartResult)
                figures.setdefault(f"{name}_start_ms", []).append(ms)
                ms, _ = _timed(lambda s=started: app.stop_kd(s.session_id, True, owner=None))
                figures.setdefault(f"{name}_stop_ms", []).append(ms)
        for _ in range(args.runs):
            for name, ms in _share_round(app).items():
                figures.setdefault(name, []).append(ms)
    finally:
        app.shutdown()
    medians = {name: round(statistics.median(values), 1) for name, values in figures.items()}
    if args.json:
        print(json.dumps(medians))
    else:
        for name, value in medians.items():
            print(f"{name:32} {value:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
