"""A real ``kd-mcp serve --simulate`` process, driven over stdio JSON-RPC, for the exit-path tests.

Raw newline-delimited JSON-RPC (the MCP stdio framing) rather than an SDK client: these tests
end the server in every way a process can end -- end of input, signals, ``kill -9`` -- and must
hold its pid, its stdin and its exit status themselves. What the server did is read back from
its transcript; what each simulated target was left doing, from the simulator's target log
(``KDMCP_SIM_TARGET_LOG``: one ``PID state`` line per change, the guest outliving its debugger).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from kdmcp.server.transcript import read_records
from tests.conftest import scenario
from tests.server.helpers import CANARY_KEY

ROOT = Path(__file__).resolve().parents[2]
USER_DUMP = ROOT / "fixtures" / "dumps" / "minidump2.dmp"
# timeouts.stop of these servers (a deaf debugger costs four thirds of it): a loaded CI machine
# may take more than a second to answer a q.
STOP_S = 6.0
# A clean shutdown's bound: every session stops at once, each within 4/3 timeouts.stop, plus
# the server's own start of the shutdown and the pump's last read.
SHUTDOWN_BOUND_S = STOP_S * 4 / 3 + 6.0


@dataclass
class Served:
    """One server process and what it started."""

    proc: subprocess.Popen[bytes]
    transcript: Path
    target_log: Path
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)  # kind -> {session_id, pid}
    _ids: int = 0
    _buf: bytes = b""
    _answers: dict[int, dict[str, Any]] = field(default_factory=dict)  # arrived before asked for

    # ------------------------------------------------------------------ JSON-RPC

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        self._ids += 1
        ident = self._ids
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        return self.reply(ident, timeout)

    def call_later(self, tool: str, **args: Any) -> int:
        """Send a tool call without waiting for its answer (a command the server is busy with)."""
        self._ids += 1
        self.send({"jsonrpc": "2.0", "id": self._ids, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}})
        return self._ids

    def reply(self, ident: int, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        while True:
            while b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                message = json.loads(line)
                if "id" in message and "method" not in message:
                    self._answers[message["id"]] = message
            if ident in self._answers:
                return dict(self._answers.pop(ident))
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no answer to request {ident}"
            if sel.select(remaining):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, "the server closed its output"
                self._buf += chunk

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        answer = self.request("tools/call", {"name": tool, "arguments": args})
        result = answer["result"]
        assert not result.get("isError"), result
        return dict(result["structuredContent"])

    # ------------------------------------------------------------------ sessions

    def start_all(self, kinds: tuple[str, ...], tmp: Path, initial_break: bool = True) -> None:
        """One session of each kind asked for, started at once; its id and debugger pid remembered.

        A KDNET guest then runs ``r`` at its break: the simulator builds its world on the first
        command that needs it (a second or more on a loaded machine), and a shutdown's ``g``
        should meet a debugger that answers as fast as kd does.
        """
        starts = {
            "kdnet": lambda n: ("start_kd", {"port": 50000 + n, "key": CANARY_KEY, "initial_break": initial_break}),
            "kernel_dump": lambda n: ("open_dump", {"path": str(_kernel_dump(tmp))}),
            "user_dump": lambda n: ("open_dump", {"path": str(USER_DUMP)}),
            "process": lambda n: ("attach_process", {"pid": 4242 + n}),
            "launched": lambda n: ("launch", {"command_line": ["C:\\tools\\app.exe"]}),
        }
        sent = {kind: self.call_later(*starts[kind.split("#")[0]](n)[:1], **starts[kind.split("#")[0]](n)[1])
                for n, kind in enumerate(kinds)}
        for kind, ident in sent.items():
            result = self.reply(ident, 60.0)["result"]
            assert not result.get("isError"), result
            self.sessions[kind] = {"session_id": result["structuredContent"]["session_id"]}
        listed = self.call("list_sessions")["sessions"]
        pids = {s["session_id"]: s["pid"] for s in listed}
        for kind, info in self.sessions.items():
            info["pid"] = pids[info["session_id"]]
            if kind.startswith("kdnet") and initial_break:
                self.call("kd_command", command="r", session_id=info["session_id"])

    def debugger_pids(self) -> list[int]:
        return [info["pid"] for info in self.sessions.values()]

    # ------------------------------------------------------------------ afterwards

    def wait_exit(self, timeout: float = SHUTDOWN_BOUND_S) -> tuple[int, float]:
        """The exit status and how long it took from now."""
        t0 = time.monotonic()
        code = self.proc.wait(timeout)
        return code, time.monotonic() - t0

    def records(self) -> list[dict[str, Any]]:
        return read_records(self.transcript)

    def stopped_records(self) -> dict[str, dict[str, Any]]:
        return {r["session_id"]: r for r in self.records() if r["kind"] == "session" and r.get("event") == "stopped"}

    def guest_states(self) -> dict[int, list[str]]:
        """Each simulated debugger's target states in order (its pid -> lines)."""
        states: dict[int, list[str]] = {}
        if self.target_log.exists():
            for line in self.target_log.read_text().splitlines():
                pid, _, what = line.partition(" ")
                states.setdefault(int(pid), []).append(what)
        return states

    def last_guest_state(self, kind: str) -> str:
        """What the target was doing when its debugger went: the last state line before ``exit``."""
        lines = [s for s in self.guest_states().get(self.sessions[kind]["pid"], []) if not s.startswith("exit")]
        return lines[-1] if lines else "none"

    def close(self) -> None:
        """Whatever the test did, nothing of ours is left: the server and every debugger."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        for pid in [info["pid"] for info in self.sessions.values() if "pid" in info]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def end(served: Served, way: str) -> None:
    """End the server one way: ``end of input`` (its stdin closed) or a signal's name."""
    if way == "end of input":
        assert served.proc.stdin is not None
        served.proc.stdin.close()
    else:
        served.proc.send_signal(getattr(signal, way))


