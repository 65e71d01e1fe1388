"""The pool and page-table tools' logic (issue 16): each runs one kdexts command and reads kd's
answer back through the parse layer (kdmcp/parse/objects/memory.py).

``pool``: ``!pool ADDRESS`` (the page walk: the block holding the address and its neighbours);
``pool_find``: ``!poolfind TAG|0xTAGVALUE 0|1``; ``pool_usage``: ``!poolused 2|4 [TAG]``;
``pte``: ``!pte VA``, its flag letters decoded with the "!pte" docs' table and the physical
address worked out (pfn * 0x1000 + the offset in the page).

Tags. The "!poolfind" and "!poolused" docs: "TagString is a case-sensitive ASCII string. The
asterisk (*) can be used to represent any number of characters; the question mark (?) ...
exactly one character. Unless an asterisk is used, TagString must be exactly four characters in
length." A tag shorter than four is blank-padded in memory ("Irp ", "Mdl "), and a blank cannot
go on the command line (it would end the argument). So a short tag without ``*`` is sent as what
stands for it: to ``!poolfind`` as its TagValue ("TagValue must begin with "0x"": the tag's four
bytes little-endian, "Irp " = 0x20707249) when it has no ``?``; otherwise (and to ``!poolused``,
whose docs give no TagValue) padded with ``?`` to four, and kd's rows are then kept only where
the tag matches the blank-padded pattern.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from kdmcp.errors import InvalidArgument
from kdmcp.server import typed
from kdmcp.server.models import TypedResult
from kdmcp.server.tools.pool.models import (
    PoolBlockRow,
    PoolFindResult,
    PoolResult,
    PoolUsageResult,
    PoolUsageRow,
    PteLevelRow,
    PteResult,
)

if TYPE_CHECKING:
    from kdmcp.server.app import KdMcpApp

__all__ = [
    "decode_pte_flags",
    "kd_tag",
    "pool",
    "pool_find",
    "pool_usage",
    "pte",
    "read_pool",
    "read_poolfind",
    "read_poolused",
    "read_pte",
    "tag_matches",
    "tag_value",
]

TypedT = TypeVar("TypedT", bound=TypedResult)
PoolKind = Literal["nonpaged", "paged"]
# "!poolfind" docs, PoolType: "0 Specifies nonpaged memory pool. This is the default. 1 Specifies
# paged memory pool."
_POOL_TYPE = {"nonpaged": "0", "paged": "1"}
# "!poolused" docs, Flags: "Bit 1 (0x2) Sorts the display by the amount of nonpaged memory use.
# Bit 2 (0x4) Sorts the display by the amount of paged memory use."
_SORT_FLAGS = {"nonpaged": "2", "paged": "4"}


# --------------------------------------------------------------------------- tags


def tag_value(tag: str) -> int:
    """The ULONG a tag is in memory: its four bytes (blank-padded), little-endian ("Irp" -> 0x20707249)."""
    return int.from_bytes(tag.encode("latin-1").ljust(4, b" ")[:4], "little")


def kd_tag(tag: str, *, value_form: bool) -> tuple[str, bool]:
    """What goes on kd's command line for ``tag``, and whether kd's rows must be filtered after.

    A four-character tag, or one with ``*``, is a TagString as it is. A shorter one is its
    TagValue when ``value_form`` (``!poolfind``) and it has no ``?``; else it is padded with ``?``
    (kd then also lists tags whose last characters are not blanks: the caller filters). A
    four-character tag that starts with ``0x`` would be read as a TagValue ("!poolfind" docs), so
    it is sent as its TagValue too.
    """
    if "*" in tag:
        return tag, False
    if len(tag) == 4 and not (value_form and tag.startswith("0x")):
        return tag, False
    if value_form and "?" not in tag:
        return f"0x{tag_value(tag):08x}", False
    if value_form and tag.startswith("0x"):  # "0x" with "?": no TagValue says it; kd matches "?x…"
        return ("?" + tag[1:]).ljust(4, "?"), True
    return tag.ljust(4, "?"), len(tag) < 4


def tag_matches(tag: str, pattern: str) -> bool:
    """kd's tag match: ``*`` any characters, ``?`` one, case-sensitive, both blank-padded to four."""
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    padded = pattern if "*" in pattern else pattern.ljust(4)
    if padded != pattern:
        rx += re.escape(padded[len(pattern) :])
    return re.fullmatch(rx, tag.ljust(4), flags=re.S) is not None


