"""How long each kind of target takes to start and to stop, through the tools' own functions, on the simulator.

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
from kdmcp.server import KdMcpApp, ServerOptions, models  # noqa: E402
from kdmcp.server.call import Call  # noqa: E402
from kdmcp.server.tools.commands.commands import kd_command  # noqa: E402
from kdmcp.server.tools.sessions.kdnet import start_kd  # noqa: E402
from kdmcp.server.tools.sessions.lifecycle import stop_kd  # noqa: E402
from kdmcp.server.tools.sessions.targets import (  # noqa: E402
    attach_local_kernel,
    attach_process,
    join_remote,
    launch,
    open_dump,
    share_session,
)


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def _share_round(app: KdMcpApp) -> dict[str, float]:
    """share_session, join_remote, then one command through the client and one on the sharer."""
    kd = start_kd(Call(app, None), 50000, "1.2.3.4", None, None, True, None)
    out: dict[str, float] = {}
    out["share_session_ms"], shared = _timed(lambda: share_session(Call(app, None), kd.session_id))
    assert isinstance(shared, models.ShareResult)
    out["join_remote_ms"], joined = _timed(lambda: join_remote(Call(app, None), shared.connection, None))
    assert isinstance(joined, models.StartResult)
    out["command_via_client_ms"], _ = _timed(lambda: kd_command(Call(app, None), ".echo x", joined.session_id, None))
    out["command_on_sharer_ms"], _ = _timed(lambda: kd_command(Call(app, None), ".echo x", kd.session_id, None))
    stop_kd(Call(app, None), joined.session_id, True)
    stop_kd(Call(app, None), kd.session_id, True)
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
        "open_dump_user": lambda: open_dump(Call(app, None), str(user_dump), None),
        "open_dump_kernel": lambda: open_dump(Call(app, None), str(kernel_dump), None),
        "attach_process": lambda: attach_process(Call(app, None), 4242, False, None),
        "launch": lambda: launch(Call(app, None), ["C:\\app.exe"], True, None),
        "attach_local_kernel": lambda: attach_local_kernel(Call(app, None), None),
    }
    figures: dict[str, list[float]] = {}
    try:
        for name, start in starts.items():
            for _ in range(args.runs):
                ms, started = _timed(start)
                assert isinstance(started, models.StartResult)
                figures.setdefault(f"{name}_start_ms", []).append(ms)
                ms, _ = _timed(lambda s=started: stop_kd(Call(app, None), s.session_id, True))
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
