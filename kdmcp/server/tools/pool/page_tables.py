"""``pte`` (issue 16): ``!pte VA``, read back through the parse layer
(kdmcp/parse/objects/memory.py), its flag letters decoded with the "!pte" docs' table and the
physical address worked out (pfn * 0x1000 + the offset in the page).

The address that reaches kd's command line is a ``args.Address`` (no blank, ';' or '"').
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdmcp import parse as parsing
from kdmcp.server import typed
from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Call
from kdmcp.server.registry import reads, tool
from kdmcp.server.tools.pool.models import PteLevelRow, PteResult

if TYPE_CHECKING:
    from kdmcp.parse.record_base import RecordBase

__all__ = ["decode_pte_flags", "pte", "read_pte"]

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


# --------------------------------------------------------------------------- kd's answer read
# Pure: takes the parse layer's record and returns the result's typed fields (tested on the
# corpus's own !pte samples without a debugger).

# a large page's frames: a PPE maps 1 GB; a PDE 2 MB (x64 and PAE: 16-digit entries) or 4 MB
# (x86 without PAE: 8-digit entries)
_LARGE = {"1G": 0x40000, "2M": 0x200, "4M": 0x400}


def _page_size(level: PteLevelRow) -> str:
    if level.level == "PPE":
        return "1G"
    return "2M" if level.contains is None or len(level.contains) > 10 else "4M"


def read_pte(record: RecordBase | None, address: str) -> dict[str, Any]:
    """``!pte``: each level with its flags decoded; when every level down to the page (a PTE, or
    the PDE/PPE that maps a large page) is valid, the physical address: the frame * 0x1000 plus
    the address's offset in its 4 KB page. A record that is not an object (text kd printed
    instead) has no levels; its warnings are kept."""
    found = record if isinstance(record, parsing.ObjectRecord) else None
    fields = found.fields if found is not None else {}
    va = found.address if found is not None else None
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
        for lv in (found.pte_levels if found is not None else [])
    ]
    out: dict[str, Any] = {
        "address": va or address,
        "levels": levels,
        "warnings": list(record.warnings) if record is not None else [],
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


# --------------------------------------------------------------------------- the tool


@tool("inspect", reads("Page-table entries"))
def pte(call: Call, address: Address, session_id: SessionId = None) -> PteResult:
    """Page-table entries of an address (!pte)."""
    ran = typed.open_session(call.app, session_id, call.owner, needs="kernel")
    record = ran.record(f"!pte {address}")
    typed.refuse_error(ran, record)
    return typed.serve(ran, PteResult, **read_pte(record, address))
