"""Object extensions: ``!irp !drvobj !devobj !devstack !devnode !object !pool !poolfind !poolused
!pte !vad !lmi``, and the key/value ones (``!teb !peb !pcr !address !irql !apic !vm !locks
!handle !heap``).

Each extension has its own small parser below; all return an ``ObjectRecord`` whose
``object_type`` is the extension name without ``!``. Scalars go to ``fields`` (keys as the
extension prints them, or snake_case where we derive them), tables to the typed lists or
``entries``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kdmcp.parse._text import ADDRESS_RE, addr, split_lines
from kdmcp.parse.frames import site_fields
from kdmcp.parse.models import ObjectRecord

_ADDR = r"[0-9a-fA-F]{8}(?:`?[0-9a-fA-F]{8})?"

# Generic "Key: value" (value non-empty) and "Key     value" (no colon, 2+ blanks) lines.
_KV_RE = re.compile(r"^\s*(?P<key>[A-Za-z][\w.\[\]()/-]*(?: [\w.\[\]()/-]+)*)\s*:\s*(?P<value>\S.*)$")
_KV_SPACED_RE = re.compile(r"^\s*(?P<key>[A-Za-z][\w.\[\]]*(?: [A-Za-z][\w.]*)*)\s{2,}(?P<value>\S.*)$")
# Inline "Key:value" pairs (!apic): "ID:d (80050010)  LogDesc:28000000  DestFmt:0fffffff"
_INLINE_PAIR_RE = re.compile(r"(?P<key>[A-Za-z][\w.]*(?: Cmd)?):\s*(?P<value>[^\s]+)")

Handler = Callable[[list[str], dict[str, Any]], None]


def _kv_fields(lines: list[str], out: dict[str, Any]) -> None:
    """Fold generic key/value lines into ``out['fields']`` (first occurrence wins)."""
    fields: dict[str, str] = out["fields"]
    for line in lines:
        m = _KV_RE.match(line)
        if m is None:
            m = _KV_SPACED_RE.match(line)
        if m is not None:
            fields.setdefault(m.group("key").strip(), m.group("value"))


# --------------------------------------------------------------------------- !irp

# "Irp is active with 8 stacks 5 is current (= 0x831f4b00)"; published excerpts also show
# the line without the location address ("Irp is active with 8 stacks 7 is current").
_IRP_HEAD_RE = re.compile(
    r"^\s*Irp is (?P<state>\w+) with (?P<stacks>\d+) stacks (?P<cur>\d+) is current"
    r"(?: \(= (?P<loc>0x[0-9a-fA-F`]+)\)|)"
)
# " Mdl = 82b020d8 Thread 8c622118:  Irp stack trace." / " No Mdl Thread 00000000:  Irp stack trace."
_IRP_MDL_RE = re.compile(r"^\s*(?:Mdl\s*=\s*(?P<mdl>[0-9a-fA-F`]+)|No Mdl).*?\bThread\s+(?P<thread>[0-9a-fA-F`]+):")
# ">[  3,34]  40 e1 828517a8 00000000 842511e0-00000000 Success Error Cancel pending"
_IRP_LOC_RE = re.compile(r"^(?P<cur>[> ])\[\s*(?P<major>[0-9a-fA-F]+),\s*(?P<minor>[0-9a-fA-F]+)\]\s+(?P<cols>.*)$")
# ">[IRP_MJ_DEVICE_CONTROL(e), N/A(0)]" (Windows 8+ layout; columns on the next line). An
# unused or already-completed location prints its major as N/A too: " [N/A(0), N/A(0)]",
# and the current one can be ">[N/A(f), N/A(6)]"; each still has its own Args line.
_IRP_LOC_NAMED_RE = re.compile(r"^(?P<cur>[> ])\[(?P<major>(?:IRP_MJ_\w+|N/A)\([0-9a-fA-F]+\)),\s*(?P<minor>[^\]]*)\]$")
# "40 e1 828517a8 00000000 842511e0-00000000 Success Error Cancel pending"
_IRP_COLS_RE = re.compile(
    r"^\s*(?P<flags>[0-9a-fA-F]+)\s+(?P<control>[0-9a-fA-F]+)\s+(?P<device>[0-9a-fA-F`]+)\s+(?P<file>[0-9a-fA-F`]+)"
    r"\s+(?P<completion>[0-9a-fA-F`]+)-(?P<context>[0-9a-fA-F`]+)(?P<rest>.*)$"
)
# The same row with its middle cut out by the author of a published excerpt:
# "   0 e1 ffff920fc5ca9c60 ... fffff802bd55b320  Success Error Cancel pending". What is left
# of the columns is still read; the words after them come from the full pattern's ``rest``.
_IRP_COLS_CUT_RE = re.compile(
    r"^\s*(?P<flags>[0-9a-fA-F]+)\s+(?P<control>[0-9a-fA-F]+)\s+(?P<device>[0-9a-fA-F`]+) \.\.\.(?P<rest>.*)$"
)
# "Flags = 00060900", "ThreadListEntry.Flink = ffffc38e3d0e9700", "Tail.CompletionKey = 0":
# the IRP's own fields, which "!irp <addr> 1" prints before the stack locations.
_IRP_DETAIL_RE = re.compile(r"^\s*(?P<key>&?[A-Za-z][\w.]*) = (?P<value>\S.*)$")
# "               \Driver\disk     partmgr!PmReadWriteCompletion"
_IRP_DRIVER_RE = re.compile(r"^\s+(?P<driver>\\\S+)(?:\s+(?P<sym>\S+))?\s*$")
# "Args: 00007000 00000000 fe084e00 00000004"
_IRP_ARGS_RE = re.compile(r"^\s*Args:\s+(?P<args>.*)$")


def _irp_columns(loc: dict[str, Any], text: str) -> bool:
    """Read a location's column row into ``loc``; False if ``text`` is not one."""
    m = _IRP_COLS_RE.match(text)
    if m is not None:
        loc.update(
            file=addr(m.group("file")),
            completion_routine=addr(m.group("completion")),
            context=addr(m.group("context")),
        )
    else:
        m = _IRP_COLS_CUT_RE.match(text)
        if m is None:
            return False
    loc.update(flags=m.group("flags"), control=m.group("control"), device=addr(m.group("device")))
    words = m.group("rest").split()
    loc["invoke_on"] = [w for w in words if w in ("Success", "Error", "Cancel")]
    loc["pending"] = "pending" in words
    return True


