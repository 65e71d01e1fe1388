"""``.process`` / ``.thread``: the process or thread kd now reads through.

::

    0: kd> .process /p /r ffffd38430e31340
    Implicit process is now ffffd384`30e31340
    .cache forcedecodeuser done
    Loading User Symbols
    .........................................

``.thread /p /r`` names the thread and, on the next line, its process ("Implicit thread is now
821b7b30" / "Implicit process is now 821b9830"). The answer is a ``processes`` record with the one
process (``current``), or a ``threads`` record with the one thread, its process in
``owning_process``; what kd did besides (``.cache forcedecodeuser done``, ``Loading User
Symbols``) goes to the item's ``details``. Samples: ``.process /p /r`` in a PE-parsing write-up
(stored-index file 37870600100), ``.thread /p /r`` in a kernel-debugging note (22766956252).
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import ProcessesRecord, RecordBase, ThreadsRecord

_IMPLICIT_RE = re.compile(r"^\s*Implicit (?P<what>process|thread) is now (?P<addr>[0-9a-fA-F`]+)\s*$")
_CACHE_RE = re.compile(r"^\s*\.cache (?P<cache>\S.*?)\s*$")
_LOADING_RE = re.compile(r"^\s*Loading (?P<which>User|Kernel) Symbols\s*$")
# what kd complains of around the switch: "WARNING: .cache forcedecodeuser is not enabled",
# "ReadVirtual: 82c98038 not properly sign extended" (a kernel-lab write-up, stored-index file 42607048053)
_COMPLAINT_RE = re.compile(r"^\s*(?:WARNING: |ReadVirtual: )")


def parse_implicit(command: str, raw: str) -> RecordBase | None:
    """The process or thread a ``.process``/``.thread`` switched to; ``None`` if kd named none
    (``.process /i`` only asks to continue the target)."""
    process: str | None = None
    thread: str | None = None
    details: dict[str, str] = {}
    warnings: list[str] = []
    for line in split_lines(raw):
        if _COMPLAINT_RE.match(line):
            warnings.append(line.strip())
            continue
        m = _IMPLICIT_RE.match(line)
        if m is not None:
            if m.group("what") == "thread":
                thread = addr(m.group("addr"))
            elif process is None:
                process = addr(m.group("addr"))
            continue
        c = _CACHE_RE.match(line)
        if c is not None:
            details["cache"] = c.group("cache")
            continue
        loading = _LOADING_RE.match(line)
        if loading is not None:
            details["symbols"] = f"loading {loading.group('which').lower()} symbols"
    base: dict[str, Any] = {"command": command, "raw": raw, "warnings": warnings}
    if thread is not None:
        info = {"address": thread, "current": True, "owning_process": process, "details": details}
        return ThreadsRecord.model_validate({**base, "threads": [info]})
    if process is not None:
        info = {"address": process, "current": True, "details": details}
        return ProcessesRecord.model_validate({**base, "processes": [info]})
    return None