# --------------------------------------------------------------------------- PTE flags

# The "!pte" docs' table of status bits, as !pte prints them left to right ("---DA--KWEV"): a
# capital letter when the bit is set, a dash (or the other letter) when clear --
# 0x200 C "Copy on write", 0x100 G "Global", 0x80 L "Large page. This only occurs in PDEs, never
# in PTEs", 0x40 D "Dirty", 0x20 A "Accessed", 0x10 N "Cache disabled", 0x8 T "Write-through",
# 0x4 U/K "Owner (user mode or kernel mode)", 0x2 W/R "Writeable or read-only", 0x1 V "Valid",
# and E "Executable page" (printed before V; absent from older debuggers' 10-letter columns, and
# the docs' own x86 example "G-DA--KWV" has nine letters, without C).
_FLAG_COLUMNS: dict[str, str] = {
    "C": "copy_on_write",
    "G": "global",
    "L": "large_page",
    "D": "dirty",
    "A": "accessed",
    "N": "cache_disabled",
    "T": "write_through",
    "U": "user",
    "K": "kernel",
    "W": "writable",
    "R": "read_only",
    "E": "executable",
    "V": "valid",
}
# per layout (by length): each column's letters (the first is its set letter)
_LAYOUTS: dict[int, tuple[str, ...]] = {
    11: ("C", "G", "L", "D", "A", "N", "T", "UK", "WR", "E", "V"),
    10: ("C", "G", "L", "D", "A", "N", "T", "UK", "WR", "V"),
    9: ("G", "L", "D", "A", "N", "T", "UK", "WR", "V"),
}


def decode_pte_flags(flags: str) -> list[str] | None:
    """kd's flag letters as names (``-G-DA--KW-V`` -> global, dirty, accessed, kernel, writable,
    no_execute, valid); None for a layout the table does not describe (ARM64's ``-R--ADK--V``)."""
    layout = _LAYOUTS.get(len(flags))
    if layout is None:
        return None
    names = []
    for letter, column in zip(flags, layout, strict=True):
        if letter == "-" and column == "E":
            names.append("no_execute")  # the E column's dash: the page is not executable
        elif letter == "-" and len(column) == 1:
            continue
        elif letter not in column:
            return None
        else:
            names.append(_FLAG_COLUMNS[letter])
    return names


# --------------------------------------------------------------------------- kd's answers read
# Pure: each takes the parse layer's record and returns the result's typed fields (tested on the
# corpus's own !pool / !poolfind / !poolused / !pte samples without a debugger).


def _row(b: Any) -> PoolBlockRow:
    return PoolBlockRow(
        address=b.address,
        size=b.size,
        tag=b.tag,
        state=b.state,
        previous_size=b.previous_size,
        pool_type=b.pool_type,
        large=b.large,
        details=b.details,
        description=b.description,
        binary=b.binary,
    )


def _neighbour(b: Any) -> PoolBlockRow:
    return PoolBlockRow(address=b.address, size=b.size, tag=b.tag, state=b.state)


