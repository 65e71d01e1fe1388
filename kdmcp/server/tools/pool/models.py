"""What the pool and page-table tools return (issue 16): a pool block and its page, the blocks
with a tag, pool use per tag, and a virtual address's page-table chain.

Fields usually absent default to ``None``/``False``/empty so ``structuredContent`` leaves them
out (docs/results.md); kd's raw output beside them says the rest.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kdmcp.server.models import TypedResult
from kdmcp.validation import LazyModel

__all__ = [
    "PoolBlockRow",
    "PoolFindResult",
    "PoolResult",
    "PoolUsageResult",
    "PoolUsageRow",
    "PteLevelRow",
    "PteResult",
]


class PoolBlockRow(LazyModel):
    """A pool block as ``!pool`` or ``!poolfind`` prints it."""

    address: str = Field(description="the block (its pool header)")
    size: str = Field(description="!pool: with the header; !poolfind: what was asked for")
    tag: str | None = None
    state: str | None = Field(default=None, description="Allocated or Free (!pool)")
    previous_size: str | None = None
    pool_type: str | None = Field(default=None, description="!poolfind: Nonpaged pool, Paged pool")
    large: bool = Field(default=False, description="a large page allocation (no pool header)")
    details: str | None = Field(default=None, description="what kd prints after the tag: (Protected), Process: …")
    description: str | None = Field(default=None, description="pooltag.txt's words for the tag")
    binary: str | None = Field(default=None, description="pooltag.txt's owner: nt!io, fltmgr.sys")


class PoolResult(TypedResult):
    address: str = Field(description="the address asked about")
    in_pool: bool = Field(description="a pool block holds the address")
    region: str | None = Field(default=None, description="Nonpaged pool, Paged pool, Unknown…")
    block: PoolBlockRow | None = Field(default=None, description="the block holding the address")
    offset: str | None = Field(default=None, description="the address's offset from the block's start")
    previous: PoolBlockRow | None = Field(default=None, description="the block before it in the page")
    next: PoolBlockRow | None = Field(default=None, description="the block after it in the page")
    page_blocks: int = Field(default=0, description="blocks kd listed in the page")
    page_free: int = Field(default=0, description="of them Free")
    warnings: list[str] = Field(default_factory=list, description="kd's checks that failed (not valid pool…)")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        if not data["in_pool"]:
            return [f"not in pool: {data['address']}"]
        line = f"page: {data.get('page_blocks', 0)} blocks, {data.get('page_free', 0)} free"
        near = [f"{side} {_brief(data[side])}" for side in ("previous", "next") if side in data]
        return [line + ("; " + ", ".join(near) if near else "")]


def _brief(block: dict[str, Any]) -> str:
    return f"{block.get('tag') or '?'} {block.get('state') or ''}".rstrip()


class PoolFindResult(TypedResult):
    tag: str = Field(description="the tag as asked (command: what kd was sent for it)")
    pool: str = Field(description="nonpaged or paged")
    found: int = Field(description="blocks kd listed")
    blocks: list[PoolBlockRow] = Field(default_factory=list, description="the first `limit` of them")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        rows = data.get("blocks", [])
        n = data["found"]
        line = f"found {n} block{'' if n == 1 else 's'} with tag {data['tag']!r} in {data['pool']} pool"
        if len(rows) < data["found"]:
            line += f" (first {len(rows)} listed)"
        lines = [line]
        if not data.get("output"):  # the raw list is hidden: it had more rows than were asked for
            lines += [
                f"{b['address']} {b.get('tag', '')!s:<4} {b['size']:>9} {b.get('pool_type', '')}".rstrip() for b in rows
            ]
        return lines


class PoolUsageRow(LazyModel):
    """One tag's row of ``!poolused``: allocations and bytes in nonpaged and paged pool."""

    tag: str
    nonpaged_allocs: int
    nonpaged_bytes: int
    paged_allocs: int
    paged_bytes: int
    description: str | None = Field(default=None, description="pooltag.txt's words, as kd prints them")


class PoolUsageResult(TypedResult):
    sort: str = Field(description="nonpaged or paged: the bytes the rows are sorted by")
    tag: str | None = Field(default=None, description="the tag asked about (wildcards allowed)")
    tags: int = Field(description="tags kd listed")
    rows: list[PoolUsageRow] = Field(default_factory=list, description="the first `limit` rows, in kd's order")
    total: PoolUsageRow | None = Field(default=None, description="kd's TOTAL line (none when rows were filtered)")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        rows = data.get("rows", [])
        if data.get("output"):
            return [] if rows or "tag" not in data else [f"no pool in use with tag {data['tag']!r}"]
        # the whole table is hidden (readable with read_output): the top rows, in kd's columns
        lines = [
            f"top {len(rows)} of {data['tags']} tags by {data['sort']} bytes "
            f"(all: read_output output_id={data['output_id']})",
            " Tag     Allocs         Used     Allocs         Used",
        ]
        lines += [
            f" {r['tag']:<4}{r['nonpaged_allocs']:>10}{r['nonpaged_bytes']:>13}{r['paged_allocs']:>11}"
            f"{r['paged_bytes']:>13}  {r.get('description', '')}".rstrip()
            for r in rows
        ]
        return lines


class PteLevelRow(LazyModel):
    """One paging level of ``!pte``: where its entry is, what it contains, and its flags decoded."""

    level: str = Field(description="PXE, PPE, PDE or PTE")
    address: str = Field(description="the entry's own address")
    contains: str | None = Field(default=None, description="the entry's value")
    valid: bool | None = Field(default=None, description="false: kd printed 'not valid'")
    pfn: str | None = None
    flags: str | None = Field(default=None, description="kd's letters, e.g. ---DA--KWEV")
    flag_names: list[str] = Field(default_factory=list, description="the letters decoded (the !pte docs' table)")
    large_page: bool = Field(default=False, description="this entry maps a large page")
    details: list[str] = Field(default_factory=list, description="what kd says the invalid entry holds")


class PteResult(TypedResult):
    address: str = Field(description="the virtual address")
    levels: list[PteLevelRow] = Field(default_factory=list)
    mapped: bool = Field(default=False, description="every level is valid down to the page")
    physical_address: str | None = Field(default=None, description="pfn * 0x1000 + the page offset, when mapped")
    page_size: str | None = Field(default=None, description="4K, or 2M/1G for a large page")
    warnings: list[str] = Field(default_factory=list, description="kd's complaints (levels not implemented…)")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        levels = data.get("levels", [])
        if data.get("mapped"):
            last = next((lv for lv in levels if lv.get("large_page")), levels[-1] if levels else {})
            names = " ".join(last.get("flag_names", []))
            return [
                f"physical {data['physical_address']} ({data.get('page_size', '4K')} page"
                + (f"; {last['level']}: {names}" if names else "")
                + ")"
            ]
        bad = next((lv["level"] for lv in levels if lv.get("valid") is False), None)
        return [f"not mapped: {bad} not valid"] if bad else []