def _irp(lines: list[str], out: dict[str, Any]) -> None:
    fields: dict[str, str] = out["fields"]
    locs: list[dict[str, Any]] = out["irp_stack"]
    awaiting_cols = False
    for line in lines:
        m = _IRP_HEAD_RE.match(line)
        if m is not None:
            fields.update(state=m.group("state"), stack_count=m.group("stacks"), current_location=m.group("cur"))
            if m.group("loc"):
                fields["current_location_address"] = addr(m.group("loc"))
            continue
        m = _IRP_MDL_RE.match(line)
        if m is not None:
            if m.group("mdl"):
                fields["mdl"] = addr(m.group("mdl"))
            fields["thread"] = addr(m.group("thread"))
            continue
        m = _IRP_LOC_RE.match(line)
        if m is not None:
            loc: dict[str, Any] = {
                "current": m.group("cur") == ">",
                "major": m.group("major"),
                "minor": m.group("minor"),
            }
            _irp_columns(loc, m.group("cols"))
            locs.append(loc)
            continue
        m = _IRP_LOC_NAMED_RE.match(line)
        if m is not None:
            locs.append({"current": m.group("cur") == ">", "major": m.group("major"), "minor": m.group("minor")})
            awaiting_cols = True
            continue
        if awaiting_cols and locs and _irp_columns(locs[-1], line):
            awaiting_cols = False
            continue
        m = _IRP_ARGS_RE.match(line)
        if m is not None and locs:
            locs[-1]["args"] = [addr(a) for a in m.group("args").split()]
            continue
        m = _IRP_DRIVER_RE.match(line)
        if m is not None and locs:
            locs[-1]["driver"] = m.group("driver")
            if m.group("sym"):
                locs[-1]["completion_symbol"] = m.group("sym")
            continue
        m = _IRP_DETAIL_RE.match(line)
        if m is not None and not locs:
            fields.setdefault(m.group("key"), m.group("value"))


