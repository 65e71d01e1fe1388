"""``!analyze -v``: kernel (bugcheck) and user (exception) analyses, old and new layouts.

The output is a header then ``KEY: value`` sections, each running until the next key at
column 0 (bodies may contain blank lines: ``KEY_VALUES_STRING``, ``PROBLEM_CLASSES``)::

    *   Bugcheck Analysis   *                     <- banner ("Exception Analysis" in user mode)
    DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)            <- bugcheck name (code)
    An attempt was made to access ...             <- description
    Arguments:
    Arg1: ffffd8024aaa8010, memory referenced     <- arguments (descriptions may wrap)
    ...
    PROCESS_NAME:  notmyfault64.exe               <- sections
    STACK_TEXT:
    ffffd48f`77af9698 fffff800`62a09169 : ... : nt!KeBugCheckEx

Sections with structure get typed fields (``stack``, ``trap_frame``, ``exception``,
``faulting_ip``, ``key_values``); every section is also kept verbatim in ``fields``.

``!analyze`` without ``-v`` (and kd on opening a crash dump) prints a short header instead;
``Followup``'s underline ends the analysis, and the current instruction may follow::

    BugCheck 139, {3, ffff84022caef450, ffff84022caef3a8, 0}
    Probably caused by : LXCORE.SYS ( LXCORE!LxpFutexEvictWaitQueue+47 )
    Followup:     MachineOwner
    ---------

``.bugcheck`` prints only the code and the arguments (``parse_bugcheck``).
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import DOTS_RE, addr, hexnum, split_lines, to_int
from kdmcp.parse.disasm import INSTRUCTION_RE, match_label, parse_instruction_pair
from kdmcp.parse.exceptions import exception_from_lines
from kdmcp.parse.frames import frames_from_lines
from kdmcp.parse.models import AnalysisRecord
from kdmcp.parse.models.diagnosis import SIMPLE_SECTIONS
from kdmcp.parse.registers import context_from_lines

# A section key at column 0: "PROCESS_NAME:", "TAG_NOT_DEFINED_202b:", "Followup:", "Timeline:".
# (upper case except a trailing lower-case tag part; checked in _is_key, not by nested
# quantifiers, which would backtrack exponentially on a long "A_A_A_..." without a colon)
_KEY_RE = re.compile(r"^(?P<key>[A-Z][A-Za-z0-9_]*):(?:[ \t]+|$)(?P<value>.*)$")
# Capitalised words kd also puts at column 0 that are not sections.
_NOT_KEYS = frozenset({"NOTE", "WARNING", "ERROR"})
_MIXED_CASE_KEYS = frozenset({"Followup", "Timeline"})


def _is_key(key: str) -> bool:
    """A section key: all caps (``TAG_NOT_DEFINED_202b`` may end in lower case), or one
    of the two mixed-case keys; not ``Arg1``/``Arguments``/``NOTE``."""
    if key in _MIXED_CASE_KEYS:
        return True
    if key in _NOT_KEYS or len(key) < 3:
        return False
    head = key.rsplit("_", 1)[0] if "_" in key else key
    return head.upper() == head


# "DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)"
_BUGCHECK_RE = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]+) \((?P<code>[0-9a-fA-F]+)\)\s*$")
# A code missing from the debugger's table (new codes, NTSTATUS-valued codes), with a
# placeholder description line after it:
# "Unknown bugcheck code (c0000218)" / "Unknown bugcheck description"
_UNKNOWN_BUGCHECK_RE = re.compile(r"^Unknown bugcheck code \((?P<code>[0-9a-fA-F]+)\)$")
_UNKNOWN_DESCRIPTION = "Unknown bugcheck description"
# Short form (``!analyze`` without -v, dump open): "BugCheck D5, {fab22c50, 0, 911db830, 0}";
# the events reader uses it and ``caused_by`` for the same lines in a dump-open log.
SHORT_BUGCHECK_RE = re.compile(r"^\s*BugCheck (?P<code>[0-9a-fA-F]+), \{(?P<args>[0-9a-fA-F`, ]*)\}$")
# "Probably caused by : win32k.sys ( win32k!hbmSelectBitmap+ca )", "... : memory_corruption"
_CAUSED_BY_RE = re.compile(r"^\s*Probably caused by\s*:\s*(?P<image>[^\s(]+)(?:\s*\((?P<symbol>[^()]*)\))?$")
# ".bugcheck": "Bugcheck code 0000009F" / "Arguments 00000000 0000001c 00000000 00000000"
_DOT_BUGCHECK_CODE_RE = re.compile(r"^\s*Bugcheck code (?P<code>[0-9a-fA-F]+)$")
_DOT_BUGCHECK_ARGS_RE = re.compile(r"^\s*Arguments (?P<args>[0-9a-fA-F`]+(?: +[0-9a-fA-F`]+)*)$")
# The underline under "Followup:     MachineOwner" that closes the analysis.
_UNDERLINE_RE = re.compile(r"^-{3,}$")
# "Arg1: ffffd8024aaa8010, memory referenced"
_ARG_RE = re.compile(r"^Arg(?P<n>\d): (?P<value>[0-9a-fA-F`]+)(?:,\s*(?P<desc>.*))?$")
# banner line: "*                        Bugcheck Analysis                                    *"
_BANNER_RE = re.compile(r"^\*\s+(?P<what>Bugcheck|Exception) Analysis\s+\*\s*$")
# KEY_VALUES_STRING body: "    Key  : AV.Type" / "    Value: Read"
_KV_KEY_RE = re.compile(r"^\s+Key\s*:\s*(?P<key>.*)$")
_KV_VALUE_RE = re.compile(r"^\s+Value\s*:\s*(?P<value>.*)$")

# Sections that carry the failure bucket; user-mode buckets start "APPLICATION_FAULT_..." or
# "APPLICATION_HANG..."
_USER_BUCKETS = ("APPLICATION_FAULT", "APPLICATION_HANG")
_BUCKET_KEYS = ("BUGCHECK_STR", "DEFAULT_BUCKET_ID", "PRIMARY_PROBLEM_CLASS", "BUCKET_ID", "FAILURE_BUCKET_ID")
# EXCEPTION_RECORD of the last event, which only a user-mode analysis reads:
# "EXCEPTION_RECORD:  (.exr -1)", "EXCEPTION_RECORD:  ffffffff -- (.exr 0xffffffffffffffff)"
_LAST_EVENT_EXR_RE = re.compile(r"\(\.exr (?:-1|0xf{8}(?:f{8})?)\)")
# STACK_COMMAND that first switches to the faulting thread: "~7s ; kb", "~0s; .ecxr ; kb"
_THREAD_SWITCH_RE = re.compile(r"~\d+s\b")



def _split_sections(lines: list[str]) -> tuple[list[str], list[tuple[str, str, list[str]]], list[str]]:
    """(header lines, [(key, first-line value, body lines)], trailer lines).

    The trailer is what follows ``Followup``'s ``---------`` underline: not part of the
    analysis (the current instruction after the short form, a complaint such as
    ``ReadVirtual: 812d1248 not properly sign extended``) unless a new section starts.
    """
    header: list[str] = []
    sections: list[tuple[str, str, list[str]]] = []
    trailer: list[str] = []
    closed = False
    for line in lines:
        m = _KEY_RE.match(line) if line[:1].isupper() else None
        if m is not None and _is_key(m.group("key")):
            sections.append((m.group("key"), m.group("value").strip(), []))
            closed = False
            continue
        if closed:
            trailer.append(line)
        elif sections:
            if sections[-1][0] == "Followup" and _UNDERLINE_RE.match(line):
                closed = True
            else:
                sections[-1][2].append(line)
        else:
            header.append(line)
    return header, sections, trailer


def _parse_header(header: list[str], record: dict[str, Any]) -> None:
    """Banner, bugcheck name/code, description and arguments; or the short form's
    ``BugCheck`` and ``Probably caused by`` lines."""
    name: str | None = None
    code: str | None = None
    description: list[str] = []
    args: list[str] = []
    descs: list[str] = []
    state = "start"
    for line in header:
        if line.lstrip().startswith("Probably caused by"):
            culprit = caused_by(line)
            if culprit is not None:
                record["image_name"], symbol = culprit
                if symbol is not None:
                    record["symbol_name"] = symbol
            continue
        if state == "start":
            b = _BANNER_RE.match(line)
            if b is not None:
                record["mode"] = "kernel" if b.group("what") == "Bugcheck" else "user"
                continue
            m = _BUGCHECK_RE.match(line) or _UNKNOWN_BUGCHECK_RE.match(line)
            if m is not None:
                name, code = m.groupdict().get("name"), m.group("code")
                state = "description"
                continue
            short = SHORT_BUGCHECK_RE.match(line)
            if short is not None:
                record["bugcheck"] = {
                    "code": "0x" + short.group("code").lower(),
                    "args": [addr(arg) for arg in short.group("args").split(",") if arg.strip()],
                }
            continue
        if state == "description":
            if line.strip() == "Arguments:":
                state = "args"
            elif line.strip() and line.strip() != _UNKNOWN_DESCRIPTION:
                description.append(line.strip())
            continue
        a = _ARG_RE.match(line)
        if a is not None:
            args.append(addr(a.group("value")))
            descs.append(a.group("desc") or "")
            continue
        if not line.strip():
            if args:
                state = "done"
            continue
        if state == "args" and args and line[:1].isspace():
            descs[-1] = (descs[-1] + " " + line.strip()).strip()
    if code is not None:
        record["bugcheck"] = {
            "code": "0x" + code.lower(),
            "name": name,
            "args": args,
            "arg_descriptions": descs,
            "description": " ".join(description) or None,
        }


def caused_by(line: str) -> tuple[str, str | None] | None:
    """(image, symbol) of the short form's ``Probably caused by :`` line; the symbol is
    ``None`` when no parentheses follow (``Probably caused by : memory_corruption``)."""
    m = _CAUSED_BY_RE.match(line)
    if m is None:
        return None
    return m.group("image"), (m.group("symbol") or "").strip() or None


def _body_text(value: str, body: list[str]) -> str:
    """A section's text: first-line value plus its body, outer blank lines dropped."""
    lines = [value] if value else []
    lines.extend(body)
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(line.rstrip() for line in lines)


