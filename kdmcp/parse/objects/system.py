"""The key/value extensions about the running system: ``!irql``, ``!teb``, ``!peb``, ``!pcr``,
``!apic``, ``!address``, ``!vm``, ``!locks``, ``!lmi``."""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import ADDRESS_RE, READ_FAILURE_WORDS, addr
from kdmcp.parse.errors import scan
from kdmcp.parse.frames import frames_from_lines
from kdmcp.parse.objects.fields import (
    INLINE_PAIR_RE,
    Handler,
    kv_fields,
)

# A line an extension prints when it cannot read what it walks ("GetUlongFromAddress: unable
# to read from 00000000" inside "!locks -v", docs) or warns about it (locks.c: "WARNING:
# SystemResourcesList->Flink chain invalid", "<< Too many exclusive waiters to list>>"), or says
# what it could not read, after the table's kind ("Handle Error reading handle count." in
# jasandoval1/windev_training's kernel "1: kd> !handle 6c", "Kernel handle Error reading handle
# count."); matched on the line without its indent, so a long blank run is skipped once, at C speed.
_COMPLAINT_RE = re.compile(rf"WARNING: |<<.*>>$|(?:\w+: )?{READ_FAILURE_WORDS}|(?:\w+ ){{0,3}}Error reading\b")


def complaints(lines: list[str]) -> list[str]:
    """Of ``lines`` (what a reader did not take), the debugger complaints and symbol noise,
    stripped, in order: they go to ``warnings``, never into the tables. One ``errors.scan``
    over them all keeps this linear (``classify_line`` on every line would not be)."""
    if not lines:
        return []
    noise = {d.line.strip() for d in scan("\n".join(lines))}
    found: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped and (stripped in noise or _COMPLAINT_RE.match(stripped)):
            found.append(stripped)
    return found


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
# !pcr, old x86 (docs): "    Major 1 Minor 1", the KPCR's version under its head line
_MAJOR_MINOR_RE = re.compile(r"^\s*Major (?P<major>\d+) Minor (?P<minor>\d+)$")
# PEB loader table: "        77b30000 5add1df9 Apr 22 16:42:49 2018 C:\Windows\SYSTEM32\ntdll.dll"
_PEB_MODULE_RE = re.compile(
    r"^\s+(?P<base>[0-9a-fA-F]{1,16})\s+(?P<stamp>[0-9a-fA-F]{8})"
    r"\s+(?P<date>\w{3} \d\d \d\d:\d\d:\d\d \d{4})\s+(?P<path>.*)$"
)
# !pcr's DPC queue: "DpcQueue:  0x80168ee0 0x80100d04 ntoskrnl!KiTimerExpiration" (x86, docs);
# x64 Windows 10/11 (DebugPrivilege's " 0: kd> !pcr 4") adds the queue in brackets and prints each
# further DPC on an indented line of its own, "0xffffa001290ce5d8 0xfffff8014941e4e0 [Normal]
# nt!PpmPerfAction", which has no key: without this the second DPC was lost.
_DPC_RE = re.compile(
    r"^\s*(?:DpcQueue:)?\s*(?P<dpc>0x[0-9a-fA-F`]+) (?P<routine>0x[0-9a-fA-F`]+)"
    r"(?: \[(?P<type>[^\]]*)\])?(?: (?P<sym>\S+))?\s*$"
)
# Environment block entry: "        COMPUTERNAME=DEBUG-WK86-7"
_ENV_RE = re.compile(r"^\s{6,}(?P<name>[^=\s][^=]*|=[^=]*)=(?P<value>.*)$")


def _teb_peb(lines: list[str], out: dict[str, Any]) -> None:
    rest: list[str] = []
    in_env = in_dpc = False
    for line in lines:
        if in_dpc or "DpcQueue:" in line:
            d = _DPC_RE.match(line)
            in_dpc = d is not None
            if d is not None:
                out["dpc_queue"].append(
                    {
                        "dpc": addr(d.group("dpc")),
                        "routine": addr(d.group("routine")),
                        "type": d.group("type"),
                        "symbol": d.group("sym"),
                    }
                )
                if "DpcQueue:" not in line:
                    continue  # a continuation; the head line also stays a field, as before
        m = _AT_RE.match(line)
        if m is not None:
            out["address"] = addr(m.group("addr") or m.group("pcr"))
            if m.group("cpu"):
                out["fields"]["processor"] = m.group("cpu")
            continue
        mm = _MAJOR_MINOR_RE.match(line)
        if mm is not None:
            out["fields"].update(major=mm.group("major"), minor=mm.group("minor"))
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


