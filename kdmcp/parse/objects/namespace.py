"""The object manager's namespace and handles: ``!object`` (an object or a directory), ``!handle``."""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr
from kdmcp.parse.objects.fields import (
    ADDR,
    Handler,
)
from kdmcp.parse.objects.system import complaints
from kdmcp.parse.partial import partial_row

# --------------------------------------------------------------------------- !object

# "Object: ffffc00b074166a0  Type: (ffffe0083b768690) Directory"; the type name runs to the
# end of the line ("Type: (85261eb0) ALPC Port").
_OBJECT_HEAD_RE = re.compile(
    r"^\s*Object: (?P<addr>[0-9a-fA-F`]+)\s+Type: \((?P<taddr>[0-9a-fA-F`]+)\) (?P<type>\S.*)$"
)
_OBJECT_PAIR_RE = re.compile(r"(?P<key>ObjectHeader|HandleCount|PointerCount): (?P<value>\S+)")
# "    Directory Object: 86a05750  Name: RPC Control": the name runs to the end of the line
# and may hold blanks; an unnamed object prints "Name:" with nothing after it.
_OBJECT_NAME_RE = re.compile(r"^\s*Directory Object: (?P<dir>[0-9a-fA-F`]+)(?:\s+Name:(?: (?P<name>\S.*)|)|)$")
# A symbolic link: "    Target String is '\Device\HarddiskVolume2'" and
# "    Drive Letter Index is 3 (C:)".
_OBJECT_TARGET_RE = re.compile(r"^\s*Target String is '(?P<target>.*)'$")
_OBJECT_DRIVE_RE = re.compile(r"^\s*Drive Letter Index is (?P<index>\d+)(?: \((?P<letter>[^)]*)\)|)")
# "     00  ffffe0083e6a61f0 Device        00000044" / "         ffffe0083dcc4050 Device   00000030".
# Object type names are single words except "ALPC Port", the one kernel type whose name
# has a blank ("     01  8d5f6dc0 ALPC Port     SeLsaCommandPort"); names may have blanks
# too ("Directory     RPC Control"), so the type cannot be cut at the first blank run.
_DIR_ENTRY_RE = re.compile(
    r"^\s+(?:(?P<hash>[0-9a-fA-F]{2})\s+)?(?P<addr>" + ADDR + r")\s+(?P<type>ALPC Port|\w+)\s+(?P<name>.*)$"
)


def _object(lines: list[str], out: dict[str, Any]) -> None:
    fields: dict[str, str] = out["fields"]
    bucket: str | None = None
    for line in lines:
        m = _OBJECT_HEAD_RE.match(line)
        if m is not None:
            out["address"] = addr(m.group("addr"))
            fields["type"] = m.group("type")
            fields["type_address"] = addr(m.group("taddr"))
            continue
        e = _DIR_ENTRY_RE.match(line)
        if e is not None:
            if e.group("hash"):
                bucket = e.group("hash")
            out["directory"].append(
                {"hash": bucket, "address": addr(e.group("addr")), "type": e.group("type"), "name": e.group("name")}
            )
            continue
        n = _OBJECT_NAME_RE.match(line)
        if n is not None:
            fields.setdefault("Directory Object", n.group("dir"))
            if n.group("name"):
                fields.setdefault("Name", n.group("name"))
            continue
        t = _OBJECT_TARGET_RE.match(line)
        if t is not None:
            fields["target"] = t.group("target")
            continue
        d = _OBJECT_DRIVE_RE.match(line)
        if d is not None:
            fields["drive_letter_index"] = d.group("index")
            if d.group("letter"):
                fields["drive_letter"] = d.group("letter")
            continue
        for p in _OBJECT_PAIR_RE.finditer(line):
            fields.setdefault(p.group("key"), p.group("value"))
    if "Name" in fields:
        out["name"] = fields["Name"]


