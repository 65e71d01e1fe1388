"""Memory dumps: ``db dw dW dd dq dp dc dD df dyb dyd``, ``dps dds dqs``, ``da du``, ``dl``.

Every row starts with its address (``[selector:]address``, or ``#addr`` for physical
``!db``), then one of three shapes::

    00000000`7777cb60  cc eb 00 48 83 c4 38 c3-90 90 90 90 90 90 90 90  ...H..8.........   bytes + ascii
    003b:00000030  7ffdf000 00000000 00000000 00000000                                 cells
    fffff801`9210b880  fffff801`9203b470 nt!KiServiceTable                              cell + symbol
    00000000`031e92c8  "Reflective Dll Injection"                                      string
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_raw_lines
from kdmcp.parse.models import MemoryRecord

# Row address: optional "#" (physical), optional "sel:" selector, then the address.
_ROW_RE = re.compile(
    r"^(?:(?P<phys>#)\s*(?P<paddr>[0-9a-fA-F]+)|(?:(?P<seg>[0-9a-fA-F]{4}):)?"
    r"(?P<addr>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?))(?=\s)"
)

# db: up to 16 byte cells joined by " " or "-" (the middle one), then ascii after two
# blanks (one in physical !db).
_BYTES_RE = re.compile(r"^\s+(?P<hex>(?:[0-9a-fA-F?]{2}[ -]){0,15}[0-9a-fA-F?]{2})(?:\s{1,2}(?P<ascii>.*))?$")

# One cell of dw/dd/dq/dp/dc/dl: hex (maybe 8`8) or ??; floats for dD/df.
_CELL_RE = re.compile(r"[0-9a-fA-F?]+(?:`[0-9a-fA-F?]+)?")
_FLOAT_CELL_RE = re.compile(r"[-+]?(?:\d[\d.]*(?:e[-+]?\d+)?|1\.#\w+|-?1\.#\w+|\?+)", re.IGNORECASE)

# the "[file @ line]" that ends a dps/dqs/dds symbol when source line loading is on
_SOURCE_RE = re.compile(r" \[(?P<file>[^\[\]]+) @ (?P<line>\d+)\]$")

# (unit, shape) per command name; shape: bytes | cells | symbols | string | floats
_COMMANDS: dict[str, tuple[str, str]] = {
    "db": ("byte", "bytes"),
    "dw": ("word", "cells"),
    "dW": ("word", "cells"),
    "dd": ("dword", "cells"),
    "dq": ("qword", "cells"),
    "dp": ("pointer", "cells"),
    "dc": ("dword", "cells"),
    "dl": ("pointer", "cells"),
    "dyb": ("binary", "cells"),
    "dyd": ("binary", "cells"),
    "dD": ("double", "floats"),
    "df": ("float", "floats"),
    "dps": ("pointer", "symbols"),
    "dds": ("dword", "symbols"),
    "dqs": ("qword", "symbols"),
    "kd": ("pointer", "symbols"),
    "da": ("ascii", "string"),
    "du": ("unicode", "string"),
    "dpa": ("pointer", "symbols"),
    "dpu": ("pointer", "symbols"),
    "dda": ("dword", "symbols"),
    "ddu": ("dword", "symbols"),
    "dqa": ("qword", "symbols"),
    "dqu": ("qword", "symbols"),
    "!db": ("byte", "bytes"),
    "!dw": ("word", "cells"),
    "!dd": ("dword", "cells"),
    "!dq": ("qword", "cells"),
    "!dc": ("dword", "cells"),
    "!du": ("unicode", "string"),
    "!da": ("ascii", "string"),
}

# Command name at the start of the command line (case matters: dD vs dd, dW vs dw).
_NAME_RE = re.compile(r"^\s*(?P<name>!?[a-zA-Z]+)")


def memory_command(command: str) -> tuple[str, str] | None:
    """(unit, shape) if ``command`` is a memory display command."""
    m = _NAME_RE.match(command)
    if m is None:
        return None
    return _COMMANDS.get(m.group("name"))


def _row(line: str, shape: str) -> dict[str, Any] | None:
    m = _ROW_RE.match(line)
    if m is None:
        return None
    if m.group("phys"):
        row: dict[str, Any] = {"address": addr(m.group("paddr"))}
    else:
        row = {"address": addr(m.group("addr"))}
        if m.group("seg"):
            row["segment"] = m.group("seg").lower()
    rest = line[m.end() :]
    if shape == "bytes":
        b = _BYTES_RE.match(rest)
        if b is None:
            return None
        row["values"] = [v.lower() for v in re.split(r"[ -]", b.group("hex"))]
        ascii_text = b.group("ascii")
        if ascii_text is not None:
            row["ascii"] = ascii_text if len(row["values"]) == 16 else ascii_text.lstrip()
        return row
    if shape == "string":
        text = rest.strip()
        if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
            text = text[1:-1]
        elif text.startswith('"'):
            text = text[1:]
        row["text"] = text
        return row
    body = rest.strip()
    if shape == "symbols":
        value, _, symbol = body.partition(" ")
        if not _CELL_RE.fullmatch(value):
            return None
        row["values"] = [value.replace("`", "").lower()]
        symbol = symbol.strip()
        if symbol.endswith("]"):
            # with source line loading on, a symbol carries its source location:
            # "x64_calling_conventions!main+0x67 [C:\Users\...\x.cpp @ 11]" (families/types_symbols/27.txt)
            src = _SOURCE_RE.search(symbol)
            if src is not None:
                row["source_file"], row["source_line"] = src.group("file"), int(src.group("line"))
                symbol = symbol[: src.start()]
        row["symbols"] = [symbol or None]
        return row
    hexpart, sep, tail = body.partition("  ")
    cell_re = _FLOAT_CELL_RE if shape == "floats" else _CELL_RE
    cells = hexpart.split()
    if not cells or not all(cell_re.fullmatch(c) for c in cells):
        return None
    row["values"] = [c.replace("`", "").lower() for c in cells]
    if sep and tail:
        row["ascii"] = _character_column(rest, cells) if shape == "cells" else tail
    return row


def _character_column(rest: str, cells: list[str]) -> str:
    """The character column of a ``dc``/``dW`` row: one character per byte of the cells.

    Its blanks are data (``00026800   ...........B....h..``: a 0x20 byte after the two-blank
    gap), so it is cut by width from the end of the line. A short last row pads the missing
    cells with blanks, which the width cut leaves out. When the line lost trailing blanks
    (published text) the width reaches into the gap; then the column is what follows it.
    """
    width = sum(len(cell) for cell in cells) // 2
    head, column = rest[: len(rest) - width], rest[len(rest) - width :]
    if head.endswith("  ") and head.split() == cells:
        return column
    return rest.strip().partition("  ")[2].lstrip()


def parse_memory(command: str, raw: str) -> MemoryRecord | None:
    """A ``MemoryRecord``; ``None`` if no row parses."""
    kind = memory_command(command) or ("unknown", "cells")
    unit, shape = kind
    rows: list[dict[str, Any]] = []
    for line in split_raw_lines(raw):
        if not line or (line[0].isspace() and not line.startswith("#")):
            continue
        row = _row(line, shape)
        if row is not None:
            rows.append(row)
    if not rows:
        return None
    return MemoryRecord.model_validate({"command": command, "raw": raw, "unit": unit, "rows": rows})
