"""The scorer of the released evaluation sets (``fixtures/released/``), independent of kdmcp.

The two sets are real debugger output with the facts a right parse yields, written by people who
read the samples: ``set1/expected.json`` (its keys are described in ``set1/README.md``, "Label
conventions") and ``set2/cases.json`` (its keys in ``set2/CHECKS.md``). This module implements
those descriptions and nothing of kdmcp: a parse is handed in as two callables that return
records as JSON dicts (``model_dump(mode="json")``), so the rules cannot drift toward what the
parser happens to print.

Points: a sample's ``kind`` (when the set gives one) is one point, and every check key is one
point (a key whose value is a dict or list passes when every comparison in it holds). The score
of a set is points passed over points checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Json = dict[str, Any]
ParseFn = Callable[[str, str], Json]  # (command, output) -> record dict
TranscriptFn = Callable[[str], list[tuple[str | None, Json]]]  # text -> [(command or None, record)]

RELEASED = Path(__file__).resolve().parents[2] / "fixtures" / "released"
REPO_ROOT_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@dataclass
class Miss:
    file: str
    key: str
    expected: Any
    got: Any


@dataclass
class SetScore:
    name: str
    samples: int = 0
    points: int = 0
    passed: int = 0
    misses: list[Miss] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100.0 * self.passed / self.points if self.points else 100.0

    def line(self) -> str:
        return (
            f"{self.name}: {self.passed}/{self.points} points = {self.percent:.1f} % over {self.samples} samples"
            f", {len(self.crashes)} crashes"
        )


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


def _name_eq(expected: Any, symbol: Json) -> bool:
    """NAME: ``name``, or ``module!name``, or ``module!symbol`` (case-sensitive)."""
    name, module, sym = symbol.get("name"), symbol.get("module"), symbol.get("symbol")
    return expected in {name, f"{module}!{name}", f"{module}!{sym}"}


def _entry_eq(expected: Any, entry: Json) -> bool:
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


def _record_strings(record: Json) -> list[str]:
    """values_include: the record's string values other than ``raw``/``command``."""
    return list(_flat_values({k: v for k, v in record.items() if k not in ("raw", "command")}))


def _norm_token(value: str) -> str:
    text = value.lower().replace("`", "")
    return text[2:] if text.startswith("0x") else text


# --------------------------------------------------------------------------- sub-key rules per item type

