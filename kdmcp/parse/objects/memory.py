"""Memory objects: ``!pool``, ``!poolfind``, ``!poolused``, ``!pte``, ``!vad``; ``!heap`` is read in ``heap``."""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr
from kdmcp.parse.objects.fields import Handler, complaint_re
from kdmcp.parse.objects.heap import heap
from kdmcp.parse.partial import partial_row

# --------------------------------------------------------------------------- !pool / !poolfind / !poolused

# "*e1001050 size:   10 previous size:   10  (Allocated) *ObDi", what may follow the tag kept:
# " 85246160 size:   68 previous size:   48  (Allocated)  NpFn Process: 8507a030" (XP),
# "*85902ec0 size:   40 previous size:  200  (Allocated) *Even (Protected)" (Windows 7)
_POOL_BLOCK_RE = re.compile(
    r"^\s*(?P<mark>\*)?(?P<addr>[0-9a-fA-F`]{8,17}) size:\s*(?P<size>[0-9a-fA-F]+)"
    r" previous size:\s*(?P<prev>[0-9a-fA-F]+)\s+\((?P<state>[^)]*)\)\s*\*?(?P<tag>.*)$"
)
# A large allocation has no pool header (Windows 8.1 x64 write-up, a `!pool` of a bitmap):
# "*fffff901400d0000 : large page allocation, tag is Gh05, size is 0x1090 bytes"
# An x86 target's answer carries 8-digit addresses and older engines capitalise "Tag is"; the
# session-pool walk ("... checking large session pool...") answers a large session-pool block
# in the same words (the issue 29 parser sample; the x64 form is DebugPrivilege's and clxsh's).
_POOL_LARGE_RE = re.compile(
    r"^\s*(?P<mark>\*)?(?P<addr>[0-9a-fA-F`]{8,17}) : large (?:page|session pool|pool) allocation,"
    r" [Tt]ag is (?P<tag>.+?), size is (?P<size>0x[0-9a-fA-F]+) bytes"
)
# A special-pool block has no pool header either: its page holds one allocation, the caller's
# bytes at "data:", and the pool type in parentheses (Project Zero's registry write-up):
# "*ffffb98851f06000 size:  4f0 data: ffffb98851f06b10 (NonPaged) *Scbf"; x86 "(Paged session)".
_POOL_SPECIAL_RE = re.compile(
    r"^\s*(?P<mark>\*)?(?P<addr>[0-9a-fA-F`]{8,17}) size:\s*(?P<size>[0-9a-fA-F]+) data:\s*(?P<data>[0-9a-fA-F`]{8,17})"
    r"\s+\((?P<type>[^)]*)\)\s*\*?(?P<tag>.*)$"
)
# A block line by its start ("*85246428 size:", "fe7b1000 : large"), whatever follows: one the
# patterns above do not read is kept as a partial block (kdmcp/parse/partial.py).
_PARTIAL_POOL_RE = re.compile(
    r"^\s*(?P<mark>\*)?(?P<addr>[0-9a-fA-F`]{8,17}) (?:size:\s*(?P<size>[0-9a-fA-F]+)(?=\s|$)|: large\b)"
)
# The description line under a block (Windows 10/11 print it tab-indented):
# "\t\tPooltag MmSt : Mm section object prototype ptes, Binary : nt!mm",
# "\t\tOwning component : Unknown (update pooltag.txt)"
_POOL_TAG_LINE_RE = re.compile(
    r"^\s*(?:Pooltag (?P<tag>.+?)|Owning component) : (?P<desc>.*?)(?:, Binary : (?P<binary>.*?))?\s*$"
)
# "Searching NonPaged pool (823b1000 : 82800000) for Tag: SeSd" (XP), Windows 10/11 (a live-dump
# leak write-up): "Scanning large pool allocation table for tag 0x61646d61 (amda) (ffffda0fe5b10000 : ...)",
# "Searching nonpaged pool (ffffda0000000000 : ffffea0000000000) for tag 0x61646d61 (amda)"
_POOL_TAG_RE = re.compile(r"for Tag: (?P<tag>\S+)|for tag 0x[0-9a-fA-F]+ \((?P<tag2>[^)]*)\)")
# and its rows, no pool header and no state: "ffffda001accb5f0 : tag amda, size     0x140, Nonpaged pool"
_POOLFIND_ROW_RE = re.compile(
    r"^\s*(?P<addr>[0-9a-fA-F`]{8,17}) : tag (?P<tag>.{1,4}?), size\s+(?P<size>0x[0-9a-fA-F]+), (?P<type>\S.*?)\s*$"
)
# "Pool page e1001050 region is Paged pool"
_POOL_REGION_RE = re.compile(r"^\s*Pool page (?P<page>[0-9a-fA-F`]+) region is (?P<region>.*?)\s*$")
# What !pool prints when the address is no pool block (Windows 11 write-ups, `!pool` of a freed
# page and of pageable code): the checks it made and why they failed, kept as warnings.
# "fffff803712e5000 is not a valid large pool allocation, checking large session pool...",
# "Unable to read large session pool table (Session data is not present in mini and kernel-only dumps)",
# "fffff803712e5000 is not valid pool. Checking for freed (or corrupt) pool",
# "Address fffff803712e5000 could not be read. It may be a freed, invalid or paged out page"
_POOL_COMPLAINT_RE = complaint_re(r"\S+ is not (?:a )?valid (?:large )?pool\b", r"(?:Address )?\S+ could not be read")


