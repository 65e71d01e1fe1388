"""``lm`` in every spelling: ``lm``, ``lmi``, ``lm k``, ``lm m pat``, ``lmv``, ``lmDvm X``, ``lmf``.

One row per module, the verbose block (``lmv``) indented under its row, and an optional
``Unloaded modules:`` section::

    start             end                 module name
    fffff801`63ec0000 fffff801`649a7000   nvlddmkm T (no symbols)
        Loaded symbol image file: nvlddmkm.sys
        Image path: \\SystemRoot\\system32\\DRIVERS\\nvlddmkm.sys
        Timestamp:        Wed Jul  8 15:43:44 2015 (559DA7A0)
    Unloaded modules:
    fffff800`62c80000 fffff800`62c8f000   dump_storport.sys
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import ModulesRecord

_HEX = r"[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?"

# "start end name [marker] [(status)] [symbol file | image path]"
MODULE_RE = re.compile(
    r"^(?P<start>" + _HEX + r")\s+(?P<end>" + _HEX + r")\s+(?P<name>\S+)"
    r"(?:\s+(?P<marker>[A-Z#*]{1,2})(?=\s+\())?"
    r"(?:\s+\((?P<status>[^)]*)\))?"
    r"(?:\s+(?P<file>\S.*))?$"
)

# Longest key of the verbose block ("Loaded symbol image file"); longer text before a
# colon is not a key.
_MAX_KEY = 32

# Verbose keys with a typed field of their own.
_FIELD_OF: dict[str, str] = {
    "Loaded symbol image file": "loaded_image_file",
    "Image path": "image_path",
    "Image name": "image_name",
    "Timestamp": "timestamp",
    "CheckSum": "checksum",
    "ImageSize": "image_size",
    "File version": "file_version",
    "Product version": "product_version",
    "FileVersion": "file_version",
    "ProductVersion": "product_version",
    "CompanyName": "company_name",
    "FileDescription": "file_description",
}
_HEX_FIELDS = frozenset({"checksum", "image_size"})


def parse_modules(command: str, raw: str) -> ModulesRecord | None:
    """A ``ModulesRecord``, or ``None`` if no module row is present."""
    modules: list[dict[str, Any]] = []
    unloaded: list[dict[str, str]] = []
    in_unloaded = False
    current: dict[str, Any] | None = None
    match_row = MODULE_RE.match
    for line in split_lines(raw):
        if not line:
            continue
        c = line[0]
        if c in "0123456789abcdefABCDEF":
            m = match_row(line)
            if m is not None:
                if in_unloaded:
                    unloaded.append(
                        {"start": addr(m.group("start")), "end": addr(m.group("end")), "name": m.group("name")}
                    )
                    current = None
                    continue
                current = _row(m)
                modules.append(current)
                continue
        if line.startswith("Unloaded modules"):
            in_unloaded = True
            current = None
            continue
        if current is not None and c.isspace():
            # "    Key: value" (plain string split: this runs on every verbose line)
            key, sep, value = line.partition(":")
            if not sep:
                continue
            key = key.strip()
            value = value.strip()
            if not value or not key or len(key) > _MAX_KEY or "\\" in key:
                continue
            current["details"][key] = value
            field = _FIELD_OF.get(key)
            if field is not None and current.get(field) is None:
                current[field] = addr(value) if field in _HEX_FIELDS and _is_hex(value) else value
    if not modules and not unloaded:
        return None
    return ModulesRecord.model_validate({"command": command, "raw": raw, "modules": modules, "unloaded": unloaded})


def _is_hex(text: str) -> bool:
    return all(ch in "0123456789abcdefABCDEF" for ch in text) and bool(text)


def _row(m: re.Match[str]) -> dict[str, Any]:
    """A ``Module`` dict from a row match."""
    row: dict[str, Any] = {
        "start": addr(m.group("start")),
        "end": addr(m.group("end")),
        "name": m.group("name"),
        "details": {},
    }
    status = m.group("status")
    file = m.group("file")
    if m.group("marker"):
        row["marker"] = m.group("marker")
    if status is not None:
        row["symbol_status"] = status.strip().lower()
        if file:
            row["symbol_file"] = file
    elif file:
        # lmf prints the image path where the symbol status would be
        row["image_path"] = file
    return row