# --------------------------------------------------------------------------- !drvobj / !devobj

# "Driver object (ffffe0008834f670) is for:" / "Device object (ffffe0007b71a960) is for:";
# older kdexts print no address ("Driver object is for:", the name on the next line).
_OBJECT_FOR_RE = re.compile(r"^\s*(?:Driver|Device) object (?:\((?P<addr>[0-9a-fA-F`]+)\) |)is for:")
# "DriverEntry:   fffff80114b45310  tabletaudiosample!FxDriverEntry"
_DRV_ROUTINE_RE = re.compile(
    r"^(?P<key>DriverEntry|DriverStartIo|DriverUnload|AddDevice):\s+(?P<addr>[0-9a-fA-F`]+)\s*(?P<sym>\S*)"
)
# "[00] IRP_MJ_CREATE                      fffff80117b49a20             portcls!DispatchCreate"
_DISPATCH_RE = re.compile(
    r"^\[(?P<index>[0-9a-fA-F]{2})\]\s+(?P<name>IRP_MJ_\w+)\s+(?P<addr>[0-9a-fA-F`]+)\s*(?P<sym>\S*)"
)
_SNAKE = {
    "DriverEntry": "driver_entry",
    "DriverStartIo": "driver_start_io",
    "DriverUnload": "driver_unload",
    "AddDevice": "add_device",
}


def _drvobj(lines: list[str], out: dict[str, Any]) -> None:
    fields: dict[str, str] = out["fields"]
    expect_name = False
    in_devices = False
    for line in lines:
        m = _OBJECT_FOR_RE.match(line)
        if m is not None:
            if m.group("addr"):
                out["address"] = addr(m.group("addr"))
            expect_name = True
            continue
        if expect_name and line.strip():
            out["name"] = line.strip()
            expect_name = False
            continue
        m = _DRV_ROUTINE_RE.match(line)
        if m is not None:
            key = _SNAKE[m.group("key")]
            fields[key] = addr(m.group("addr"))
            if m.group("sym"):
                fields[key + "_symbol"] = m.group("sym")
            continue
        m = _DISPATCH_RE.match(line)
        if m is not None:
            out["dispatch_routines"].append(
                {
                    "index": int(m.group("index"), 16),
                    "name": m.group("name"),
                    "address": addr(m.group("addr")),
                    "symbol": m.group("sym") or None,
                }
            )
            continue
        if line.startswith("Device Object list"):
            in_devices = True
            continue
        if in_devices and line.strip():
            for token in line.split():
                if re.fullmatch(_ADDR, token):
                    out["entries"].append({"device": addr(token)})


# " 0000000e \Driver\PnpManager DriverObject ffffe0007b727e60"
_DEVOBJ_NAME_RE = re.compile(
    r"^\s*(?:(?P<name>[^\s\\]\S*)\s+)?(?P<driver>\\\S+) DriverObject (?P<drvobj>[0-9a-fA-F`]+)"
)
# "Current Irp 00000000 RefCount 0 Type 00000004 Flags 00001040" pairs
_WORD_PAIR_RE = re.compile(r"\b(?P<key>[A-Z][A-Za-z]*(?: Irp)?) (?P<value>[0-9a-fA-F`]+)\b")
# "ExtensionFlags (0x00000800)  DOE_DEFAULT_SD_PRESENT", "  Flags (0x00000131)  DNF_MADEUP, ..."
# (!devnode); a zero prints as "(0000000000)" (see ``_alt_hex``).
_FLAG_WORDS_RE = re.compile(r"^\s*(?P<key>\w+) \((?P<value>0x[0-9a-fA-F]+|0{3,})\)\s*(?P<names>.*)$")
# The rest of a flag list wrapped onto the next line, indented under the first name:
# "ExtensionFlags (0xc0000800)  DOE_DEFAULT_SD_PRESENT, DOE_BOTTOM_OF_FDO_STACK, "
# "                             DOE_DESIGNATED_FDO"
_FLAG_CONTINUATION_RE = re.compile(r"^\s+[A-Z][A-Z0-9_]*(?:, [A-Z][A-Z0-9_]*)*,?$")
# "AttachedDevice (Upper) ffffe000801fee20 \Driver\ECHO"
_ATTACHED_RE = re.compile(
    r"^(?P<key>AttachedDevice|AttachedTo) \((?P<dir>\w+)\) (?P<addr>[0-9a-fA-F`]+)\s*(?P<driver>.*)$"
)