def _instruction_of(body: list[str], value: str) -> Any:
    """FAULTING_IP / FOLLOWUP_IP: label line then instruction line."""
    lines = ([value] if value else []) + [b for b in body if b.strip()]
    for i, line in enumerate(lines):
        ins = parse_instruction_pair(_closed_source(lines[i - 1]) if i > 0 else None, line)
        if ins is not None:
            return ins
    return None


def _closed_source(label: str) -> str:
    """The label with its source note closed: WinDbg 10.0.18248 prints
    ``nt!memcpy+33 [minkernel\\crts\\crtw32\\string\\i386\\memcpy.asm @ 213`` without the
    ``]``, and a label with an open bracket is not a label to the instruction reader."""
    _, bracket, note = label.rpartition(" [")
    if bracket and "]" not in note and " @ " in note:
        return label + "]"
    return label


def parse_analysis(command: str, raw: str) -> AnalysisRecord | None:
    """An ``AnalysisRecord``; ``None`` if neither a bugcheck header nor a section is present."""
    lines = split_lines(raw)
    header, sections, trailer = _split_sections(lines)
    record: dict[str, Any] = {"command": command, "raw": raw, "fields": {}, "key_values": {}}
    _parse_header(header, record)
    if not sections and "bugcheck" not in record:
        return None
    record["warnings"] = _trailer_complaints(trailer)
    texts: dict[str, list[str]] = {}  # repeated keys (Timeline) are joined once, at the end
    for key, value, body in sections:
        text = _body_text(value, body)
        texts.setdefault(key, []).append(text)
        if key == "STACK_TEXT":
            record["stack"] = frames_from_lines(body)
        elif key in ("TRAP_FRAME", "CONTEXT") and "trap_frame" not in record:
            ctx = context_from_lines(body)
            if ctx is not None:
                record["trap_frame"] = ctx
        elif key == "EXCEPTION_RECORD":
            info = exception_from_lines(body)
            if info:
                record["exception"] = info
        elif key == "FAULTING_IP":
            record["faulting_ip"] = _instruction_of(body, value)
        elif key == "FOLLOWUP_IP":
            record["followup_ip"] = _instruction_of(body, value)
        elif key == "KEY_VALUES_STRING":
            _key_values(body, record["key_values"])
        elif key == "FAULTING_SOURCE_LINE_NUMBER":
            record["faulting_source_line"] = to_int(value)
        elif key in SIMPLE_SECTIONS and value:
            record.setdefault(SIMPLE_SECTIONS[key], value)
    fields: dict[str, str] = record["fields"]
    fields.update((key, "\n".join(parts)) for key, parts in texts.items())
    _derive(record, fields)
    return AnalysisRecord.model_validate(record)


