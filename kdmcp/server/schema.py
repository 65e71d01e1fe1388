"""The served form of a tool's argument schema and annotations: what a model needs, said once.

``tools/list`` is sent to the model on every turn, so every byte of it is paid again and again
(docs/results.md, "The tool surface"). pydantic's schemas say much that a model does not need:
a ``title`` on every property (the property's own name, re-spelled), optional arguments as
``anyOf [T, null]`` with ``default: null`` — an argument that may be left out is one that is
not ``required``, which the schema already says. The argument models still validate every
call as before (the SDK validates with the model, not with this schema): a client that sends
``null`` for an optional argument is still accepted; the schema only stops advertising it.

Nor does a model need the bounds the argument models enforce (``maxLength``, ``pattern``,
``maximum``…: 3.8 KB of the 31.6 KB surface of 50 tools): a value outside them is an
``invalid_argument`` naming the field and the bound, and a model guesses within them from the
description anyway. A boolean's ``default: false`` is what leaving a flag out means.

Annotations keep the hints (``readOnlyHint``: a client may run the tool without asking) where
they differ from the spec's defaults; the ``title`` (the tool's name says it: 1.9 KB of the
surface) is left out, and so are the hints the spec calls meaningless for a read-only tool.
"""

from __future__ import annotations

from typing import Any

from mcp_types import ToolAnnotations

_NULL = {"type": "null"}
# Bounds the argument models enforce on every call: a model does not need them served.
_ENFORCED = frozenset({"maxLength", "minLength", "pattern", "maximum", "minimum", "exclusiveMinimum",
                       "exclusiveMaximum", "maxItems", "minItems"})
_SERVED_HINTS = ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")
# The spec's defaults for each hint (2025-06-18, ToolAnnotations).
_HINT_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False,
                  "open_world_hint": True}
# "meaningful only when readOnlyHint == false"
_WRITE_ONLY_HINTS = ("destructive_hint", "idempotent_hint")


def compact_schema(schema: Any) -> Any:
    """``schema`` without titles, enforced bounds, ``additionalProperties: true`` or ``default:
    false``, with ``anyOf [T, null]`` + ``default: null`` as plain ``T``."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {name: compact_schema(value) for name, value in schema.items()
           if name != "title" and name not in _ENFORCED
           and not (name == "additionalProperties" and value is True) and not (name == "default" and value is False)}
    variants = out.get("anyOf")
    if isinstance(variants, list) and len(variants) == 2 and _NULL in variants and out.get("default", 0) is None:
        (kept,) = [v for v in variants if v != _NULL]
        del out["anyOf"], out["default"]
        out = {**kept, **out}
    return out


def served_annotations(annotations: ToolAnnotations) -> ToolAnnotations | None:
    """``annotations`` without the hints a client would assume anyway."""
    hints = annotations.model_dump(exclude_none=True)
    read_only = hints.get("read_only_hint", False)
    kept = {name: value for name, value in hints.items() if name in _SERVED_HINTS
            and _HINT_DEFAULTS.get(name) != value and not (read_only and name in _WRITE_ONLY_HINTS)}
    return ToolAnnotations(**kept) if kept else None
