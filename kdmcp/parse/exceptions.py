"""Exception records: ``.exr``, ``.lastevent``, ``.jdinfo``, and the event line kd prints.

``.exr`` (also the body of ``!analyze``'s ``EXCEPTION_RECORD``)::

    ExceptionAddress: 000000007777cb60 (ntdll!LdrpDoDebuggerBreak+0x0000000000000030)
       ExceptionCode: 80000003 (Break instruction exception)
      ExceptionFlags: 00000000
    NumberParameters: 1
       Parameter[0]: 0000000000000000
    Attempt to read from address 06700ff8

The event line (after ``g``, in ``.lastevent``)::

    (336c.264c): Access violation - code c0000005 (first chance)
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import ExceptionRecordRecord
from kdmcp.parse.registers import context_from_lines

_EXC_ADDRESS_RE = re.compile(r"^\s*ExceptionAddress:\s*(?P<addr>[0-9a-fA-F`]+)(?:\s+\((?P<sym>.*)\))?$")
_EXC_CODE_RE = re.compile(r"^\s*ExceptionCode:\s*(?P<code>[0-9a-fA-F]+)(?:\s+\((?P<desc>.*)\))?$")
_EXC_FLAGS_RE = re.compile(r"^\s*ExceptionFlags:\s*(?P<flags>[0-9a-fA-F]+)")
_EXC_PARAM_RE = re.compile(r"^\s*Parameter\[\d+\]:\s*(?P<value>[0-9a-fA-F`]+)")
# "Attempt to read from address 06700ff8" / "Attempt to write to address 0" / "Attempt to execute ..."
_ACCESS_RE = re.compile(r"^\s*Attempt to (?P<access>read|write|execute)\b.*?address (?P<addr>[0-9a-fA-F`]+)")

# "(336c.264c): Break instruction exception - code 80000003 (first chance)"
# "Access violation - code c0000005 (!!! second chance !!!)" (old engines: no pid.tid)
EXCEPTION_EVENT_RE = re.compile(
    r"^\s*(?:\((?P<pid>[0-9a-fA-F]+)\.(?P<tid>[0-9a-fA-F]+)\):\s*)?(?P<desc>\S.*?) - code (?P<code>[0-9a-fA-F]{8})"
    r"\s*\((?P<chance>[^)]*)\)"
)

# ".lastevent": "Last event: 1450.1424: Integer divide-by-zero - code c0000094 (first chance)"
_LAST_EVENT_RE = re.compile(r"^\s*Last event:\s*(?:(?P<thread>[0-9a-fA-F]+\.[0-9a-fA-F]+):\s*)?(?P<event>.*)$")

# ".lastevent" of old engines (MS docs' stack-overflow walkthrough): code and chance only,
# "Last event: Exception C00000FD, second chance"
_OLD_LAST_EVENT_RE = re.compile(r"^Exception (?P<code>[0-9a-fA-F]{8}), (?P<chance>first|second) chance$")

# The facts only ``.exr`` / ``.lastevent`` print (an ``!analyze`` EXCEPTION_RECORD has no field
# for them): "NumberParameters: 2" (decimal; the NT4-era kernel layout of the bug check 0x1E page
# zero-pads it to eight hex digits, "NumberParameters: 00000002"), that layout's
# "Exception Record @ FE40CD88:" and "  Chained Record: 00000000", and the line under
# ".lastevent"'s event: "  debugger time: Thu Jul 30 19:23:53.169 2015 (UTC + 2:00)".
_PARAM_COUNT_RE = re.compile(r"^\s*NumberParameters:\s*(?P<count>[0-9a-fA-F]+)\s*$")
_RECORD_AT_RE = re.compile(r"^\s*Exception Record @ (?P<addr>[0-9a-fA-F`]+):")
_CHAINED_RE = re.compile(r"^\s*Chained Record:\s*(?P<addr>[0-9a-fA-F`]+)")
_DEBUGGER_TIME_RE = re.compile(r"^\s*debugger time:\s*(?P<time>\S(?:.*\S)?)")

# ".jdinfo": "----- Exception occurred on thread 0:15c8"
_JD_THREAD_RE = re.compile(r"^-+\s*Exception occurred on thread (?P<thread>\S+)")


def exception_from_lines(lines: list[str]) -> dict[str, Any]:
    """``ExceptionInfo`` fields found in ``lines`` (empty dict if none)."""
    info: dict[str, Any] = {}
    params: list[str] = []
    for line in lines:
        if "Exception" in line:
            m = _EXC_ADDRESS_RE.match(line)
            if m is not None:
                info["address"] = addr(m.group("addr"))
                if m.group("sym"):
                    info["symbol"] = m.group("sym")
                continue
            m = _EXC_CODE_RE.match(line)
            if m is not None:
                info["code"] = addr(m.group("code"))
                if m.group("desc"):
                    info["description"] = m.group("desc")
                continue
            m = _EXC_FLAGS_RE.match(line)
            if m is not None:
                info["flags"] = addr(m.group("flags"))
                continue
        m = _EXC_PARAM_RE.match(line)
        if m is not None:
            params.append(addr(m.group("value")))
            continue
        m = _ACCESS_RE.match(line)
        if m is not None:
            info["access"] = m.group("access")
            info["access_address"] = addr(m.group("addr"))
    if params:
        info["parameters"] = params
    return info


def event_fields(m: re.Match[str]) -> dict[str, Any]:
    """code/description/first_chance (and pid/tid) of an ``EXCEPTION_EVENT_RE`` match."""
    chance = m.group("chance").lower()
    # a dump says "(first/second chance not available)": neither, so unknown
    first: bool | None = None
    if chance.startswith("first chance"):
        first = True
    elif "second" in chance and "not available" not in chance:
        first = False
    fields: dict[str, Any] = {"code": addr(m.group("code")), "description": m.group("desc"), "first_chance": first}
    if m.group("pid"):
        fields["process_id"] = "0x" + m.group("pid").lower()
        fields["thread_id"] = "0x" + m.group("tid").lower()
    return fields


def _record_only_fields(lines: list[str]) -> dict[str, Any]:
    """The facts of ``_PARAM_COUNT_RE`` and the lines after it found in ``lines``."""
    found: dict[str, Any] = {}
    for line in lines:
        if (m := _PARAM_COUNT_RE.match(line)) is not None:
            count = m.group("count")
            found["parameter_count"] = int(count, 16) if len(count) == 8 else int(count)
        elif (m := _RECORD_AT_RE.match(line)) is not None:
            found["record_address"] = addr(m.group("addr"))
        elif (m := _CHAINED_RE.match(line)) is not None:
            found["chained_record"] = addr(m.group("addr"))
        elif (m := _DEBUGGER_TIME_RE.match(line)) is not None:
            found["debugger_time"] = m.group("time")
    return found


def parse_exception_record(command: str, raw: str) -> ExceptionRecordRecord | None:
    """``.exr`` / ``.lastevent`` / ``.jdinfo``; ``None`` if no exception fact is present."""
    lines = split_lines(raw)
    info = exception_from_lines(lines)
    thread: str | None = None
    for line in lines:
        last = _LAST_EVENT_RE.match(line)
        if last is not None:
            thread = last.group("thread")
            ev = EXCEPTION_EVENT_RE.match(last.group("event"))
            if ev is not None:
                fields = event_fields(ev)
                info.setdefault("code", fields["code"])
                info.setdefault("description", fields["description"])
                info["first_chance"] = fields["first_chance"]
            elif (old := _OLD_LAST_EVENT_RE.match(last.group("event"))) is not None:
                info.setdefault("code", addr(old.group("code")))
                info["first_chance"] = old.group("chance") == "first"
            elif last.group("event"):
                info.setdefault("description", last.group("event").strip())
            continue
        jd = _JD_THREAD_RE.match(line)
        if jd is not None:
            thread = jd.group("thread")
    if not info and thread is None:
        return None
    record: dict[str, Any] = {"command": command, "raw": raw, "thread": thread, **info, **_record_only_fields(lines)}
    if command.strip().lower().startswith(".jdinfo"):
        record["context"] = context_from_lines(lines)
    return ExceptionRecordRecord.model_validate(record)