def _block(m: re.Match[str], **read: Any) -> dict[str, Any]:
    """A block whose line prints its address, size and tag (a pool header's, or a special-pool
    page's): those, the ``*`` mark, what follows the tag in ``details``, and ``read``."""
    tag, _, details = m.group("tag").strip().partition(" ")
    return {
        "address": addr(m.group("addr")),
        "size": "0x" + m.group("size").lower(),
        **read,
        "tag": tag or None,
        "contains_address": m.group("mark") is not None,
        "details": details.strip() or None,
    }


def _pool(lines: list[str], out: dict[str, Any]) -> None:
    blocks: list[dict[str, Any]] = out["pool_blocks"]
    for line in lines:
        m = _POOL_BLOCK_RE.match(line)
        if m is not None:
            prev = "0x" + m.group("prev").lower()
            blocks.append(_block(m, previous_size=prev, state=m.group("state").strip()))
            continue
        sp = _POOL_SPECIAL_RE.match(line)
        if sp is not None:
            blocks.append(_block(sp, data=addr(sp.group("data")), pool_type=sp.group("type").strip()))
            continue
        g = _POOL_LARGE_RE.match(line)
        if g is not None:
            blocks.append(
                {
                    "address": addr(g.group("addr")),
                    "size": g.group("size").lower(),
                    "state": "Allocated",  # "large page allocation"
                    "tag": g.group("tag"),
                    "contains_address": g.group("mark") is not None,
                    "large": True,
                }
            )
            continue
        pr = _PARTIAL_POOL_RE.match(line)
        if pr is not None:
            size = "0x" + pr.group("size").lower() if pr.group("size") else ""
            read = {"address": addr(pr.group("addr")), "size": size, "contains_address": pr.group("mark") is not None}
            blocks.append(partial_row(line, **read))
            continue
        d = _POOL_TAG_LINE_RE.match(line)
        if d is not None:
            if blocks:  # kd prints it under the block it describes
                blocks[-1].update(description=d.group("desc") or None, binary=d.group("binary"))
            continue
        f = _POOLFIND_ROW_RE.match(line)
        if f is not None:
            blocks.append(
                {
                    "address": addr(f.group("addr")),
                    "size": f.group("size").lower(),
                    "tag": f.group("tag").rstrip(),
                    "pool_type": f.group("type"),
                }
            )
            continue
        t = _POOL_TAG_RE.search(line)
        if t is not None:
            out["fields"].setdefault("tag", t.group("tag") or t.group("tag2"))
            continue
        r = _POOL_REGION_RE.match(line)
        if r is not None:
            out["fields"]["region"] = r.group("region")
            out["fields"].setdefault("pool_page", addr(r.group("page")))
            continue
        if _POOL_COMPLAINT_RE.match(line):
            out["warnings"].append(line.strip())
    if blocks and not out.get("address"):
        marked = [b for b in blocks if b.get("contains_address")]
        if marked:
            out["address"] = marked[0]["address"]