# --------------------------------------------------------------------------- !vm
#
# Old layout (docs, "kd> !vm 1"): a "*** Virtual Memory Usage ***" head, indented rows, the page
# file inside them ("      Page File: \??\E:\pagefile.sys" / "         Current:     98304Kb Free
# Space:     61044Kb"). Windows 10/11 (DebugPrivilege's "0: kd> !vm 1"): the page files first,
# one "No Name for Paging File" among them, "  Current:  12582912 Kb  Free Space:  12527296 Kb",
# and alert lines between the rows ("******* 73746 kernel stack PTE allocations have failed ******").

_PAGE_FILE_RE = re.compile(r"^\s*(?:Page File: (?P<name>\S.*)|No Name for Paging File)$")
_PAGE_CURRENT_RE = re.compile(r"^\s*Current:\s*(?P<cur>\d+)\s*Kb\s+Free Space:\s*(?P<free>\d+)\s*Kb")
_PAGE_LIMITS_RE = re.compile(r"^\s*Minimum:\s*(?P<min>\d+)\s*Kb\s+Maximum:\s*(?P<max>\d+)\s*Kb")
_VM_ALERT_RE = re.compile(r"^\s*\*{5,} (?P<alert>.*?) \*{3,}$")


def _vm(lines: list[str], out: dict[str, Any]) -> None:
    page_files: list[dict[str, Any]] = out["page_files"]
    rows: list[str] = []
    for line in lines:
        f = _PAGE_FILE_RE.match(line)
        if f is not None:
            page_files.append({"name": f.group("name")})
            rows.append(line)  # "Page File" stays a field too, as it always was
            continue
        if page_files:
            c = _PAGE_CURRENT_RE.match(line)
            if c is not None:
                page_files[-1].update(current_kb=int(c.group("cur")), free_kb=int(c.group("free")))
                continue
            m = _PAGE_LIMITS_RE.match(line)
            if m is not None:
                page_files[-1].update(minimum_kb=int(m.group("min")), maximum_kb=int(m.group("max")))
                continue
        a = _VM_ALERT_RE.match(line)
        if a is not None:
            out["warnings"].append(a.group("alert"))
            continue
        rows.append(line)
    kv_fields(rows, out)


# --------------------------------------------------------------------------- !locks
#
# One name, two extensions. Kernel mode (kdexts, Microsoft docs "!locks (!kdext*.locks)", and a
# Windows 10 "0: kd> !locks" in DebugPrivilege/InsightEngineering) prints the held ERESOURCEs:
#
#     KD: Scanning for held locks......................                  <- progress, not data
#     Resource @ 0xffff8b0352014a90    Exclusively owned
#         Contention Count = 1
#         NumberOfExclusiveWaiters = 1
#          Threads: ffff8b0351756040-01<*>
#          Threads Waiting On Exclusive Access:
#                   ffff8b03515d5040
#     27708 total locks, 3 locks currently held
#
# (kdexts2/locks.c: the state is "Available", "Exclusively owned" or "Shared %u owning
# threads"; owners wrap four to a line under "     Threads: " with 14 blanks, waiters likewise.)
# User mode (ntsdexts, docs "!locks (!ntsdexts.locks)") prints critical sections:
#
#     CritSec ntdll!LdrpLoaderLock+0 at 00007ff9d241f4f8
#     WaiterWoken        No                                              <- not before XP
#     LockCount          1
#     ...
#     *** Locked

