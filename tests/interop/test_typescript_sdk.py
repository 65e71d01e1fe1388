"""kd-mcp as the official MCP TypeScript SDK sees it: ``tests/interop/harness.mjs``, over stdio and HTTP.

The SDK validates ``structuredContent`` against each tool's ``outputSchema`` on every result once
it has listed the tools, error results included; the Python SDK does not, so only a TS client
catches a result that breaks that (docs/clients.md). The harness runs on the SDK version pinned
in ``tests/interop/package-lock.json``, installed here with ``npm ci`` when it is missing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kdmcp.server.registry import tool_groups

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


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
    # docs/compatibility.md's row for this transport is this run (scripts/compatibility_page.py --write)
    from tests.interop.test_compatibility_page import page_rows, page_script

    assert page_script().typescript_row(transport, summary) in page_rows(), "rerun scripts/compatibility_page.py"
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
