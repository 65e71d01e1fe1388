"""kd-mcp as the official MCP TypeScript SDK sees it: ``tests/interop/harness.mjs``, over stdio and HTTP.

The SDK validates ``structuredContent`` against each tool's ``outputSchema`` on every result once
it has listed the tools, error results included; the Python SDK does not, so only a TS client
catches a result that breaks that (docs/clients.md). The harness runs on the SDK version pinned
in ``tests/interop/package-lock.json``, installed here with ``npm ci`` when it is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kdmcp.server.registry import tool_groups

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SDK = HERE / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"


@pytest.fixture(scope="module")
def node() -> str:
    """The node binary, with the pinned SDK installed (``npm ci --prefix tests/interop``, once)."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed (the TypeScript SDK harness needs Node >= 18)")
    pinned = json.loads((HERE / "package-lock.json").read_text(encoding="utf-8"))
    version = pinned["packages"]["node_modules/@modelcontextprotocol/sdk"]["version"]
    if not SDK.exists() or json.loads(SDK.read_text(encoding="utf-8"))["version"] != version:
        npm = shutil.which("npm")
        assert npm is not None, "node is installed but npm is not: cannot install tests/interop's pinned SDK"
        done = subprocess.run([npm, "ci", "--prefix", str(HERE), "--no-audit", "--no-fund"], cwd=ROOT,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    assert json.loads(SDK.read_text(encoding="utf-8"))["version"] == version
    return found


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_typescript_sdk_client_reads_every_result(node: str, transport: str) -> None:
    done = subprocess.run(
        [node, str(HERE / "harness.mjs"), "--python", sys.executable, "--root", str(ROOT), "--transport", transport,
         "--groups", json.dumps(tool_groups())],
        cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=360, check=False,
    )
    lines = done.stdout.splitlines()
    assert lines, done.stderr
    summary = json.loads(lines[-1])
    assert done.returncode == 0 and summary["failed"] == 0, "\n".join(summary["failures"]) + "\n" + done.stderr
    assert summary["passed"] > 50, done.stdout
    # Asking the human (docs/security.md) as a TS client sees it: accept runs once and asks again,
    # decline and cancel refuse, a client without elicitation is told how to allow the line.
    asked = [f"ok   {transport} asking: accepted 2: the line ran once, asked 2",
             f"ok   {transport} asking: decline is refused", f"ok   {transport} asking: cancel is refused",
             f"ok   {transport}: a client without elicitation is told how to allow it"]
    if transport == "http":  # per-client policy over the listener: read_only is never asked
        asked.append("ok   http asking read_only: read_only is never asked")
    assert [line for line in asked if line not in lines] == [], done.stdout
    if transport == "stdio":  # the categories the simulator can provoke, each seen by a TS client
        seen = set(summary["categories"])
        assert {"invalid_argument", "unknown_session", "capacity", "target_running", "not_connected", "busy",
                "timeout", "debugger_exited", "state_file", "debugger", "policy_denied"} <= seen, seen
