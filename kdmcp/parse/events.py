"""What the debugger says on its own: connect banners, module loads, exceptions, breakpoint hits.

This is the output of go/step commands (``g``, ``p``, ``t``...), ``.breakin``, and the text
before the first prompt. Each recognised line becomes an ``Event``; target facts in the
banner fill ``target``; a register dump and current instruction fill ``context``::

    Connected to Windows 10 16299 x64 target at (Wed Feb 28 17:16:23.051 2018 (UTC - 8:00)), ptr64 TRUE
    ModLoad: 00007ff9`9cd70000 00007ff9`9cda0000   C:\\WINDOWS\\System32\\IMM32.DLL
    (336c.264c): Break instruction exception - code 80000003 (first chance)
    Breakpoint 0 hit
    VERIFIER STOP 00000007: pid 0x1974: block already freed

Opening a crash dump (or connecting to a bugchecked target) ends with the short analysis kd
runs on its own; its ``BugCheck D5, {fab22c50, 0, 911db830, 0}`` line is a ``bugcheck``
event, and the ``Probably caused by :`` line after it names the culprit in its details.
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.analyze import SHORT_BUGCHECK_RE, caused_by
from kdmcp.parse.errors import classify_line
from kdmcp.parse.exceptions import EXCEPTION_EVENT_RE, event_fields
from kdmcp.parse.models import EventsRecord
from kdmcp.parse.registers import context_from_lines
from kdmcp.parse.target import CONNECTED_RE, target_line

_A = r"[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?"

# (event kind, pattern); named groups become Event fields (start/end/name/code) or details.
_SIMPLE_EVENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "Microsoft (R) Windows Debugger Version 10.0.17074.1002 AMD64"
    ("banner", re.compile(r"^\s*Microsoft \(R\) Windows Debugger Version (?P<name>\S+)")),
    # "Using NET for debugging" / "Opened WinSock 2.0"
    ("transport", re.compile(r"^\s*(?:Using (?P<name>\w+) for debugging|Opened (?P<opened>.+))$")),
    # "Waiting to reconnect..."
    ("waiting_to_reconnect", re.compile(r"^\s*Waiting to reconnect\.\.\.")),
    # "Waiting for pipe \\.\pipe\com1"
    ("waiting", re.compile(r"^\s*Waiting for (?P<name>.+)$")),
    # "Connected to target 169.182.1.1 on port 50005 on local IP 169.182.1.2"
    ("connected", re.compile(r"^\s*Connected to target (?P<name>\S+) on port (?P<port>\d+)")),
    # "Kernel Debugger connection established.  (Initial Breakpoint requested)"
    ("connection_established", re.compile(r"^\s*Kernel Debugger connection established\.?\s*(?:\((?P<note>[^)]*)\))?")),
    # "KDTARGET: Refreshing KD connection"
    ("refresh", re.compile(r"^\s*KDTARGET: Refreshing KD connection")),
    # "Loading Dump File [C:\Windows\MEMORY.DMP]"
    ("dump_open", re.compile(r"^\s*Loading Dump File \[(?P<name>[^\]]+)\]")),
    # "Kernel Bitmap Dump File: Kernel address space is available, ..."
    ("dump_type", re.compile(r"^\s*(?P<name>[A-Z][\w ]*Dump File(?: with Full Memory)?): (?P<desc>.*)$")),
    # "CommandLine: C:\Windows\System32\cmd.exe"
    ("process_start", re.compile(r"^\s*CommandLine: (?P<name>.*)$")),
    # "ModLoad: 00007ff9`9cd70000 00007ff9`9cda0000   C:\WINDOWS\System32\IMM32.DLL"
    ("module_load", re.compile(r"^\s*ModLoad: (?P<start>" + _A + r")\s+(?P<end>" + _A + r")\s+(?P<name>.*)$")),
    # "Unload module C:\x\foo.dll at 00007ff9`9cd70000"
    ("module_unload", re.compile(r"^\s*Unload module (?P<name>.*?) at (?P<start>" + _A + r")")),
    # "Breakpoint 0 hit"
    ("breakpoint", re.compile(r"^\s*Breakpoint (?P<bp>\d+) hit")),
    # "*** Fatal System Error: 0x000000d1"
    ("bugcheck", re.compile(r"^\s*\*\*\* Fatal System Error: (?P<code>0x[0-9a-fA-F]+)")),
    # "Shutdown occurred at (...)...unloading all symbol tables."
    ("shutdown", re.compile(r"^\s*Shutdown occurred")),
    # "Processing initial command '.jdinfo 0x00000000003E0000'"
    ("initial_command", re.compile(r"^\s*Processing initial command '(?P<name>.*)'")),
    # "*** wait with pending attach"
    ("pending_attach", re.compile(r"^\s*\*\*\* wait with pending attach")),
    # "VERIFIER STOP 00000007: pid 0x1974: block already freed"
    (
        "verifier_stop",
        re.compile(r"^\s*VERIFIER STOP (?P<code>[0-9a-fA-F]+): pid (?P<pid>0x[0-9a-fA-F]+): (?P<desc>.*)$"),
    ),
    # "Page heap: process 0x5BC created heap @ 00880000 (00980000, flags 0x3)"
    ("page_heap", re.compile(r"^\s*Page heap: (?P<desc>.*)$")),
    # "Symbol search path is: srv*"
    ("symbol_path", re.compile(r"^\s*Symbol search path is: (?P<name>.*)$")),
)

# "(0x000000d1, 0x0000000000000008, ...)" after "*** Fatal System Error"
_BUGCHECK_ARGS_RE = re.compile(r"^\s*\((?P<args>0x[0-9a-fA-F`]+(?:,\s*0x[0-9a-fA-F`]+)*)\)$")


def _simple_event(kind: str, m: re.Match[str], line: str) -> dict[str, Any]:
    ev: dict[str, Any] = {"kind": kind, "text": line.strip(), "details": {}}
    for key, value in m.groupdict().items():
        if value is None:
            continue
        if key in ("start", "end"):
            ev[key] = addr(value)
        elif key == "name":
            ev["name"] = value
        elif key == "code":
            ev["code"] = addr(value)
        elif key == "desc":
            ev["description"] = value
        elif key == "bp":
            ev["breakpoint_id"] = int(value)
        elif key == "pid":
            ev["process_id"] = value.lower()
        else:
            ev["details"][key] = value
    return ev


def parse_events(command: str, raw: str) -> EventsRecord | None:
    """An ``EventsRecord``; ``None`` if there is no event, target fact or context."""
    lines = split_lines(raw)
    events: list[dict[str, Any]] = []
    target: dict[str, Any] = {"details": {}}
    has_target = False
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        ex = EXCEPTION_EVENT_RE.match(line)
        if ex is not None:
            ev = {"kind": "exception", "text": stripped, **event_fields(ex)}
            events.append(ev)
            continue
        if events and events[-1]["kind"] == "bugcheck":
            b = _BUGCHECK_ARGS_RE.match(line)
            if b is not None:
                events[-1]["details"]["args"] = b.group("args")
                continue
            culprit = caused_by(line)
            if culprit is not None:
                events[-1]["details"]["image_name"] = culprit[0]
                if culprit[1] is not None:
                    events[-1]["details"]["symbol_name"] = culprit[1]
                continue
        short = SHORT_BUGCHECK_RE.match(line)
        if short is not None:
            code = "0x" + short.group("code").lower()
            events.append(
                {"kind": "bugcheck", "text": stripped, "code": code, "details": {"args": short.group("args")}}
            )
            continue
        matched = False
        for kind, pattern in _SIMPLE_EVENTS:
            m = pattern.match(line)
            if m is not None:
                events.append(_simple_event(kind, m, line))
                matched = True
                break
        if stripped.startswith("Connected to Windows"):
            c = CONNECTED_RE.match(line)
            if c is not None:
                events.append({"kind": "connected", "text": stripped, "name": f"{c.group('os')} {c.group('build')}"})
        if target_line(line, target):
            has_target = True
            continue
        if matched:
            continue
        diag = classify_line(line)
        if diag is not None and not diag.noise:
            events.append({"kind": "error", "text": stripped, "description": diag.category})
    context = context_from_lines(lines)
    if not has_target and context is None and all(ev["kind"] == "error" for ev in events):
        return None  # nothing but complaints: the dispatcher makes it an ErrorRecord
    return EventsRecord.model_validate(
        {
            "command": command,
            "raw": raw,
            "events": events,
            "target": target if has_target else None,
            "context": context,
        }
    )
