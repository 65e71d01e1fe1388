"""``dx``: the debugger data model's expression, value and children.

::

    @$curprocess.COM.GlobalObjects                 : [object Object]
        [0x100]          : 0x12f4fb0 [Type: IUnknown *]
        [0x6f8]          : nt!KiSwapContext+0x76 (fffff806`4466a186)  [Switch To]
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import split_lines
from kdmcp.parse.models import DataModelRecord

# "<indent>name   : value"  (the colon is preceded by blanks in dx's aligned layout)
# (the name is blank-separated words, so it cannot eat the blank run before the colon)
_CHILD_RE = re.compile(r"^(?P<indent>\s+)(?P<name>\S+(?: \S+)*?)\s+: (?P<value>.*)$")
# first line: "expression   : value" or just "expression"
_HEAD_RE = re.compile(r"^(?P<expr>\S+(?: \S+)*?)(?:\s+: (?P<value>.*))?$")
_TYPE_RE = re.compile(r"\s*\[Type: (?P<type>[^\]]+)\]")
# DML links dx appends: "[Switch To]"
_LINK_RE = re.compile(r"\s*\[(?P<link>Switch To|Browse|Dump|Details)\]")

_INDENT = 4


def _value_parts(text: str) -> tuple[str | None, str | None, list[str]]:
    t = _TYPE_RE.search(text)
    typ = t.group("type") if t else None
    if t:
        text = text[: t.start()] + text[t.end() :]
    links = [m.group("link") for m in _LINK_RE.finditer(text)]
    text = _LINK_RE.sub("", text).strip()
    return (text or None), typ, links


def parse_data_model(command: str, raw: str) -> DataModelRecord | None:
    """A ``DataModelRecord``; ``None`` for empty output."""
    record: dict[str, Any] = {"command": command, "raw": raw, "children": []}
    seen_head = False
    for line in split_lines(raw):
        if not line.strip():
            continue
        if not seen_head and not line[0].isspace():
            h = _HEAD_RE.match(line)
            if h is not None:
                record["expression"] = h.group("expr")
                if h.group("value") is not None:
                    record["value"], record["type"], _ = _value_parts(h.group("value"))
                seen_head = True
                continue
        c = _CHILD_RE.match(line)
        if c is not None:
            value, typ, links = _value_parts(c.group("value"))
            record["children"].append(
                {
                    "name": c.group("name"),
                    "value": value,
                    "type": typ,
                    "depth": max(1, len(c.group("indent").expandtabs()) // _INDENT),
                    "links": links,
                }
            )
    if not seen_head and not record["children"]:
        return None
    return DataModelRecord.model_validate(record)
