"""``!heap``: the user-mode heap extension, in the layouts its options print.

One reader for every option, line by line, because kd names the option only on the command line
and authors paste the output of ``!heap -s``, ``-p -a``, ``-flt``, ``-l``, ``-x``, ``-srch``,
``-stat -h`` and ``-a`` under a variety of commands (``!ntsdexts.heap -a``, ``!heap 002057b8 -x``).
Each layout has a line shape no other one has, so the shapes are tried in turn:

- ``heap_summaries``: the ``!heap -s`` table (``Heap Flags Reserv Commit Virt Free List UCR Virt
  Lock Fast``) with the ``External fragmentation`` lines kd prints under a row, and the plain
  ``!heap`` index (``Index Address Name``);
- ``heap_entries``: heap blocks (the ``HEAP_ENTRY`` rows of ``-p -a``/``-flt``/``-srch``, the
  ``Entry User Heap Segment`` rows of ``-l``/``-x``, the ``Address: Prev . Cur [flags]`` rows of
  ``-a``); ``heap_page_blocks``: the page-heap block of ``-p -a``; ``frames``: its stack trace;
- ``heap_stats``: the ``size #blocks - total (percent)`` rows of ``-stat -h``;
- ``fields``: the scalars (``LFH Key``, ``Termination on corruption``, ``heap``, ``state``...).

Complaints inside the output (``ReadMemory error ...``, ``ERROR: ...``) go to ``warnings``.
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr
from kdmcp.parse.frames import site_fields
from kdmcp.parse.objects.fields import KV_RE, complaint_re
from kdmcp.parse.partial import partial_row

_A = r"[0-9a-fA-F`]{8,17}"  # an address column, with or without the backtick

# !heap -s rows (docs and write-ups, XP to Windows 11; the x64 table is 8 columns wider):
# "0000015d85bb0000 08000002    8376   6816   8176    254    97     5    1      3   LFH"
# "002e0000 00000002    1024    196   1024      3     4     1    0      0   LFH"
# The last column is blank for a heap without a front end; one published table prints a
# letter in the Lock column ("00000218f1710000 00000002   65320 ... 16    2      c   LFH").
_SUMMARY_RE = re.compile(
    rf"^(?P<heap>{_A})\s+(?P<flags>[0-9a-fA-F]{{8}})\s+(?P<reserve>\d+)\s+(?P<commit>\d+)\s+(?P<virt>\d+)"
    r"\s+(?P<free>\d+)\s+(?P<list>\d+)\s+(?P<ucr>\d+)\s+(?P<vblocks>\d+)\s+(?P<lock>[0-9a-fA-F]+)"
    r"(?:\s+(?P<fast>\S+))?\s*$"
)
# "    External fragmentation  38 % (224 free blocks)",
# "    Virtual address fragmentation  95 % (19 uncommited ranges)"
_FRAGMENTATION_RE = re.compile(
    r"^\s+(?P<kind>External|Virtual address) fragmentation\s+(?P<pct>\d+) % \((?P<count>\d+) [^)]*\)"
)
# "LFH Key                   : 0x64ecab356b9e5983", "Termination on corruption : ENABLED"
_GLOBAL_RE = re.compile(r"^(?P<key>LFH Key|Termination on corruption)\s*: (?P<value>\S.*?)\s*$")
# "NtGlobalFlag enables following debugging aids for new heaps:" then one indented aid a line
_AIDS_RE = re.compile(r"^NtGlobalFlag enables following debugging aids")
# plain !heap: "Index   Address  Name      Debugging options enabled" then "  1:   00250000 "
_INDEX_HEADER_RE = re.compile(r"^Index\s+Address\s+Name\b")
_INDEX_ROW_RE = re.compile(rf"^\s*(?P<index>\d+):\s+(?P<heap>{_A})(?:\s+(?P<name>\S.*?))?\s*$")

# "        0000015da8026b50 0005 0000  [00]   0000015da8026b80    00028 - (busy)"
_ENTRY_RE = re.compile(
    rf"^\s+(?P<entry>{_A}) (?P<size>[0-9a-fA-F]{{4}}) (?P<prev>[0-9a-fA-F]{{4}})\s+\[(?P<flags>[0-9a-fA-F]+)\]"
    r"\s+(?P<user>[0-9a-fA-F`]+)\s+(?P<usize>[0-9a-fA-F]+) - \((?P<state>[^)]*)\)"
)
# -srch (XP): "        00099A48: 0018 : 0005 [01] - 00099A50 (000000B8) - (busy)"
_SRCH_ENTRY_RE = re.compile(
    rf"^\s+(?P<entry>{_A}): (?P<size>[0-9a-fA-F]+) : (?P<prev>[0-9a-fA-F]+) \[(?P<flags>[0-9a-fA-F]+)\]"
    r" - (?P<user>[0-9a-fA-F`]+) \((?P<usize>[0-9a-fA-F]+)\) - \((?P<state>[^)]*)\)"
)
# the symbol kd prints under an entry: "          ole32!CALLFRAME_CACHE<...>::`vftable'" (-srch),
# "          unknown!printable" (-flt)
_ENTRY_SYMBOL_RE = re.compile(r"^\s{6,}(?P<symbol>[^\s!]+![^\s].*?)\s*$")
# -l / -x: "Entry     User      Heap      Segment       Size  PrevSize  Flags" (the docs print
# "## Entry" and "## 1:Entry"), then
# "001b2958  001b2960  00170000  00000000        40        18  busy extra"
# Current engines add an "Unused" column, print "-" for the PrevSize of an LFH block (LFH
# blocks have no previous-size field) and flag words such as "LFH;busy" / "LFH;free"
# (`!exts.heap -x` quoted in a heap-tool README, stored-index file 11778372020):
# "00000234c1b1a9a0  00000234c1b1a9b0  00000234c1450000  00000234c1a5e870  2c0  -  f  LFH;busy "
_BLOCK_HEADER_RE = re.compile(
    r"^(?:#+ )?(?:\d+:)?Entry\s+User\s+Heap\s+Segment\s+Size\s+PrevSize\s+(?:Unused\s+)?Flags"
)
_BLOCK_ROW_RE = re.compile(
    rf"^\s*(?P<entry>{_A})\s+(?P<user>{_A})\s+(?P<heap>{_A})\s+(?P<seg>{_A})\s+(?P<size>[0-9a-fA-F]+)"
    r"\s+(?P<prev>[0-9a-fA-F]+|-)(?:\s+(?P<unused>[0-9a-fA-F]+))?\s+(?P<flags>[A-Za-z_;]+(?: [A-Za-z_;]+)*)\s*$"
)
# A -l/-x row by its start (the Entry and User columns), whatever follows: one _BLOCK_ROW_RE does
# not read is kept as a partial block (kdmcp/parse/partial.py).
_PARTIAL_BLOCK_ROW_RE = re.compile(rf"^\s*{_A}\s+{_A}(?=\s|$)")
_LEAKS_RE = re.compile(r"^\s*(?P<count>\d+) leaks detected")
# -x -v: "Search VM for address range 002057a8 - 002057ff : 00205990 (002057d0),"
_SEARCH_RE = re.compile(r"^\s*Search VM for address range (?P<range>\S+ - \S+) : (?P<found>.*?),?\s*$")
# -a (XP): "00250bc8: 00038 . 00040 [07] - busy (24), tail fill (NTDLL!LDR Database)",
# "002527b0: 00058 . 00010 [04] free fill", "002a4370: 00098 . 01c90 [14] - free"
_A_ROW_RE = re.compile(
    rf"^(?P<entry>{_A}): (?P<prev>[0-9a-fA-F]+) \. (?P<size>[0-9a-fA-F]+) \[(?P<flags>[0-9a-fA-F]+)\]"
    r" (?:- )?(?P<state>(?:busy|free)(?: fill)?)(?: \((?P<used>[0-9a-fA-F]+)\))?(?P<rest>.*)$"
)
_A_TAG_RE = re.compile(r"\((?P<tag>[^()]*)\)\s*$")
_FREE_LIST_RE = re.compile(r"^\s+FreeList\[")
_SEGMENT_ENTRIES_RE = re.compile(r"^\s+Heap entries for Segment")
# the -a layout opens with the index or a "Segment at ... to ..." line: only then are its
# "Name: value" lines heap fields
_A_LAYOUT_RE = re.compile(r"^\s+Segment at \S+ to \S+")

# page heap / -p -a
_ADDRESS_RE = re.compile(r"^\s*address (?P<addr>[0-9a-fA-F`]+) found in")
_HEAP_AT_RE = re.compile(r"^\s*(?P<what>_HEAP|_DPH_HEAP_ROOT) @ (?P<addr>[0-9a-fA-F`]+)")
# "in free-ed allocation (  DPH_HEAP_BLOCK:  VirtAddr  VirtSize)" then
# "                                    f663924:          bde8000             4000", and a busy
# block's "(  DPH_HEAP_BLOCK:  UserAddr  UserSize -  VirtAddr  VirtSize)" then
# "                             25ca375ca90:      25cb5e67d90             126e -      25cb5e67000             3000"
# (a libdwarf fuzzing write-up, stored-index file 32773418754)
_DPH_BLOCK_RE = re.compile(
    r"^\s+(?P<block>[0-9a-fA-F]+):\s+(?:(?P<user>[0-9a-fA-F]+)\s+(?P<usize>[0-9a-fA-F]+)\s+-\s+)?"
    r"(?P<virt>[0-9a-fA-F]+)\s+(?P<vsize>[0-9a-fA-F]+)\s*$"
)
_STATE_RE = re.compile(r"^\s*in (?P<state>free-ed|busy) allocation")
_TRACE_RE = re.compile(r"^\s+Trace: (?P<trace>[0-9a-fA-F]+)\s*$")
# a stack trace line: "        7ffc3be3d887 ntdll!RtlpAllocateHeapInternal+0x0000000000096b87",
# "        7ff74af3d9a8 +0x0000000000000058", "    10006f2b +0x0000003b". The site must look like
# one (module!symbol, module+0x, +0x): a -stat row ("    24b238 1 - 24b238  (27.37)") is not a frame.
_FRAME_RE = re.compile(
    r"^\s+(?P<ret>[0-9a-fA-F]{6,16}) (?P<site>(?:[^\s!]+!\S|\+0x[0-9a-fA-F]|[\w.-]+\+0x[0-9a-fA-F]).*)$"
)

# -stat -h: " heap @ 0000015d85bb0000", "group-by: TOTSIZE max-display: 20", then
# "    74          74e   -  34f58      (16.56)" / "    28 14b40 - 33c200  (38.60)"
_STAT_HEAP_RE = re.compile(r"^\s*heap @ (?P<addr>[0-9a-fA-F`]+)\s*$")
_GROUP_BY_RE = re.compile(r"^\s*group-by: (?P<group>\S+)(?:\s+max-display: (?P<max>\d+))?")
_STAT_ROW_RE = re.compile(
    r"^\s+(?P<size>[0-9a-fA-F]+)\s+(?P<blocks>[0-9a-fA-F]+)\s+-\s+(?P<total>[0-9a-fA-F]+)\s+\((?P<pct>\d+(?:\.\d+)?)\)\s*$"
)

# what the heap extension prints when it cannot read or walk something
_COMPLAINT_RE = complaint_re("HEAP ERROR")


def _hex(text: str) -> str:
    return "0x" + text.lower()


def heap(lines: list[str], out: dict[str, Any]) -> None:
    """Read ``!heap`` output of any option into ``out`` (see the module docstring)."""
    fields: dict[str, str] = out["fields"]
    summaries: list[dict[str, Any]] = out["heap_summaries"]
    entries: list[dict[str, Any]] = out["heap_entries"]
    current_heap: str | None = None
    in_aids = in_index = in_blocks = in_a_layout = in_free_list = False
    aids: list[str] = []
    last_entry: dict[str, Any] | None = None
    for line in lines:
        if in_aids:
            if line.startswith((" ", "\t")) and line.strip():
                aids.append(line.strip())
                continue
            in_aids = False
        m = _SUMMARY_RE.match(line)
        if m is not None:
            summaries.append(
                {
                    "heap": addr(m.group("heap")),
                    "flags": m.group("flags"),
                    "reserve_kb": int(m.group("reserve")),
                    "commit_kb": int(m.group("commit")),
                    "virtual_kb": int(m.group("virt")),
                    "free_kb": int(m.group("free")),
                    "free_list_length": int(m.group("list")),
                    "ucr_blocks": int(m.group("ucr")),
                    "virtual_blocks": int(m.group("vblocks")),
                    "lock_contention": m.group("lock"),
                    "fast_heap": m.group("fast"),
                }
            )
            continue
        m = _ENTRY_RE.match(line) or _SRCH_ENTRY_RE.match(line)
        if m is not None:
            last_entry = {
                "address": addr(m.group("entry")),
                "size": _hex(m.group("size")),
                "previous_size": _hex(m.group("prev")),
                "flags": m.group("flags"),
                "user_pointer": addr(m.group("user")),
                "user_size": _hex(m.group("usize")),
                "state": m.group("state"),
                "heap": current_heap,
            }
            entries.append(last_entry)
            continue
        if last_entry is not None:
            s = _ENTRY_SYMBOL_RE.match(line)
            if s is not None and last_entry.get("symbol") is None and _FRAME_RE.match(line) is None:
                last_entry["symbol"] = s.group("symbol")
                continue
        last_entry = None
        f = _FRAME_RE.match(line)
        if f is not None:
            frame = site_fields(f.group("site"))
            frame["return_address"] = addr(f.group("ret"))
            out["frames"].append(frame)
            continue
        r = _STAT_ROW_RE.match(line)
        if r is not None:
            out["heap_stats"].append(
                {
                    "size": int(r.group("size"), 16),
                    "blocks": int(r.group("blocks"), 16),
                    "total": int(r.group("total"), 16),
                    "percent": float(r.group("pct")),
                }
            )
            continue
        if in_blocks and _PARTIAL_BLOCK_ROW_RE.match(line) and _BLOCK_ROW_RE.match(line) is None:
            entries.append(partial_row(line, address=addr(line.split()[0])))
            continue
        if in_blocks:
            b = _BLOCK_ROW_RE.match(line)
            if b is not None:
                entries.append(
                    {
                        "address": addr(b.group("entry")),
                        "user_pointer": addr(b.group("user")),
                        "heap": addr(b.group("heap")),
                        "segment": addr(b.group("seg")),
                        "size": _hex(b.group("size")),
                        "previous_size": None if b.group("prev") == "-" else _hex(b.group("prev")),
                        "unused": _hex(b.group("unused")) if b.group("unused") else None,
                        "state": b.group("flags"),
                    }
                )
                continue
        a = _A_ROW_RE.match(line)
        if a is not None:
            tag = _A_TAG_RE.search(a.group("rest"))
            entries.append(
                {
                    "address": addr(a.group("entry")),
                    "previous_size": _hex(a.group("prev")),
                    "size": _hex(a.group("size")),
                    "flags": a.group("flags"),
                    "state": a.group("state"),
                    "used": _hex(a.group("used")) if a.group("used") else None,
                    "tag": tag.group("tag") if tag is not None else None,
                    "heap": current_heap,
                    "free_list": in_free_list,
                }
            )
            continue
        if in_index:
            i = _INDEX_ROW_RE.match(line)
            if i is not None:
                current_heap = addr(i.group("heap"))
                summaries.append({"heap": current_heap, "index": int(i.group("index"))})
                continue
        if _other_line(line, out):
            continue
        if _BLOCK_HEADER_RE.match(line):
            in_blocks = True
        elif _INDEX_HEADER_RE.match(line):
            in_index = True
        elif _AIDS_RE.match(line):
            in_aids = True
        elif _FREE_LIST_RE.match(line):
            in_free_list = in_a_layout = True
        elif _SEGMENT_ENTRIES_RE.match(line):
            in_free_list = False
        elif _A_LAYOUT_RE.match(line):
            in_a_layout = True
            fields.setdefault("segment", line.strip())
        else:
            h = _HEAP_AT_RE.match(line)
            if h is not None:
                current_heap = addr(h.group("addr"))
                fields.setdefault("heap", current_heap)
                fields.setdefault("heap_type", h.group("what"))
            elif in_a_layout:
                kv = KV_RE.match(line)
                if kv is not None:
                    fields.setdefault(kv.group("key").strip(), kv.group("value").strip())
    if aids:
        fields["debugging_aids"] = ", ".join(aids)


def _other_line(line: str, out: dict[str, Any]) -> bool:
    """The one-line facts: global settings, page-heap lines, -stat and -l/-x trailers, complaints.
    True if the line was one of them."""
    fields: dict[str, str] = out["fields"]
    g = _GLOBAL_RE.match(line)
    if g is not None:
        fields[g.group("key")] = g.group("value")
        return True
    fr = _FRAGMENTATION_RE.match(line)
    if fr is not None:
        if out["heap_summaries"]:  # kd prints it under the row of the heap it describes
            row = out["heap_summaries"][-1]
            if fr.group("kind") == "External":
                row.update(external_fragmentation_percent=int(fr.group("pct")))
                row.update(external_fragmentation_free_blocks=int(fr.group("count")))
            else:
                row.update(virtual_fragmentation_percent=int(fr.group("pct")))
                row.update(virtual_fragmentation_ranges=int(fr.group("count")))
        return True
    a = _ADDRESS_RE.match(line)
    if a is not None:
        out["address"] = addr(a.group("addr"))
        return True
    s = _STATE_RE.match(line)
    if s is not None:
        fields["state"] = s.group("state")
        return True
    b = _DPH_BLOCK_RE.match(line)
    if b is not None:
        out["heap_page_blocks"].append(
            {
                "block": addr(b.group("block")),
                "user_address": addr(b.group("user")) if b.group("user") else None,
                "user_size": _hex(b.group("usize")) if b.group("usize") else None,
                "virtual_address": addr(b.group("virt")),
                "virtual_size": _hex(b.group("vsize")),
            }
        )
        return True
    t = _TRACE_RE.match(line)
    if t is not None:
        fields["trace"] = t.group("trace")
        return True
    h = _STAT_HEAP_RE.match(line)
    if h is not None:
        fields.setdefault("heap", addr(h.group("addr")))
        return True
    gb = _GROUP_BY_RE.match(line)
    if gb is not None:
        fields["group_by"] = gb.group("group")
        if gb.group("max"):
            fields["max_display"] = gb.group("max")
        return True
    lk = _LEAKS_RE.match(line)
    if lk is not None:
        fields["leaks_detected"] = lk.group("count")
        return True
    sv = _SEARCH_RE.match(line)
    if sv is not None:
        fields["search_range"] = sv.group("range")
        fields["search_found"] = sv.group("found")
        return True
    if _COMPLAINT_RE.match(line):
        out["warnings"].append(line.strip())
        return True
    return False
