"""What the object extensions share: the generic key/value line readers and the handler type.

Many extensions print ``Key: value`` or ``Key     value`` lines; ``kv_fields`` folds them into
``fields`` (first occurrence wins), and ``generic_fields`` is the whole reading of an extension
that prints nothing else (``!vm``, and every extension without its own reader).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

ADDR = r"[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?"

# Generic "Key: value" (value non-empty) and "Key     value" (no colon, 2+ blanks) lines.
KV_RE = re.compile(r"^\s*(?P<key>[A-Za-z][\w.\[\]()/-]*(?: [\w.\[\]()/-]+)*)\s*:\s*(?P<value>\S.*)$")
KV_SPACED_RE = re.compile(r"^\s*(?P<key>[A-Za-z][\w.\[\]]*(?: [A-Za-z][\w.]*)*)\s{2,}(?P<value>\S.*)$")
# Inline "Key:value" pairs (!apic): "ID:d (80050010)  LogDesc:28000000  DestFmt:0fffffff"
INLINE_PAIR_RE = re.compile(r"(?P<key>[A-Za-z][\w.]*(?: Cmd)?):\s*(?P<value>[^\s]+)")

Handler = Callable[[list[str], dict[str, Any]], None]

# What any extension prints when it cannot read or resolve something, at a line's start: symbol
# loading ("*** ERROR: Module load completed but symbols could not be loaded for foo.sys",
# "*** WARNING: Unable to verify checksum"), "Unable to get PXE …", "Could not read …",
# "ReadMemory error for address …", "ERROR: …", "Cannot …". A warning, never a table row; a
# banner of stars ("****…  NT HEAP STATS BELOW") is not one.
COMPLAINT = r"\*\*\* |Unable to\b|Could not\b|Cannot\b|Can't\b|Error\b|ERROR:|WARNING\b|ReadMemory error|Invalid "


def complaint_re(*own: str) -> re.Pattern[str]:
    """The complaint lines of one extension: the shared ``COMPLAINT`` heads and its ``own``."""
    return re.compile(r"^\s*(?:" + "|".join((COMPLAINT, *own)) + ")")


def kv_fields(lines: list[str], out: dict[str, Any]) -> None:
    """Fold generic key/value lines into ``out['fields']`` (first occurrence wins)."""
    fields: dict[str, str] = out["fields"]
    for line in lines:
        m = KV_RE.match(line)
        if m is None:
            m = KV_SPACED_RE.match(line)
        if m is not None:
            fields.setdefault(m.group("key").strip(), m.group("value"))


def generic_fields(lines: list[str], out: dict[str, Any]) -> None:
    """The reading of an extension without a reader of its own: its key/value lines."""
    kv_fields(lines, out)