# Rows, old layout (" 1394        1      520         0        0UNKNOWN pooltag '1394', please update
# pooltag.txt": descriptions glued to the last number) and Windows 10 (" Cont      1094      6525216
# 0            0\tContiguous physical memory allocations for device drivers": a tab before the
# description). The tag is four characters, blank-padded ("Abc "), after one blank; a paste may
# indent the whole table ("    Abc         0        0     36405 33930272 ", a docs list item).
_POOLUSED_TAG = r"^(?:\s(?P<tag>\S.{3})|\s*(?P<tag2>\S{1,4}))"
_POOLUSED_ROW_RE = re.compile(
    _POOLUSED_TAG + r"\s+(?P<npa>\d+)\s+(?P<npu>\d+)\s+(?P<pa>\d+)\s+(?P<pu>\d+)(?P<desc>.*)$"
)
# `!poolused 1` (verbose) prints frees and their difference too, per pool (an HEVD exploit's notes,
# Windows 10, `!poolused 1 Hack`): " Hack           1           0         1          112
# 0           0         0            0\tUNKNOWN pooltag 'Hack', please update pooltag.txt"
_POOLUSED_VERBOSE_ROW_RE = re.compile(
    _POOLUSED_TAG + r"\s+(?P<npa>\d+)\s+(?P<npf>\d+)\s+(?P<npd>-?\d+)\s+(?P<npu>\d+)"
    r"\s+(?P<pa>\d+)\s+(?P<pf>\d+)\s+(?P<pd>-?\d+)\s+(?P<pu>\d+)(?P<desc>.*)$"
)
_POOLUSED_TOTAL_RE = re.compile(r"^\s*TOTAL\s+(?P<npa>\d+)\s+(?P<npu>\d+)\s+(?P<pa>\d+)\s+(?P<pu>\d+)\s*$")
_POOLUSED_VERBOSE_TOTAL_RE = re.compile(
    r"^\s*TOTAL\s+(?P<npa>\d+)\s+(?P<npf>\d+)\s+(?P<npd>-?\d+)\s+(?P<npu>\d+)"
    r"\s+(?P<pa>\d+)\s+(?P<pf>\d+)\s+(?P<pd>-?\d+)\s+(?P<pu>\d+)\s*$"
)
# " Tag    Allocs     Used    Allocs     Used", verbose " Tag       Allocs       Frees      Diff
#         Used       Allocs       Frees      Diff         Used": where the last numeric column
# ends, and which row layout follows (what precedes it is the sort order and the column groups).
_POOLUSED_HEADER_RE = re.compile(
    r"^\s*Tag\s+Allocs\s+(?P<verbose>Frees\s+Diff\s+)?Used\s+Allocs\s+(?:Frees\s+Diff\s+)?Used\s*$"
)
# What kd prints before the table when it cannot do as asked (Windows Internals notes, a
# `!poolused 2` of a Windows 10 dump): "*** CacheSize too low - increasing to 128 MB", and the
# shared complaint heads (symbol loading, "Unable to ...") -- warnings, never rows.
_POOLUSED_COMPLAINT_RE = complaint_re()
# the first characters a complaint head can have ("*** ", "Unable", "Could", "Cannot", "Error",
# "ERROR:", "WARNING", "ReadMemory", "Invalid "): blank lines and progress dots skip the regex
_COMPLAINT_HEADS = frozenset("*UCEWRI")
# the verbose columns: (row group, PoolTagUsage field, TOTAL field)
_POOLUSED_VERBOSE = (
    ("npf", "nonpaged_frees", "total_nonpaged_frees"),
    ("npd", "nonpaged_diff", "total_nonpaged_diff"),
    ("pf", "paged_frees", "total_paged_frees"),
    ("pd", "paged_diff", "total_paged_diff"),
)


def _poolused(lines: list[str], out: dict[str, Any]) -> None:
    # Descriptions are glued to the last number ("0UNKNOWN pooltag", "01394 OHCI host..."):
    # when a description starts with a digit, split at the header's column end instead.
    last_col_end: int | None = None
    row_re, total_re, verbose = _POOLUSED_ROW_RE, _POOLUSED_TOTAL_RE, False
    for line in lines:
        h = _POOLUSED_HEADER_RE.match(line)
        if h is not None:
            last_col_end = len(line.rstrip())
            verbose = h.group("verbose") is not None
            row_re = _POOLUSED_VERBOSE_ROW_RE if verbose else _POOLUSED_ROW_RE
            total_re = _POOLUSED_VERBOSE_TOTAL_RE if verbose else _POOLUSED_TOTAL_RE
            continue
        t = total_re.match(line)
        if t is not None:
            out["fields"].update(
                total_nonpaged_allocs=t.group("npa"),
                total_nonpaged_used=t.group("npu"),
                total_paged_allocs=t.group("pa"),
                total_paged_used=t.group("pu"),
            )
            if verbose:
                out["fields"].update({total: t.group(g) for g, _, total in _POOLUSED_VERBOSE})
            continue
        m = row_re.match(line) if last_col_end is not None else None
        if m is not None and last_col_end is not None:
            paged_used, desc = m.group("pu"), m.group("desc")
            if m.end("pu") > last_col_end >= m.start("pu") + 1:
                cut = last_col_end - m.start("pu")
                paged_used, desc = paged_used[:cut], paged_used[cut:] + desc
            row: dict[str, Any] = {
                "tag": (m.group("tag") or m.group("tag2")).rstrip(),
                "nonpaged_allocs": int(m.group("npa")),
                "nonpaged_used": int(m.group("npu")),
                "paged_allocs": int(m.group("pa")),
                "paged_used": int(paged_used),
                "description": desc.strip() or None,
            }
            if verbose:
                row.update({name: int(m.group(g)) for g, name, _ in _POOLUSED_VERBOSE})
            out["pool_usage"].append(row)
            continue
        if "Sorting by" in line:
            out["fields"]["sorting"] = line.split("Sorting by", 1)[1].strip()
        elif line.lstrip()[:1] in _COMPLAINT_HEADS and _POOLUSED_COMPLAINT_RE.match(line):
            out["warnings"].append(line.strip())


