"""The user-mode type layouts (``data/types_user_x64.txt``) beside the kernel's.

``dt ntdll!_PEB`` and the user world's builder read the same table, as ``dt nt!_EPROCESS`` and the
kernel builder do (:mod:`~kdmcp.sim.world.layouts`). The file is read with that module's own line
patterns and its layouts join the one table :func:`~kdmcp.sim.world.layouts.layout` looks in
(types the kernel file already has -- ``_LIST_ENTRY``, ``_UNICODE_STRING`` -- stay the kernel's), so
``dt``, ``offset_of`` and ``put`` know ``_PEB`` and ``_TEB`` without a change to the shared loader.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from kdmcp.sim.world.layouts import _FIELD_RE, _HEAD_RE, Field, Layout, layouts

__all__ = ["register_user_layouts", "user_layouts"]


@cache
def user_layouts() -> dict[str, Layout]:
    """Every layout of the user file, by its lower-cased ``_NAME``."""
    text = resources.files("kdmcp.sim.world").joinpath("data/types_user_x64.txt").read_text("utf-8")
    found: dict[str, Layout] = {}
    head: re.Match[str] | None = None
    fields: list[Field] = []

    def close() -> None:
        if head is not None:
            name = head.group("name")
            found[name.lower()] = Layout(head.group("module"), name, int(head.group("size"), 16), tuple(fields))

    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if m := _HEAD_RE.match(line):
            close()
            head, fields = m, []
        elif (f := _FIELD_RE.match(line)) is not None:
            fields.append(Field(int(f.group("off"), 16), f.group("name"), f.group("type").rstrip()))
    close()
    return found


def register_user_layouts() -> None:
    """Add the user layouts to the shared table (once; the kernel's own types win)."""
    table = layouts()
    for key, value in user_layouts().items():
        table.setdefault(key, value)
