"""Reliability figures of kd-mcp on the simulator: load held, faults survived, every way out.

Each figure is measured by running it, never written from memory (docs/troubleshooting.md,
"Reliability", quotes this script's output):

- **load**: S sessions x N commands from two HTTP clients at once through the real listener
  (``kd-mcp serve --listen``); every answer checked against its command: errors, mixed
  (another command's answer), lost (no answer).
- **faults**: a debugger killed (SIGKILL) or frozen (SIGSTOP) in the middle of a command: how
  long until the call answers, and with which category and state.
- **exits**: a stdio server holding one session of every kind (KDNET guest broken in, kernel
  dump, user dump, attached process, launched process) ended by end of input, SIGINT, SIGTERM,
  SIGHUP, and a second SIGTERM during the stop of a frozen debugger; per backend: the exit
  code, the time from the request to the exit, debuggers left running, the guest's state
  after (the simulator's target log), ``session stopped`` records.
- **orphans**: ``kill -9`` of a server holding busy, hung (deaf to Ctrl+C) and frozen (SIGSTOP)
  debuggers: how many are still running after it, and how long the last took to go.

    python scripts/bench_reliability.py              # a table
    python scripts/bench_reliability.py --json       # one JSON object
    python scripts/bench_reliability.py --calls 4000 # load: total commands (default 2000)

POSIX only (signals, the pty backend); the harness is the exit tests' (tests/faults/serving.py).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults.serving import (  # noqa: E402  (the repository root first)
    end,
    serve,
    server_argv,
    server_env,
    wait_gone,
)

KINDS = ("kdnet", "kernel_dump", "user_dump", "process", "launched")
WAYS = ("end of input", "SIGINT", "SIGTERM", "SIGHUP")
TOKEN_A, TOKEN_B = "benchAlice-0123456789abcdef", "benchBob-fedcba9876543210xx"


# ------------------------------------------------------------------------------------ exits


def exit_path(backend: str, way: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        served = serve(Path(tmp), backend)
        try:
            served.start_all(KINDS, Path(tmp))
            pids = served.debugger_pids()
            t0 = time.monotonic()
            end(served, way)
            code = served.proc.wait(60)
            took = time.monotonic() - t0
            left = wait_gone(pids, 5.0)
            stopped = served.stopped_records()
            return {"backend": backend, "way": way, "exit_code": code, "seconds": round(took, 3),
                    "debuggers_left": len(left), "guest": served.last_guest_state("kdnet"),
                    "sessions_recorded": len(stopped), "stop_recorded": served.records()[-1]["kind"] == "stop"}
        finally:
            served.close()


def forced_path(backend: str) -> dict[str, Any]:
    """A frozen KDNET debugger would hold the stop for timeouts.stop (30 s here): the second SIGTERM."""
    with tempfile.TemporaryDirectory() as tmp:
        served = serve(Path(tmp), backend, stop_s=30.0)
        try:
            served.start_all(("kdnet", "user_dump"), Path(tmp))
            pids = served.debugger_pids()
            os.kill(served.sessions["kdnet"]["pid"], signal.SIGSTOP)
            served.proc.send_signal(signal.SIGTERM)
            dump = served.sessions["user_dump"]["session_id"]
            _until(lambda: dump in served.stopped_records(), 30)
            t0 = time.monotonic()
            served.proc.send_signal(signal.SIGTERM)
            code = served.proc.wait(60)
            took = time.monotonic() - t0
            frozen = served.stopped_records()[served.sessions["kdnet"]["session_id"]]
            return {"backend": backend, "way": "second SIGTERM", "exit_code": code, "seconds": round(took, 3),
                    "debuggers_left": len(wait_gone(pids, 5.0)), "guest": served.last_guest_state("kdnet"),
                    "claimed_left_running": "left running" in json.dumps(frozen),
                    "stop_recorded": served.records()[-1].get("forced_by") == "SIGTERM"}
        finally:
            served.close()


def orphans(backend: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        served = serve(Path(tmp), backend, scenario_name="faults")
        try:
            served.start_all(("kdnet#busy", "kdnet#hung", "kdnet#frozen"), Path(tmp))
            ids = {kind: info["session_id"] for kind, info in served.sessions.items()}
            served.call_later("kd_command", command="!hang", session_id=ids["kdnet#busy"], timeout_s=60)
            served.call_later("kd_command", command="!hardhang", session_id=ids["kdnet#hung"], timeout_s=60)
            os.kill(served.sessions["kdnet#frozen"]["pid"], signal.SIGSTOP)
            time.sleep(0.5)  # let both commands reach their debuggers (a figure, not a test)
            pids = served.debugger_pids()
            t0 = time.monotonic()
            served.proc.kill()
            served.proc.wait(10)
            left = wait_gone(pids, 10.0)
            return {"backend": backend, "debuggers": len(pids), "left_running": len(left),
                    "all_gone_s": round(time.monotonic() - t0, 3)}
        finally:
            served.close()


def _until(check: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the awaited record never came")
        time.sleep(0.02)


# ------------------------------------------------------------------------------------ faults


def faults() -> list[dict[str, Any]]:
    """SIGKILL and SIGSTOP of a debugger mid-command, in process (the engine and the tools)."""
    from kdmcp.config import Config
    from kdmcp.server import KdMcpApp, ServerOptions
    from kdmcp.server.call import Call
    from kdmcp.server.tools.commands.commands import kd_command
    from kdmcp.server.tools.sessions.kdnet import start_kd
    from kdmcp.server.tools.sessions.lifecycle import stop_kd

    out = []
    for backend in ("pexpect", "pipe"):
        for fault, timeout in (("SIGKILL", 30.0), ("SIGSTOP", 2.0)):
            cfg = Config.model_validate({"console_backend": backend, "policy": "full", "timeouts": {"stop": 3}})
            app = KdMcpApp(ServerOptions(config=cfg, simulate=True,
                                         scenario=str(ROOT / "fixtures" / "scenarios" / "faults.yaml")))
            call = Call(app, None)
            started = start_kd(call, port=50001, key="c4n4ryk3y0000.q7w8e9r0t1y2u.zx9cv8bn7m6lk.poi8uy7tr6e5w",
                               initial_break=True)
            session = app.manager.get(started.session_id)
            answer: dict[str, Any] = {}

            def run(sid: str = started.session_id, wait: float = timeout, into: dict[str, Any] = answer,
                    on: KdMcpApp = app) -> None:
                try:
                    kd_command(Call(on, None), command="!hang", session_id=sid, timeout_s=wait)
                    into["category"] = "ok"
                except Exception as exc:  # the categorised error is the figure
                    into["category"] = getattr(exc, "category", type(exc).__name__)
                    state = getattr(exc, "state", None)
                    into["state"] = getattr(state, "value", str(state or ""))
                into["t"] = time.monotonic()

            import threading

            worker = threading.Thread(target=run)
            start = session.store.size
            worker.start()
            session.wait_for(lambda s=session, at=start: b"Scanning pool" in s.read_output(at, 4096), 20)
            t0 = time.monotonic()
            os.kill(session.pid or 0, getattr(signal, fault))
            worker.join(60)
            out.append({"backend": backend, "fault": fault, "answered_s": round(answer["t"] - t0, 3),
                        "category": answer["category"], "state": answer.get("state", "")})
            stop_kd(call, session_id=started.session_id)
            app.shutdown("bench")
    return out


# ------------------------------------------------------------------------------------ load


async def _load(calls: int, sessions: int) -> dict[str, Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    with tempfile.TemporaryDirectory() as tmp:
        tokens = Path(tmp) / "clients.yaml"
        tokens.write_text(f"alice: {{token: {TOKEN_A}}}\nbob: {{token: {TOKEN_B}}}\n")
        tokens.chmod(0o600)
        proc = subprocess.Popen(server_argv(Path(tmp), "pexpect", "--listen", "127.0.0.1:0", "--token-file",
                                            str(tokens)), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=server_env(Path(tmp)), cwd=ROOT)
        try:
            assert proc.stderr is not None
            line = b""
            while b"listening on" not in line:
                line = proc.stderr.readline()
                if not line:
                    raise RuntimeError("the listener did not start")
            url = line.split(b"listening on ")[1].strip().decode()
            counts = {"calls": 0, "errors": 0, "mixed": 0, "lost": 0}
            per_session = max(1, calls // sessions)
            t0 = time.monotonic()

            async def drive(token: str, ports: list[int]) -> None:
                http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
                async with http, Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as c:
                    async def one(port: int) -> None:
                        started = await c.call_tool("start_kd", {"port": port, "initial_break": True,
                                                                 "key": "c4n4ryk3y0000.q7w8e9r0t1y2u.zx9cv8bn7m6lk.x"})
                        sid = started.structured_content["session_id"]  # type: ignore[index]
                        for n in range(per_session):
                            counts["calls"] += 1
                            try:
                                result = await c.call_tool("kd_command", {"command": f".echo {sid}-{n}",
                                                                          "session_id": sid})
                            except Exception:
                                counts["lost"] += 1
                                continue
                            if result.is_error:
                                counts["errors"] += 1
                            elif (result.structured_content or {}).get("output", "").strip() != f"{sid}-{n}":
                                counts["mixed"] += 1
                        await c.call_tool("stop_kd", {"session_id": sid})

                    async with anyio.create_task_group() as tg:
                        for port in ports:
                            tg.start_soon(one, port)

            half = sessions // 2 or 1
            ports = [50010 + i for i in range(sessions)]
            async with anyio.create_task_group() as tg:
                tg.start_soon(drive, TOKEN_A, ports[:half])
                tg.start_soon(drive, TOKEN_B, ports[half:])
            took = time.monotonic() - t0
            return {**counts, "sessions": sessions, "clients": 2, "seconds": round(took, 1),
                    "calls_per_s": round(counts["calls"] / took, 1)}
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--calls", type=int, default=2000, help="load: commands in all (default 2000)")
    parser.add_argument("--sessions", type=int, default=4, help="load: sessions (default 4)")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: load,faults,exits,orphans")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    figures: dict[str, Any] = {}
    if "exits" not in skip:
        figures["exits"] = [exit_path(b, w) for b in ("pexpect", "pipe") for w in WAYS]
        figures["exits"] += [forced_path(b) for b in ("pexpect", "pipe")]
    if "orphans" not in skip:
        figures["orphans"] = [orphans(b) for b in ("pexpect", "pipe")]
    if "faults" not in skip:
        figures["faults"] = faults()
    if "load" not in skip:
        figures["load"] = anyio.run(_load, args.calls, args.sessions)
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    for part, rows in figures.items():
        print(f"== {part}")
        for row in rows if isinstance(rows, list) else [rows]:
            print("  " + ", ".join(f"{k}={v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
