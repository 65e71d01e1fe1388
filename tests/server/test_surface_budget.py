"""The tool surface's byte budget: ≤ 1,000 B per tool on average, each tool's bytes pinned.

Every byte of ``tools/list`` reaches the model on every turn. A change to a description, an
argument or an annotation changes a figure here: look at it, then accept it with
``KDMCP_UPDATE_GOLDEN=1 pytest tests/server/test_surface_budget.py`` (and regenerate
docs/results.md: ``python -m kdmcp.server.results_doc``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kdmcp.server import results_doc

GOLDEN = Path(__file__).with_name("golden") / "surface.json"
PER_TOOL_BUDGET = 1000


def test_the_surface_averages_at_most_1000_bytes_per_tool():
    sizes = results_doc.surface_bytes()
    average = sum(sizes.values()) / len(sizes)
    assert average <= PER_TOOL_BUDGET, f"{average:.0f} B per tool: {sizes}"


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