def read_pool(record: Any, address: str) -> dict[str, Any]:
    """``!pool``: the block marked ``*`` (the one holding the address), the blocks on either side
    of it (a free or corrupt neighbour is what an overrun hits), the page's counts, kd's checks."""
    blocks = list(getattr(record, "pool_blocks", []) or [])
    fields = getattr(record, "fields", {}) or {}
    # "Pool page ffffe70f2ed94d70 region is Nonpaged pool": kd echoes the address it was asked
    asked = fields.get("pool_page") or address
    at = next((i for i, b in enumerate(blocks) if b.contains_address), None)
    out: dict[str, Any] = {
        "address": asked,
        "in_pool": at is not None,
        "region": fields.get("region"),
        "page_blocks": len(blocks),
        "page_free": sum(1 for b in blocks if b.state == "Free"),
        "warnings": list(getattr(record, "warnings", []) or []),
    }
    if at is not None:
        held = blocks[at]
        out.update(
            block=_row(held),
            previous=_neighbour(blocks[at - 1]) if at > 0 else None,
            next=_neighbour(blocks[at + 1]) if at + 1 < len(blocks) else None,
        )
        if asked.startswith("0x"):
            out["offset"] = hex(int(asked, 16) - int(held.address, 16))
    return out


def read_poolfind(record: Any, tag: str, filtered: bool) -> list[PoolBlockRow]:
    """``!poolfind``'s blocks (kept only where the tag matches, when kd was asked a wider pattern)."""
    blocks = list(getattr(record, "pool_blocks", []) or [])
    return [_row(b) for b in blocks if not filtered or (b.tag is not None and tag_matches(b.tag, tag))]


def read_poolused(record: Any, tag: str | None, filtered: bool) -> tuple[list[PoolUsageRow], PoolUsageRow | None]:
    """``!poolused``'s rows in kd's order, and its TOTAL line (none when the rows were filtered:
    kd's total then counts tags that were not asked for)."""
    rows = [
        PoolUsageRow(
            tag=u.tag,
            nonpaged_allocs=u.nonpaged_allocs,
            nonpaged_bytes=u.nonpaged_used,
            paged_allocs=u.paged_allocs,
            paged_bytes=u.paged_used,
            description=u.description,
        )
        for u in getattr(record, "pool_usage", []) or []
        if not filtered or tag is None or tag_matches(u.tag, tag)
    ]
    f = getattr(record, "fields", {}) or {}
    total = None
    if "total_nonpaged_allocs" in f and not filtered:
        total = PoolUsageRow(
            tag="TOTAL",
            nonpaged_allocs=int(f["total_nonpaged_allocs"]),
            nonpaged_bytes=int(f["total_nonpaged_used"]),
            paged_allocs=int(f["total_paged_allocs"]),
            paged_bytes=int(f["total_paged_used"]),
        )
    return rows, total


# a large page's frames: a PPE maps 1 GB; a PDE 2 MB (x64 and PAE: 16-digit entries) or 4 MB
# (x86 without PAE: 8-digit entries)
_LARGE = {"1G": 0x40000, "2M": 0x200, "4M": 0x400}


def _page_size(level: PteLevelRow) -> str:
    if level.level == "PPE":
        return "1G"
    return "2M" if level.contains is None or len(level.contains) > 10 else "4M"


def read_pte(record: Any, address: str) -> dict[str, Any]:
    """``!pte``: each level with its flags decoded; when every level down to the page (a PTE, or
    the PDE/PPE that maps a large page) is valid, the physical address: the frame * 0x1000 plus
    the address's offset in its 4 KB page."""
    fields = getattr(record, "fields", {}) or {}
    va = getattr(record, "address", None)
    levels = [
        PteLevelRow(
            level=lv.level,
            address=lv.address,
            contains=lv.contains,
            valid=lv.valid,
            pfn=lv.pfn,
            flags=lv.flags,
            flag_names=(decode_pte_flags(lv.flags) if lv.flags else None) or [],
            large_page=lv.large_page,
            details=list(lv.details),
        )
        for lv in getattr(record, "pte_levels", []) or []
    ]
    out: dict[str, Any] = {
        "address": va or address,
        "levels": levels,
        "warnings": list(getattr(record, "warnings", []) or []),
    }
    large = next((i for i, lv in enumerate(levels) if lv.large_page), None)
    chain = levels[: large + 1] if large is not None else levels
    if va is None or not chain or not all(lv.valid for lv in chain) or chain[-1].pfn is None:
        return out
    if large is not None:
        size = _page_size(levels[large])
        # "LARGE PAGE pfn 544": the frame of the address itself inside the large page; without it,
        # the entry's frame plus the address's page number inside the large page
        frame = (
            int(fields["large_page_pfn"], 16)
            if "large_page_pfn" in fields
            else int(chain[-1].pfn, 16) + ((int(va, 16) >> 12) & (_LARGE[size] - 1))
        )
    else:
        size, frame = "4K", int(chain[-1].pfn, 16)
    out.update(mapped=True, page_size=size, physical_address=hex(frame * 0x1000 + (int(va, 16) & 0xFFF)))
    return out


