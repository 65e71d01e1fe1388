"""The served argument schemas and annotations (``kdmcp/server/schema.py``), and the listing kept
between starts: the tools listed from it (``call.lazy_tools``) serve the same ``tools/list`` bytes
as the tools built from the registry, with the registry's groups; a stale or broken cache is never
served, and a listed tool validates and answers when first called (a start from the cache, in a
process of its own: ``tests/server/test_cold_start.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from kdmcp.server import registry
from kdmcp.server import schema as served_schema
from kdmcp.server.call import _LazyTool, built_tools, kept_listing, lazy_tools
from kdmcp.server.mcp_server import KdMcpServer
from kdmcp.server.registry import _REGISTERED, TOOLS, tool_groups
from kdmcp.server.schema import compact_schema, served_annotations
from tests.server.helpers import make_app, result_data

GROUPS = tool_groups()


def test_titles_and_enforced_bounds_go_and_an_optional_argument_is_its_type():
    schema = {"title": "fArguments", "type": "object", "properties": {
        "session_id": {"anyOf": [{"maxLength": 64, "type": "string"}, {"type": "null"}], "default": None,
                       "description": "d", "title": "Session Id"},
        "limit": {"default": 200, "maximum": 5000, "title": "Limit", "type": "integer"},
    }}
    assert compact_schema(schema) == {"type": "object", "properties": {
        "session_id": {"type": "string", "description": "d"},
        "limit": {"default": 200, "type": "integer"},
    }}


def test_a_flag_off_by_default_and_an_open_object_say_nothing_more():
    schema = {"type": "object", "properties": {"verbose": {"default": False, "type": "boolean"},
                                               "restore": {"additionalProperties": True, "type": "object"},
                                               "resume": {"default": True, "type": "boolean"}}}
    assert compact_schema(schema) == {"type": "object", "properties": {
        "verbose": {"type": "boolean"}, "restore": {"type": "object"}, "resume": {"default": True, "type": "boolean"}}}


def test_a_nullable_argument_with_a_real_default_keeps_its_null():
    # Left alone: null there means something other than "left out".
    schema = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "x"}
    assert compact_schema(schema) == schema


def test_hints_equal_to_the_spec_defaults_are_left_out():
    reads = ToolAnnotations(title="R", read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
    # the title is the tool's name again: left out
    assert served_annotations(reads).model_dump(exclude_none=True) == {"read_only_hint": True, "open_world_hint": False}
    destroys = ToolAnnotations(title="D", read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                               open_world_hint=False)
    assert served_annotations(destroys).model_dump(exclude_none=True) == {"open_world_hint": False}
    controls = ToolAnnotations(title="C", read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                               open_world_hint=False)
    assert served_annotations(controls).model_dump(exclude_none=True) == {
        "destructive_hint": False, "idempotent_hint": True, "open_world_hint": False}


# ----------------------------------------------------- the listing kept between starts


def _listing(tools: Any) -> list[str]:
    listed = anyio.run(MCPServer(tools=list(tools)).list_tools)
    return [tool.model_dump_json(by_alias=True, exclude_none=True) for tool in listed]


def _kept() -> dict[str, Any]:
    return {"tools": kept_listing(built_tools())}


def test_the_cached_listing_is_byte_identical_to_the_built_one(tmp_path: Path) -> None:
    served_schema.store_surface("k1", _kept(), tmp_path)
    cached = served_schema.listing_of(served_schema.load_surface("k1", tmp_path))
    assert cached is not None
    lazy = lazy_tools(cached)
    assert all(isinstance(tool, _LazyTool) for tool in lazy)
    assert _listing(lazy) == _listing(built_tools())
    # and the groups --tools and the client surfaces read from it are the registry's
    assert [(entry["name"], entry["group"]) for entry in cached] == [(n, t.group) for n, t in TOOLS.items()]


def test_another_fingerprint_or_a_broken_file_is_not_used(tmp_path: Path) -> None:
    served_schema.store_surface("k1", _kept(), tmp_path)
    assert served_schema.load_surface("k2", tmp_path) is None
    (tmp_path / "surface-k3.json").write_text("{not json")
    assert served_schema.load_surface("k3", tmp_path) is None


@pytest.mark.parametrize("spoil", ["no tools", "an entry without its group", "a description not a string",
                                   "the old format"])
def test_a_listing_that_is_not_one_is_not_used(spoil: str) -> None:
    kept = _kept()
    if spoil == "no tools":
        kept["tools"] = []
    elif spoil == "an entry without its group":
        del kept["tools"][3]["group"]
    elif spoil == "a description not a string":
        kept["tools"][0]["description"] = None
    else:
        kept = {tool.name: {"parameters": tool.parameters} for tool in built_tools()}
    assert served_schema.listing_of(kept) is None


def test_a_listing_with_an_unknown_group_gives_the_registry_s_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _kept()["tools"]
    kept[0]["group"] = "everything"
    monkeypatch.setattr(registry, "cached_listing", lambda: kept)
    monkeypatch.setattr(registry, "_REGISTERED", {})
    monkeypatch.setattr(registry._Loading, "loaded", False)
    monkeypatch.setattr(registry._Loading, "loader", lambda: registry._REGISTERED.update(dict(_REGISTERED)))
    assert registry.tool_groups() == GROUPS


def test_the_fingerprint_changes_with_a_source_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "tool.py"
    source.write_text("x = 1\n")
    monkeypatch.setattr(served_schema, "_package_files", lambda: [source])
    before = served_schema.surface_fingerprint()
    source.write_text("x = 22\n")
    assert served_schema.surface_fingerprint() != before


def test_the_fingerprint_changes_with_python_s_optimize_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """``-OO`` strips the docstrings, the tools' descriptions: a listing kept without it is not its."""
    before = served_schema.surface_fingerprint()
    monkeypatch.setattr(served_schema.sys, "flags", type("Flags", (), {"optimize": 2})())
    assert served_schema.surface_fingerprint() != before


def test_off_by_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served_schema.store_surface("k1", {"a": 1}, tmp_path)
    monkeypatch.setenv(served_schema.ENV_OFF, "1")
    assert served_schema.load_surface("k1", tmp_path) is None


def test_only_the_newest_files_are_kept(tmp_path: Path) -> None:
    for i in range(served_schema.KEEP + 3):
        served_schema.store_surface(f"k{i}", {"n": i}, tmp_path)
    assert len(list(tmp_path.glob("surface-*.json"))) == served_schema.KEEP
    newest = served_schema.KEEP + 2
    assert json.loads((tmp_path / f"surface-k{newest}.json").read_text()) == {"n": newest}


async def test_a_listed_tool_validates_and_answers_on_its_first_call() -> None:
    """The argument model is built on the first call: bad arguments are still invalid_argument,
    good ones reach the tool."""
    lazy = lazy_tools(_kept()["tools"])
    app = make_app()
    server = KdMcpServer(app, tools=list(lazy))
    server.tool_names = frozenset(TOOLS)
    try:
        async with Client(server) as client:
            bad = result_data(await client.call_tool("kd_command", {"command": ""}))
            assert bad["category"] == "invalid_argument" and "command" in bad["message"]
            none = result_data(await client.call_tool("kd_command", {"command": "r"}))
            assert none["category"] == "unknown_session"
    finally:
        await anyio.to_thread.run_sync(app.shutdown)