# --------------------------------------------------------------------------- !handle
#
# Kernel mode prints a handle table (Microsoft docs, !handle: "kd> !handle 0 4"; a Windows 10
# "1: kd> !handle 0 3 ffffc38e2c0dc080 File" in jasandoval1/windev_training):
#
#     PROCESS ffffc38e2c0dc080
#         SessionId: 1  Cid: 08fc    Peb: da309be000  ParentCid: 156c
#     Handle table at ffffa08f5ad26540 with 45 entries in use
#     0044: Object: ffffc38e2ff24e20  GrantedAccess: 0012019f (Protected) (Inherit) (Audit) Entry: ...
#     Object: ffffc38e2ff24e20  Type: (ffffc38e2c0fcf00) File           <- flag 2: the object block
#         ObjectHeader: ffffc38e2ff24df0 (new version)
#             HandleCount: 2  PointerCount: 65456
#             Directory Object: 00000000  Name: \Input {ConDrv}
#
# User mode prints one block per handle, its keys blank-aligned (docs: "0:000> !handle 8 f") or
# tab-aligned (newer cdb, DebugPrivilege's "0:000> !handle 0 f event": "  Type         \tEvent"),
# then with flag 1 alone a summary ("6 Handles" / "Type            Count" / "Event           3").

# "0004: Object: 80ed5238  GrantedAccess: 001f0fff (Protected)"
# "0000: free handle, Entry address e1002000, Next Entry fffffffe"
_HANDLE_RE = re.compile(
    r"^(?P<handle>[0-9a-fA-F]{4,}): (?:(?P<free>free handle)"
    r"|Object: (?P<obj>[0-9a-fA-F`]+)\s+GrantedAccess: (?P<access>[0-9a-fA-F]+))(?P<rest>.*)$"
)
# A kernel row by its start ("01f0: "), whatever follows: one _HANDLE_RE does not read is kept
# as a partial handle (kdmcp/parse/partial.py).
_PARTIAL_HANDLE_RE = re.compile(r"^(?P<handle>[0-9a-fA-F]{4,}):(?=\s|$)")
_FREE_TAIL_RE = re.compile(r"Entry address (?P<entry>[0-9a-fA-F`]+)(?:, Next Entry (?P<next>[0-9a-fA-F`]+))?")
# "New version of handle table at e1002000 with 380 Entries in use" (XP), "Kernel New version of
# handle table at ..." (flag 0x10), "Handle table at ffffa08f5ad26540 with 45 entries in use" (10)
_HANDLE_TABLE_RE = re.compile(r"[Hh]andle table at (?P<addr>[0-9a-fA-F`]+) with (?P<n>\d+) [Ee]ntries in use")
# The object block under each handle (flag 2, e.g. "!handle 0 3"), the lines !object prints:
# "        HandleCount: 2  PointerCount: 65536"
_OBJECT_COUNTS_RE = re.compile(r"^\s*HandleCount: (?P<handles>\d+)\s+PointerCount: (?P<pointers>\d+)")
# "    ObjectHeader: ffffc38e2ff23680 (new version)"
_OBJECT_HEADER_RE = re.compile(r"^\s*ObjectHeader: (?P<addr>[0-9a-fA-F`]+)")
# "(Protected) (Inherit) (Audit) Entry: ffffa08f5b1ff110" after the granted access
_HANDLE_ATTRIBUTE_RE = re.compile(r"\((\w+)\)")
_HANDLE_ENTRY_RE = re.compile(r"\bEntry: (?P<addr>[0-9a-fA-F`]+)")
_HANDLE_PROCESS_RE = re.compile(r"^\s*PROCESS (?P<addr>[0-9a-fA-F`]+)")
# The PROCESS header's ids, under it (Windows 7+: "    SessionId: 1  Cid: 08fc    Peb: da309be000
# ParentCid: 156c") or on its line (XP: "PROCESS 80559800  SessionId: 0  Cid: 0000 ..."), then
# "    DirBase: 1bc32002  ObjectTable: ffffa08f5ad26540  HandleCount:  45." (XP: "TableSize: 380.");
# the count may be "<Data Not Accessible>" (windev_training's "!handle 6c"): then it is not kept.
_PROCESS_IDS_RE = re.compile(
    r"SessionId: (?P<session>\S+)\s+Cid: (?P<cid>[0-9a-fA-F]+)\s+Peb: (?P<peb>[0-9a-fA-F`]+)"
    r"\s+ParentCid: (?P<parent>[0-9a-fA-F]+)"
)
_PROCESS_TABLE_RE = re.compile(
    r"^\s*DirBase: (?P<dirbase>[0-9a-fA-F`]+)\s+ObjectTable: (?P<table>[0-9a-fA-F`]+)"
    r"\s+(?P<key>HandleCount|TableSize):\s*(?:(?P<count>\d+)\.)?"
)
# "Searching for handles of type File" (kernel) / "7 handles of type Event" (user, the end)
_TYPE_FILTER_RE = re.compile(r"^(?:Searching for handles|(?P<n>\d+) handles) of type (?P<type>\S+)$")