def parse_bugcheck(command: str, raw: str) -> AnalysisRecord | None:
    """``.bugcheck``: the code and arguments an ``!analyze`` of the same target shows, as an
    analysis with only ``bugcheck`` filled; ``None`` if the code line is absent::

        Bugcheck code 00000139
        Arguments 00000000`0000001d ffffb88f`1487ec30 ffffb88f`1487eb88 00000000`00000000

    The code is printed zero-padded (``0000009F``); it is kept as ``!analyze`` spells it
    (``0x9f``) so that both commands give the same ``bugcheck.code``.
    """
    code: str | None = None
    args: list[str] = []
    for line in split_lines(raw):
        c = _DOT_BUGCHECK_CODE_RE.match(line)
        if c is not None:
            code = hexnum(c.group("code"))
            continue
        a = _DOT_BUGCHECK_ARGS_RE.match(line)
        if a is not None:
            args = [addr(arg) for arg in a.group("args").split()]
    if code is None:
        return None
    return AnalysisRecord.model_validate(
        {"command": command, "raw": raw, "mode": "kernel", "bugcheck": {"code": code, "args": args}}
    )


def _trailer_complaints(trailer: list[str]) -> list[str]:
    """Lines after the analysis that the debugger added on its own (``ReadVirtual: 812d1248
    not properly sign extended``). The current instruction printed after the short form
    has no place in the record: it is not the faulting instruction."""
    out: list[str] = []
    for line in trailer:
        stripped = line.strip()
        if not stripped or DOTS_RE.match(stripped) or INSTRUCTION_RE.match(line) or match_label(line):
            continue
        out.append(stripped)
    return out


