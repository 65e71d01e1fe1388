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
        if command.lstrip().startswith("??") and not found:
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
