"""``dv``: local variables and parameters.

::

    00000000`0050fcb0            num1 = 0n0              (dv -v: location first)
    <unavailable>                num3 = <value unavailable>
    prv param  @rcx            argc = 0n1               (dv /i /v)
               argc = 0n1                               (plain dv)
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import LocalsRecord

_LOCAL_RE = re.compile(
    r"^\s*(?:(?P<scope>(?:prv|pub) (?:local|param|global))\s+)?"
    r"(?:(?P<loc>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?|<unavailable>|@\w+)\s+)?"
    r"(?P<name>[^=\s][^=]*?) = (?P<value>.*)$"
)


def parse_locals(command: str, raw: str) -> LocalsRecord | None:
    """A ``LocalsRecord``; ``None`` if no ``name = value`` line is present."""
    typed = "/t" in command or "-t" in command
    out: list[dict[str, Any]] = []
    for line in split_lines(raw):
        m = _LOCAL_RE.match(line)
        if m is None:
            continue
        name = m.group("name").strip()
        var: dict[str, Any] = {"name": name, "value": m.group("value"), "scope": m.group("scope")}
        loc = m.group("loc")
        if loc is not None:
            var["location"] = loc if loc.startswith(("<", "@")) else addr(loc)
        if typed and " " in name:
            var["type"], _, var["name"] = name.rpartition(" ")
        out.append(var)
    if not out:
        return None
    return LocalsRecord.model_validate({"command": command, "raw": raw, "locals": out})
