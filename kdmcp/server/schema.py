"""The served form of a tool's argument schema and annotations: what a model needs, said once.

``tools/list`` is sent to the model on every turn, so every byte of it is paid again and again
(docs/results.md, "The tool surface"). pydantic's schemas say much that a model does not need:
a ``title`` on every property (the property's own name, re-spelled), optional arguments as
``anyOf [T, null]`` with ``default: null`` — an argument that may be left out is one that is
not ``required``, which the schema already says. The argument models still validate every
call as before (the SDK validates with the model, not with this schema): a client that sends
``null`` for an optional argument is still accepted; the schema only stops advertising it.

Annotations leave out hints that say what the spec's defaults say, and the hints the spec
calls meaningless for a read-only tool (``destructiveHint``, ``idempotentHint``).
"""

from __future__ import annotations

from typing import Any

from mcp_types import ToolAnnotations

_NULL = {"type": "null"}
# The spec's defaults for each hint (2025-06-18, ToolAnnotations).
_HINT_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False,
                  "open_world_hint": True}
# "meaningful only when readOnlyHint == false"
_WRITE_ONLY_HINTS = ("destructive_hint", "idempotent_hint")


def compact_schema(schema: Any) -> Any:
    """``schema`` without titles, with ``anyOf [T, null]`` + ``default: null`` as plain ``T``."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {name: compact_schema(value) for name, value in schema.items() if name != "title"}
    variants = out.get("anyOf")
    if isinstance(variants, list) and len(variants) == 2 and _NULL in variants and out.get("default", 0) is None:
        (kept,) = [v for v in variants if v != _NULL]
        del out["anyOf"], out["default"]
        out = {**kept, **out}
    return out


def served_annotations(annotations: ToolAnnotations) -> ToolAnnotations:
    """``annotations`` without the hints a client would assume anyway."""
    hints = annotations.model_dump(exclude_none=True)
    read_only = hints.get("read_only_hint", False)
    kept = {name: value for name, value in hints.items()
            if _HINT_DEFAULTS.get(name) != value and not (read_only and name in _WRITE_ONLY_HINTS)}
    return ToolAnnotations(**kept)
