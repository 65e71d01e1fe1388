"""The simulator's start-up and its world's first answer, printed as figures (never asserted).

    python scripts/bench_sim.py            # a table
    python scripts/bench_sim.py --json     # one JSON object

Figures (medians of --runs starts, each a fresh ``python -m kdmcp.sim`` process over pipes):
``start_to_prompt_ms_*`` from the spawn to the first prompt (KDNET with ``-b``: the scenario's
30 ms connect delay included; ``cdb -p``; ``kd -z`` on a kernel dump, whose world is built
before the prompt), and ``first_world_answer_ms`` -- the first command the world answers (``r``),
which builds the machine and loads the disassembler -- then ``next_answer_ms`` (``k``).

Remoting (one ``kd -server`` for all runs, a fresh ``kd -remote`` client each run):
``remote_connect_to_prompt_ms`` from the client's spawn to the prompt the server sends it,
``remote_round_trip_ms`` one ``.echo`` typed at the client until its output and prompt come
back, ``server_round_trip_ms`` the same command at the server's own console.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _until(proc: subprocess.Popen[bytes], marker: bytes, timeout: float = 20.0) -> float:
    """Seconds until ``marker`` has appeared on the child's stdout."""
    assert proc.stdout is not None
    fd, seen, t0 = proc.stdout.fileno(), b"", time.monotonic()
    while marker not in seen:
        left = timeout - (time.monotonic() - t0)
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(marker)
        chunk = os.read(fd, 65536)
        if not chunk:
            raise EOFError(marker)
        seen += chunk
    return time.monotonic() - t0


def _start(argv: list[str], prompt: bytes, commands: list[str]) -> list[float]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kdmcp.sim", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    assert proc.stdin is not None
    try:
        times = [_until(proc, prompt)]
        for command in commands:
            t0 = time.monotonic()
            proc.stdin.write(f"{command}\n".encode())
            proc.stdin.flush()
            _until(proc, prompt)
            times.append(time.monotonic() - t0)
        proc.stdin.write(b"q\n")
        proc.stdin.flush()
        proc.wait(10)
    finally:
        proc.kill()
        proc.wait()
    return times


def _drain(proc: subprocess.Popen[bytes]) -> None:
    """Read what the server printed meanwhile (its pipe must never fill)."""
    assert proc.stdout is not None
    while select.select([proc.stdout.fileno()], [], [], 0)[0] and os.read(proc.stdout.fileno(), 65536):
        pass


def _remote(runs: int) -> dict[str, float]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kdmcp.sim",
            "kd",
            "-server",
            "tcp:port=40000:49999",
            "-b",
            "-k",
            "net:port=50000,key=1.2.3.4",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    assert server.stdin is not None and server.stdout is not None
    connect: list[float] = []
    client_trip: list[float] = []
    server_trip: list[float] = []
    try:
        seen = b""
        while b"0: kd> " not in seen:
            if not select.select([server.stdout.fileno()], [], [], 20)[0]:
                raise TimeoutError("server prompt")
            seen += os.read(server.stdout.fileno(), 65536)
        match = re.search(rb"tcp:Port=(\d+)", seen)
        assert match is not None
        port = match.group(1).decode()
        for _ in range(runs):
            client = subprocess.Popen(
                [sys.executable, "-m", "kdmcp.sim", "kd", "-remote", f"tcp:server=127.0.0.1,port={port}"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
            )
            assert client.stdin is not None
            try:
                connect.append(_until(client, b"0: kd> "))
                t0 = time.monotonic()
                client.stdin.write(b".echo bench\n")
                client.stdin.flush()
                _until(client, b"bench\r\n0: kd> ")
                client_trip.append(time.monotonic() - t0)
                client.stdin.write(b".remote_exit\n")
                client.stdin.flush()
                client.wait(10)
            finally:
                client.kill()
                client.wait()
            _drain(server)
            t0 = time.monotonic()
            server.stdin.write(b".echo bench\n")
            server.stdin.flush()
            _until(server, b"bench\r\n0: kd> ")
            server_trip.append(time.monotonic() - t0)
        server.stdin.write(b"q\n")
        server.stdin.flush()
        server.wait(10)
    finally:
        server.kill()
        server.wait()

    def med(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 2)

    return {
        "remote_connect_to_prompt_ms": med(connect),
        "remote_round_trip_ms": med(client_trip),
        "server_round_trip_ms": med(server_trip),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kdnet = ["kd", "-k", "net:port=50000,key=1.2.3.4", "-b"]
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "MEMORY.DMP"
        dump.write_bytes(b"PAGEDU64")
        runs: dict[str, list[list[float]]] = {"kdnet": [], "cdb": [], "dump": []}
        for _ in range(args.runs):
            runs["kdnet"].append(_start(kdnet, b"0: kd> ", ["r", "k"]))
            runs["cdb"].append(_start(["cdb", "-p", "4242"], b"0:002> ", []))
            runs["dump"].append(_start(["kd", "-z", str(dump)], b"0: kd> ", []))

    def med(name: str, i: int) -> float:
        return round(statistics.median(r[i] for r in runs[name]) * 1000, 1)

    figures = {
        "start_to_prompt_ms_kdnet": med("kdnet", 0),
        "start_to_prompt_ms_cdb_attach": med("cdb", 0),
        "start_to_prompt_ms_kernel_dump": med("dump", 0),
        "first_world_answer_ms": med("kdnet", 1),
        "next_answer_ms": med("kdnet", 2),
        **_remote(args.runs),
        "runs": args.runs,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:32} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
