"""The comparison rules of the released sets' checks (``set2/CHECKS.md`` "How values are compared",
set1's README "Label conventions") and the per-item sub-key tables, on records as JSON dicts.
Apart from kdmcp, like the scorer (``tests/parse/released_scorer.py``) that applies them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

Json = dict[str, Any]
Rule = Callable[[Any, Any], bool]  # (expected, the item's field) -> equal
ItemRule = Callable[[Any, Json], bool]  # (expected, the whole item) -> equal


# --------------------------------------------------------------------------- comparison rules (CHECKS.md)

_HEX_RE = re.compile(r"^(?:0x)?[0-9a-f]+$")


def _hex_text(value: Any) -> str:
    return str(value).strip().replace("`", "").lower()


def hex_looking(value: Any) -> bool:
    return value is not None and not isinstance(value, bool) and bool(_HEX_RE.match(_hex_text(value)))


def hex_eq(expected: Any, got: Any) -> bool:
    """HEX: drop backticks, an optional ``0x`` and leading zeros, ignore case, compare as integers."""
    if expected is None or got is None:
        return expected is None and got in (None, "", [])
    a, b = _hex_text(expected), _hex_text(got)
    if not (_HEX_RE.match(a) and _HEX_RE.match(b)):
        return False
    return int(a.removeprefix("0x"), 16) == int(b.removeprefix("0x"), 16)


_OFFSET_RE = re.compile(r"\+0x([0-9a-fA-F]+)")


def canon_sym(value: str) -> str:
    """SYM: each ``+0x<hex>`` offset canonical (``+0x0000000000000068`` == ``+0x68``)."""
    return _OFFSET_RE.sub(lambda m: "+0x" + (m.group(1).lstrip("0").lower() or "0"), value.strip())


def sym_eq(expected: Any, got: Any) -> bool:
    if expected is None:
        return got in (None, "")
    return got is not None and canon_sym(str(expected)) == canon_sym(str(got))


def str_eq(expected: Any, got: Any) -> bool:
    if expected is None:
        return got in (None, "", [])
    return got is not None and str(expected).strip() == str(got).strip()


def ci_eq(expected: Any, got: Any) -> bool:
    if expected is None:
        return got in (None, "", [])
    return got is not None and str(expected).strip().lower() == str(got).strip().lower()


def exact_eq(expected: Any, got: Any) -> bool:
    if expected is None:
        return got in (None, [])
    return bool(expected == got and type(expected) is type(got))


def list_eq(rule: Callable[[Any, Any], bool], expected: Any, got: Any) -> bool:
    if expected is None:
        return not got
    if not isinstance(got, list) or len(got) != len(expected):
        return False
    return all(rule(e, g) for e, g in zip(expected, got, strict=True))


def thread_id_eq(expected: Any, got: Any) -> bool:
    """A thread id ``pid.tid``: split at ``.``, both parts HEX-equal."""
    if got is None:
        return expected is None
    a, b = str(expected).split("."), str(got).split(".")
    return len(a) == len(b) and all(hex_eq(x, y) for x, y in zip(a, b, strict=True))


def _frame_text(frame: Json) -> str:
    if frame.get("call_site"):
        return str(frame["call_site"])
    if frame.get("module") and frame.get("function"):
        offset = f"+{frame['offset']}" if frame.get("offset") else ""
        return f"{frame['module']}!{frame['function']}{offset}"
    return str(frame.get("address") or "")


def frame_sym_eq(expected: Any, frame: Json | None) -> bool:
    """A frame's call site (SYM; a bare address HEX). set1's README: a call site that keeps a
    trailing annotation is compared by prefix."""
    if frame is None:
        return False
    got = _frame_text(frame)
    if hex_looking(expected) and not frame.get("module") and frame.get("address"):
        return hex_eq(expected, frame["address"])
    a, b = canon_sym(str(expected)), canon_sym(got)
    return a == b or b.startswith(a + " ")


def name_eq(expected: Any, symbol: Json) -> bool:
    """NAME: ``name``, or ``module!name``, or ``module!symbol`` (case-sensitive)."""
    name, module, sym = symbol.get("name"), symbol.get("module"), symbol.get("symbol")
    return expected in {name, f"{module}!{name}", f"{module}!{sym}"}


def entry_eq(expected: Any, entry: Json) -> bool:
    """ENTRY: every expected value matches some value of the entry (HEX when both sides look hex,
    else a case-insensitive substring)."""
    values = [v for v in _flat_values(entry)]
    for want in expected.values() if isinstance(expected, dict) else [expected]:
        if not any(
            hex_eq(want, v) if hex_looking(want) and hex_looking(v) else str(want).lower() in str(v).lower()
            for v in values
        ):
            return False
    return True


def _flat_values(node: Any) -> Iterator[str]:
    """Every scalar value inside a dict/list, as text (lists of scalars also as one joined line)."""
    if isinstance(node, dict):
        for value in node.values():
            yield from _flat_values(value)
    elif isinstance(node, list):
        for value in node:
            yield from _flat_values(value)
    elif node is not None and not isinstance(node, bool):
        yield str(node)


def record_strings(record: Json) -> list[str]:
    """values_include: the record's string values other than ``raw``/``command``."""
    return list(_flat_values({k: v for k, v in record.items() if k not in ("raw", "command")}))


def norm_token(value: str) -> str:
    text = value.lower().replace("`", "")
    return text[2:] if text.startswith("0x") else text


# --------------------------------------------------------------------------- sub-key rules per item type

