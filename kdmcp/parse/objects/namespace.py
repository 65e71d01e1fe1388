"""The object manager's namespace and handles: ``!object`` (an object or a directory), ``!handle``."""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr
from kdmcp.parse.objects.fields import (
    ADDR,
    Handler,
)

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

# "0004: Object: 80ed5238  GrantedAccess: 001f0fff (Protected)"
# "0000: free handle, Entry address e1002000, Next Entry fffffffe"
_HANDLE_RE = re.compile(
    r"^(?P<handle>[0-9a-fA-F]{4,}): (?:(?P<free>free handle)"
    r"|Object: (?P<obj>[0-9a-fA-F`]+)\s+GrantedAccess: (?P<access>[0-9a-fA-F]+))(?P<rest>.*)$"
)
# "New version of handle table at e1002000 with 380 Entries in use" (XP),
# "Handle table at ffffa08f5ad26540 with 45 entries in use" (Windows 10)
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


def _handle_object_line(line: str, entry: dict[str, str]) -> bool:
    """Read one line of the object block under a handle into its entry; False if none."""
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
        entry.update(handle_count=m.group("handles"), pointer_count=m.group("pointers"))
        return True
    m = _OBJECT_NAME_RE.match(line)
    if m is not None:
        entry["directory_object"] = addr(m.group("dir"))
        if m.group("name"):
            entry["name"] = m.group("name")
        return True
    return False


def _handle(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        h = _HANDLE_RE.match(line)
        if h is not None:
            entry = {"handle": "0x" + h.group("handle").lower()}
            if h.group("free"):
                entry["free"] = "true"
            else:
                entry["object"] = addr(h.group("obj"))
                entry["granted_access"] = "0x" + h.group("access").lower()
                attrs = _HANDLE_ATTRIBUTE_RE.findall(h.group("rest"))
                if attrs:
                    entry["attributes"] = " ".join(attrs)
                e = _HANDLE_ENTRY_RE.search(h.group("rest"))
                if e is not None:
                    entry["entry"] = addr(e.group("addr"))
            out["entries"].append(entry)
            continue
        if out["entries"] and _handle_object_line(line, out["entries"][-1]):
            continue
        tb = _HANDLE_TABLE_RE.search(line)
        if tb is not None:
            out["fields"]["handle_table"] = addr(tb.group("addr"))
            out["fields"]["entries_in_use"] = tb.group("n")
            continue
        p = _HANDLE_PROCESS_RE.match(line)
        if p is not None:
            out["fields"]["process"] = addr(p.group("addr"))
            continue
        if line.strip().startswith("Image:"):
            out["fields"]["image"] = line.split(":", 1)[1].strip()


# the extensions this module reads, by name (``kdmcp.parse.objects`` dispatches on it)
HANDLERS: dict[str, Handler] = {
    "object": _object,
    "handle": _handle,
}
