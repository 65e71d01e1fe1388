"""The interop tests' shared fixture: Node with the pinned TypeScript SDK installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

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
