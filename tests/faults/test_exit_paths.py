"""Every way out of ``kd-mcp serve``, on both console backends, with every kind of session.

One server per (way out, backend) holds one session of each kind at once -- a KDNET guest
broken in, a kernel dump, a user dump, an attached process, a launched one -- so each run
checks all kinds together: the exit code, the time it took, every debugger gone, the KDNET
guest running after the server is gone (the simulator's target log), and the transcript's
``session stopped`` records (how each kind was left) and its final ``stop``.

``kill -9`` of the server runs none of the server's code: there the debuggers -- busy, hung
(deaf to Ctrl+C) and frozen (SIGSTOP) -- must die with it (kdmcp/console/lifetime.py), and the
session log must hold every byte kd printed before the kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kdmcp.server.transcript import read_records
from tests.faults.serving import (
    ROOT,
    SHUTDOWN_BOUND_S,
    USER_DUMP,
    Served,
    end,
    serve,
    server_argv,
    server_env,
    wait_gone,
)
from tests.server.helpers import CANARY_KEY
from tests.server.test_listener import TOKEN_A, call, http_client

pytestmark = pytest.mark.process  # process: starts servers and debuggers (tests/tiers.py)

BACKENDS = ("pexpect", "pipe")
KINDS = ("kdnet", "kernel_dump", "user_dump", "process", "launched")
# How each kind must be left, as the transcript's ``session stopped`` says it (kdmcp/engine/kinds.py).
HOW = {
    "kdnet": "quit kd, the guest left running",
    "kernel_dump": "closed the dump",
    "user_dump": "closed the dump",
    "process": "detached: the process runs on",
    "launched": "terminated the launched process",
}
WAYS_OUT = {  # what the test does -> the reason the transcript records
    "end of input": "end of input",
    "SIGINT": "SIGINT",
    "SIGTERM": "SIGTERM",
    "SIGHUP": "SIGHUP",
}


def _assert_all_left_as_their_kind_requires(served: Served, reason: str) -> None:
    records = served.records()
    stopped = served.stopped_records()
    for kind, info in served.sessions.items():
        record = stopped[info["session_id"]]
        assert record["how"] == HOW[kind], (kind, record)
        assert record["reason"] == reason and record["exit_code"] == 0, record
    assert records[-1]["kind"] == "stop" and records[-1]["reason"] == reason, records[-1]
    assert records[-1]["sessions"] == len(served.sessions) and records[-1]["forced_by"] is None
    # the stop record comes after every session's
    last_session = max(i for i, r in enumerate(records) if r["kind"] == "session" and r.get("event") == "stopped")
    assert last_session < len(records) - 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("way", list(WAYS_OUT))
def test_every_way_out_stops_every_kind_and_leaves_the_guest_running(tmp_path: Path, backend: str, way: str) -> None:
    served = serve(tmp_path, backend)
    try:
        served.start_all(KINDS, tmp_path)
        pids = served.debugger_pids()
        end(served, way)
        code, took = served.wait_exit()
        assert code == 0 and took < SHUTDOWN_BOUND_S, (code, took, served.proc.stderr)
        assert wait_gone(pids, 5.0) == []
        assert served.last_guest_state("kdnet") == "running"  # resumed, and kd quit after the guest ran
        assert served.guest_states()[served.sessions["process"]["pid"]][-2:] == ["quit qd", "exit 0"]
        _assert_all_left_as_their_kind_requires(served, WAYS_OUT[way])
    finally:
        served.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_second_signal_forces_the_shutdown_and_says_what_it_killed(tmp_path: Path, backend: str) -> None:
    """A frozen KDNET debugger (SIGSTOP) would hold the shutdown for all of timeouts.stop (30 s
    here); the second SIGTERM kills it at once, exits 130, and the transcript says so."""
    served = serve(tmp_path, backend, stop_s=30.0)
    try:
        served.start_all(("kdnet", "user_dump"), tmp_path)
        pids = served.debugger_pids()
        os.kill(served.sessions["kdnet"]["pid"], signal.SIGSTOP)
        served.proc.send_signal(signal.SIGTERM)
        _wait_for_record(served, lambda r: r.get("session_id") == served.sessions["user_dump"]["session_id"]
                         and r.get("event") == "stopped")
        t0 = time.monotonic()
        served.proc.send_signal(signal.SIGTERM)
        code = served.proc.wait(SHUTDOWN_BOUND_S)
        assert code == 130 and time.monotonic() - t0 < 5.0
        assert wait_gone(pids, 5.0) == []
        stopped = served.stopped_records()
        frozen = stopped[served.sessions["kdnet"]["session_id"]]
        assert frozen["actions"][0].startswith("sent g, unread by kd"), frozen  # never "resumed"
        assert "killed (forced: SIGTERM)" in frozen["actions"] and "unknown" in frozen["how"], frozen
        assert "left running" not in str(frozen)
        assert served.last_guest_state("kdnet") == "broken"  # the truth the record did not hide
        assert stopped[served.sessions["user_dump"]["session_id"]]["how"] == "closed the dump"
        final = served.records()[-1]
        assert final["kind"] == "stop" and final["forced_by"] == "SIGTERM" and final["reason"] == "SIGTERM"
    finally:
        served.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_9_of_the_server_takes_busy_hung_and_frozen_debuggers_with_it(tmp_path: Path, backend: str) -> None:
    served = serve(tmp_path, backend, scenario_name="faults")
    try:
        served.start_all(("kdnet#busy", "kdnet#hung", "kdnet#frozen", "kdnet#idle"), tmp_path)
        ids = {kind: info["session_id"] for kind, info in served.sessions.items()}
        served.call_later("kd_command", command="!hang", session_id=ids["kdnet#busy"], timeout_s=60)
        served.call_later("kd_command", command="!hardhang", session_id=ids["kdnet#hung"], timeout_s=60)
        last = served.call("kd_command", command=".echo the-last-answer", session_id=ids["kdnet#idle"])
        assert last["output"].strip() == "the-last-answer"
        _wait_for_log(served, "kdnet#busy", "Scanning pool")
        _wait_for_log(served, "kdnet#hung", "Scanning pool")
        os.kill(served.sessions["kdnet#frozen"]["pid"], signal.SIGSTOP)
        pids = served.debugger_pids()
        served.proc.kill()
        assert served.proc.wait(10) == -signal.SIGKILL
        assert wait_gone(pids, 5.0) == []  # PR_SET_PDEATHSIG: SIGKILL reaches even the stopped one
        # the log is complete to kd's last byte: the answer and the prompt after it, nothing held back
        idle_log = _log_text(served, "kdnet#idle")
        assert "the-last-answer" in idle_log[-120:] and idle_log.endswith("kd> "), idle_log[-300:]
        assert CANARY_KEY not in idle_log
    finally:
        served.close()
    if backend == "pipe":  # once is enough: the restart is the server's, not the backend's
        _restart_does_not_append_silently(tmp_path, served)


def _restart_does_not_append_silently(tmp_path: Path, killed: Served) -> None:
    """A restarted server's s1 does not append silently to the killed run's s1 log: a header
    names the new run, and ``session created`` says where its bytes start."""
    s1 = tmp_path / "run.jsonl.s1.log"
    before = s1.read_bytes()
    again = serve(tmp_path, "pipe")
    try:
        again.start_all(("user_dump",), tmp_path)
        assert again.sessions["user_dump"]["session_id"] == "s1"
        assert again.proc.stdin is not None
        again.proc.stdin.close()
        assert again.wait_exit()[0] == 0
    finally:
        again.close()
    records = read_records(tmp_path / "run.jsonl")
    runs = [r["run"] for r in records if r["kind"] == "start"]
    created = [r for r in records if r.get("event") == "created" and r["session_id"] == "s1"]
    assert len(runs) == 2 and runs[0] != runs[1]
    log = s1.read_bytes()
    assert log.startswith(before) and log[len(before):].startswith(f"\n==== kd-mcp run {runs[1]} (pid ".encode())
    assert created[0]["log_offset"] == 0 and created[1]["log_offset"] > len(before)
    assert log[created[1]["log_offset"]:].startswith(b"\r\nMicrosoft (R) Windows Debugger") or \
        b"Microsoft (R) Windows Debugger" in log[created[1]["log_offset"]:][:64]




async def _start_over_http(url: str, tmp_path: Path) -> dict[str, str]:
    async with http_client(url, TOKEN_A) as client:
        kdnet = await call(client, "start_kd", port=50000, key=CANARY_KEY, initial_break=True)
        dump = await call(client, "open_dump", path=str(USER_DUMP))
        assert not kdnet["_is_error"] and not dump["_is_error"], (kdnet, dump)
        await call(client, "kd_command", command="r", session_id=kdnet["session_id"])  # the world, built now
        pids = {s["session_id"]: s["pid"] for s in (await call(client, "list_sessions"))["sessions"]}
    return {"kdnet": kdnet["session_id"], "user_dump": dump["session_id"], **{f"pid:{k}": str(v)
                                                                             for k, v in pids.items()}}


@pytest.mark.anyio
async def test_sigterm_stops_the_http_listeners_sessions_too(tmp_path: Path) -> None:
    """``--listen`` (systemd, docker stop): the listener closes, then the same shutdown runs."""
    proc = subprocess.Popen(server_argv(tmp_path, "pipe", "--listen", "127.0.0.1:0"), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=server_env(tmp_path, KDMCP_LISTEN_TOKEN=TOKEN_A), cwd=ROOT)
    served = Served(proc, tmp_path / "run.jsonl", tmp_path / "targets.log")
    try:
        assert proc.stderr is not None
        line = b""
        while b"listening on" not in line:
            line = proc.stderr.readline()
            assert line, "the listener exited"
        url = line.split(b"listening on ")[1].strip().decode()
        started = await _start_over_http(url, tmp_path)
        for kind in ("kdnet", "user_dump"):
            served.sessions[kind] = {"session_id": started[kind], "pid": int(started[f"pid:{started[kind]}"])}
        proc.send_signal(signal.SIGTERM)
        code, took = served.wait_exit(SHUTDOWN_BOUND_S + 5)  # the listener's grace for open streams first
        assert code == 0 and took < SHUTDOWN_BOUND_S + 5
        assert wait_gone(served.debugger_pids(), 5.0) == []
        assert served.last_guest_state("kdnet") == "running"
        stopped = served.stopped_records()
        assert stopped[started["kdnet"]]["how"] == HOW["kdnet"]
        assert stopped[started["user_dump"]]["how"] == HOW["user_dump"]
        assert served.records()[-1]["kind"] == "stop" and served.records()[-1]["reason"] == "SIGTERM"
    finally:
        served.close()


def test_a_key_still_arriving_is_held_back_then_written_masked_at_exit(tmp_path: Path) -> None:
    """The masking hold-back: a tail that may be the start of the KDNET key is not written while
    more may come, and is written masked by the shutdown (the debugger hangs deaf to Ctrl+C, so
    nothing comes after the half key until it is killed)."""
    partial = CANARY_KEY[:20]
    scenario = tmp_path / "partial.yaml"
    scenario.write_text('name: partial\nextends: default_kd\nresponses:\n  "!partial":\n'
                        f'    text: "the key is {partial}"\n    hang: hard\n')
    served = serve(tmp_path, "pipe", "--scenario", str(scenario))
    try:
        served.start_all(("kdnet",), tmp_path)
        answer = served.request("tools/call", {"name": "kd_command", "arguments": {
            "command": "!partial", "session_id": served.sessions["kdnet"]["session_id"], "timeout_s": 1}})
        assert answer["result"]["isError"]  # a timeout: the debugger printed half a key and waits
        log = _log_text(served, "kdnet")
        assert log.endswith("the key is ") and partial not in log
        served.proc.send_signal(signal.SIGTERM)
        assert served.wait_exit()[0] == 0
        log = _log_text(served, "kdnet")
        assert "the key is ***" in log and partial not in log
    finally:
        served.close()


# ---------------------------------------------------------------------------------------- helpers


def _log_text(served: Served, kind: str) -> str:
    path = served.transcript.parent / f"{served.transcript.name}.{served.sessions[kind]['session_id']}.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _wait_until(check: object, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.01
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def _wait_for_log(served: Served, kind: str, text: str) -> None:
    _wait_until(lambda: text in _log_text(served, kind), f"{text!r} in {kind}'s log")


def _wait_for_record(served: Served, match: object) -> None:
    _wait_until(lambda: any(match(r) for r in served.records()), "the record")  # type: ignore[operator]


