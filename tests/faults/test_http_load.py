"""Load: 4 sessions x 500 commands from 2 HTTP clients at once, through the real listener.

Correctness is asserted (every answer is the right one, on the right session); the figures —
commands/s, p50/p99 latency, the server's RSS before and after — are printed and written to
``load-figures.json`` in the test's temporary directory, never asserted.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

import anyio
import psutil
import pytest

from tests.server.helpers import CANARY_KEY
from tests.server.test_listener import TOKEN_A, TOKEN_B, _env, call, http_client, listener

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)
COMMANDS_PER_SESSION = 500



async def test_four_sessions_times_500_commands_from_two_clients(tmp_path):
    tokens = tmp_path / "clients.yaml"
    tokens.write_text(f"alice: {{token: {TOKEN_A}}}\nbob: {{token: {TOKEN_B}}}\n")
    tokens.chmod(0o600)
    latencies: list[float] = []
    with listener("--token-file", str(tokens), env=_env()) as (url, _lines):
        server = next(p for p in psutil.Process().children() if "--listen" in " ".join(p.cmdline()))
        async with http_client(url, TOKEN_A, tmp_path / "http-alice.bin") as alice, \
                http_client(url, TOKEN_B, tmp_path / "http-bob.bin") as bob:
            owned: list[tuple[Any, str]] = []
            for client, port in ((alice, 50001), (alice, 50002), (bob, 50003), (bob, 50004)):
                started = await call(client, "start_kd", port=port, key=CANARY_KEY, initial_break=True)
                assert not started["_is_error"], started
                owned.append((client, started["session_id"]))
            rss_before = server.memory_info().rss

            async def drive(client: Any, sid: str) -> None:
                for i in range(COMMANDS_PER_SESSION):
                    t0 = time.perf_counter()
                    out = await call(client, "kd_command", command=f".echo {sid}-{i}", session_id=sid)
                    latencies.append(time.perf_counter() - t0)
                    assert not out["_is_error"], out
                    assert out["output"].strip() == f"{sid}-{i}" and out["session_id"] == sid

            t0 = time.perf_counter()
            with anyio.fail_after(150):
                async with anyio.create_task_group() as tg:
                    for client, sid in owned:
                        tg.start_soon(drive, client, sid)
            elapsed = time.perf_counter() - t0
            rss_after = server.memory_info().rss
            for client, sid in owned:
                assert (await call(client, "stop_kd", session_id=sid))["state"] == "exited"
    total = len(owned) * COMMANDS_PER_SESSION
    assert len(latencies) == total
    ordered = sorted(latencies)
    figures = {
        "commands": total,
        "seconds": round(elapsed, 2),
        "commands_per_s": round(total / elapsed, 1),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(ordered[int(0.99 * len(ordered))] * 1000, 2),
        "server_rss_mb_before": round(rss_before / 2**20, 1),
        "server_rss_mb_after": round(rss_after / 2**20, 1),
    }
    (tmp_path / "load-figures.json").write_text(json.dumps(figures))
    print(f"\nHTTP load: {json.dumps(figures)}")
