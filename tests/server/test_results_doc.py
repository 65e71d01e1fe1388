"""docs/results.md's generated part is what the server serves (``kdmcp/server/results_doc.py``)."""

from __future__ import annotations

import pytest

from kdmcp.server import results_doc
from kdmcp.server.registry import TOOLS
from tests.server.helpers import in_memory, make_app

pytestmark = pytest.mark.anyio


def test_the_page_holds_the_current_generated_part():
    text = results_doc.PAGE.read_text(encoding="utf-8")
    assert results_doc.page_with(text) == text, "run: python -m kdmcp.server.results_doc"


async def test_the_measured_tools_are_the_ones_tools_list_sends():
    async with in_memory(make_app()) as client:
        listed = (await client.list_tools()).tools
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed] == [
        t.model_dump(by_alias=True, exclude_none=True) for t in results_doc.wire_tools()]


def test_every_tool_names_its_result_model():
    for name in TOOLS:
        assert TOOLS[name].result_model.model_fields, name