# --------------------------------------------------------------------------- the tools


def _check_tag(tag: str) -> None:
    # "Unless an asterisk is used, TagString must be exactly four characters": a short tag is sent
    # as its TagValue or padded with "?", so only a tag longer than four without "*" is wrong
    if len(tag) > 4 and "*" not in tag:
        raise InvalidArgument(f"tag {tag!r}: a pool tag is at most four characters (or a pattern with *)")


def _serve_capped(ran: typed.Ran, model: type[TypedT], command: str, count: int, limit: int, **fields: Any) -> TypedT:
    """More rows than were asked for: kd's whole list leaves the text block (the result's
    ``output_id`` still reads it) and the text block lists the rows returned instead: a real
    ``!poolused`` lists every tag in use, a ``!poolfind`` of a leak every block with the tag."""
    if count > limit:
        ran.shown[-1] = False
    return typed.serve(ran, model, command=command, **fields)  # what ran, shown or not


def pool(app: KdMcpApp, session_id: str | None, address: str, *, owner: str | None) -> PoolResult:
    ran = typed.open_session(app, session_id, owner, needs="kernel")
    record = ran.record(f"!pool {address}")
    typed.refuse_error(ran, record)
    return typed.serve(ran, PoolResult, **read_pool(record, address))


def pool_find(
    app: KdMcpApp,
    session_id: str | None,
    tag: str,
    limit: int,
    kind: PoolKind,
    timeout_s: float | None,
    *,
    owner: str | None,
) -> PoolFindResult:
    _check_tag(tag)
    ran = typed.open_session(app, session_id, owner, needs="kernel", timeout_s=timeout_s)
    arg, filtered = kd_tag(tag, value_form=True)
    command = f"!poolfind {arg} {_POOL_TYPE[kind]}"
    record = ran.record(command)
    typed.refuse_error(ran, record)
    blocks = read_poolfind(record, tag, filtered)
    return _serve_capped(
        ran, PoolFindResult, command, len(blocks), limit, tag=tag, pool=kind, found=len(blocks), blocks=blocks[:limit]
    )


def pool_usage(
    app: KdMcpApp, session_id: str | None, tag: str | None, limit: int, sort: PoolKind, *, owner: str | None
) -> PoolUsageResult:
    if tag is not None:
        _check_tag(tag)
    ran = typed.open_session(app, session_id, owner, needs="kernel")
    arg, filtered = kd_tag(tag, value_form=False) if tag is not None else ("", False)
    command = f"!poolused {_SORT_FLAGS[sort]}" + (f" {arg}" if arg else "")
    record = ran.record(command)
    typed.refuse_error(ran, record)
    rows, total = read_poolused(record, tag, filtered)
    return _serve_capped(
        ran,
        PoolUsageResult,
        command,
        len(rows),
        limit,
        sort=sort,
        tag=tag,
        tags=len(rows),
        rows=rows[:limit],
        total=total,
    )


def pte(app: KdMcpApp, session_id: str | None, address: str, *, owner: str | None) -> PteResult:
    ran = typed.open_session(app, session_id, owner, needs="kernel")
    record = ran.record(f"!pte {address}")
    typed.refuse_error(ran, record)
    return typed.serve(ran, PteResult, **read_pte(record, address))
