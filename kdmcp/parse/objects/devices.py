"""The I/O manager's objects: ``!irp``, ``!drvobj``, ``!devobj``, ``!devstack``, ``!devnode``."""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr
from kdmcp.parse.objects.fields import ADDR, Handler, complaint_re

# A debugger or extension complaint inside an extension's output ("*** ERROR: Module load completed but
# symbols could not be loaded for foo.sys", "Unable to ...", "Could not ..."): a warning.
_NOISE_RE = complaint_re()

# --------------------------------------------------------------------------- !irp

# "Irp is active with 8 stacks 5 is current (= 0x831f4b00)"; published excerpts also show
# the line without the location address ("Irp is active with 8 stacks 7 is current").
_IRP_HEAD_RE = re.compile(
    r"^\s*Irp is (?P<state>\w+) with (?P<stacks>\d+) stacks (?P<cur>\d+) is current"
    r"(?: \(= (?P<loc>0x[0-9a-fA-F`]+)\)|)"
)
# " Mdl = 82b020d8 Thread 8c622118:  Irp stack trace." / " No Mdl Thread 00000000:  Irp stack trace."; Windows
# 10's kdexts put the IRP's AssociatedIrp.SystemBuffer between them: " No Mdl: System buffer=ffffe70f300b48f0:
# Thread ffffe70f2d53a080:  Irp stack trace." (or "No System Buffer:")
_IRP_MDL_RE = re.compile(
    r"^\s*(?:Mdl\s*=\s*(?P<mdl>[0-9a-fA-F`]+)|No Mdl)(?:.*?\bSystem buffer\s*=\s*(?P<buffer>[0-9a-fA-F`]+))?"
    r".*?\bThread\s+(?P<thread>[0-9a-fA-F`]+):"
)
# ">[  3,34]  40 e1 828517a8 00000000 842511e0-00000000 Success Error Cancel pending"
# Published blocks are often indented as a whole (the bug check 0x9F page: "    >[IRP_MJ_POWER(16), ...]",
# "     [N/A(0), N/A(0)]"), so the marker is read after any indentation.
_IRP_LOC_RE = re.compile(r"^\s*(?P<cur>>)?\[\s*(?P<major>[0-9a-fA-F]+),\s*(?P<minor>[0-9a-fA-F]+)\]\s+(?P<cols>.*)$")
# ">[IRP_MJ_DEVICE_CONTROL(e), N/A(0)]" (Windows 8+ layout; columns on the next line). An
# unused or already-completed location prints its major as N/A too: " [N/A(0), N/A(0)]",
# and the current one can be ">[N/A(f), N/A(6)]"; each still has its own Args line.
_IRP_LOC_NAMED_RE = re.compile(
    r"^\s*(?P<cur>>)?\[(?P<major>(?:IRP_MJ_\w+|N/A)\([0-9a-fA-F]+\)),\s*(?P<minor>[^\]]*)\]$"
)
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
        if _NOISE_RE.match(line):
            out["warnings"].append(line.strip())
            continue
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
            if m.group("buffer"):
                fields["system_buffer"] = addr(m.group("buffer"))
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
                # some kdexts builds print the routine in parentheses: "\\Driver\\usbehci
                # (IopUnloadSafeCompletion)" (Microsoft docs, !ioctldecode page)
                locs[-1]["completion_symbol"] = m.group("sym").removeprefix("(").removesuffix(")")
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


# "Processed 1 device objects." (the end of "!drvobj <drv> 7"'s "Device Object stacks:")
_PROCESSED_RE = re.compile(r"^\s*Processed (?P<count>\d+) device objects?\.")
# "!devstack ffffc38f27034e10 :" (one embedded stack's heading under "Device Object stacks:")
_EMBEDDED_DEVSTACK_RE = re.compile(r"^\s*!devstack [0-9a-fA-F`]+ :")


def _device_list_line(line: str, out: dict[str, Any]) -> bool:
    """The addresses of one line under "Device Object list:" into ``entries``; False if the line
    is not a list of addresses (the list is over). Several can share a line: "ffffb60758e21810
    ffffb60757a67c60" (Microsoft docs, the JavaScript DeviceExtensionInformation example)."""
    tokens = line.split()
    if not tokens or not all(re.fullmatch(ADDR, t) for t in tokens):
        return False
    out["entries"].extend({"device": addr(t)} for t in tokens)
    return True