def _kernel_dump(tmp: Path) -> Path:
    path = tmp / "memory.dmp"
    if not path.exists():
        path.write_bytes(b"PAGEDU64" + b"PAGE" * 2046)  # DUMP_HEADER64's signature; kd fills with PAGE
    return path


def server_argv(tmp: Path, backend: str, *args: str, stop_s: float = STOP_S) -> list[str]:
    """``kd-mcp serve --simulate`` on ``backend`` with a transcript, policy ``full`` (the fault
    commands) and ``timeouts.stop`` of ``stop_s``; ``--structured``, since these tests read the
    typed fields of results (docs/results.md)."""
    config = tmp / "config.yaml"
    config.write_text(f"console_backend: {backend}\npolicy: full\nmax_sessions: 8\ntimeouts: {{stop: {stop_s}}}\n")
    return [sys.executable, "-m", "kdmcp", "serve", "--simulate", "--structured", "--config", str(config),
            "--transcript", str(tmp / "run.jsonl"), *args]


def server_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The server's environment: no KDMCP_ settings of ours, the simulator's target log on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KDMCP_")}
    env.update({"KDMCP_SIM_TARGET_LOG": str(tmp / "targets.log"), "PYTHONPATH": str(ROOT), **extra})
    return env


def serve(tmp: Path, backend: str, *args: str, scenario_name: str | None = None, stop_s: float = STOP_S) -> Served:
    """A stdio server (``server_argv``), initialised and ready for tool calls."""
    argv = server_argv(tmp, backend, *args, stop_s=stop_s)
    if scenario_name is not None:
        argv += ["--scenario", scenario(scenario_name)]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=server_env(tmp), cwd=ROOT)
    served = Served(proc, tmp / "run.jsonl", tmp / "targets.log")
    served.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "exit-tests", "version": "1"}})
    served.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return served


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for init to reap it has ended)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait until every pid has ended; the ones still running at the bound."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