def _key_values(body: list[str], out: dict[str, str]) -> None:
    """``Key : X`` / ``Value: Y`` pairs of KEY_VALUES_STRING."""
    key: str | None = None
    for line in body:
        k = _KV_KEY_RE.match(line)
        if k is not None:
            key = k.group("key")
            continue
        v = _KV_VALUE_RE.match(line)
        if v is not None and key is not None:
            out[key] = v.group("value")
            key = None


def _derive(record: dict[str, Any], fields: dict[str, str]) -> None:
    """Fill typed fields the new layout spells differently (BUGCHECK_CODE, key values)."""
    if "bugcheck" not in record and "BUGCHECK_CODE" in fields:
        args = [addr(fields[f"BUGCHECK_P{i}"]) for i in range(1, 5) if f"BUGCHECK_P{i}" in fields]
        record["bugcheck"] = {"code": addr(fields["BUGCHECK_CODE"].split()[0]), "args": args}
    if "mode" not in record:
        record["mode"] = _mode_of_sections(record, fields)
    kv: dict[str, str] = record["key_values"]
    if "exception" not in record:
        code = fields.get("EXCEPTION_CODE_STR") or kv.get("Failure.Exception.Code")
        if code:
            exc: dict[str, Any] = {"code": addr(code.split()[0])}
            ip = kv.get("Failure.Exception.IP.Address")
            if ip:
                exc["address"] = addr(ip)
            record["exception"] = exc
    if "failure_id_hash" not in record and "Failure.Hash" in kv:
        record["failure_id_hash"] = kv["Failure.Hash"]
    if "failure_bucket_id" not in record and "Failure.Bucket" in kv:
        record["failure_bucket_id"] = kv["Failure.Bucket"]
    if record.get("faulting_ip") is None:
        record["faulting_ip"] = _fallback_ip(record, fields, kv)