# --------------------------------------------------------------------------- !pte

# "PXE at FFFFF5FAFD7EBF80    PPE at ...", x86 "PDE at   C0300000        PTE at C00004BC" (docs:
# blanks after "at"), and a paste with the columns run together ("PXE at FFFF844221108018PPE at ...")
_PTE_LEVEL_RE = re.compile(r"(?P<level>PXE|PPE|PDE|PTE) at\s+(?P<addr>[0-9a-fA-F`]+)")
_PTE_CONTAINS_RE = re.compile(r"\bcontains (?P<value>[0-9a-fA-F`]+)")
# the third line, one column per level: "pfn 4f09      ---DA--KWEV", or "not valid" for a level
# that maps nothing; the lines under it then say what the entry holds ("Page has been freed",
# "Proto: FFFFC182CC1FFDF8", "Transition: 166b7", "Protect: 4 - ReadWrite", "DemandZero")
_PTE_PFN_RE = re.compile(r"\bpfn (?P<pfn>[0-9a-fA-F]+)\s+(?P<flags>[-A-Z]+)|\b(?P<invalid>not valid)\b")
# "pfn 400       -GLDA--KWEV   LARGE PAGE pfn 544": the PDE (or PPE) maps a large page, and
# the last pfn is the physical frame of the VA itself, inside that page (0x400 + 0x144).
_PTE_LARGE_RE = re.compile(r"\bLARGE PAGE pfn (?P<pfn>[0-9a-fA-F]+)")
# "VA fffff80240d322f9" (x64) or the leading "801544F4  - PDE at ..." (x86)
_PTE_VA_RE = re.compile(r"^\s*(?:VA\s+(?P<va>[0-9a-fA-F`]+)|(?P<va2>[0-9a-fA-F`]{8,17})\s+-\s)")
# What !pte prints when it cannot walk the tables (kdexts; a Windows 11 dump write-up):
# "Unable to get PXE FFFFD7EBF5F00120", "Levels not implemented for this platform",
# 'Page 19e511 not present in the dump file. Type ".hh dbgerr004" for details'
_PTE_COMPLAINT_RE = complaint_re("Levels not implemented", "Page [0-9a-fA-F]+ not present")


def _pte(lines: list[str], out: dict[str, Any]) -> None:
    levels: list[dict[str, Any]] = out["pte_levels"]
    contains: list[str] = []
    columns: list[tuple[str, str] | None] = []  # per level: (pfn, flags), or None for "not valid"
    details: list[str] = []
    large_level = -1  # the level whose entry maps a large page ("LARGE PAGE pfn" follows its column)
    for line in lines:
        if _PTE_COMPLAINT_RE.match(line):
            out["warnings"].append(line.strip())
            continue
        v = _PTE_VA_RE.match(line)
        if v is not None:
            out["address"] = addr(v.group("va") or v.group("va2"))
        before = len(levels) + len(contains) + len(columns)
        levels.extend(
            {"level": m.group("level"), "address": addr(m.group("addr"))} for m in _PTE_LEVEL_RE.finditer(line)
        )
        contains.extend(addr(m.group("value")) for m in _PTE_CONTAINS_RE.finditer(line))
        columns.extend(
            None if p.group("invalid") else ("0x" + p.group("pfn").lower(), p.group("flags"))
            for p in _PTE_PFN_RE.finditer(line)
        )
        large = _PTE_LARGE_RE.search(line)
        if large is not None:
            out["fields"].update(large_page="true", large_page_pfn="0x" + large.group("pfn").lower())
            # it stands in the next level's column: the column before it maps the large page
            large_level = len(columns) - 1
        elif columns and v is None and before == len(levels) + len(contains) + len(columns) and line.strip():
            details.append(line.strip())
    for level, value in zip(levels, contains, strict=False):
        level["contains"] = value
    if 0 <= large_level < len(levels):
        levels[large_level]["large_page"] = True
    for level, column in zip(levels, columns, strict=False):
        if column is None:
            level["valid"] = False
        else:
            level["pfn"], level["flags"] = column
            level["valid"] = column[1].endswith("V")  # the last flag column: V, valid
    if details and levels:
        # the lines under the pfn row describe the entry that maps nothing (the first "not valid")
        target = next((lv for lv in levels if lv.get("valid") is False), levels[-1])
        target["details"] = details


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
    "heap": heap,
    "vad": _vad,
}
