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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.parse.released_rules import (
    BREAKPOINT,
    COUNT_TABLES,
    DEVICE,
    DISPATCH,
    IRP,
    IRP_WHOLE,
    MEMORY_ROW,
    MODULE_ALL,
    POOL,
    PROCESS,
    PTE,
    ROW_TABLES,
    THREAD,
    THREAD_WHOLE,
    TYPE_FIELD_ALL,
    Json,
    all_frames,
    ci_eq,
    dx_name,
    dx_value,
    entry_eq,
    frame_sym_eq,
    hex_eq,
    hex_looking,
    item_eq,
    list_eq,
    name_eq,
    norm_token,
    pick,
    record_strings,
    str_eq,
    sym_eq,
    table_rows,
    thread_id_eq,
)

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
        return len(all_frames(r)) == want
    if key == "frame0_call_site":
        frames = all_frames(r)
        return bool(frames) and frame_sym_eq(want, frames[0])
    if key == "last_call_site":
        frames = all_frames(r)
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
        return item_eq(BREAKPOINT, want, pick(r.get("breakpoints") or [], key.rsplit("_", 1)[1]))
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
        return bool(children) and dx_name(children[0]) == want
    if key in ("dx_child", "dx_child_links"):
        child = next((c for c in r.get("children") or [] if dx_name(c) == want["name"]), None)
        if child is None:
            return False
        if key == "dx_child_links":
            return all(link in (child.get("links") or []) for link in want["links"])
        ok = "value" not in want or str_eq(want["value"], dx_value(child.get("value")))
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
        return item_eq(POOL, want, hit)
    if key.startswith("pool_block_"):
        return item_eq(POOL, want, pick(r.get("pool_blocks") or [], key.rsplit("_", 1)[1]))
    if key == "pte_levels_count":
        return len(r.get("pte_levels") or []) == want
    if key.startswith("pte_level_"):
        level = key.removeprefix("pte_level_").lower()
        found = next((p for p in r.get("pte_levels") or [] if str(p.get("level", "")).lower() == level), None)
        return item_eq(PTE, want, found)
    if key in COUNT_TABLES:
        return len(table_rows(r, ROW_TABLES[COUNT_TABLES[key]])) == want
    for prefix, tables in ROW_TABLES.items():
        if key.startswith(prefix + "_"):
            entry = pick(table_rows(r, tables), key.removeprefix(prefix + "_"))
            return entry is not None and entry_eq(want, entry)
    if key == "irp_stack_count":
        return len(r.get("irp_stack") or []) == want
    if key == "irp_current_position":
        positions = [i + 1 for i, loc in enumerate(r.get("irp_stack") or []) if loc.get("current")]
        return positions == [want]
    if key == "irp_current":
        current = next((loc for loc in r.get("irp_stack") or [] if loc.get("current")), None)
        return item_eq(IRP, want, current, IRP_WHOLE)
    if key.startswith("irp_location_"):
        n = int(key.removeprefix("irp_location_"))
        stack = r.get("irp_stack") or []
        return 1 <= n <= len(stack) and item_eq(IRP, want, stack[n - 1], IRP_WHOLE)
    if key == "dispatch_routines_count":
        return len(r.get("dispatch_routines") or []) == want
    if key.startswith("dispatch_routine_"):
        return item_eq(DISPATCH, want, pick(r.get("dispatch_routines") or [], key.rsplit("_", 1)[1]))
    if key == "devices_count":
        return len(r.get("devices") or []) == want
    if key == "device_current":
        return item_eq(DEVICE, want, next((d for d in r.get("devices") or [] if d.get("current")), None))
    if key.startswith("device_"):
        return item_eq(DEVICE, want, pick(r.get("devices") or [], key.rsplit("_", 1)[1]))
    if key == "values_include":
        values = [norm_token(v) for v in record_strings(r)]
        return all(any(norm_token(str(t)) in v for v in values) for t in want)
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
        frame = pick(frames, key.removeprefix("frame_"))
        if frame is None:
            return False
        rules = {"module": ci_eq, "function": str_eq, "offset": hex_eq}
        return all(rules[k](v, frame.get(k)) for k, v in want.items())
    if key == "threads_count":
        return len(r.get("threads") or []) == want
    if key.startswith("thread_"):
        return item_eq(THREAD, want, pick(r.get("threads") or [], key.removeprefix("thread_")), THREAD_WHOLE)
    if key == "processes_count":
        return len(r.get("processes") or []) == want
    if key.startswith("process_"):
        return item_eq(PROCESS, want, pick(r.get("processes") or [], key.removeprefix("process_")))
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
        return item_eq(TYPE_FIELD_ALL, want, found)
    if key.startswith("field_"):
        return item_eq(TYPE_FIELD_ALL, want, pick(r.get("fields") or [], key.removeprefix("field_")))
    if key == "memory_unit":
        return str_eq(want, r.get("unit"))
    if key == "rows_count":
        return len(r.get("rows") or []) == want
    if key.startswith("row_"):
        return item_eq(MEMORY_ROW, want, pick(r.get("rows") or [], key.removeprefix("row_")))
    if key == "symbols_count":
        return len(r.get("symbols") or []) == want
    if key in ("ln_first",) or key.startswith("symbol_"):
        suffix = "0" if key == "ln_first" else key.removeprefix("symbol_")
        sym = pick(r.get("symbols") or [], suffix)
        if sym is None:
            return False
        rules = {"address": hex_eq, "signature": str_eq}
        return all(name_eq(v, sym) if k == "name" else rules[k](v, sym.get(k)) for k, v in want.items())
    if key == "ln_exact_names":
        exact = [s for s in r.get("symbols") or [] if s.get("exact") is True]
        return len(exact) == len(want) and all(any(name_eq(n, s) for s in exact) for n in want)
    if key == "modules_count":
        return len(r.get("modules") or []) == want
    if key.startswith("module_"):
        return item_eq(MODULE_ALL, want, pick(r.get("modules") or [], key.removeprefix("module_")))
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