def _drvobj(lines: list[str], out: dict[str, Any]) -> None:
    """``!drvobj``: the header and name, the device list (flag 1), the driver's routines and
    dispatch table (flag 2), and the device stacks flag 4 adds ("Device Object stacks:", each an
    embedded ``!devstack`` table read into ``devices``, as fengjixuchui/AurumRE's README prints
    them for ``!drvobj Aurum 7``)."""
    fields: dict[str, str] = out["fields"]
    expect_name = complained = False
    in_devices = False
    stack = _DevstackReader(out)
    for line in lines:
        if in_devices:
            if _device_list_line(line, out):
                continue
            in_devices = False
        m = _OBJECT_FOR_RE.match(line)
        if m is not None:
            if m.group("addr"):
                out["address"] = addr(m.group("addr"))
            expect_name = True
            continue
        if expect_name and line.strip():
            # the name is a "\\Driver\\..." path; a symbol load the lookup triggered can print its
            # complaint first, which a published copy may wrap ("*** ERROR: Symbol file could not
            # be found.  Defaulted to export" / " symbols for Aavmker4.SYS -")
            text = line.strip()
            if text.startswith("\\"):
                out["name"] = text
                expect_name = False
                continue
            if _NOISE_RE.match(line) or (complained and line[0].isspace()):
                out["warnings"].append(text)
                complained = True
                continue
            expect_name = False
        if line.startswith("Device Object list"):
            in_devices = True
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
        m = _PROCESSED_RE.match(line)
        if m is not None:
            fields["processed_device_objects"] = m.group("count")
            continue
        if _EMBEDDED_DEVSTACK_RE.match(line) is None:
            stack.line(line)


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
        if _NOISE_RE.match(line):
            out["warnings"].append(line.strip())
            continue
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
# object name follows ("> fffffa80058b1b70  \Driver\TdiDriverTest00000000"). Published
# blocks may be indented as a whole ("    > fffffa8007b13440  \Driver\usbhub ...", the bug
# check 0x9F page), so the marker is read after the indentation.
_DEVSTACK_RE = re.compile(
    r"^\s*(?:(?P<cur>>)\s*)?(?P<dev>[0-9a-fA-F`]{8,17})\s+(?P<drv>\\\S+?)"
    r"(?:\s+|(?=[0-9a-fA-F]{16}(?:\s|$)|[0-9a-fA-F]{8}(?:\s|$)))"
    r"(?P<ext>[0-9a-fA-F`]{8,17})?\s*(?P<name>\S.*)?$"
)
# The start of a row whose driver name the extension had not printed yet when a symbol load
# it triggered printed its complaint: the address alone ("> ffffe000...  "), or the address
# with the complaint on the same line; the rest of the row ("\Driver\foo  ffffe000...  Name")
# comes on a line after the complaint(s).
# The complaint may also be the image loader's own, printed where the driver column starts:
# "  ffffd188a8d4a780 Unable to load image amdacpbus.sys, Win32 error 0n2" (released set2
# io_objects/n_05, a 5: kd> !devstack whose first row spans three lines).
_DEVSTACK_HEAD_RE = re.compile(
    r"^\s*(?:(?P<cur>>)\s*)?(?P<dev>[0-9a-fA-F`]{8,17})\s*(?P<noise>(?:\*\*\*|Unable to load image\b).*)?$"
)
_DEVSTACK_REST_RE = re.compile(r"^\s*\\\S+")
# What !devstack prints in the ObjectName column when it cannot read the name: a complaint
# of the extension, not a name ("InfoMask field not found for _OBJECT_HEADER at fffffa80...",
# "Cannot read info offset from nt!ObpInfoMaskToOffset").
_DEVSTACK_COMPLAINT_RE = re.compile(r"InfoMask field not found\b|Cannot read\b")
# The column heading, new (" !DevObj           !DrvObj ...") and old (" !DevObj   !DrvObj ...").
_DEVSTACK_HEADING_RE = re.compile(r"^\s*!DevObj\s+!DrvObj\b")
_DEVNODE_RE = re.compile(r"^\s*!DevNode (?P<addr>[0-9a-fA-F`]+)")
_IS_RE = re.compile(r'^\s*(?P<key>\w+) is "(?P<value>[^"]*)"')


class _DevstackReader:
    """The rows of a ``!devstack`` table, line by line, into ``out["devices"]``; complaints into
    ``out["warnings"]``. It keeps the start of a row that symbol-load messages split (see
    ``_DEVSTACK_HEAD_RE``) until the rest of the row comes."""

    def __init__(self, out: dict[str, Any]) -> None:
        self.out = out
        self.pending: tuple[bool, str] | None = None

    def row(self, m: re.Match[str], current: bool) -> None:
        name = m.group("name")
        if name is not None and _DEVSTACK_COMPLAINT_RE.match(name):
            self.out["warnings"].append(name)
            name = None
        self.out["devices"].append(
            {
                "current": current,
                "device": addr(m.group("dev")),
                "driver": m.group("drv"),
                "extension": addr(m.group("ext")) if m.group("ext") else None,
                "name": name,
            }
        )

    def line(self, line: str) -> bool:
        """Read one line; False if it is none of a row, a row's parts or a complaint."""
        if self.pending is not None and _DEVSTACK_REST_RE.match(line):
            current, dev = self.pending
            self.pending = None
            m = _DEVSTACK_RE.match(f"{dev}  {line.strip()}")
            if m is not None:
                self.row(m, current)
                return True
        m = _DEVSTACK_RE.match(line)
        if m is not None:
            self.pending = None
            self.row(m, m.group("cur") is not None)
            return True
        h = _DEVSTACK_HEAD_RE.match(line)
        if h is not None:
            self.pending = (h.group("cur") is not None, h.group("dev"))
            if h.group("noise"):
                self.out["warnings"].append(h.group("noise").strip())
            return True
        if _NOISE_RE.match(line):
            self.out["warnings"].append(line.strip())
            return True
        return False


def _devstack(lines: list[str], out: dict[str, Any]) -> None:
    rows = _DevstackReader(out)
    for line in lines:
        if _DEVSTACK_HEADING_RE.match(line) or rows.line(line):
            continue
        d = _DEVNODE_RE.match(line)
        if d is not None:
            out["fields"]["devnode"] = addr(d.group("addr"))
            continue
        i = _IS_RE.match(line)
        if i is not None:
            out["fields"][i.group("key")] = i.group("value")


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
        if _NOISE_RE.match(line):
            out["warnings"].append(line.strip())
            continue
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


# the extensions this module reads, by name (``kdmcp.parse.objects`` dispatches on it)
HANDLERS: dict[str, Handler] = {
    "irp": _irp,
    "drvobj": _drvobj,
    "devobj": _devobj,
    "devstack": _devstack,
    "devnode": _devnode,
}
