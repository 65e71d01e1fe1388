"""Every tool the README lists beyond the session starts has its page in docs/ with an example result."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kdmcp.server.registry import tool_groups

DOCS = Path(__file__).resolve().parents[2] / "docs"
# issue 15's and 16's typed tools: each page shows, per tool, a call and the result it gave on the simulator
PAGES = ("run-control.md", "inspection.md", "drivers.md", "lists-and-handles.md", "pool-and-pte.md", "ioctl.md")
TYPED = {"set_breakpoint", "breakpoints", "clear_breakpoints", "step", "run_to", "wait_for_stop", "location",
         "threads", "read_memory", "disassemble", "evaluate", "lookup_symbol", "read_type", "set_symbol_path",
         "exception", "decode_error", "driver_object", "device_object", "irp", "walk_list", "handles", "pool",
         "pool_find", "pool_usage", "pte", "decode_ioctl",
         "ioctl_map"}


@pytest.mark.parametrize("tool", sorted(TYPED))
def test_each_typed_tool_has_an_example_with_its_text_block_and_structured_content(tool):
    assert any(tool in tool_groups()[g] for g in ("control", "inspect", "commands")), tool
    pages = [(DOCS / name).read_text(encoding="utf-8") for name in PAGES]
    sections = [s for page in pages for s in re.split(r"^### ", page, flags=re.M) if s.startswith(f"`{tool}`")]
    assert sections, f"no ### `{tool}` section in {', '.join(PAGES)}"
    assert "Text block" in sections[0] and "structuredContent" in sections[0] and "```" in sections[0]


def test_debug_batch_has_its_page_with_a_real_result():
    page = (DOCS / "batch.md").read_text(encoding="utf-8")
    assert "debug_batch" in page and '"outcome"' in page and "rolled_back" in page
