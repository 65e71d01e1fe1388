"""What the target is: ``vertarget``, ``version``, ``.time`` and the same lines in connect banners.

::

    Windows 10 Kernel Version 9926 MP (4 procs) Free x64
    Product: WinNt, suite: TerminalServer SingleUserTS
    Built by: 9926.0.amd64fre.fbl_awesome1501.150119-1648
    Machine Name: ""
    Kernel base = 0xfffff801`8d283000 PsLoadedModuleList = 0xfffff801`8d58aef0
    Debug session time: Fri Feb 20 10:15:17.807 2015 (UTC - 8:00)
    System Uptime: 0 days 01:31:58.931
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import TargetRecord

# The target's machine as kd spells it; ARM64 targets say "ARM 64-bit (AArch64)".
_ARCH = r"(?P<arch>x86|x64|AMD64|ARM64|ARM 64-bit \(AArch64\)|ARM|IA64)"

# "Windows 10 Kernel Version 9926 MP (4 procs) Free x64"
# "Windows 7 Version 7601 (Service Pack 1) UP Free x64"
# "Windows XP Kernel Version 2505 UP Free x86 compatible"
# "Windows 10 Kernel Version 21337 MP (4 procs) Free ARM 64-bit (AArch64)"
OS_LINE_RE = re.compile(
    r"^\s*(?P<os>Windows(?: [\w.]+)*?) (?P<kernel>Kernel )?Version (?P<build>\d+)"
    r"(?: \((?P<sp>[^)]*)\))?(?: (?P<mp>MP|UP))?(?: \((?P<procs>\d+) procs\))?"
    r"(?: (?P<type>Free|Checked))?(?: " + _ARCH + r")?"
)

# "Connected to Windows 10 16299 x64 target at (Wed Feb 28 ...), ptr64 TRUE"
# "Connected to Windows 7 7601 x86 compatible target at (...), ptr64 FALSE"
# "Connected to Windows 10 21337 ARM 64-bit (AArch64) target at (...), ptr64 TRUE"
CONNECTED_RE = re.compile(
    r"^\s*Connected to (?P<os>Windows(?: [\w.]+)*?) (?P<build>\d+) " + _ARCH + r"(?: compatible)? target"
)


def arch_name(printed: str) -> str:
    """The machine name of ``_ARCH`` as the record gives it: ``ARM64`` however kd spelled it."""
    return "ARM64" if printed.startswith("ARM 64") else printed


# "Kernel base = 0xfffff801`8d283000 PsLoadedModuleList = 0xfffff801`8d58aef0"
_KERNEL_BASE_RE = re.compile(
    r"^\s*Kernel base = (?P<base>0x[0-9a-fA-F`]+)(?:\s+PsLoadedModuleList = (?P<list>0x[0-9a-fA-F`]+))?"
)

# "Microsoft (R) Windows Debugger Version 10.0.10586.567 AMD64"
_DEBUGGER_RE = re.compile(r"Windows Debugger Version (?P<version>[\d.]+)(?: (?P<arch>\w+))?")

# "0 days 01:31:58.931"
_UPTIME_RE = re.compile(r"^(?P<days>\d+) days? (?P<h>\d+):(?P<m>\d+):(?P<s>\d+(?:\.\d+)?)")

# "Key: value" lines (version's "dbgeng:  image ...", "Live user mode: <Local>"); a colon
# followed by a backslash is a drive ("C:\Program Files (x86)\..."), not the end of a key.
_KEY_VALUE_RE = re.compile(r"^\s*(?P<key>[A-Za-z][\w .()-]*?):(?!\\)\s*(?P<value>.*)$")

# The build lab as cdb's version prints it on a line of its own, without "Built by:":
# "17763.1.amd64fre.rs5_release.180914-1434" (the labs "Built by:" shows have this shape too,
# "2600.xpsp_sp3_qfe.100427-1636").
_BUILD_LAB_RE = re.compile(r"\d+\.[\w.-]+\.\d{6}-\d{4}")

_FIELDS_BY_KEY = {
    "Built by": "build_lab",
    "Edition build lab": "build_lab",
    "Debug session time": "debug_session_time",
    "System Uptime": "uptime",
    "Process Uptime": "process_uptime",
    "Kernel time": "kernel_time",
    "User time": "user_time",
}


def uptime_seconds(text: str) -> float | None:
    """Seconds in ``"0 days 01:31:58.931"`` (``None`` for "not available")."""
    m = _UPTIME_RE.match(text.strip())
    if m is None:
        return None
    return int(m.group("days")) * 86400 + int(m.group("h")) * 3600 + int(m.group("m")) * 60 + float(m.group("s"))


def target_line(line: str, info: dict[str, Any]) -> bool:
    """Fold one target-describing line into ``info``; False if the line says nothing of it."""
    if "Version" in line:
        m = OS_LINE_RE.match(line)
        if m is not None:
            info["os"] = m.group("os")
            info["version_line"] = line.strip()
            info["build"] = int(m.group("build"))
            info["kernel"] = m.group("kernel") is not None
            if m.group("sp"):
                info["service_pack"] = m.group("sp")
            if m.group("mp"):
                info["multiprocessor"] = m.group("mp") == "MP"
                info["processors"] = (
                    int(m.group("procs")) if m.group("procs") else (1 if m.group("mp") == "UP" else None)
                )
            if m.group("type"):
                info["build_type"] = m.group("type")
            if m.group("arch"):
                info["arch"] = arch_name(m.group("arch"))
            return True
        d = _DEBUGGER_RE.search(line)
        if d is not None:
            info["debugger_version"] = d.group("version")
            return True
    if line.lstrip().startswith("Connected to Windows"):
        c = CONNECTED_RE.match(line)
        if c is not None:
            info.setdefault("os", c.group("os"))
            info.setdefault("build", int(c.group("build")))
            info.setdefault("arch", arch_name(c.group("arch")))
            return True
    if "Kernel base" in line:
        k = _KERNEL_BASE_RE.match(line)
        if k is not None:
            info["kernel_base"] = addr(k.group("base"))
            if k.group("list"):
                info["loaded_module_list"] = addr(k.group("list"))
            return True
    stripped = line.strip()
    if stripped[:1].isdigit() and _BUILD_LAB_RE.fullmatch(stripped):
        info["build_lab"] = stripped
        return True
    if stripped.startswith("Product:"):
        product, _, suite = stripped[len("Product:") :].partition(", suite:")
        info["product"] = product.strip()
        if suite:
            info["suite"] = suite.strip()
        return True
    if stripped.startswith("Machine Name:"):
        name = stripped[len("Machine Name:") :].strip()
        info["machine_name"] = name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name
        return True
    kv = _KEY_VALUE_RE.match(line)
    if kv is not None and kv.group("key") in _FIELDS_BY_KEY:
        field = _FIELDS_BY_KEY[kv.group("key")]
        info[field] = kv.group("value")
        if field == "uptime":
            info["uptime_seconds"] = uptime_seconds(kv.group("value"))
        return True
    return False


def parse_target(command: str, raw: str) -> TargetRecord | None:
    """A ``TargetRecord``; ``None`` if no target fact is present."""
    info: dict[str, Any] = {"details": {}}
    found = False
    open_key: str | None = None  # a key printed with no value: its value is the next line
    for line in split_lines(raw):
        if not line.strip():
            continue
        if target_line(line, info):
            found = True
            open_key = None
            continue
        kv = _KEY_VALUE_RE.match(line)
        if kv is not None and kv.group("value"):
            info["details"].setdefault(kv.group("key").strip(), kv.group("value"))
        elif open_key is not None and kv is None and line[0].isspace():
            # "Extension DLL search Path:" then the path, indented, on the next line
            info["details"].setdefault(open_key, line.strip())
        open_key = kv.group("key").strip() if kv is not None and not kv.group("value") else None
    if not found:
        return None
    info.update(command=command, raw=raw)
    return TargetRecord.model_validate(info)