BREAKPOINT = {
    "id": exact_eq,
    "enabled": exact_eq,
    "address": hex_eq,
    "access": ci_eq,
    "size": exact_eq,
    "pass_count": exact_eq,
    "initial_pass_count": exact_eq,
    "thread": str_eq,
    "symbol": sym_eq,
    "command": str_eq,
}
POOL = {"address": hex_eq, "size": hex_eq, "previous_size": hex_eq, "state": ci_eq, "tag": str_eq}
PTE = {"address": hex_eq, "contains": hex_eq, "pfn": hex_eq, "flags": str_eq}
DISPATCH = {"index": exact_eq, "name": str_eq, "address": hex_eq, "symbol": sym_eq}
DEVICE = {"device": hex_eq, "extension": hex_eq, "driver": ci_eq, "name": str_eq, "current": exact_eq}
PROCESS = {"index": exact_eq, "cid": hex_eq, "image": str_eq, "current": exact_eq, "event_process": exact_eq}
_TYPE_FIELD = {"offset": hex_eq, "name": str_eq, "type": str_eq, "bitfield": exact_eq}
_MODULE = {
    "name": str_eq,
    "start": hex_eq,
    "end": hex_eq,
    "checksum": hex_eq,
    "image_size": hex_eq,
    "symbol_status": ci_eq,
    "image_path": str_eq,
    "file_version": str_eq,
    "company_name": str_eq,
    "file_description": str_eq,
}


def item_eq(
    rules: dict[str, Rule], expected: Json, item: Json | None, whole: dict[str, ItemRule] | None = None
) -> bool:
    """Every sub-key of a check on one item: ``rules`` compare the item's field of that name,
    ``whole`` the sub-keys that read more of the item (``major_hex``, ``frames_count``...)."""
    if item is None:
        return False
    whole = whole or {}
    return all(
        whole[key](want, item) if key in whole else rules[key](want, item.get(key)) for key, want in expected.items()
    )


def _major_hex(major: str | None) -> str | None:
    if major is None:
        return None
    m = re.search(r"\(([0-9a-fA-F]+)\)", major)
    return m.group(1) if m else major


def _hex_list(expected: Any, got: Any) -> bool:
    return list_eq(hex_eq, expected, got)


def _hex_or_str(expected: Any, got: Any) -> bool:
    return hex_eq(expected, got) if hex_looking(expected) and hex_looking(got) else str_eq(expected, got)


def _timestamp_eq(expected: Any, got: Any) -> bool:
    """``timestamp`` HEX against the value or its trailing ``(…)`` part."""
    tail = re.search(r"\(([^()]*)\)\s*$", got or "")
    return hex_eq(expected, got) or (tail is not None and hex_eq(expected, tail.group(1)))


def _frame_at(position: int) -> ItemRule:
    def rule(expected: Any, thread: Json) -> bool:
        frames = thread.get("frames") or []
        return bool(frames) and frame_sym_eq(expected, frames[position])

    return rule


IRP = {
    "device": hex_eq,
    "completion_routine": hex_eq,
    "context": hex_eq,
    "driver": ci_eq,
    "completion_symbol": sym_eq,
    "pending": exact_eq,
    "args": _hex_list,
}
IRP_WHOLE: dict[str, ItemRule] = {"major_hex": lambda want, loc: hex_eq(want, _major_hex(loc.get("major")))}
THREAD = {
    **dict.fromkeys(
        ("index", "suspend_count", "priority", "priority_class", "frozen", "current", "event_thread"), exact_eq
    ),
    **dict.fromkeys(("teb", "start_address", "affinity", "address"), hex_eq),
    "start_symbol": sym_eq,
    "state": ci_eq,
}
THREAD_WHOLE: dict[str, ItemRule] = {
    "id": lambda want, t: thread_id_eq(want, t.get("id") or t.get("cid")),
    "frames_count": lambda want, t: want == len(t.get("frames") or []),
    "frame_0": _frame_at(0),
    "frame_last": _frame_at(-1),
}
TYPE_FIELD_ALL = {**_TYPE_FIELD, "value": _hex_or_str}
MODULE_ALL = {**_MODULE, "timestamp": _timestamp_eq}
MEMORY_ROW = {"address": hex_eq, "values": _hex_list, "symbols": lambda e, g: list_eq(sym_eq, e, g)}


_DX_PREFIX = re.compile(r"^\[\+0x[0-9a-fA-F]+(?: \([^)]*\))?\]\s*")


def dx_name(child: Json) -> str:
    return _DX_PREFIX.sub("", child.get("name") or "").strip()


def dx_value(value: str | None) -> str | None:
    if value is None:
        return None
    return re.sub(r"\s*\[Switch To\]", "", value).strip()


# --------------------------------------------------------------------------- picking list items


def pick(items: list[Json], suffix: str) -> Json | None:
    """``_<i>`` is a 0-based position, ``_last`` the last element."""
    if suffix == "last":
        return items[-1] if items else None
    i = int(suffix)
    return items[i] if 0 <= i < len(items) else None


def table_rows(record: Json, typed: tuple[str, ...]) -> list[Json]:
    """Row-table checks look in the record's typed table for the listing, else in ``entries``."""
    for name in typed:
        if record.get(name):
            return list(record[name])
    return list(record.get("entries") or [])


ROW_TABLES = {
    "handle": ("handles",),
    "poolused_row": ("pool_usage",),
    "lock": ("resources", "critical_sections"),
    "heap_row": ("heap_summaries",),
}
COUNT_TABLES = {
    "handles_count": "handle",
    "poolused_rows_count": "poolused_row",
    "locks_count": "lock",
    "heap_rows_count": "heap_row",
}


def all_frames(record: Json) -> list[Json]:
    frames = list(record.get("frames") or [])
    for thread in record.get("threads") or []:
        frames.extend(thread.get("frames") or [])
    return frames
