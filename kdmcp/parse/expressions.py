"""Expression evaluation: ``? expr``, ``?? expr`` and ``.formats``.

::

    Evaluate expression: -8781847822336 = fffff803`51148000
    unsigned int64 0x10                               (??)
    Evaluate expression:                              (.formats)
      Hex:     00000000`7763cb60
      Decimal: 2003028832
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import ExpressionRecord

# "Evaluate expression: 0 = 00000000"
_EVALUATE_RE = re.compile(r"^\s*Evaluate expression: (?P<dec>-?\d+) = (?P<hex>[0-9a-fA-F`]+)$")
# .formats lines: "  Hex:     00000000`7763cb60"
_FORMAT_RE = re.compile(r"^\s+(?P<key>Hex|Decimal|Octal|Binary|Chars|Time|Float|Double):\s*(?P<value>.*)$")
# C++ evaluator: "unsigned int64 0x10", "int 0n5", "struct _EPROCESS * 0xffff..."
_CPP_RE = re.compile(r"^\s*(?P<type>[A-Za-z_].*) (?P<value>0x[0-9a-fA-F`]+|0n-?\d+|-?\d+)$")
# ...and a value that is no number: a structure (its type alone on the first line, the members
# under it as dt prints them), a string under a pointer, a bool or a float. "?? @$t0" of a typed
# pseudo-register (a WinDbg tutorial, stored-index file 62087429387):
#   struct _UNICODE_STRING
#    "c:\windows\syswow64\calc.exe"
#      +0x000 Length           : 0x38
_CPP_TYPE_RE = re.compile(r"^(?P<type>(?:struct|class|union|enum) [^\s\"]+(?: \*+)?)\s*$")
_CPP_WORD_VALUE_RE = re.compile(r"^(?P<type>bool|float|double) (?P<value>\S+)\s*$")
_CPP_STRING_RE = re.compile(r'^\s+(?P<string>".*")\s*$')
_CPP_MEMBER_RE = re.compile(r"^\s+\+0x[0-9a-fA-F]+ (?P<name>\S+)\s*: ?(?P<value>.*?)\s*$")


def _cpp_detail(line: str, fields: dict[str, str]) -> None:
    """A line under a ``??`` value: the string a pointer points at, or a structure member."""
    s = _CPP_STRING_RE.match(line)
    if s is not None:
        fields.setdefault("string", s.group("string")[1:-1])
        return
    m = _CPP_MEMBER_RE.match(line)
    if m is not None:
        fields.setdefault(m.group("name"), m.group("value"))


def parse_expression(command: str, raw: str) -> ExpressionRecord | None:
    """An ``ExpressionRecord``; ``None`` if no evaluation result is present."""
    record: dict[str, Any] = {"command": command, "raw": raw, "fields": {}}
    found = False
    for line in split_lines(raw):
        m = _EVALUATE_RE.match(line)
        if m is not None:
            record["value"] = addr(m.group("hex"))
            record["decimal"] = int(m.group("dec"))
            found = True
            continue
        f = _FORMAT_RE.match(line)
        if f is not None:
            record["fields"][f.group("key")] = f.group("value")
            found = True
            continue
        if command.lstrip().startswith("??") and found and "type" in record["fields"]:
            _cpp_detail(line, record["fields"])
            continue
        if command.lstrip().startswith("??") and not found:
            t = _CPP_TYPE_RE.match(line) or _CPP_WORD_VALUE_RE.match(line)
            if t is not None:
                record["fields"]["type"] = t.group("type")
                if "value" in t.re.groupindex:
                    record["fields"]["value"] = t.group("value")
                found = True
                continue
            c = _CPP_RE.match(line)
            if c is not None:
                record["fields"]["type"] = c.group("type")
                value = c.group("value")
                if value.startswith("0x"):
                    record["value"] = addr(value)
                else:
                    dec = int(value[2:] if value.startswith("0n") else value)
                    record["decimal"] = dec
                    record["value"] = hex(dec) if dec >= 0 else None
                found = True
    fields: dict[str, str] = record["fields"]
    if "Hex" in fields and "value" not in record:
        record["value"] = addr(fields["Hex"].split()[0])
    if "Decimal" in fields and "decimal" not in record:
        first = fields["Decimal"].split()[0] if fields["Decimal"].split() else ""
        if first.lstrip("-").isdigit():
            record["decimal"] = int(first)
    if not found:
        return None
    return ExpressionRecord.model_validate(record)