# "Resource @ 0x80e97620    Shared 4 owning threads", "Resource @ nt!PiEngineLock
# (0xfffff8019cd8a380)    Exclusively owned" (the symbol when the address has one)
_RESOURCE_RE = re.compile(
    r"^\s*Resource @ (?:(?P<sym>\S+) \((?P<saddr>(?:0x)?[0-9a-fA-F`]+)\)|(?P<addr>(?:0x)?[0-9a-fA-F`]+))"
    r"\s+(?P<state>Exclusively owned|Available|Shared (?P<owners>\d+) owning threads)"
)
_RESOURCE_COUNT_RE = re.compile(
    r"^\s+(?P<key>Contention Count|NumberOfSharedWaiters|NumberOfExclusiveWaiters) = (?P<n>\d+)$"
)
_RESOURCE_COUNT_KEYS = {
    "Contention Count": "contention_count",
    "NumberOfSharedWaiters": "shared_waiters",
    "NumberOfExclusiveWaiters": "exclusive_waiters",
}
_THREADS_RE = re.compile(r"^\s*Threads: (?P<items>.*)$")
_WAITING_RE = re.compile(r"^\s*Threads Waiting On Exclusive Access:$")
# "ff688da0-01<*>", "80ed0023-01<*> *** Actual Thread 80ed0020"
_LOCK_THREAD_RE = re.compile(
    r"(?P<thread>[0-9a-fA-F`]+)-(?P<count>[0-9a-fA-F]{2,})(?P<owner><\*>)?"
    r"(?: \*\*\* Actual Thread (?P<actual>[0-9a-fA-F`]+))?"
)
# a wrapped line of owners or waiters: 14 blanks, then thread items or bare addresses only
_LOCK_CONTINUATION_RE = re.compile(r"^ {6,}(?P<items>[0-9a-fA-F`][0-9a-fA-F`<>*\- ]*)$")
_WAITER_RE = re.compile(r"[0-9a-fA-F`]+")
# "2263 total locks, 3 locks currently held"
_LOCK_TOTAL_RE = re.compile(r"^\s*(?P<total>\d+) total locks(?:, (?P<held>\d+) locks? currently held)?")
_LOCK_PROGRESS_RE = re.compile(r"^(?:KD: Scanning for held locks\.*|\*\*\*\* DUMP OF ALL RESOURCE OBJECTS \*\*\*\*)$")

# "CritSec w3svc!g_pWamDictator+a0 at 68C2C298", "CritSec +3a8c0e9c at 3A8C0E9C"
_CRITSEC_RE = re.compile(r"^\s*CritSec (?:(?P<sym>\S+) )?at (?P<addr>[0-9a-fA-F`]+)$")
# "LockCount          0" (a published copy adds its own "# ..." notes after the value)
_CRITSEC_KEY_RE = re.compile(
    r"^\s*(?P<key>WaiterWoken|LockCount|RecursionCount|OwningThread|EntryCount|ContentionCount)\s+(?P<value>\S+)"
)
_CRITSEC_KEYS = {
    "WaiterWoken": "waiter_woken",
    "LockCount": "lock_count",
    "RecursionCount": "recursion_count",
    "OwningThread": "owning_thread",
    "EntryCount": "entry_count",
    "ContentionCount": "contention_count",
}
_CRITSEC_LOCKED_RE = re.compile(r"^\s*\*\*\* Locked")
_CRITSEC_SCANNED_RE = re.compile(r"^\s*Scanned (?P<n>\d+) critical sections")
_INT_RE = re.compile(r"-?\d+")


def _lock_threads(items: str) -> list[dict[str, Any]]:
    return [
        {
            "thread": addr(t.group("thread")),
            "count": int(t.group("count"), 16),
            "owner": t.group("owner") is not None,
            "actual_thread": addr(t.group("actual")) if t.group("actual") else None,
        }
        for t in _LOCK_THREAD_RE.finditer(items)
    ]


def _critsec_key(cs: dict[str, Any], key: str, value: str) -> None:
    field = _CRITSEC_KEYS[key]
    if field == "waiter_woken":
        cs[field] = value
    elif field == "owning_thread":
        cs[field] = addr(value)
    elif _INT_RE.fullmatch(value):
        cs[field] = int(value)


