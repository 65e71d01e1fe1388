"""mcp-windbg's engine, timed: run by scripts/bench_mcp.py --peer with the peer venv's python.

Opens mcp-windbg's own ``KDSession`` (``kd -k net:...``) on the fake ``kd`` next to this file and
answers one request per stdin line, one JSON object per stdout line:

    {"ready": true, "open_s": ...}                  once the session has its first prompt
    r 100   ->  {"command": "r", "times_s": [...]}  100 timed ``send_command("r")`` calls
    size k  ->  {"command": "k", "lines": n, "bytes": b}
    quit    ->  the session is shut down the peer's way, then the process exits

Run with the shims directory on PYTHONPATH (``signal.CTRL_BREAK_EVENT``); never imports kd-mcp.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mcp_windbg.kd_session import KDSession  # type: ignore[import-not-found]  # the peer venv only

KD = str(Path(__file__).resolve().parent / "kd")


def _say(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    connection = sys.argv[1]
    t0 = time.perf_counter()
    session = KDSession(kernel_connection=connection, kd_path=KD, timeout=60)
    try:
        for _ in range(20):  # warm-up, as the kd-mcp side does
            session.send_command("r")
        _say({"ready": True, "open_s": time.perf_counter() - t0})
        for line in sys.stdin:
            verb, _, arg = line.strip().partition(" ")
            if verb == "quit":
                break
            if verb == "size":
                out = session.send_command(arg, timeout=300)
                _say({"command": arg, "lines": len(out), "bytes": len("\n".join(out).encode())})
                continue
            times: list[float] = []
            for _ in range(int(arg)):
                t = time.perf_counter()
                session.send_command(verb)
                times.append(time.perf_counter() - t)
            _say({"command": verb, "times_s": times})
    finally:
        session.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
