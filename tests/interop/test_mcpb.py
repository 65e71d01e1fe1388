"""The MCP bundle (``scripts/build_mcpb.py``), built and checked with the bundle CLI from npm.

The script validates its manifest with ``mcpb validate`` and packs with ``mcpb pack`` (the CLI
pinned in ``tests/interop/package.json``); here the bundle is built into a temporary folder and
what it carries is held to the project: every tool the server registers, the package's files, the
notices, and a ``uv`` server entry that assumes no Python on PATH.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kdmcp.server.registry import tool_groups

pytestmark = pytest.mark.process  # runs node (the bundle CLI) and git (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[2]
MCPB = ROOT / "tests" / "interop" / "node_modules" / ".bin" / "mcpb"


def test_the_bundle_is_built_validated_and_carries_the_server(node: str, tmp_path: Path) -> None:
    assert node and MCPB.exists()  # the node fixture ran npm ci, which installs the bundle CLI
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_mcpb.py"), "--out", str(tmp_path), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    built = json.loads(done.stdout.splitlines()[-1])
    with zipfile.ZipFile(built["bundle"]) as bundle:
        names = set(bundle.namelist())
        manifest = json.loads(bundle.read("manifest.json"))
    assert {"pyproject.toml", "MANIFEST.in", "LICENSE", "THIRD_PARTY_NOTICES.md", "kdmcp/__main__.py",
            "kdmcp/parse/error_table.txt"} <= names
    assert manifest["server"]["type"] == "uv"
    assert manifest["server"]["mcp_config"]["command"] == "uv"
    assert "${__dirname}" in manifest["server"]["mcp_config"]["args"]
    served = {name for names in tool_groups().values() for name in names}
    assert {entry["name"] for entry in manifest["tools"]} == served
    assert all(entry["description"] for entry in manifest["tools"])
    assert len(manifest["description"]) <= 100