def _locks(lines: list[str], out: dict[str, Any]) -> None:
    resources: list[dict[str, Any]] = out["resources"]
    sections: list[dict[str, Any]] = out["critical_sections"]
    listing = ""  # "threads" / "waiting": what a wrapped line under the current resource continues
    rest: list[str] = []  # what no pattern took: the owner's THREAD block and stack of "!locks -v"
    for line in lines:
        if not line or line.startswith("KD: Scanning"):  # most lines of a full dump: fast out
            listing = ""
            continue
        r = _RESOURCE_RE.match(line)
        if r is not None:
            state = r.group("state")
            resources.append(
                {
                    "resource": addr(r.group("saddr") or r.group("addr")),
                    "symbol": r.group("sym"),
                    "state": "Shared" if r.group("owners") else state,
                    "owners": int(r.group("owners")) if r.group("owners") else None,
                }
            )
            listing = ""
            continue
        if resources and _lock_line(line, resources[-1], listing):
            if _THREADS_RE.match(line):
                listing = "threads"
            elif _WAITING_RE.match(line):
                listing = "waiting"
            continue
        c = _CRITSEC_RE.match(line)
        if c is not None:
            sections.append({"symbol": c.group("sym"), "address": addr(c.group("addr"))})
            continue
        if sections and _critsec_line(line, sections[-1], out["fields"]):
            continue
        total = _LOCK_TOTAL_RE.match(line)
        if total is not None:
            out["fields"]["total_locks"] = total.group("total")
            if total.group("held"):
                out["fields"]["held_locks"] = total.group("held")
            continue
        if not line or _LOCK_PROGRESS_RE.match(line):
            listing = ""
            continue
        rest.append(line)
    if rest:
        warned = complaints(rest)
        out["warnings"].extend(warned)
        out["frames"].extend(frames_from_lines([line for line in rest if line.strip() not in warned]))


def _lock_line(line: str, resource: dict[str, Any], listing: str) -> bool:
    """One line under a resource (counts, owners, waiters) read into it; False if not its."""
    k = _RESOURCE_COUNT_RE.match(line)
    if k is not None:
        resource[_RESOURCE_COUNT_KEYS[k.group("key")]] = int(k.group("n"))
        return True
    t = _THREADS_RE.match(line)
    if t is not None:
        resource.setdefault("threads", []).extend(_lock_threads(t.group("items")))
        return True
    if _WAITING_RE.match(line):
        return True
    if listing:
        w = _LOCK_CONTINUATION_RE.match(line)
        if w is not None:
            if listing == "threads" and "-" in w.group("items"):
                resource["threads"].extend(_lock_threads(w.group("items")))
                return True
            if listing == "waiting":
                resource.setdefault("waiting_exclusive", []).extend(
                    addr(x) for x in _WAITER_RE.findall(w.group("items"))
                )
                return True
    return False


def _critsec_line(line: str, cs: dict[str, Any], fields: dict[str, str]) -> bool:
    """One ``Key  value`` line, ``*** Locked`` or the ``Scanned N`` trailer; False if none."""
    k = _CRITSEC_KEY_RE.match(line)
    if k is not None:
        _critsec_key(cs, k.group("key"), k.group("value"))
        return True
    if _CRITSEC_LOCKED_RE.match(line):
        cs["locked"] = True
        return True
    n = _CRITSEC_SCANNED_RE.match(line)
    if n is not None:
        fields["scanned_critical_sections"] = n.group("n")
        return True
    return False


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


# !gflag: "Current NtGlobalFlag contents: 0x02000000" (or "New ..." after a change; kernels
# since 20H1 add "Current NtGlobalFlag2 contents: 0x00000000"), then one line per flag set,
# "    hpa - Place heap allocations at ends of pages" (a cdb session of a leak write-up,
# stored-index file 39591084709; the wording is dbgeng's own "%s - %s").
_GFLAG_HEAD_RE = re.compile(r"^\s*(?:Current|New) (?P<key>NtGlobalFlag2?) contents: (?P<value>0x[0-9a-fA-F]+)\s*$")
_GFLAG_ROW_RE = re.compile(r"^\s+(?P<flag>[a-z0-9]{2,5}) - (?P<description>\S.*?)\s*$")


def _gflag(lines: list[str], out: dict[str, Any]) -> None:
    for line in lines:
        h = _GFLAG_HEAD_RE.match(line)
        if h is not None:
            out["fields"][h.group("key")] = h.group("value").lower()
            continue
        r = _GFLAG_ROW_RE.match(line)
        if r is not None and out["fields"]:
            out["entries"].append({"flag": r.group("flag"), "description": r.group("description")})


# the extensions this module reads, by name (``kdmcp.parse.objects`` dispatches on it)
HANDLERS: dict[str, Handler] = {
    "gflag": _gflag,
    "irql": _irql,
    "teb": _teb_peb,
    "peb": _teb_peb,
    "pcr": _teb_peb,
    "apic": _apic,
    "address": _address,
    "vm": _vm,
    "locks": _locks,
    "lmi": _lmi,
}