# User mode: "Handle 8" / "Handle 0000000000000008", then "  Key<blanks or a tab>value" lines;
# the decoded rights under GrantedAccess are indented deeper ("         QueryState,ModifyState"),
# the object-specific lines by four ("    Event is Waiting"). A copy that lost the indent
# ("Type             File" under "Handle 0000000000000004") still reads.
_USER_HANDLE_RE = re.compile(r"^Handle (?P<handle>[0-9a-fA-F]+)$")
_USER_KEY_RE = re.compile(
    r"^ {0,2}(?P<key>Type|Attributes|GrantedAccess|HandleCount|PointerCount|Name)(?:[ \t]+(?P<value>\S.*))?$"
)
_GRANTED_RE = re.compile(r"^(?P<mask>(?:0x)?[0-9a-fA-F]+):?(?: \((?P<rights>[^)]*)\))?$")
# the case varies: "Object Specific Information" (the docs), "No Object Specific Information available"
# (a live Windows 10 cdb), "Object specific information" / "No object ... available" (a dump)
_USER_SPECIFIC_RE = re.compile(
    r"^  (?:Object specific information|No object specific information available)", re.IGNORECASE
)
_USER_RIGHTS_RE = re.compile(r"^ {5,}(?P<rights>\S.*)$")
_USER_INFO_RE = re.compile(r"^    (?P<info>\S.*)$")
# The object-specific lines ntsdexts decodes (DebugPrivilege's "0:000> !handle 0 f event" /
# "... mutant" / "... semaphore" write-ups): "Event Type Manual Reset", "Event is Waiting",
# "Mutex is Owned", "Mutant Owner 2dd8.23a0", "Semaphore Count 0", "Semaphore Limit 1"; read
# only under "Object specific information", so no other line pays for them.
_INFO_RE = re.compile(
    r"^(?:Event Type (?P<event_type>\w.*)|(?:Event|Mutex) is (?P<state>\w+)"
    r"|Mutant Owner (?P<owner>[0-9a-fA-F]+\.[0-9a-fA-F]+)|Semaphore (?P<sem>Count|Limit) (?P<n>\d+))$"
)
# "6 Handles" then "Type            Count" then "Event           3"
_SUMMARY_TOTAL_RE = re.compile(r"^(?P<n>\d+) Handles$")
_SUMMARY_HEAD_RE = re.compile(r"^Type\s+Count$")
_SUMMARY_ROW_RE = re.compile(r"^(?P<type>\w[\w ]*?)\s+(?P<count>\d+)$")