_BREAKPOINT = {
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
_POOL = {"address": hex_eq, "size": hex_eq, "previous_size": hex_eq, "state": ci_eq, "tag": str_eq}
_PTE = {"address": hex_eq, "contains": hex_eq, "pfn": hex_eq, "flags": str_eq}
_DISPATCH = {"index": exact_eq, "name": str_eq, "address": hex_eq, "symbol": sym_eq}
_DEVICE = {"device": hex_eq, "extension": hex_eq, "driver": ci_eq, "name": str_eq, "current": exact_eq}
_PROCESS = {"index": exact_eq, "cid": hex_eq, "image": str_eq, "current": exact_eq, "event_process": exact_eq}
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


def _item_eq(rules: dict[str, Callable[[Any, Any], bool]], expected: Json, item: Json | None) -> bool:
    if item is None:
        return False
    return all(rules[key](want, item.get(key)) for key, want in expected.items())


def _major_hex(major: str | None) -> str | None:
    if major is None:
        return None
    m = re.search(r"\(([0-9a-fA-F]+)\)", major)
    return m.group(1) if m else major


def _irp_eq(expected: Json, loc: Json | None) -> bool:
    if loc is None:
        return False
    for key, want in expected.items():
        got = loc.get(key)
        if key == "major_hex":
            ok = hex_eq(want, _major_hex(loc.get("major")))
        elif key in ("device", "completion_routine", "context"):
            ok = hex_eq(want, got)
        elif key == "driver":
            ok = ci_eq(want, got)
        elif key == "completion_symbol":
            ok = sym_eq(want, got)
        elif key == "pending":
            ok = exact_eq(want, got)
        else:  # args
            ok = list_eq(hex_eq, want, got)
        if not ok:
            return False
    return True


def _thread_eq(expected: Json, thread: Json | None) -> bool:
    if thread is None:
        return False
    for key, want in expected.items():
        got = thread.get(key)
        if key == "id":
            ok = thread_id_eq(want, thread.get("id") or thread.get("cid"))
        elif key in ("index", "suspend_count", "priority", "priority_class"):
            ok = exact_eq(want, got)
        elif key in ("teb", "start_address", "affinity", "address"):
            ok = hex_eq(want, got)
        elif key in ("frozen", "current", "event_thread"):
            ok = exact_eq(want, got)
        elif key == "start_symbol":
            ok = sym_eq(want, got)
        elif key == "state":
            ok = ci_eq(want, got)
        elif key == "frames_count":
            ok = want == len(thread.get("frames") or [])
        else:  # frame_0 / frame_last
            frames = thread.get("frames") or []
            ok = bool(frames) and frame_sym_eq(want, frames[0] if key == "frame_0" else frames[-1])
        if not ok:
            return False
    return True


def _type_field_eq(expected: Json, item: Json | None) -> bool:
    if item is None:
        return False
    for key, want in expected.items():
        got = item.get(key)
        if key == "value":
            ok = hex_eq(want, got) if hex_looking(want) and hex_looking(got) else str_eq(want, got)
        else:
            ok = _TYPE_FIELD[key](want, got)
        if not ok:
            return False
    return True


def _module_eq(expected: Json, module: Json | None) -> bool:
    if module is None:
        return False
    for key, want in expected.items():
        got = module.get(key)
        if key == "timestamp":
            tail = re.search(r"\(([^()]*)\)\s*$", got or "")
            ok = hex_eq(want, got) or (tail is not None and hex_eq(want, tail.group(1)))
        else:
            ok = _MODULE[key](want, got)
        if not ok:
            return False
    return True


def _memory_row_eq(expected: Json, row: Json | None) -> bool:
    if row is None:
        return False
    rules = {
        "address": hex_eq,
        "values": lambda e, g: list_eq(hex_eq, e, g),
        "symbols": lambda e, g: list_eq(sym_eq, e, g),
    }
    return all(rules[k](v, row.get(k)) for k, v in expected.items())


_DX_PREFIX = re.compile(r"^\[\+0x[0-9a-fA-F]+(?: \([^)]*\))?\]\s*")


def _dx_name(child: Json) -> str:
    return _DX_PREFIX.sub("", child.get("name") or "").strip()


def _dx_value(value: str | None) -> str | None:
    if value is None:
        return None
    return re.sub(r"\s*\[Switch To\]", "", value).strip()


# --------------------------------------------------------------------------- picking list items


def _pick(items: list[Json], suffix: str) -> Json | None:
    """``_<i>`` is a 0-based position, ``_last`` the last element."""
    if suffix == "last":
        return items[-1] if items else None
    i = int(suffix)
    return items[i] if 0 <= i < len(items) else None


def _rows(record: Json, typed: tuple[str, ...]) -> list[Json]:
    """Row-table checks look in the record's typed table for the listing, else in ``entries``."""
    for name in typed:
        if record.get(name):
            return list(record[name])
    return list(record.get("entries") or [])


_ROW_TABLES = {
    "handle": ("handles",),
    "poolused_row": ("pool_usage",),
    "lock": ("resources", "critical_sections"),
    "heap_row": ("heap_summaries",),
}
_COUNT_TABLES = {
    "handles_count": "handle",
    "poolused_rows_count": "poolused_row",
    "locks_count": "lock",
    "heap_rows_count": "heap_row",
}


def _all_frames(record: Json) -> list[Json]:
    frames = list(record.get("frames") or [])
    for thread in record.get("threads") or []:
        frames.extend(thread.get("frames") or [])
    return frames


# --------------------------------------------------------------------------- one check


def check(key: str, want: Any, record: Json, blocks: list[tuple[str | None, Json]] | None = None) -> bool:
    """Whether ``record`` (and the file's prompt blocks, for set1's block keys) meets one check."""
    r = record
    # ---- set1 (README "Label conventions")
    if key == "blocks_count":
        return len([b for b in blocks or [] if b[0] is not None]) == want
    if key == "commands":
        return [(c or "").strip() for c, _ in blocks or [] if c is not None] == want
    if key == "frames_count" and r.get("kind") == "stack":
        return len(_all_frames(r)) == want
    if key == "frame0_call_site":
        frames = _all_frames(r)
        return bool(frames) and frame_sym_eq(want, frames[0])
    if key == "last_call_site":
        frames = _all_frames(r)
        return bool(frames) and frame_sym_eq(want, frames[-1])
    if key in ("module_name", "image_name", "process_name", "failure_bucket_id"):
        return str_eq(want, r.get(key))
    if key == "bugcheck_code":
        return hex_eq(want, (r.get("bugcheck") or {}).get("code"))
    if key == "bugcheck_args":
        return list_eq(hex_eq, want, (r.get("bugcheck") or {}).get("args"))
    if key == "exception_code" and r.get("kind") == "analysis":
        return hex_eq(want, (r.get("exception") or {}).get("code"))
    if key == "module_names_include":
        names = [m.get("name") for m in r.get("modules") or []]
        return all(n in names for n in want)
    if key == "instructions_count":
        return len(r.get("instructions") or []) == want
    if key == "first_mnemonic":
        ins = r.get("instructions") or []
        return bool(ins) and str_eq(want, ins[0].get("mnemonic"))
    if key == "first_address":
        ins = r.get("instructions") or []
        return bool(ins) and hex_eq(want, ins[0].get("address"))
    if key == "error_category":
        return r.get("kind") == "error" and str_eq(want, r.get("category"))
    if key == "process_images_include":
        images = [p.get("image") for p in r.get("processes") or []]
        return all(i in images for i in want)
    if key == "first_row_address":
        rows = r.get("rows") or []
        return bool(rows) and hex_eq(want, rows[0].get("address"))
    if key == "first_row_values":
        rows = r.get("rows") or []
        return bool(rows) and list_eq(hex_eq, want, rows[0].get("values"))
    # ---- set2 (CHECKS.md "Keys")
    if key == "breakpoints_count":
        return len(r.get("breakpoints") or []) == want
    if key.startswith("breakpoint_"):
        return _item_eq(_BREAKPOINT, want, _pick(r.get("breakpoints") or [], key.rsplit("_", 1)[1]))
    if key == "dx_value":
        return str_eq(want, r.get("value"))
    if key == "dx_type":
        return str_eq(want, r.get("type"))
    if key == "dx_children_count":
        return len(r.get("children") or []) == want
    if key == "dx_top_children_count":
        return len([c for c in r.get("children") or [] if c.get("depth") == 1]) == want
    if key == "dx_first_field":
        children = r.get("children") or []
        return bool(children) and _dx_name(children[0]) == want
    if key in ("dx_child", "dx_child_links"):
        child = next((c for c in r.get("children") or [] if _dx_name(c) == want["name"]), None)
        if child is None:
            return False
        if key == "dx_child_links":
            return all(link in (child.get("links") or []) for link in want["links"])
        ok = "value" not in want or str_eq(want["value"], _dx_value(child.get("value")))
        return ok and ("type" not in want or str_eq(want["type"], child.get("type")))
    if key == "object_type":
        return str_eq(want, r.get("object_type"))
    if key == "object_address":
        return hex_eq(want, r.get("address"))
    if key == "object_name":
        return ci_eq(want, r.get("name"))
    if key == "pool_blocks_count":
        return len(r.get("pool_blocks") or []) == want
    if key == "pool_hit":
        hit = next((b for b in r.get("pool_blocks") or [] if b.get("contains_address")), None)
        return _item_eq(_POOL, want, hit)
    if key.startswith("pool_block_"):
        return _item_eq(_POOL, want, _pick(r.get("pool_blocks") or [], key.rsplit("_", 1)[1]))
    if key == "pte_levels_count":
        return len(r.get("pte_levels") or []) == want
    if key.startswith("pte_level_"):
        level = key.removeprefix("pte_level_").lower()
        found = next((p for p in r.get("pte_levels") or [] if str(p.get("level", "")).lower() == level), None)
        return _item_eq(_PTE, want, found)
    if key in _COUNT_TABLES:
        return len(_rows(r, _ROW_TABLES[_COUNT_TABLES[key]])) == want
    for prefix, tables in _ROW_TABLES.items():
        if key.startswith(prefix + "_"):
            entry = _pick(_rows(r, tables), key.removeprefix(prefix + "_"))
            return entry is not None and _entry_eq(want, entry)
    if key == "irp_stack_count":
        return len(r.get("irp_stack") or []) == want
    if key == "irp_current_position":
        positions = [i + 1 for i, loc in enumerate(r.get("irp_stack") or []) if loc.get("current")]
        return positions == [want]
    if key == "irp_current":
        return _irp_eq(want, next((loc for loc in r.get("irp_stack") or [] if loc.get("current")), None))
    if key.startswith("irp_location_"):
        n = int(key.removeprefix("irp_location_"))
        stack = r.get("irp_stack") or []
        return 1 <= n <= len(stack) and _irp_eq(want, stack[n - 1])
    if key == "dispatch_routines_count":
        return len(r.get("dispatch_routines") or []) == want
    if key.startswith("dispatch_routine_"):
        return _item_eq(_DISPATCH, want, _pick(r.get("dispatch_routines") or [], key.rsplit("_", 1)[1]))
    if key == "devices_count":
        return len(r.get("devices") or []) == want
    if key == "device_current":
        return _item_eq(_DEVICE, want, next((d for d in r.get("devices") or [] if d.get("current")), None))
    if key.startswith("device_"):
        return _item_eq(_DEVICE, want, _pick(r.get("devices") or [], key.rsplit("_", 1)[1]))
    if key == "values_include":
        values = [_norm_token(v) for v in _record_strings(r)]
        return all(any(_norm_token(str(t)) in v for v in values) for t in want)
    if key == "field_first_token":
        fields = {k.strip().lower(): v for k, v in (r.get("fields") or {}).items()}
        for name, expected in want.items():
            value = fields.get(name.strip().lower())
            token = value.split()[0] if value and value.split() else None
            if token is None or not (hex_eq(expected, token) if hex_looking(expected) else str_eq(expected, token)):
                return False
        return True
    if key == "warnings_or_errors_include":
        warnings = [w.lower() for w in r.get("warnings") or []]
        return all(any(s.lower() in w for w in warnings) for s in want)
    if key == "warnings_count_min":
        return len(r.get("warnings") or []) >= want
    if key == "frames_count":  # ObjectRecord.frames (!heap -p -a)
        return len(r.get("frames") or []) == want
    if key in ("frame_0", "frame_last"):
        frames = r.get("frames") or []
        frame = _pick(frames, key.removeprefix("frame_"))
        if frame is None:
            return False
        rules = {"module": ci_eq, "function": str_eq, "offset": hex_eq}
        return all(rules[k](v, frame.get(k)) for k, v in want.items())
    if key == "threads_count":
        return len(r.get("threads") or []) == want
    if key.startswith("thread_"):
        return _thread_eq(want, _pick(r.get("threads") or [], key.removeprefix("thread_")))
    if key == "processes_count":
        return len(r.get("processes") or []) == want
    if key.startswith("process_"):
        return _item_eq(_PROCESS, want, _pick(r.get("processes") or [], key.removeprefix("process_")))
    if key == "exception_code":
        return hex_eq(want, r.get("code"))
    if key in ("exception_address", "exception_flags", "exception_access_address"):
        return hex_eq(want, r.get(key.removeprefix("exception_")))
    if key == "exception_symbol":
        return sym_eq(want, r.get("symbol"))
    if key == "exception_parameters":
        return list_eq(hex_eq, want, r.get("parameters"))
    if key == "exception_access":
        return ci_eq(want, r.get("access"))
    if key == "exception_description":
        return str_eq(want, r.get("description"))
    if key == "exception_thread":
        return thread_id_eq(want, r.get("thread"))
    if key == "exception_first_chance":
        return r.get("first_chance") is want
    if key == "registers":
        regs = r.get("registers") or {}
        return all(name in regs and hex_eq(value, regs[name]) for name, value in want.items())
    if key == "current_symbol":
        return sym_eq(want, r.get("symbol"))
    if key == "current_address":
        return hex_eq(want, r.get("address"))
    if key == "current_mnemonic":
        return str_eq(want, r.get("mnemonic"))
    if key == "memory_reference":
        ref = r.get("memory_reference") or {}
        return hex_eq(want["address"], ref.get("address")) and str_eq(want["value"], ref.get("value"))
    if key == "type_name":
        return ci_eq(want, r.get("type_name"))
    if key == "instance":
        return r.get("instance") is want
    if key == "fields_count":
        return len(r.get("fields") or []) == want
    if key == "field":
        found = next((f for f in r.get("fields") or [] if f.get("name") == want["name"]), None)
        return _type_field_eq(want, found)
    if key.startswith("field_"):
        return _type_field_eq(want, _pick(r.get("fields") or [], key.removeprefix("field_")))
    if key == "memory_unit":
        return str_eq(want, r.get("unit"))
    if key == "rows_count":
        return len(r.get("rows") or []) == want
    if key.startswith("row_"):
        return _memory_row_eq(want, _pick(r.get("rows") or [], key.removeprefix("row_")))
    if key == "symbols_count":
        return len(r.get("symbols") or []) == want
    if key in ("ln_first",) or key.startswith("symbol_"):
        suffix = "0" if key == "ln_first" else key.removeprefix("symbol_")
        sym = _pick(r.get("symbols") or [], suffix)
        if sym is None:
            return False
        rules = {"address": hex_eq, "signature": str_eq}
        return all(_name_eq(v, sym) if k == "name" else rules[k](v, sym.get(k)) for k, v in want.items())
    if key == "ln_exact_names":
        exact = [s for s in r.get("symbols") or [] if s.get("exact") is True]
        return len(exact) == len(want) and all(any(_name_eq(n, s) for s in exact) for n in want)
    if key == "modules_count":
        return len(r.get("modules") or []) == want
    if key.startswith("module_"):
        return _module_eq(want, _pick(r.get("modules") or [], key.removeprefix("module_")))
    raise KeyError(f"no rule for check key {key!r}")


# --------------------------------------------------------------------------- the sets


def _crashed(record: Json) -> bool:
    return any(str(w).startswith("parser error") for w in record.get("warnings") or [])


def _score_sample(
    score: SetScore,
    file: str,
    kind: str | None,
    checks: Json,
    record: Json,
    blocks: list[tuple[str | None, Json]] | None,
) -> None:
    score.samples += 1
    if _crashed(record) or any(_crashed(b) for _, b in blocks or []):
        score.crashes.append(file)
    items = ([("kind", kind)] if kind is not None else []) + list(checks.items())
    for key, want in items:
        score.points += 1
        ok = record.get("kind") == want if key == "kind" else check(key, want, record, blocks)
        if ok:
            score.passed += 1
        else:
            score.misses.append(Miss(file, key, want, _got(key, record)))


def _got(key: str, record: Json) -> Any:
    """A short view of what the record holds for a missed key (for the report only)."""
    if key == "kind":
        return record.get("kind")
    return {k: v for k, v in record.items() if k not in ("raw", "command") and v not in (None, [], {}, "")}


def score_set1(parse_transcript: TranscriptFn, root: Path = RELEASED / "set1") -> SetScore:
    """set1: each file is a transcript (or a prompt-less block); ``command`` names the block the
    checks describe (its first block with that command; ``null``: the text before any prompt)."""
    score = SetScore("set1")
    for case in json.loads((root / "expected.json").read_text(encoding="utf-8")):
        text = (root / case["file"]).read_bytes().decode("utf-8")
        blocks = parse_transcript(text)
        want = case["command"]
        focus = next(
            (rec for cmd, rec in blocks if (cmd is None if want is None else cmd is not None and cmd.strip() == want)),
            {"kind": None, "raw": text},
        )
        _score_sample(score, case["file"], case["kind"], case["checks"], focus, blocks)
    return score


def score_set2(parse: ParseFn, root: Path = RELEASED / "set2") -> SetScore:
    """set2: each file is one prompt line (prompt + command as typed) and the command's output."""
    score = SetScore("set2")
    for case in json.loads((root / "cases.json").read_text(encoding="utf-8")):
        raw = (root / case["file"]).read_bytes().decode("utf-8")
        newline = raw.index("\n") + 1
        record = parse(case["command"], raw[newline:])
        _score_sample(score, case["file"], case["kind"], case["checks"], record, None)
    return score
