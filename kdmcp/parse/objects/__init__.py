"""Object extensions: ``!irp !drvobj !devobj !devstack !devnode !object !pool !poolfind !poolused
!pte !vad !lmi``, and the key/value ones (``!teb !peb !pcr !address !irql !apic !vm !locks
!handle !heap``).

Each extension has its own small parser, in the module of its family (``devices``: the I/O
manager's objects; ``namespace``: objects and handles; ``memory``: pool, PTEs, heap, VADs;
``system``: the key/value extensions about the running system), and each family module lists
its extensions in ``HANDLERS``; this module dispatches on the name. All return an
``ObjectRecord`` whose ``object_type`` is the extension name without ``!``. Scalars go to
``fields`` (keys as the extension prints them, or snake_case where we derive them), tables to
the typed lists or ``entries``.
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import split_lines
from kdmcp.parse.models import ObjectRecord
from kdmcp.parse.objects import devices, memory, namespace, system
from kdmcp.parse.objects.fields import Handler, generic_fields

# every extension with its own reader, by name; each family module lists its own
_HANDLERS: dict[str, Handler] = devices.HANDLERS | namespace.HANDLERS | memory.HANDLERS | system.HANDLERS

OBJECT_EXTENSIONS = frozenset(_HANDLERS) | frozenset({"prcb", "token", "sd", "sysptes", "memusage"})

_EXTENSION_RE = re.compile(r"^\s*!(?:\w+\.)?(?P<name>\w+)")

# the record's tables (every list field but ``warnings``), read from the model: a family that adds
# a typed table to ``ObjectRecord`` needs no second list here
_TABLES: tuple[str, ...] = tuple(
    name for name, info in ObjectRecord.model_fields.items() if info.default_factory is list and name != "warnings"
)


def parse_object(command: str, raw: str) -> ObjectRecord | None:
    """An ``ObjectRecord`` for a known object extension; ``None`` if nothing was recognised."""
    m = _EXTENSION_RE.match(command)
    name = m.group("name").lower() if m is not None else "unknown"
    handler = _HANDLERS.get(name, generic_fields)
    out: dict[str, Any] = {"command": command, "raw": raw, "object_type": name, "fields": {}, "warnings": []}
    out.update((table, []) for table in _TABLES)
    handler(split_lines(raw), out)
    # a reader's own complaints count: "Levels not implemented for this platform" is !pte's
    # whole answer when it cannot walk the tables, and it is the extension's, not an error kd knows
    if not (out["fields"] or any(out[table] for table in _TABLES) or out.get("address") or out["warnings"]):
        return None
    return ObjectRecord.model_validate(out)