def _handle_object_line(line: str, entry: dict[str, Any]) -> bool:
    """Read one line of the object block under a kernel handle into its entry; False if none."""
    m = _OBJECT_HEAD_RE.match(line)
    if m is not None:
        entry.update(type=m.group("type"), type_address=addr(m.group("taddr")))
        return True
    m = _OBJECT_HEADER_RE.match(line)
    if m is not None:
        entry["object_header"] = addr(m.group("addr"))
        return True
    m = _OBJECT_COUNTS_RE.match(line)
    if m is not None:
        entry.update(handle_count=int(m.group("handles")), pointer_count=int(m.group("pointers")))
        return True
    m = _OBJECT_NAME_RE.match(line)
    if m is not None:
        entry["directory_object"] = addr(m.group("dir"))
        if m.group("name"):
            entry["name"] = m.group("name")
        return True
    return False


def _kernel_handle(h: re.Match[str], process: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"handle": "0x" + h.group("handle").lower(), "process": process}
    rest = h.group("rest")
    if h.group("free"):
        entry["free"] = True
        f = _FREE_TAIL_RE.search(rest)
        if f is not None:
            entry["entry"] = addr(f.group("entry"))
            if f.group("next"):
                entry["next_entry"] = addr(f.group("next"))
        return entry
    entry["object"] = addr(h.group("obj"))
    entry["granted_access"] = "0x" + h.group("access").lower()
    if rest:  # most XP-era rows end at the access mask
        entry["flags"] = _HANDLE_ATTRIBUTE_RE.findall(rest)
        e = _HANDLE_ENTRY_RE.search(rest)
        if e is not None:
            entry["entry"] = addr(e.group("addr"))
    return entry


def _user_key(entry: dict[str, Any], key: str, value: str | None) -> None:
    """One ``  Key  value`` line of a user-mode handle block."""
    if value is None:
        return
    if key == "Type":
        entry["type"] = value
    elif key == "Attributes":
        entry["attributes"] = value
    elif key == "GrantedAccess":
        # "GrantedAccess 0x100003:" - the colon introduces the decoded rights on the lines below;
        # newer cdb prints them inline: "GrantedAccess 0x1f0003 (Delete,ReadControl,...,ModifyState)"
        g = _GRANTED_RE.match(value)
        if g is None:
            entry["granted_access"] = value
            return
        entry["granted_access"] = g.group("mask").lower()
        if g.group("rights"):
            entry.setdefault("access_rights", []).extend(x.strip() for x in g.group("rights").split(",") if x.strip())
    elif key == "Name":
        if value != "<none>":
            entry["name"] = value
    elif value.isdigit():
        entry["handle_count" if key == "HandleCount" else "pointer_count"] = int(value)


def _handle(lines: list[str], out: dict[str, Any]) -> None:
    fields: dict[str, str] = out["fields"]
    handles: list[dict[str, Any]] = out["handles"]
    process: str | None = None
    section = ""  # user mode: "rights" / "info" under the current handle, "summary" after "Type Count"
    leftovers: list[str] = []  # what no pattern took: complaints among them go to warnings
    for line in lines:
        if not line:
            continue
        h = _HANDLE_RE.match(line)
        if h is not None:
            handles.append(_kernel_handle(h, process))
            section = ""
            continue
        u = _USER_HANDLE_RE.match(line)
        if u is not None:
            handles.append({"handle": "0x" + u.group("handle").lower()})
            section = ""
            continue
        ph = _PARTIAL_HANDLE_RE.match(line)
        if ph is not None:
            handles.append(partial_row(line, handle="0x" + ph.group("handle").lower(), process=process))
            section = ""
            continue
        # the summary first: its head "Type            Count" would read as a "Type" key
        if _handle_summary_line(line, out, section):
            section = "summary"
            continue
        if handles and section != "summary":
            within = _handle_body_line(line, handles[-1], section)
            if within is not None:
                section = within
                continue
        tb = _HANDLE_TABLE_RE.search(line)
        if tb is not None:
            fields.setdefault("handle_table", addr(tb.group("addr")))
            fields.setdefault("entries_in_use", tb.group("n"))
            continue
        p = _HANDLE_PROCESS_RE.match(line)
        if p is not None:
            process = addr(p.group("addr"))
            fields.setdefault("process", process)
            if "SessionId:" in line:
                _process_header(line, fields)
            continue
        if ("SessionId:" in line or "DirBase:" in line) and _process_header(line, fields):
            continue
        t = _TYPE_FILTER_RE.match(line)
        if t is not None:
            fields["type_filter"] = t.group("type")
            if t.group("n"):
                fields["handles_of_type"] = t.group("n")
            continue
        stripped = line.strip()
        if stripped.startswith("Image:"):
            fields.setdefault("image", stripped.split(":", 1)[1].strip())
        else:
            leftovers.append(line)
    out["warnings"].extend(complaints(leftovers))


