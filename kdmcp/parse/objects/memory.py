"""Memory objects: ``!pool``, ``!poolfind``, ``!poolused``, ``!pte``, ``!heap``, ``!vad``."""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr
from kdmcp.parse.frames import site_fields
from kdmcp.parse.objects.fields import (
    Handler,
)

# --------------------------------------------------------------------------- !pool / !poolfind / !poolused

# "*e1001050 size:   10 previous size:   10  (Allocated) *ObDi"
_POOL_BLOCK_RE = re.compile(
    r"^\s*(?P<mark>\*)?(?P<addr>[0-9a-fA-F`]{8,17}) size:\s*(?P<size>[0-9a-fA-F]+)"
    r" previous size:\s*(?P<prev>[0-9a-fA-F]+)\s+\((?P<state>[^)]*)\)\s*\*?(?P<tag>.*)$"
)
# "Searching NonPaged pool (823b1000 : 82800000) for Tag: SeSd"
_POOL_TAG_RE = re.compile(r"for Tag: (?P<tag>\S+)")
# "Pool page e1001050 region is Paged pool"
_POOL_REGION_RE = re.compile(r"region is (?P<region>.*)$")


def _pool(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        m = _POOL_BLOCK_RE.match(line)
        if m is not None:
            tag = m.group("tag").split()
            out["pool_blocks"].append(
                {
                    "address": addr(m.group("addr")),
                    "size": "0x" + m.group("size").lower(),
                    "previous_size": "0x" + m.group("prev").lower(),
                    "state": m.group("state").strip(),
                    "tag": tag[0] if tag else None,
                    "contains_address": m.group("mark") is not None,
                }
            )
            continue
        t = _POOL_TAG_RE.search(line)
        if t is not None:
            out["fields"].setdefault("tag", t.group("tag"))
            continue
        r = _POOL_REGION_RE.search(line)
        if r is not None and "Pool page" in line:
            out["fields"]["region"] = r.group("region")
    if out["pool_blocks"] and not out.get("address"):
        marked = [b for b in out["pool_blocks"] if b["contains_address"]]
        if marked:
            out["address"] = marked[0]["address"]


# " 1394        1      520         0        0UNKNOWN pooltag '1394', please update pooltag.txt"
_POOLUSED_ROW_RE = re.compile(
    r"^\s(?P<tag>\S.{3})\s+(?P<npa>\d+)\s+(?P<npu>\d+)\s+(?P<pa>\d+)\s+(?P<pu>\d+)(?P<desc>.*)$"
)
_POOLUSED_TOTAL_RE = re.compile(r"^\s*TOTAL\s+(?P<npa>\d+)\s+(?P<npu>\d+)\s+(?P<pa>\d+)\s+(?P<pu>\d+)")


# " Tag    Allocs     Used    Allocs     Used": where the last numeric column ends.
_POOLUSED_HEADER_RE = re.compile(r"^\s*Tag\s+Allocs\s+Used\s+Allocs\s+Used\s*$")


def _poolused(lines: list[str], out: dict[str, Any]) -> None:
    # Descriptions are glued to the last number ("0UNKNOWN pooltag", "01394 OHCI host..."):
    # when a description starts with a digit, split at the header's column end instead.
    last_col_end: int | None = None
    for line in lines:
        if _POOLUSED_HEADER_RE.match(line):
            last_col_end = len(line.rstrip())
            continue
        t = _POOLUSED_TOTAL_RE.match(line)
        if t is not None:
            out["fields"].update(
                total_nonpaged_allocs=t.group("npa"),
                total_nonpaged_used=t.group("npu"),
                total_paged_allocs=t.group("pa"),
                total_paged_used=t.group("pu"),
            )
            continue
        m = _POOLUSED_ROW_RE.match(line)
        if m is not None:
            paged_used, desc = m.group("pu"), m.group("desc")
            if last_col_end is not None and m.end("pu") > last_col_end >= m.start("pu") + 1:
                cut = last_col_end - m.start("pu")
                paged_used, desc = paged_used[:cut], paged_used[cut:] + desc
            out["entries"].append(
                {
                    "tag": m.group("tag"),
                    "nonpaged_allocs": m.group("npa"),
                    "nonpaged_used": m.group("npu"),
                    "paged_allocs": m.group("pa"),
                    "paged_used": paged_used,
                    "description": desc.strip(),
                }
            )
            continue
        if "Sorting by" in line:
            out["fields"]["sorting"] = line.split("Sorting by", 1)[1].strip()


# --------------------------------------------------------------------------- !pte

_PTE_LEVEL_RE = re.compile(r"\b(?P<level>PXE|PPE|PDE|PTE) at (?P<addr>[0-9a-fA-F`]+)")
_PTE_CONTAINS_RE = re.compile(r"\bcontains (?P<value>[0-9a-fA-F`]+)")
_PTE_PFN_RE = re.compile(r"\bpfn (?P<pfn>[0-9a-fA-F]+)\s+(?P<flags>[-A-Z]+)")
# "pfn 400       -GLDA--KWEV   LARGE PAGE pfn 544": the PDE (or PPE) maps a large page, and
# the last pfn is the physical frame of the VA itself, inside that page (0x400 + 0x144).
_PTE_LARGE_RE = re.compile(r"\bLARGE PAGE pfn (?P<pfn>[0-9a-fA-F]+)")
# "VA fffff80240d322f9" (x64) or the leading "801544F4  - PDE at ..." (x86)
_PTE_VA_RE = re.compile(r"^\s*(?:VA\s+(?P<va>[0-9a-fA-F`]+)|(?P<va2>[0-9a-fA-F`]{8,17})\s+-\s)")


def _pte(lines: list[str], out: dict[str, Any]) -> None:
    levels: list[dict[str, Any]] = out["pte_levels"]
    contains: list[str] = []
    pfns: list[tuple[str, str]] = []
    for line in lines:
        v = _PTE_VA_RE.match(line)
        if v is not None:
            out["address"] = addr(v.group("va") or v.group("va2"))
        for m in _PTE_LEVEL_RE.finditer(line):
            levels.append({"level": m.group("level"), "address": addr(m.group("addr"))})
        contains.extend(addr(m.group("value")) for m in _PTE_CONTAINS_RE.finditer(line))
        pfns.extend(("0x" + m.group("pfn").lower(), m.group("flags")) for m in _PTE_PFN_RE.finditer(line))
        large = _PTE_LARGE_RE.search(line)
        if large is not None:
            out["fields"].update(large_page="true", large_page_pfn="0x" + large.group("pfn").lower())
    for level, value in zip(levels, contains, strict=False):
        level["contains"] = value
    for level, (pfn, flags) in zip(levels, pfns, strict=False):
        level["pfn"] = pfn
        level["flags"] = flags



# --------------------------------------------------------------------------- !heap

# "    address 0000015da8026b50 found in"
_HEAP_ADDRESS_RE = re.compile(r"^\s*address (?P<addr>[0-9a-fA-F`]+) found in")
# "    _HEAP @ 15d85bb0000" / "    _DPH_HEAP_ROOT @ 3d71000"
_HEAP_AT_RE = re.compile(r"^\s*(?P<what>_HEAP|_DPH_HEAP_ROOT) @ (?P<addr>[0-9a-fA-F`]+)")
# "        0000015da8026b50 0005 0000  [00]   0000015da8026b80    00028 - (busy)"
_HEAP_ENTRY_RE = re.compile(
    r"^\s+(?P<entry>[0-9a-fA-F`]{8,17}) (?P<size>[0-9a-fA-F]{4}) (?P<prev>[0-9a-fA-F]{4})\s+\[(?P<flags>[0-9a-fA-F]+)\]"
    r"\s+(?P<user>[0-9a-fA-F`]+)\s+(?P<usize>[0-9a-fA-F]+) - \((?P<state>[^)]*)\)"
)
# page heap: "                                    65c29c0:          6724000             2000"
_DPH_BLOCK_RE = re.compile(r"^\s+(?P<block>[0-9a-fA-F]+):\s+(?P<virt>[0-9a-fA-F]+)\s+(?P<vsize>[0-9a-fA-F]+)\s*$")
# allocation/free stack trace line: "        7ffc3be3d887 ntdll!RtlpAllocateHeapInternal+0x0000000000096b87"
_HEAP_FRAME_RE = re.compile(r"^\s+(?P<ret>[0-9a-fA-F]{6,16}) (?P<site>\S.*)$")
# "    in free-ed allocation (  DPH_HEAP_BLOCK: ..." / "in busy allocation"
_HEAP_STATE_RE = re.compile(r"^\s*in (?P<state>free-ed|busy) allocation")


def _heap(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        m = _HEAP_ENTRY_RE.match(line)
        if m is not None:
            out["entries"].append(
                {
                    "heap_entry": addr(m.group("entry")),
                    "size": "0x" + m.group("size").lower(),
                    "previous_size": "0x" + m.group("prev").lower(),
                    "flags": m.group("flags"),
                    "user_pointer": addr(m.group("user")),
                    "user_size": "0x" + m.group("usize").lower(),
                    "state": m.group("state"),
                }
            )
            continue
        a = _HEAP_ADDRESS_RE.match(line)
        if a is not None:
            out["address"] = addr(a.group("addr"))
            continue
        h = _HEAP_AT_RE.match(line)
        if h is not None:
            out["fields"]["heap"] = addr(h.group("addr"))
            out["fields"]["heap_type"] = h.group("what")
            continue
        s = _HEAP_STATE_RE.match(line)
        if s is not None:
            out["fields"]["state"] = s.group("state")
            continue
        b = _DPH_BLOCK_RE.match(line)
        if b is not None:
            out["entries"].append(
                {
                    "dph_block": addr(b.group("block")),
                    "virt_addr": addr(b.group("virt")),
                    "virt_size": "0x" + b.group("vsize").lower(),
                }
            )
            continue
        f = _HEAP_FRAME_RE.match(line)
        if f is not None:
            frame = site_fields(f.group("site"))
            frame["return_address"] = addr(f.group("ret"))
            out["frames"].append(frame)


# --------------------------------------------------------------------------- !vad

# Tree rows, old ("82741bf8 ( 1)      78000    78045         8 Mapped  Exe  EXECUTE_WRITECOPY")
# and Windows 10 ("ffffdf02ef26f440  8   7ffe0   7ffe0   1 Private      READONLY"), where a
# mapped file's path follows the protection ("... Mapped  Exe  EXECUTE_WRITECOPY  \Windows\...").
_VAD_ROW_RE = re.compile(
    r"^\s*(?P<vad>[0-9a-fA-F`]{8,17})\s+(?:\(\s*(?P<level>\d+)\)|(?P<level2>\d+))"
    r"\s+(?P<start>[0-9a-fA-F]+)\s+(?P<end>[0-9a-fA-F]+)\s+(?P<commit>-?\d+)\s+(?P<type>Mapped|Private)"
    r"(?P<exe>\s+Exe|)\s+(?P<protection>[A-Z_]+(?: [A-Z_]+)*)(?:\s+(?P<rest>\S.*)|)$"
)
# "Total VADs:     5  average level:    2  maximum depth: 2" (Windows 10 puts commas in)
_VAD_TOTAL_RE = re.compile(
    r"^\s*Total VADs:\s*(?P<total>\d+),?\s+average level:\s*(?P<avg>\d+),?\s+maximum depth:\s*(?P<depth>\d+)"
)
# "VAD @ 824bc2f8" (one VAD, "!vad <addr> 1")
_VAD_AT_RE = re.compile(r"^\s*VAD @ (?P<addr>[0-9a-fA-F`]+)")
# Its numbered pairs, several to a line, with or without a colon:
# "  Start VPN:         7ffb0  End VPN:    7ffd3  Control Area:  827f1208",
# "  First ProtoPte: e1008500  Last PTE e100858c  Commit Charge         0 (0.)".
# A key starts only where no key character precedes (so each run of text is tried once).
_VAD_PAIR_RE = re.compile(
    r"(?<![\w./])(?P<key>[A-Za-z][\w./]*(?: [A-Za-z][\w./]*){0,2}):?\s+"
    r"(?P<value>[0-9a-fA-F`]+(?: \([0-9a-fA-Fnx.]+\)|))(?!\S)"
)


def _vad(lines: list[str], out: dict[str, Any]) -> None:
    fields: dict[str, str] = out["fields"]
    for line in lines:
        m = _VAD_ROW_RE.match(line)
        if m is not None:
            entry = {
                "vad": addr(m.group("vad")),
                "level": m.group("level") or m.group("level2"),
                "start": m.group("start"),
                "end": m.group("end"),
                "commit": m.group("commit"),
                "type": m.group("type"),
                "protection": m.group("protection"),
            }
            if m.group("exe"):
                entry["exe"] = "true"
            if m.group("rest"):
                entry["details"] = m.group("rest")
            out["entries"].append(entry)
            continue
        t = _VAD_TOTAL_RE.match(line)
        if t is not None:
            fields.update(total_vads=t.group("total"), average_level=t.group("avg"), maximum_depth=t.group("depth"))
            continue
        a = _VAD_AT_RE.match(line)
        if a is not None:
            out["address"] = addr(a.group("addr"))
            continue
        for p in _VAD_PAIR_RE.finditer(line):
            fields.setdefault(p.group("key"), p.group("value"))


# the extensions this module reads, by name (``kdmcp.parse.objects`` dispatches on it)
HANDLERS: dict[str, Handler] = {
    "pool": _pool,
    "poolfind": _pool,
    "poolused": _poolused,
    "pte": _pte,
    "heap": _heap,
    "vad": _vad,
}
