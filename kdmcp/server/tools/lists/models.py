"""What ``walk_list`` and ``handles`` return (issue 16): a list's entries, a handle table's rows.

Both read more than a text block should carry (a list of 1024 entries, a System process with
thousands of handles): the text block is one line per row returned, kd's own output stays
readable by ``output_id``. Fields usually absent default to ``None``/``False``/empty so
``structuredContent`` leaves them out (docs/results.md, "Economy").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kdmcp.server.models import TypedResult
from kdmcp.validation import LazyModel

__all__ = ["HandleRow", "HandlesResult", "ListEntry", "StopReason", "WalkListResult"]

# complete: back at the head; limit: `limit` entries read; loop: a node seen before that is not
# the head; unreadable: a node (or the head) kd could not read; null: a Flink of 0.
StopReason = Literal["complete", "limit", "loop", "unreadable", "null"]


class ListEntry(LazyModel):
    index: int
    entry: str = Field(description="the structure's address (the node minus the link field's offset)")
    fields: dict[str, str] = Field(default_factory=dict, description="chosen field -> value as dt printed it")
    unreadable: bool = Field(default=False, description="kd could not read it: the walk stopped here")
    bad_blink: str | None = Field(
        default=None, description="its Blink, where that does not point back at the previous node (corruption)"
    )


class WalkListResult(TypedResult):
    head: str = Field(description="the list head's address")
    link_offset: str = Field(description="the link field's offset in the type")
    stopped: StopReason
    next: str | None = Field(default=None, description="limit, loop: the Flink not followed")
    bad_head_blink: str | None = Field(
        default=None, description="complete: the head's Blink, where it is not the last node"
    )
    round_trips: int = Field(description="kd commands the walk ran")
    entries: list[ListEntry] = Field(default_factory=list)

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        entries = data.get("entries", [])
        count = f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'}"
        at = f" at {data['next']}" if "next" in data else ""
        head = (
            f"{count} from {data['head']} (link +{data['link_offset']}), stopped: {data['stopped']}{at}, "
            f"{data['round_trips']} kd commands"
        )
        lines = [head]
        if "bad_head_blink" in data:
            lines.append(f"head Blink {data['bad_head_blink']} is not the last node")
        for e in entries:
            row = [f"{e['index']:>4} {e['entry']}", *(f"{k}={v}" for k, v in e.get("fields", {}).items())]
            if e.get("unreadable"):
                row.append("unreadable")
            if "bad_blink" in e:
                row.append(f"bad Blink {e['bad_blink']}")
            lines.append(" ".join(row))
        return lines


class HandleRow(LazyModel):
    handle: str = Field(description="the handle value")
    type: str | None = Field(default=None, description="the object's type (Event, File, Key, Process…)")
    access: str | None = Field(default=None, description="GrantedAccess")
    object: str | None = None
    name: str | None = None
    flags: list[str] = Field(default_factory=list, description="Protected, Inherit, Audit")
    process: str | None = Field(default=None, description="the EPROCESS holding it, when several were listed")
    free: bool = False


class HandlesResult(TypedResult):
    process: str | None = Field(default=None, description="the EPROCESS whose table was read (the first)")
    image: str | None = None
    total: int = Field(description="handles kd listed (rows hold at most limit of them)")
    by_process: dict[str, int] = Field(default_factory=dict,
                                       description="several processes' tables: EPROCESS -> its handles, most first")
    handles: list[HandleRow] = Field(default_factory=list)
    types: dict[str, int] = Field(default_factory=dict, description="user mode: every handle counted by its type")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        rows = data.get("handles", [])
        owners = data.get("by_process", {})
        where = " ".join(str(data[k]) for k in ("process", "image") if k in data)
        if owners:
            where = f"{len(owners)} processes"
        lines = [
            f"{len(rows)} of {data['total']} handles"
            + (f" of {where}" if where else "")
            + f"; kd's output: read_output output_id={data['output_id']}"
        ]
        if owners:
            top = list(owners.items())
            lines.append("per process: " + ", ".join(f"{p} {n}" for p, n in top[:5])
                         + (f", {len(top) - 5} more" if len(top) > 5 else ""))
        for h in rows:
            parts = [h["handle"], h.get("type") or "-", h.get("access") or "-", h.get("object") or "-"]
            parts += [h["name"]] if "name" in h else []
            parts += [f"({f})" for f in h.get("flags", [])]
            parts += ["free"] if h.get("free") else []
            parts += [f"in {h['process']}"] if "process" in h else []
            lines.append(" ".join(parts))
        if data.get("types"):
            lines.append("by type: " + ", ".join(f"{t} {n}" for t, n in data["types"].items()))
        return lines
