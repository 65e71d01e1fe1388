"""The pool tools (issue 16): ``pool``, ``pool_find`` and ``pool_usage``; each runs one kdexts
command and reads kd's answer back through the parse layer (kdmcp/parse/objects/memory.py).

``pool``: ``!pool ADDRESS`` (the page walk: the block holding the address and its neighbours);
``pool_find``: ``!poolfind TAG|0xTAGVALUE 0|1``; ``pool_usage``: ``!poolused 2|4 [TAG]``.

Every argument that reaches kd's command line is checked: addresses are ``args.Address``
(no blank, ';' or '"'); a pool tag is one to four printable characters without a blank, ';' or
'"' (``*`` and ``?`` are kd's wildcards).

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
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field

from kdmcp import parse as parsing
from kdmcp.errors import InvalidArgument
from kdmcp.server import typed
from kdmcp.server.args import Address, SessionId, Timeout
from kdmcp.server.call import Call
from kdmcp.server.models import TypedResult
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.pool.models import (
    PoolBlockRow,
    PoolFindResult,
    PoolResult,
    PoolUsageResult,
    PoolUsageRow,
)

if TYPE_CHECKING:
    from kdmcp.parse.models.objects import PoolBlock
    from kdmcp.parse.record_base import RecordBase

__all__ = [
    "kd_tag",
    "pool",
    "pool_find",
    "pool_usage",
    "read_pool",
    "read_poolfind",
    "read_poolused",
    "tag_matches",
    "tag_value",
]

TypedT = TypeVar("TypedT", bound=TypedResult)
# printable ASCII but blank (0x20), '"' (0x22) and ';' (0x3b)
Tag = Annotated[
    str,
    Field(
        description='case-sensitive, * ?',
        min_length=1,
        max_length=4,
        pattern=r"^[!#-:<-~]+$",
    ),
]
Pool = Literal["nonpaged", "paged"]
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


def _check_tag(tag: str) -> None:
    # "Unless an asterisk is used, TagString must be exactly four characters": a short tag is sent
    # as its TagValue or padded with "?", so only a tag longer than four without "*" is wrong
    if len(tag) > 4 and "*" not in tag:
        raise InvalidArgument(f"tag {tag!r}: a pool tag is at most four characters (or a pattern with *)")


# --------------------------------------------------------------------------- kd's answers read
# Pure: each takes the parse layer's record and returns the result's typed fields (tested on the
# corpus's own !pool / !poolfind / !poolused samples without a debugger). A record that is not an
# object (text kd printed instead) has no blocks or rows; its warnings are kept.


def _row(b: PoolBlock) -> PoolBlockRow:
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


def _neighbour(b: PoolBlock) -> PoolBlockRow:
    return PoolBlockRow(address=b.address, size=b.size, tag=b.tag, state=b.state)


def read_pool(record: RecordBase | None, address: str) -> dict[str, Any]:
    """``!pool``: the block marked ``*`` (the one holding the address), the blocks on either side
    of it (a free or corrupt neighbour is what an overrun hits), the page's counts, kd's checks."""
    found = record if isinstance(record, parsing.ObjectRecord) else None
    blocks = list(found.pool_blocks) if found is not None else []
    fields = found.fields if found is not None else {}
    # "Pool page ffffe70f2ed94d70 region is Nonpaged pool": kd echoes the address it was asked
    asked = fields.get("pool_page") or address
    at = next((i for i, b in enumerate(blocks) if b.contains_address), None)
    out: dict[str, Any] = {
        "address": asked,
        "in_pool": at is not None,
        "region": fields.get("region"),
        "page_blocks": len(blocks),
        "page_free": sum(1 for b in blocks if b.state == "Free"),
        "warnings": list(record.warnings) if record is not None else [],
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


def read_poolfind(record: RecordBase | None, tag: str, filtered: bool) -> list[PoolBlockRow]:
    """``!poolfind``'s blocks (kept only where the tag matches, when kd was asked a wider pattern)."""
    blocks = record.pool_blocks if isinstance(record, parsing.ObjectRecord) else []
    return [_row(b) for b in blocks if not filtered or (b.tag is not None and tag_matches(b.tag, tag))]


def read_poolused(
    record: RecordBase | None, tag: str | None, filtered: bool
) -> tuple[list[PoolUsageRow], PoolUsageRow | None]:
    """``!poolused``'s rows in kd's order, and its TOTAL line (none when the rows were filtered:
    kd's total then counts tags that were not asked for)."""
    found = record if isinstance(record, parsing.ObjectRecord) else None
    rows = [
        PoolUsageRow(
            tag=u.tag,
            nonpaged_allocs=u.nonpaged_allocs,
            nonpaged_bytes=u.nonpaged_used,
            paged_allocs=u.paged_allocs,
            paged_bytes=u.paged_used,
            description=u.description,
        )
        for u in (found.pool_usage if found is not None else [])
        if not filtered or tag is None or tag_matches(u.tag, tag)
    ]
    f = found.fields if found is not None else {}
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


# --------------------------------------------------------------------------- the tools


def _serve_capped(ran: typed.Ran, model: type[TypedT], command: str, count: int, limit: int, **fields: Any) -> TypedT:
    """More rows than were asked for: kd's whole list leaves the text block (the result's
    ``output_id`` still reads it) and the text block lists the rows returned instead: a real
    ``!poolused`` lists every tag in use, a ``!poolfind`` of a leak every block with the tag."""
    if count > limit:
        ran.shown[-1] = False
    return typed.serve(ran, model, command=command, **fields)  # what ran, shown or not


@tool("inspect", reads("A pool block"))
def pool(call: Call, address: Address, session_id: SessionId = None) -> PoolResult:
    """The pool block holding an address (!pool)."""
    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel")
    record = ran.record(f"!pool {address}")
    typed.refuse_error(ran, record)
    return typed.serve(ran, PoolResult, **read_pool(record, address))


@tool("inspect", reads("Find pool blocks by tag"))
def pool_find(
    call: Call,
    tag: Tag,
    limit: Annotated[int, Field(ge=1, le=5000)] = 100,
    pool: Pool = "nonpaged",
    timeout_s: Timeout = None,
    session_id: SessionId = None,
) -> PoolFindResult:
    """Pool blocks by tag (!poolfind; slow)."""
    _check_tag(tag)
    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel", timeout_s=timeout_s)
    arg, filtered = kd_tag(tag, value_form=True)
    command = f"!poolfind {arg} {_POOL_TYPE[pool]}"
    record = ran.record(command)
    typed.refuse_error(ran, record)
    blocks = read_poolfind(record, tag, filtered)
    return _serve_capped(
        ran, PoolFindResult, command, len(blocks), limit, tag=tag, pool=pool, found=len(blocks), blocks=blocks[:limit]
    )


@tool("inspect", reads("Pool use by tag"))
def pool_usage(
    call: Call,
    tag: Annotated[Tag | None, Field()] = None,
    limit: Annotated[int, Field(ge=1, le=5000)] = 20,
    sort: Annotated[Pool, Field()] = "nonpaged",
    session_id: SessionId = None,
) -> PoolUsageResult:
    """Pool use per tag (!poolused)."""
    if tag is not None:
        _check_tag(tag)
    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel")
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