def _mode_of_sections(record: dict[str, Any], fields: dict[str, str]) -> str | None:
    """Kernel or user for an analysis printed without its banner (cdb 6.9, partial pastes).

    The analysis' own word first (``ANALYSIS_SOURCE``, the ``um:``/``km:`` of
    ``FAILURE_ID_HASH_STRING``), then what only a user-mode analysis prints, then the
    kernel hints: ``BUGCHECK_STR`` and ``BUGCHECK_CODE`` are printed in both modes, so they
    decide only when nothing says user mode. ``PROCESS_NAME`` is no evidence (a kernel
    analysis names the process current at the crash). ``None`` when nothing tells.
    """
    source = fields.get("ANALYSIS_SOURCE")
    if source in ("UM", "KM"):
        return "user" if source == "UM" else "kernel"
    hash_string = fields.get("FAILURE_ID_HASH_STRING", "")
    if hash_string.startswith(("um:", "km:")):
        return "user" if hash_string.startswith("um:") else "kernel"
    if _says_user_mode(fields):
        return "user"
    if "bugcheck" in record or "TRAP_FRAME" in fields or "BUGCHECK_STR" in fields:
        return "kernel"
    return None


def _says_user_mode(fields: dict[str, str]) -> bool:
    """An application fault or hang bucket, the last event's exception record (kernel analyses
    name the record of the bugcheck), or a stack command that starts by switching thread."""
    if any(fields.get(key, "").startswith(_USER_BUCKETS) for key in _BUCKET_KEYS):
        return True
    exception_record = fields.get("EXCEPTION_RECORD", "").partition("\n")[0]
    if _LAST_EVENT_EXR_RE.search(exception_record):
        return True
    return _THREAD_SWITCH_RE.match(fields.get("STACK_COMMAND", "")) is not None


def _fallback_ip(record: dict[str, Any], fields: dict[str, str], kv: dict[str, str]) -> Any:
    """Current layouts drop FAULTING_IP: use IP_IN_PAGED_CODE, the trap frame's instruction,
    or the ``Failure.Exception.IP.Address`` key value (address only), in that order."""
    paged = fields.get("IP_IN_PAGED_CODE")
    if paged:
        ins = _instruction_of(paged.split("\n"), "")
        if ins is not None:
            return ins
    trap = record.get("trap_frame")
    if trap and trap.get("address"):
        return {
            "address": trap["address"],
            "bytes": trap.get("bytes") or "",
            "mnemonic": trap.get("mnemonic") or "",
            "operands": trap.get("operands") or "",
            "symbol": trap.get("symbol"),
            "memory_reference": trap.get("memory_reference"),
        }
    ip = kv.get("Failure.Exception.IP.Address")
    if ip:
        return {"address": addr(ip)}
    return None
