"""``kdmcp.parse.models``: the ``Record`` union the server publishes, joined from the family modules."""

from __future__ import annotations

from typing import get_args

from pydantic import BaseModel, TypeAdapter

import kdmcp.parse.models as models
from kdmcp.parse.models import RECORD_KINDS, Record, RecordBase

# the published kinds, in the union's order (the server's output schema lists them so)
PUBLISHED_KINDS = (
    "stack", "registers", "modules", "processes", "threads", "analysis", "memory", "disassembly",
    "breakpoints", "target", "type_dump", "object", "exception_record", "error_code", "error",
    "text", "events", "expression", "symbols", "symbol_path", "symbol_load", "locals", "data_model",
)


def test_record_kinds_are_the_unions_kinds_in_order() -> None:
    members = get_args(get_args(Record)[0])
    assert tuple(m.model_fields["kind"].default for m in members) == PUBLISHED_KINDS
    assert RECORD_KINDS == PUBLISHED_KINDS
    assert len(set(RECORD_KINDS)) == len(RECORD_KINDS)
    mapping = TypeAdapter(Record).json_schema()["discriminator"]["mapping"]
    assert set(mapping) == set(RECORD_KINDS)


def test_every_model_is_exported_and_forbids_unknown_fields() -> None:
    exported = {name: getattr(models, name) for name in models.__all__}
    classes = [v for v in exported.values() if isinstance(v, type) and issubclass(v, BaseModel)]
    assert all(issubclass(m, RecordBase) for m in get_args(get_args(Record)[0]))
    assert {m.__name__ for m in get_args(get_args(Record)[0])} <= set(exported)
    assert all(c.model_config.get("extra") == "forbid" for c in classes)
