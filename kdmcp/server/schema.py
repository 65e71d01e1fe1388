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

import functools
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp_types import ToolAnnotations

from kdmcp.prelude import ENV_OFF, KEEP, cache_dir, hash_stats, keep_file, source_files

__all__ = ["ENV_OFF", "KEEP", "cached_listing", "compact_schema", "forget_surface", "listing_of", "load_surface",
           "served_annotations", "store_surface", "surface_fingerprint", "surface_key"]

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


# ------------------------------------------------------------------ the listing kept between starts
# Building the 50 tools' argument models and their JSON schemas (pydantic, through the SDK's
# ``Tool.from_function``) cost ~190 ms of every cold start before the first ``tools/list`` could be
# answered, and importing the tool families to read their names, groups and docstrings most of the
# rest of kd-mcp's own start-up (docs/performance.md, "Cold start"). The served listing depends on
# nothing but kd-mcp's sources and the versions of the SDK and pydantic, so, as Python keeps ``.pyc``
# files, the first start writes it to the user cache directory — each tool's name, group,
# description, served annotations and schema, in registration order — and later starts list the
# tools from it (``call.served_tools``) and import the families on the first call. The file is
# named by a fingerprint of everything the listing comes from: the path, size and modification time
# of every file of the ``kdmcp`` package and of the SDK's and pydantic's files that build it, the
# versions of Python and pydantic, and ``-O`` (which strips the docstrings). Any change (an edit,
# another checkout, an upgrade) names another file, so a stale listing is never served; a missing,
# unreadable or foreign file only costs the build. ``KDMCP_NO_SURFACE_CACHE=1`` turns it off.

_PREFIX = "surface-"


def _package_files() -> list[Path]:
    """kd-mcp's own files, and the SDK's and pydantic's that decide a tool's served schema."""
    import mcp.server.mcpserver.tools.base as sdk_tool
    import mcp.server.mcpserver.utilities.func_metadata as sdk_metadata
    import mcp_types
    import pydantic.json_schema

    import kdmcp

    return [*source_files(Path(kdmcp.__file__).parent),
            *(Path(m.__file__ or "") for m in (sdk_tool, sdk_metadata, mcp_types, pydantic.json_schema))]


def surface_fingerprint() -> str:
    """What names the cache file: every input of the schemas, by path, size and mtime (``stat``)."""
    import pydantic
    import pydantic_core

    digest = hashlib.sha256(
        f"{sys.version}|{sys.flags.optimize}|{pydantic.VERSION}|{pydantic_core.__version__}".encode())
    hash_stats(digest, _package_files())
    return digest.hexdigest()[:32]


def load_surface(key: str, directory: Path | None = None) -> dict[str, Any] | None:
    """What was stored under ``key`` (``{"tools": [listing entry, ...]}``), or None."""
    if os.environ.get(ENV_OFF) == "1":
        return None
    path = (directory or cache_dir()) / f"{_PREFIX}{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def store_surface(key: str, schemas: dict[str, Any], directory: Path | None = None) -> None:
    """Write ``schemas`` (the listing) under ``key``, keeping the newest files (``prelude.keep_file``)."""
    keep_file(directory or cache_dir(), _PREFIX, key, schemas)


def _well_formed(entry: object) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("group"), str)
            and isinstance(entry.get("description"), str) and isinstance(entry.get("parameters"), dict)
            and (entry.get("annotations") is None or isinstance(entry.get("annotations"), dict)))


def listing_of(stored: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """The listing in what ``load_surface`` read (each tool: name, group, description,
    annotations, parameters), or None if it is not one."""
    tools = stored.get("tools") if stored is not None else None
    if not isinstance(tools, list) or not tools or not all(_well_formed(entry) for entry in tools):
        return None
    return tools


@functools.cache
def _surface() -> tuple[str, list[dict[str, Any]] | None]:
    key = surface_fingerprint()
    return key, listing_of(load_surface(key))


def surface_key() -> str:
    """This process's fingerprint (computed once: ~300 files' ``stat``)."""
    return _surface()[0]


def cached_listing() -> list[dict[str, Any]] | None:
    """The listing kept for these sources, read once per process; None if there is none."""
    return _surface()[1]


def forget_surface() -> None:
    """Read the cache again on the next ``cached_listing`` (tests)."""
    _surface.cache_clear()