def _alt_hex(value: str) -> str:
    """``"0x..."`` for a number the extension printed with C's ``%#010x``, which leaves out
    the ``0x`` of a zero but keeps the width: ``0000000000`` is ``0x00000000``."""
    v = value.lower()
    return v if v.startswith("0x") else "0x" + v[2:]


def _flag_line(line: str, fields: dict[str, str], wrapped: str | None) -> tuple[bool, str | None]:
    """Read a ``Key (0x...)  NAME, NAME`` line, or the wrapped rest of the previous one.

    ``wrapped`` is the key whose name list ended with a comma on the line before (so the
    list goes on); returns (line consumed, the key whose list may go on after this line).
    """
    if wrapped is not None and _FLAG_CONTINUATION_RE.match(line):
        names = fields[wrapped + "_names"] + " " + line.strip()
        fields[wrapped + "_names"] = names
        return True, wrapped if names.endswith(",") else None
    m = _FLAG_WORDS_RE.match(line)
    if m is None:
        return False, None
    key, names = m.group("key"), m.group("names")
    fields[key] = _alt_hex(m.group("value"))
    if not names:
        return True, None
    fields[key + "_names"] = names
    return True, key if names.endswith(",") else None


def _devobj(lines: list[str], out: dict[str, Any]) -> None:
    fields: dict[str, str] = out["fields"]
    wrapped: str | None = None
    for line in lines:
        consumed, wrapped = _flag_line(line, fields, wrapped)
        if consumed:
            continue
        m = _OBJECT_FOR_RE.match(line)
        if m is not None:
            if m.group("addr"):
                out["address"] = addr(m.group("addr"))
            continue
        m = _DEVOBJ_NAME_RE.match(line)
        if m is not None:
            if m.group("name"):
                out["name"] = m.group("name")
            fields["driver"] = m.group("driver")
            fields["driver_object"] = addr(m.group("drvobj"))
            continue
        m = _ATTACHED_RE.match(line)
        if m is not None:
            key = "attached_device" if m.group("key") == "AttachedDevice" else "attached_to"
            fields[key] = addr(m.group("addr"))
            if m.group("driver"):
                fields[key + "_driver"] = m.group("driver")
            continue
        if line.startswith("Device queue"):
            fields["device_queue"] = line.strip()
            continue
        for p in _WORD_PAIR_RE.finditer(line):
            fields[p.group("key")] = p.group("value")


# --------------------------------------------------------------------------- !devstack

# "> ffffe00089c575a0  \Driver\PnpManager 00000000  0000004e". A long driver name runs
# into DevExt ("\Driver\sysvad_tabletaudiosampleffffe00088386ba0  0000007a"), also when no
# object name follows ("> fffffa80058b1b70  \Driver\TdiDriverTest00000000").
_DEVSTACK_RE = re.compile(
    r"^(?P<cur>[> ])\s*(?P<dev>[0-9a-fA-F`]{8,17})\s+(?P<drv>\\\S+?)"
    r"(?:\s+|(?=[0-9a-fA-F]{16}(?:\s|$)|[0-9a-fA-F]{8}(?:\s|$)))"
    r"(?P<ext>[0-9a-fA-F`]{8,17})?\s*(?P<name>\S.*)?$"
)
# What !devstack prints in the ObjectName column when it cannot read the name: a complaint
# of the extension, not a name ("InfoMask field not found for _OBJECT_HEADER at fffffa80...",
# "Cannot read info offset from nt!ObpInfoMaskToOffset").
_DEVSTACK_COMPLAINT_RE = re.compile(r"InfoMask field not found\b|Cannot read\b")
_DEVNODE_RE = re.compile(r"^!DevNode (?P<addr>[0-9a-fA-F`]+)")
_IS_RE = re.compile(r'^\s*(?P<key>\w+) is "(?P<value>[^"]*)"')


