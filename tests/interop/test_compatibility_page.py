"""docs/compatibility.md holds what the clients' runs saw (scripts/compatibility_page.py writes it).

The TypeScript SDK rows are checked where the harness runs (test_typescript_sdk.py); here the
Python SDK row is run again and compared, and the conformance row is the recorded run's. A row
that no longer matches a run fails until ``python scripts/compatibility_page.py --write`` is run.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import anyio
import pytest

pytestmark = pytest.mark.process  # the Python SDK probe starts the server (tests/tiers.py)

ROOT = Path(__file__).resolve().parents[2]


def page_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compatibility_page", ROOT / "scripts" / "compatibility_page.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page_rows() -> list[str]:
    return [line for line in (ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| ") and not line.startswith(("| client", "|---"))]


def test_the_python_sdk_row_is_a_run() -> None:
    script = page_script()

    async def bounded() -> dict[str, object]:
        with anyio.fail_after(180):
            return dict(await script.python_sdk_probe(sys.executable))

    assert script.python_row(anyio.run(bounded)) in page_rows()


def test_the_conformance_row_is_the_recorded_run() -> None:
    script = page_script()
    run = json.loads((ROOT / "docs" / "conformance-run.json").read_text(encoding="utf-8"))
    assert script.conformance_row(run) in page_rows()
