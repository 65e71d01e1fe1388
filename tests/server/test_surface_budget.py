"""The tool surface's byte budget: ≤ 16,000 B for every tool served, each tool's bytes pinned, and the
server's instructions under 1,500 B naming the typed tools for the common questions.

Every byte of ``tools/list`` reaches the model on every turn. A change to a description, an
argument or an annotation changes a figure here: look at it, then accept it with
``KDMCP_UPDATE_GOLDEN=1 pytest tests/server/test_surface_budget.py`` (and regenerate
docs/results.md: ``python -m kdmcp.server.results_doc``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from kdmcp.server import results_doc
from kdmcp.server.mcp_server import INSTRUCTIONS
from kdmcp.server.registry import all_tools
from tests.server.helpers import in_memory, make_app

GOLDEN = Path(__file__).with_name("golden") / "surface.json"
SURFACE_BUDGET = 16_000
INSTRUCTIONS_BUDGET = 1_500


def test_the_whole_surface_fits_16000_bytes():
    sizes = results_doc.surface_bytes()
    assert len(sizes) == len(all_tools())  # every tool still offered
    assert sum(sizes.values()) <= SURFACE_BUDGET, f"{sum(sizes.values())} B: {sizes}"


def test_the_instructions_are_short_and_name_the_typed_tools():
    assert len(INSTRUCTIONS.encode()) < INSTRUCTIONS_BUDGET
    for typed in ("processes", "modules", "backtrace", "registers", "analyze", "exception", "handles"):
        assert re.search(rf"\b{typed}\b", INSTRUCTIONS), typed


def test_each_tools_bytes_are_pinned():
    sizes = results_doc.surface_bytes()
    if os.environ.get("KDMCP_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps({"total": sum(sizes.values()), "tools": sizes}, indent=2) + "\n")
    pinned = json.loads(GOLDEN.read_text())
    assert sizes == pinned["tools"], "surface changed: see this module's docstring"
    assert sum(sizes.values()) == pinned["total"]


def test_no_tool_publishes_an_output_schema():
    # docs/results.md, "No outputSchema": none is worth its bytes, and each costs every client a
    # validation of every result.
    assert [t.name for t in results_doc.wire_tools() if t.output_schema] == []


@pytest.mark.anyio
async def test_tools_list_as_served_fits_16000_bytes():
    # the whole answer a client receives, the SDK's envelope (_meta, ttlMs…) included
    async with in_memory(make_app()) as client:
        listed = await client.list_tools()
    assert len(listed.tools) == len(all_tools())
    assert len(listed.model_dump_json(by_alias=True, exclude_none=True).encode()) <= SURFACE_BUDGET