def _devstack(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        m = _DEVSTACK_RE.match(line)
        if m is not None:
            name = m.group("name")
            if name is not None and _DEVSTACK_COMPLAINT_RE.match(name):
                out["warnings"].append(name)
                name = None
            out["devices"].append(
                {
                    "current": m.group("cur") == ">",
                    "device": addr(m.group("dev")),
                    "driver": m.group("drv"),
                    "extension": addr(m.group("ext")) if m.group("ext") else None,
                    "name": name,
                }
            )
            continue
        d = _DEVNODE_RE.match(line)
        if d is not None:
            out["fields"]["devnode"] = addr(d.group("addr"))
            continue
        i = _IS_RE.match(line)
        if i is not None:
            out["fields"][i.group("key")] = i.group("value")


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
    r"^\s+(?:(?P<hash>[0-9a-fA-F]{2})\s+)?(?P<addr>" + _ADDR + r")\s+(?P<type>ALPC Port|\w+)\s+(?P<name>.*)$"
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


# --------------------------------------------------------------------------- !irql

# "Debugger saved IRQL for processor 0x0 -- 28 (CLOCK2_LEVEL)"
_IRQL_RE = re.compile(r"IRQL for processor (?P<cpu>0x[0-9a-fA-F]+|\d+) -- (?P<irql>\d+)(?: \((?P<name>\w+)\))?")


def _irql(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        m = _IRQL_RE.search(line)
        if m is not None:
            out["fields"].update(processor=m.group("cpu"), irql=m.group("irql"))
            if m.group("name"):
                out["fields"]["irql_name"] = m.group("name")


# --------------------------------------------------------------------------- !teb / !peb / !pcr

# "TEB at 7ffde000" / "PEB at 7ffdf000" / "KPCR for Processor 0 at fffff80351148000:"
_AT_RE = re.compile(
    r"^\s*(?:TEB|PEB) at (?P<addr>[0-9a-fA-F`]+)|^\s*KPCR for Processor (?P<cpu>\d+) at (?P<pcr>[0-9a-fA-F`]+)"
)
# PEB loader table: "        77b30000 5add1df9 Apr 22 16:42:49 2018 C:\Windows\SYSTEM32\ntdll.dll"
_PEB_MODULE_RE = re.compile(
    r"^\s+(?P<base>[0-9a-fA-F]{1,16})\s+(?P<stamp>[0-9a-fA-F]{8})"
    r"\s+(?P<date>\w{3} \d\d \d\d:\d\d:\d\d \d{4})\s+(?P<path>.*)$"
)
# Environment block entry: "        COMPUTERNAME=DEBUG-WK86-7"
_ENV_RE = re.compile(r"^\s{6,}(?P<name>[^=\s][^=]*|=[^=]*)=(?P<value>.*)$")


def _teb_peb(lines: list[str], out: dict[str, Any]) -> None:
    rest: list[str] = []
    in_env = False
    for line in lines:
        m = _AT_RE.match(line)
        if m is not None:
            out["address"] = addr(m.group("addr") or m.group("pcr"))
            if m.group("cpu"):
                out["fields"]["processor"] = m.group("cpu")
            continue
        p = _PEB_MODULE_RE.match(line)
        if p is not None:
            out["entries"].append(
                {
                    "base": addr(p.group("base")),
                    "timestamp": p.group("stamp"),
                    "date": p.group("date"),
                    "path": p.group("path"),
                }
            )
            continue
        if line.strip().startswith("Environment:"):
            in_env = True
            rest.append(line)
            continue
        if in_env:
            e = _ENV_RE.match(line)
            if e is not None:
                out["fields"]["env." + e.group("name")] = e.group("value")
                continue
            in_env = False
        rest.append(line)
    _kv_fields(rest, out)


# --------------------------------------------------------------------------- !apic / !address / !vm


def _apic(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        at = re.match(r"^\s*Apic @ (?P<addr>[0-9a-fA-F`]+)", line)
        if at is not None:
            out["address"] = addr(at.group("addr"))
        for p in _INLINE_PAIR_RE.finditer(line):
            out["fields"].setdefault(p.group("key"), p.group("value"))


def _address(lines: list[str], out: dict[str, Any]) -> None:
    _kv_fields(lines, out)
    base = out["fields"].get("Base Address")
    if base:
        out["address"] = addr(base)


def _generic(lines: list[str], out: dict[str, Any]) -> None:
    _kv_fields(lines, out)


# --------------------------------------------------------------------------- !locks

# "Resource @ 0x80e97620    Shared 4 owning threads"
_RESOURCE_RE = re.compile(
    r"^\s*Resource @ (?P<addr>(?:0x)?[0-9a-fA-F`]+)\s+(?P<mode>\w+)\s+(?P<owners>\d+) owning threads"
)
_THREADS_RE = re.compile(r"^\s*Threads:\s*(?P<threads>.*)$")
# "2263 total locks, 3 locks currently held"
_LOCK_TOTAL_RE = re.compile(r"^\s*(?P<total>\d+) total locks(?:, (?P<held>\d+) locks? currently held)?")


def _locks(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        r = _RESOURCE_RE.match(line)
        if r is not None:
            out["entries"].append(
                {"resource": addr(r.group("addr")), "mode": r.group("mode"), "owners": r.group("owners")}
            )
            continue
        t = _THREADS_RE.match(line)
        if t is not None and out["entries"]:
            out["entries"][-1]["threads"] = t.group("threads")
            continue
        total = _LOCK_TOTAL_RE.match(line)
        if total is not None:
            out["fields"]["total_locks"] = total.group("total")
            if total.group("held"):
                out["fields"]["held_locks"] = total.group("held")


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


# --------------------------------------------------------------------------- !devnode

# "DevNode 0x80e203b8 for PDO 0x80e204f8" (indented deeper per level in a "!devnode 0 1" tree)
_DEVNODE_HEAD_RE = re.compile(r"^\s*DevNode (?P<node>(?:0x)?[0-9a-fA-F`]+) for PDO (?P<pdo>(?:0x)?[0-9a-fA-F`]+)")
# " Parent 0000000000   Sibling 0000000000   Child 0x80e56dc8" (zeros without "0x": ``_alt_hex``)
_DEVNODE_LINK_RE = re.compile(r"\b(?P<key>Parent|Sibling|Child) (?P<value>0x[0-9a-fA-F`]+|0{3,})")
# "  State = DeviceNodeStarted (0x308)", "  StateHistory[04] = ...", "  DisableableDepends = 11 (...)"
_DEVNODE_ASSIGN_RE = re.compile(r"^\s*(?P<key>[A-Za-z][\w\[\]]*(?: [A-Za-z]\w*)?) = (?P<value>\S.*)$")
_DEVNODE_ENTRY_KEYS = {"InstancePath": "instance_path", "ServiceName": "service_name", "State": "state"}


def _devnode(lines: list[str], out: dict[str, Any]) -> None:
    """One device node's details in ``fields`` (the first one printed, as for a single
    node); every ``DevNode ... for PDO ...`` in ``entries``, so a ``!devnode 0 1`` tree reads
    as a list of nodes with their instance path, service and state."""
    fields: dict[str, str] = out["fields"]
    nodes: list[dict[str, str]] = out["entries"]
    wrapped: str | None = None
    for line in lines:
        first = len(nodes) <= 1
        if first:
            consumed, wrapped = _flag_line(line, fields, wrapped)
            if consumed:
                continue
        h = _DEVNODE_HEAD_RE.match(line)
        if h is not None:
            nodes.append({"devnode": addr(h.group("node")), "pdo": addr(h.group("pdo"))})
            if len(nodes) == 1:
                out["address"] = nodes[0]["devnode"]
                fields["pdo"] = nodes[0]["pdo"]
            continue
        kv = _IS_RE.match(line) or _DEVNODE_ASSIGN_RE.match(line)
        if kv is not None:
            key, value = kv.group("key"), kv.group("value")
            if first:
                fields.setdefault(key, value)
            if nodes and key in _DEVNODE_ENTRY_KEYS:
                nodes[-1][_DEVNODE_ENTRY_KEYS[key]] = value
            continue
        if first:
            for p in _DEVNODE_LINK_RE.finditer(line):
                fields.setdefault(p.group("key").lower(), _alt_hex(p.group("value").replace("`", "")))


# --------------------------------------------------------------------------- !lmi

# "   Base Address: 77f80000": keys are right-aligned on the colon; a line without a
# "Key: " head continues the value above ("Symbol Type: DIA PDB  - Symbols loaded ..." then
# "                 c:\symbols\dll\ntdll.pdb"), so a drive letter's colon is not a key.
_LMI_KEY_RE = re.compile(r"^\s*(?P<key>[A-Za-z]\w*(?: \w+)*): (?P<value>\S.*)$")


def _lmi(lines: list[str], out: dict[str, Any]) -> None:
    fields: dict[str, str] = out["fields"]
    key: str | None = None
    for line in lines:
        m = _LMI_KEY_RE.match(line)
        if m is not None:
            key = m.group("key")
            fields[key] = m.group("value")
        elif key is not None and line.strip():
            fields[key] += "\n" + line.strip()
    if "Module" in fields:
        out["name"] = fields["Module"]
    base = fields.get("Base Address")
    if base and ADDRESS_RE.fullmatch(base):
        out["address"] = addr(base)


# --------------------------------------------------------------------------- dispatch

_HANDLERS: dict[str, Handler] = {
    "irp": _irp,
    "drvobj": _drvobj,
    "devobj": _devobj,
    "devstack": _devstack,
    "object": _object,
    "pool": _pool,
    "poolfind": _pool,
    "poolused": _poolused,
    "pte": _pte,
    "irql": _irql,
    "teb": _teb_peb,
    "peb": _teb_peb,
    "pcr": _teb_peb,
    "apic": _apic,
    "address": _address,
    "vm": _generic,
    "locks": _locks,
    "handle": _handle,
    "heap": _heap,
    "vad": _vad,
    "devnode": _devnode,
    "lmi": _lmi,
}

OBJECT_EXTENSIONS = frozenset(_HANDLERS) | frozenset({"prcb", "token", "sd", "sysptes", "memusage"})

_EXTENSION_RE = re.compile(r"^\s*!(?:\w+\.)?(?P<name>\w+)")


def parse_object(command: str, raw: str) -> ObjectRecord | None:
    """An ``ObjectRecord`` for a known object extension; ``None`` if nothing was recognised."""
    m = _EXTENSION_RE.match(command)
    name = m.group("name").lower() if m is not None else "unknown"
    handler = _HANDLERS.get(name, _generic)
    out: dict[str, Any] = {
        "command": command,
        "raw": raw,
        "object_type": name,
        "fields": {},
        "entries": [],
        "irp_stack": [],
        "dispatch_routines": [],
        "devices": [],
        "directory": [],
        "pool_blocks": [],
        "pte_levels": [],
        "frames": [],
        "warnings": [],
    }
    handler(split_lines(raw), out)
    found = any(
        out[k]
        for k in (
            "fields",
            "entries",
            "irp_stack",
            "dispatch_routines",
            "devices",
            "directory",
            "pool_blocks",
            "pte_levels",
            "frames",
        )
    ) or out.get("address")
    if not found:
        return None
    return ObjectRecord.model_validate(out)
