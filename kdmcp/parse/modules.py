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

from kdmcp.parse._text import addr
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


# A line that may open a section: a row (first character hex) or "Unloaded modules". Only
# these lines are read one by one; the "\n" prefix lets the engine skip to line starts fast
# (the first line is checked on its own).
_SECTION_START = r"(?:[0-9a-fA-F]|Unloaded modules)"
_SECTION_START_RE = re.compile(_SECTION_START)
_NEXT_SECTION_START_RE = re.compile(r"\n" + _SECTION_START)

# "    Key: value" under a row, read the way a line-by-line reader would: a line starting
# with a blank, split at its first colon, key and value stripped of blanks; lines with an
# empty key or value, a key longer than _MAX_KEY or holding a backslash are not pairs.
# Lookarounds instead of optional groups keep it cheap: it runs on every verbose line.
_VERBOSE_PAIR_RE = re.compile(
    r"\n[^\S\n]+"  # the line break, then leading blanks (at least one)
    r"(?=[^\s:\\])(?P<key>[^:\n\\]{1," + str(_MAX_KEY) + r"}(?<!\s))"  # no colon or backslash, no blank at its ends
    r"[^\S\n]*:[^\S\n]*"
    r"(?P<value>\S[^\n]*(?<!\s))"  # the rest of the line, no blank at its ends
)


def parse_modules(command: str, raw: str) -> ModulesRecord | None:
    """A ``ModulesRecord``, or ``None`` if no module row is present.

    Rows and the ``Unloaded modules`` line split the output into sections; the verbose
    pairs of a row's section are read in one scan (``_VERBOSE_PAIR_RE.findall``).
    """
    modules: list[dict[str, Any]] = []
    unloaded: list[dict[str, str]] = []
    in_unloaded = False
    current: dict[str, Any] | None = None
    section = 0  # where the current row's verbose lines start
    starts = [0] if _SECTION_START_RE.match(raw) else []
    starts += [m.start() + 1 for m in _NEXT_SECTION_START_RE.finditer(raw)]
    match_row = MODULE_RE.match
    find = raw.find
    for start in starts:
        end = find("\n", start)
        if end < 0:
            end = len(raw)
        line = raw[start:end].rstrip()
        m = match_row(line) if line[0] in "0123456789abcdefABCDEF" else None
        if m is None and not line.startswith("Unloaded modules"):
            continue  # hex text that is not a row: ignored, the section goes on
        if current is not None:
            _add_verbose(current, _VERBOSE_PAIR_RE.findall(raw, section, start))
            current = None
        if m is None:
            in_unloaded = True
        elif in_unloaded:
            unloaded.append({"start": addr(m.group("start")), "end": addr(m.group("end")), "name": m.group("name")})
        else:
            current = _row(m)
            modules.append(current)
            section = end
    if current is not None:
        _add_verbose(current, _VERBOSE_PAIR_RE.findall(raw, section))
    if not modules and not unloaded:
        return None
    return ModulesRecord.model_validate({"command": command, "raw": raw, "modules": modules, "unloaded": unloaded})


def _add_verbose(module: dict[str, Any], pairs: list[tuple[str, str]]) -> None:
    """Fold a row's verbose ``(key, value)`` pairs into it: every pair into ``details`` (the
    last of a repeated key wins), the first of each typed key into its field."""
    if not pairs:
        return
    module["details"].update(pairs)
    for key, value in pairs:
        field = _FIELD_OF.get(key)
        if field is not None and module.get(field) is None:
            module[field] = addr(value) if field in _HEX_FIELDS and _is_hex(value) else value


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
