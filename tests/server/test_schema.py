"""The served argument schemas and annotations (``kdmcp/server/schema.py``)."""

from __future__ import annotations

from mcp_types import ToolAnnotations

from kdmcp.server.schema import compact_schema, served_annotations


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