def _process_header(line: str, fields: dict[str, str]) -> bool:
    """A PROCESS header's ids or table line into ``fields`` (the first process's, like
    ``process``); False if the line is neither."""
    m = _PROCESS_IDS_RE.search(line)
    if m is not None:
        fields.setdefault("session_id", m.group("session"))
        fields.setdefault("cid", "0x" + m.group("cid").lower())
        fields.setdefault("peb", addr(m.group("peb")))
        fields.setdefault("parent_cid", "0x" + m.group("parent").lower())
        return True
    t = _PROCESS_TABLE_RE.match(line)
    if t is not None:
        fields.setdefault("dir_base", addr(t.group("dirbase")))
        fields.setdefault("object_table", addr(t.group("table")))
        if t.group("count"):
            key = "process_handle_count" if t.group("key") == "HandleCount" else "table_size"
            fields.setdefault(key, t.group("count"))
        return True
    return False


def _handle_body_line(line: str, entry: dict[str, Any], section: str) -> str | None:
    """Read one line under a handle into it: the section that follows (``""``: none), or
    ``None`` if the line is not part of the handle's body."""
    if "object" in entry and _handle_object_line(line, entry):
        return ""
    k = _USER_KEY_RE.match(line)
    if k is not None:
        _user_key(entry, k.group("key"), k.group("value"))
        return "rights" if k.group("key") == "GrantedAccess" else ""
    if _USER_SPECIFIC_RE.match(line):
        return "info"
    if section == "rights":
        r = _USER_RIGHTS_RE.match(line)
        if r is not None:
            entry.setdefault("access_rights", []).extend(x.strip() for x in r.group("rights").split(",") if x.strip())
            return "rights"
    if section == "info":
        i = _USER_INFO_RE.match(line)
        if i is not None:
            info = i.group("info")
            entry.setdefault("object_info", []).append(info)
            _object_info(info, entry)
            return "info"
    return None


def _object_info(info: str, entry: dict[str, Any]) -> None:
    """Type what an object-specific line says (the line itself stays in ``object_info``)."""
    m = _INFO_RE.match(info)
    if m is None:
        return
    if m.group("sem"):
        entry["semaphore_count" if m.group("sem") == "Count" else "semaphore_limit"] = int(m.group("n"))
    else:
        key = next(k for k in ("event_type", "state", "owner") if m.group(k))
        entry[key] = m.group(key)


def _handle_summary_line(line: str, out: dict[str, Any], section: str) -> bool:
    """The user-mode summary: ``6 Handles``, the ``Type  Count`` head and its rows."""
    m = _SUMMARY_TOTAL_RE.match(line)
    if m is not None:
        out["fields"]["handle_total"] = m.group("n")
        return True
    if _SUMMARY_HEAD_RE.match(line):
        return True
    if section == "summary":
        r = _SUMMARY_ROW_RE.match(line)
        if r is not None:
            out["handle_types"].append({"type": r.group("type"), "count": int(r.group("count"))})
            return True
    return False


# the extensions this module reads, by name (``kdmcp.parse.objects`` dispatches on it)
HANDLERS: dict[str, Handler] = {
    "object": _object,
    "handle": _handle,
}
