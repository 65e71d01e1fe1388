"""The key/value extensions about the running system: ``!irql``, ``!teb``, ``!peb``, ``!pcr``,
``!apic``, ``!address``, ``!vm``, ``!locks``, ``!lmi``."""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import ADDRESS_RE, addr
from kdmcp.parse.objects.fields import (
    INLINE_PAIR_RE,
    Handler,
    generic_fields,
    kv_fields,
)

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
    kv_fields(rest, out)


# --------------------------------------------------------------------------- !apic / !address / !vm


def _apic(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        at = re.match(r"^\s*Apic @ (?P<addr>[0-9a-fA-F`]+)", line)
        if at is not None:
            out["address"] = addr(at.group("addr"))
        for p in INLINE_PAIR_RE.finditer(line):
            out["fields"].setdefault(p.group("key"), p.group("value"))


def _address(lines: list[str], out: dict[str, Any]) -> None:
    kv_fields(lines, out)
    base = out["fields"].get("Base Address")
    if base:
        out["address"] = addr(base)




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


# the extensions this module reads, by name (``kdmcp.parse.objects`` dispatches on it)
HANDLERS: dict[str, Handler] = {
    "irql": _irql,
    "teb": _teb_peb,
    "peb": _teb_peb,
    "pcr": _teb_peb,
    "apic": _apic,
    "address": _address,
    "vm": generic_fields,
    "locks": _locks,
    "lmi": _lmi,
}
