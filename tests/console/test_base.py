"""kdmcp/console/base.py's ``child_environment``: the debugger's environment is an allowlist —
what kd/cdb (and the simulator) need, nothing else.

A name-based scrub let ``DB_PASS``, ``GITHUB_PAT`` and every other secret without KEY/TOKEN in
its name through to kd, where ``.shell set`` prints them.
"""

from __future__ import annotations

import json
import sys

import pytest

from kdmcp.console.base import SpawnSpec, child_environment
from kdmcp.console.pipe_backend import PipeConsole

SERVER_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/op",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": "/tmp",
    "_NT_SYMBOL_PATH": "srv*C:\\sym*https://msdl.microsoft.com/download/symbols",
    "_NT_ALT_SYMBOL_PATH": "C:\\alt",
    "_NT_SOURCE_PATH": "C:\\src",
    "_NT_DEBUGGER_EXTENSION_PATH": "C:\\ext",
    "_NT_EXECUTABLE_IMAGE_PATH": "C:\\img",
    "DBGHELP_LOG": "C:\\dbghelp.log",
    "PYTHONPATH": "/work/main",
    "VIRTUAL_ENV": "/work/main/.venv",
    "KDMCP_SIM_EMIT_LOG": "/tmp/emit.log",
    # Windows spells these as it likes; the names are case-insensitive there.
    "SystemRoot": "C:\\Windows",
    "windir": "C:\\Windows",
    "ComSpec": "C:\\Windows\\system32\\cmd.exe",
    "Path": "C:\\Windows\\system32",
    "PROCESSOR_ARCHITECTURE": "AMD64",
    "NUMBER_OF_PROCESSORS": "8",
    "USERPROFILE": "C:\\Users\\op",
    "TEMP": "C:\\Temp",
    "TMP": "C:\\Temp",
    # Secrets, and merely unrelated things: none of them is kd's business.
    "DB_PASS": "hunter2",
    "GITHUB_PAT": "ghp_canary",
    "AWS_SECRET_ACCESS_KEY": "aws-canary",
    "KDMCP_LISTEN_TOKEN": "listen-canary",
    "KDMCP_KDNET_KEY": "1.2.3.4",
    "DATABASE_URL": "postgres://u:p@h/db",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    "KDMCP_TRANSCRIPT": "/tmp/t.jsonl",
    "PYTHONSTARTUP": "/tmp/evil.py",
    "LD_PRELOAD": "/tmp/evil.so",
}
KEPT = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "_NT_SYMBOL_PATH", "_NT_ALT_SYMBOL_PATH", "_NT_SOURCE_PATH",
        "_NT_DEBUGGER_EXTENSION_PATH", "_NT_EXECUTABLE_IMAGE_PATH", "DBGHELP_LOG", "PYTHONPATH", "VIRTUAL_ENV",
        "KDMCP_SIM_EMIT_LOG", "SystemRoot", "windir", "ComSpec", "Path", "PROCESSOR_ARCHITECTURE",
        "NUMBER_OF_PROCESSORS", "USERPROFILE", "TEMP", "TMP"}


def test_only_the_allowlist_passes() -> None:
    env = child_environment(SERVER_ENV, {})
    assert set(env) == KEPT
    assert all(env[name] == SERVER_ENV[name] for name in KEPT)


@pytest.mark.parametrize("name", ["DB_PASS", "GITHUB_PAT", "DATABASE_URL", "SSH_AUTH_SOCK", "LD_PRELOAD",
                                  "PYTHONSTARTUP", "KDMCP_TRANSCRIPT", "KDMCP_LISTEN_TOKEN"])
def test_secrets_and_strangers_are_dropped(name: str) -> None:
    assert name not in child_environment(SERVER_ENV, {})


def test_names_compare_case_insensitively() -> None:
    env = child_environment({"systemroot": "C:\\Windows", "_nt_symbol_path": "x", "db_pass": "y"}, {})
    assert env == {"systemroot": "C:\\Windows", "_nt_symbol_path": "x"}


def test_the_specs_own_entries_are_kept() -> None:
    env = child_environment(SERVER_ENV, {"KDMCP_EXTRA": "x y", "_NT_SYMBOL_PATH": "srv*C:\\other"})
    assert env["KDMCP_EXTRA"] == "x y"
    assert env["_NT_SYMBOL_PATH"] == "srv*C:\\other"


SHOW = "import json, os; print(json.dumps(dict(os.environ)), flush=True)"


@pytest.mark.process
def test_a_real_child_sees_path_and_symbols_but_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PASS", "hunter2-canary")
    monkeypatch.setenv("GITHUB_PAT", "ghp_canary")
    monkeypatch.setenv("_NT_SYMBOL_PATH", "srv*C:\\sym")
    console = PipeConsole.spawn(SpawnSpec(argv=[sys.executable, "-c", SHOW]))
    try:
        out = b""
        for _ in range(1000):  # bounded: a few reads of at most 5 s each
            if b"\n" in out:
                break
            out += console.read(65536, 5.0)
        seen = json.loads(out.decode().splitlines()[0])
    finally:
        console.terminate(force=True)
        assert console.wait(10.0) is not None
        console.close()
    assert "DB_PASS" not in seen and "GITHUB_PAT" not in seen
    assert seen["_NT_SYMBOL_PATH"] == "srv*C:\\sym"
    assert "PATH" in seen


# ------------------------------------------------------------------ OutputQueue.deliver_to


def test_deliver_to_hands_over_what_was_queued_first_then_each_chunk_then_the_end() -> None:
    """What the reader queued before the engine asked goes first, then every chunk as it comes, and
    the end once, as ``b""``; reads then see only the end."""
    from kdmcp.console.base import ConsoleClosed, OutputQueue

    queue = OutputQueue()
    queue.put(b"banner ")
    queue.put(b"0: kd> ")
    got: list[bytes] = []
    queue.deliver_to(got.append)
    queue.put(b"rax=0")
    queue.put_eof()
    assert got == [b"banner 0: kd> ", b"rax=0", b""]
    assert queue.wait_readable(0)
    with pytest.raises(ConsoleClosed):
        queue.read(10, 0, what="test")


def test_deliver_to_after_the_end_still_delivers_everything_and_the_end_once() -> None:
    from kdmcp.console.base import OutputQueue

    queue = OutputQueue()
    queue.put(b"last words")
    queue.put_eof()
    got: list[bytes] = []
    queue.deliver_to(got.append)
    assert got == [b"last words", b""]


def test_a_put_racing_deliver_to_is_delivered_after_what_was_queued() -> None:
    """A reader putting into a full queue while the engine asks (blocked for room, or not yet there)
    is released, and its chunk follows the queued bytes: it cannot overtake them."""
    import threading

    from kdmcp.console.base import OutputQueue

    queue = OutputQueue(limit=4)
    queue.put(b"full")
    got: list[bytes] = []
    waiting = threading.Thread(target=queue.put, args=(b"next",))
    waiting.start()
    queue.deliver_to(got.append)
    waiting.join(5)
    assert not waiting.is_alive()
    assert got == [b"full", b"next"]
