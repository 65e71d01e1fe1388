"""End to end: ``python -m kdmcp --simulate`` on stdio with the prelude (kdmcp.prelude).

A first start keeps the SDK's answers to the opening requests; the next start answers them
before the SDK is imported — shown without timing: the child's ``sitecustomize`` (``_GATE``)
holds the first import of a module of the SDK or pydantic until the test has its answers and
opens a FIFO.
A client that speaks the handshake gets the same bytes, ids and all, with the prelude, without it
and while the answers are being kept; an answer kept for other options is never used, and one
the SDK no longer gives is dropped and forgotten.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.server.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts the server (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[2]
MARK = "kd-mcp: prelude: answered"
_GATE = '''
import os, select, sys
_fd = os.open(os.environ["KDMCP_TEST_GATE"], os.O_RDONLY | os.O_NONBLOCK)

class _Gate:
    def find_spec(self, name, path=None, target=None):  # a submodule: the prelude finds the packages
        if "." in name and name.split(".")[0] in ("mcp", "mcp_types", "pydantic", "pydantic_core"):
            sys.meta_path.remove(self)
            select.select([_fd], [], [], 60)
            os.close(_fd)
        return None

sys.meta_path.insert(0, _Gate())
'''
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "script", "version": "1"}}
SCRIPT: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": "call-2", "method": "tools/call", "params": {"name": "list_sessions", "arguments": {}}},
    {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"},
]


def _env(cache: Path, **extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name != "KDMCP_NO_SURFACE_CACHE"}
    return {**env, "XDG_CACHE_HOME": str(cache), **extra}


def _answers(cache: Path) -> list[Path]:
    return sorted((cache / "kd-mcp").glob("answers-*.json"))


@contextmanager
def _server(env: dict[str, str], stderr: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    with stderr.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "kdmcp", "--simulate", "--log-level", "INFO", *args],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env, cwd=ROOT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def _read_line(proc: subprocess.Popen[bytes]) -> bytes:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    assert ready, "no answer within 60 s"
    return proc.stdout.readline()


def _scripted(cache: Path, stderr: Path, *args: str, **env: str) -> list[bytes]:
    """The script, each request after the answer to the one before; every line the server wrote."""
    with _server(_env(cache, **env), stderr, *args) as proc:
        assert proc.stdin is not None
        lines = []
        for message in SCRIPT:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            if "id" in message:
                lines.append(_read_line(proc))
        proc.stdin.close()
        assert proc.wait(30) == 0
        assert proc.stdout is not None and proc.stdout.read() == b""  # nothing more: no answer twice
    return lines


def test_a_handshake_client_gets_the_same_bytes_with_the_prelude_and_without(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    without = _scripted(cache, tmp_path / "off.err", KDMCP_NO_SURFACE_CACHE="1")
    assert not _answers(cache)
    keeping = _scripted(cache, tmp_path / "first.err")  # nothing kept yet: answered by the SDK, and kept
    (kept,) = _answers(cache)
    assert sorted(key.split(" ", 1)[0] for key in json.loads(kept.read_text())["answers"]) == [
        "initialize", "tools/list"]
    early = _scripted(cache, tmp_path / "second.err")
    assert f"{MARK} initialize (id 0) early" in (tmp_path / "second.err").read_text()
    assert f"{MARK} tools/list (id 1) early" in (tmp_path / "second.err").read_text()
    assert MARK not in (tmp_path / "first.err").read_text()
    assert early == keeping == without
    assert [json.loads(line)["id"] for line in early] == [0, 1, "call-2", 3]


def test_an_answer_kept_for_other_options_is_not_used_and_a_different_one_is_forgotten(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    right = _scripted(cache, tmp_path / "first.err")
    (kept,) = _answers(cache)
    _scripted(cache, tmp_path / "narrow.err", "--tools", "session")  # other options: another fingerprint
    assert MARK not in (tmp_path / "narrow.err").read_text() and len(_answers(cache)) == 2
    data = json.loads(kept.read_text())
    key = next(key for key in data["answers"] if key.startswith("tools/list"))
    data["answers"][key] = data["answers"][key].replace("list_sessions", "list_sessionz", 1)
    kept.write_text(json.dumps(data))
    wrong = _scripted(cache, tmp_path / "wrong.err")  # answered from it (it has the key) ...
    assert wrong[1] != right[1] and wrong[2:] == right[2:]
    assert "differed from the SDK's" in (tmp_path / "wrong.err").read_text()
    assert not kept.exists()  # ... and forgotten at once
    assert _scripted(cache, tmp_path / "again.err") == right  # answered by the SDK, and kept again
    assert MARK not in (tmp_path / "again.err").read_text() and kept.exists()


async def _listing(params: StdioServerParameters, gate: Path | None = None) -> tuple[list[str], str]:
    with anyio.fail_after(90):
        async with Client(params, read_timeout_seconds=30) as client:
            listed = await client.list_tools()
            if gate is not None:  # the answers are in: let the SDK load
                fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
                os.write(fd, b"go")
                os.close(fd)
            result = await client.call_tool("list_sessions", {})
            assert not result.is_error
    return [tool.model_dump_json(by_alias=True, exclude_none=True) for tool in listed.tools], text_of(result)


async def test_a_kept_start_answers_the_sdks_client_before_the_sdk_is_imported(tmp_path: Path) -> None:
    cache, gate_dir = tmp_path / "cache", tmp_path / "gate"
    gate_dir.mkdir()
    (gate_dir / "sitecustomize.py").write_text(_GATE)
    gate = tmp_path / "gate.fifo"
    os.mkfifo(gate)

    def params(stderr: Path, gated: bool) -> StdioServerParameters:
        env = _env(cache, KDMCP_TEST_GATE=str(gate))
        if gated:
            env["PYTHONPATH"] = os.pathsep.join([str(gate_dir), str(ROOT)])
        return StdioServerParameters(
            command="/bin/sh", args=["-c", 'exec "$0" -m kdmcp --simulate --log-level INFO 2>"$1"',
                                     sys.executable, str(stderr)], env=env, cwd=str(ROOT))

    first = await _listing(params(tmp_path / "first.err", gated=False))
    assert _answers(cache)
    second = await _listing(params(tmp_path / "second.err", gated=True), gate)
    assert second == first
    said = (tmp_path / "second.err").read_text()
    assert f"{MARK} server/discover" in said and f"{MARK} tools/list" in said
