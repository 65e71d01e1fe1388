"""``lm`` in every spelling: ``lm``, ``lmi``, ``lm k``, ``lm m pat``, ``lmv``, ``lmDvm X``, ``lmf``, ``lmfc``.

One row per module, the verbose block (``lmv``) indented under its row, and an optional
``Unloaded modules:`` section::

    start             end                 module name
    fffff801`63ec0000 fffff801`649a7000   nvlddmkm T (no symbols)
        Loaded symbol image file: nvlddmkm.sys
        Image path: \\SystemRoot\\system32\\DRIVERS\\nvlddmkm.sys
        Timestamp:        Wed Jul  8 15:43:44 2015 (559DA7A0)
    Unloaded modules:
    fffff800`62c80000 fffff800`62c8f000   dump_storport.sys

A row without a ``(status)`` column ends with what the options asked for (the lm page:
"you can include only one of" ``f n p t``, and without one "the display includes the symbol
file name"): the symbol file (plain ``lm``), the image path (``f``), the image name (``n``),
the time stamp (``t``: ``Wed Jun  3 11:37:54 2020 (5ED7EE02)``, ``B785E389 (This is a
reproducible build file hash, not a timestamp)``, ``***** Invalid (F9A3DAA3)``).
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr
from kdmcp.parse.models import ModulesRecord
from kdmcp.parse.partial import partial_row

_HEX = r"[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?"

# "start end name [marker] [(status)] [symbol file | image path]"
MODULE_RE = re.compile(
    r"^(?P<start>" + _HEX + r")\s+(?P<end>" + _HEX + r")\s+(?P<name>\S+)"
    r"(?:\s+(?P<marker>[A-Z#*]{1,2})(?=\s+\())?"
    r"(?:\s+\((?P<status>[^)]*)\))?"
    r"(?:\s+(?P<file>\S.*))?$"
)

# A row by its start (an address column, then a blank or the line's end), whatever follows: one
# MODULE_RE does not read is kept as a partial module (kdmcp/parse/partial.py).
_PARTIAL_ROW_RE = re.compile(r"^(?P<start>" + _HEX + r")(?:\s+(?P<end>" + _HEX + r")(?=\s|$))?(?=\s|$)")

# A date stamp as lm prints it: "Wed Jun  3 11:37:54 2020" (always 24 characters).
_DATE_RE = re.compile(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}")
_DATE_LEN = 24

# What kd prints in the parentheses after a /Brepro image's hash instead of the date.
_BREPRO_NOTE = "This is a reproducible build file hash, not a timestamp"

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
    options = _lm_options(command)
    match_row = MODULE_RE.match
    find = raw.find
    for start in starts:
        end = find("\n", start)
        if end < 0:
            end = len(raw)
        line = raw[start:end].rstrip()
        m = match_row(line) if line[0] in "0123456789abcdefABCDEF" else None
        if m is None and not line.startswith("Unloaded modules"):
            p = _PARTIAL_ROW_RE.match(line) if not in_unloaded else None
            if p is None:
                continue  # hex text that is not a row: ignored, the section goes on
            if current is not None:
                _add_verbose(current, _VERBOSE_PAIR_RE.findall(raw, section, start))
            end_column = addr(p.group("end")) if p.group("end") else ""
            current = partial_row(line, start=addr(p.group("start")), end=end_column, name="", details={})
            modules.append(current)
            section = end
            continue
        if current is not None:
            _add_verbose(current, _VERBOSE_PAIR_RE.findall(raw, section, start))
            current = None
        if m is None:
            in_unloaded = True
        elif in_unloaded:
            unloaded.append({"start": addr(m.group("start")), "end": addr(m.group("end")), "name": m.group("name")})
        else:
            current = _row(m, options)
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


def _lm_options(command: str) -> frozenset[str]:
    """The option letters of an ``lm`` command (``lm ksmf`` -> k, f; ``lmDvmX`` -> D, v).

    Reading stops at ``m``/``M``/``a``, which take a pattern or an address; ``sm`` (sort)
    and ``1m`` (names only) are two-letter options. The letters decide what the last
    column of a status-less row is: ``lm`` and ``lm f`` print different files there.
    """
    letters: set[str] = set()
    at = command.lower().find("lm")
    text = command[at + 2 :] if at >= 0 else ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "s1" and text[i + 1 : i + 2] == "m":
            i += 2
            continue
        if ch in "mMa":
            break
        if not ch.isspace():
            letters.add(ch)
        i += 1
    return frozenset(letters)


def _split_timestamp(text: str) -> tuple[str, str | None]:
    """(what precedes it, time stamp) of a row's last column, when it ends with one.

    ``lm t`` prints the stamp as the verbose block's ``Timestamp:`` does: a date, a
    /Brepro hash, or ``***** Invalid``, each followed by ``(hex)`` or the hash note.
    """
    if not text.endswith(")"):
        return text, None
    paren = text.rfind(" (")
    if paren < 0:
        return text, None
    inner = text[paren + 2 : -1]
    head = text[:paren].rstrip()
    words = head.split()
    if inner == _BREPRO_NOTE and words:
        start = len(head) - len(words[-1])  # the hash word
    elif len(inner) != 8 or not _is_hex(inner):
        return text, None
    elif _DATE_RE.fullmatch(head[-_DATE_LEN:]):
        start = len(head) - _DATE_LEN
    elif len(words) >= 2 and words[-1] == "Invalid" and set(words[-2]) == {"*"}:
        start = head.rfind(words[-2])
    else:
        return text, None
    return head[:start].rstrip(), text[start:]


def _row(m: re.Match[str], options: frozenset[str]) -> dict[str, Any]:
    """A ``Module`` dict from a row match; ``options`` from ``_lm_options``."""
    row: dict[str, Any] = {
        "start": addr(m.group("start")),
        "end": addr(m.group("end")),
        "name": m.group("name"),
        "details": {},
    }
    status = m.group("status")
    file = m.group("file")
    if file and "c" in options:
        file = _split_checksum(row, file)
    if m.group("marker"):
        row["marker"] = m.group("marker")
    if status is not None:
        row["symbol_status"] = status.strip().lower()
        if file:
            row["symbol_file"] = file
    elif file:
        rest, timestamp = _split_timestamp(file)
        if timestamp is None and "t" in options:
            rest, timestamp = _split_inner_timestamp(file)
        if timestamp is not None:
            row["timestamp"] = timestamp
        if rest:
            row[_statusless_field(options)] = rest
    return row


def _split_inner_timestamp(text: str) -> tuple[str, str]:
    """(the other column, time stamp) of an ``lm t`` row whose stamp is not last: with a
    second column option (``lm tn``) the stamp comes first and the image name after it. The
    first ``)`` that closes a stamp ends it; a row with no stamp at all is all stamp, as
    ``lm t`` asked for one."""
    close = text.find(")")
    while close >= 0:
        head, stamp = _split_timestamp(text[: close + 1])
        if stamp is not None:
            return " ".join(part for part in (head, text[close + 1 :].strip()) if part), stamp
        close = text.find(")", close + 1)
    return "", text


def _split_checksum(row: dict[str, Any], file: str) -> str | None:
    """``lm c`` ends each row with the image checksum, after the path or symbol file
    (``lmfc``: ``kernel32 C:\\Windows\\system32\\kernel32.dll 00127A43``, nixawk's lm notes):
    the last word, when it is eight hex digits, is the checksum; what precedes it the file."""
    head, _, last = file.rpartition(" ")
    if len(last) != 8 or not _is_hex(last):
        return file
    row["checksum"] = addr(last)
    return head.rstrip() or None


def _statusless_field(options: frozenset[str]) -> str:
    """The field of a status-less row's last column (other than a time stamp): what the
    options asked kd to print there. Plain ``lm`` prints a module's symbol file without a
    status when its symbols are loaded (``serenum      e:\\mysymbols\\SereEnum.pdb\\.......``)."""
    if "f" in options:
        return "image_path"
    if "n" in options:
        return "image_name"
    return "symbol_file"
