"""``dt``: a type's layout (``dt _KPCR``) or an instance (``dt nt!_PEB 7ffdf000``).

::

    ntdll!_PEB                                         <- type name
       +0x002 BeingDebugged    : 0x1 ''               <- instance: value
       +0x00c Ldr              : 0x77c08880 _PEB_LDR_DATA   value + pointed-to type
       +0x003 ImageUsesLargePages : 0y0              <- bit field
       +0x000 NtTib            : _NT_TIB              <- layout: type
          +0x000 ExceptionList    : ...               <- nested (-r), one level per 3 blanks
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import split_lines
from kdmcp.parse.models import TypeDumpRecord

# "   +0x010 TimeoutReason    : 9 ( TdrEngineTimeoutPromotedToAdapterReset )"
FIELD_RE = re.compile(r"^(?P<indent>\s*)\+(?P<offset>0x[0-9a-fA-F]+) (?P<name>\S+)\s*:\s?(?P<text>.*)$")

# A value-looking start: hex/decimal/binary literal, a number, (null), a quote.
_VALUE_START_RE = re.compile(r"^(?:0x|0n|0y|-?\d|\(null\)|\"|'|<)")

# "0x77c08880 _PEB_LDR_DATA", "0x00f70000 Void", "0xffffe000`c2b12a40 ??"
_VALUE_TYPE_RE = re.compile(r"^(?P<value>0x[0-9a-fA-F`]+)\s+(?P<type>[A-Za-z_?][\w:<>*?-]*(?: \*+)?)$")

# "_ULARGE_INTEGER 0xb2", "_NT_TIB", "_TDR_RECOVERY_CONTEXT::<unnamed-type-CrtcTimeoutData>"
_TYPE_VALUE_RE = re.compile(r"^(?P<type>_[\w:<>-]+)(?:\s+(?P<value>0x[0-9a-fA-F`]+))?$")

# A type-name header line: "ntdll!_KIDTENTRY64", "_KPCR"
_TYPE_NAME_RE = re.compile(r"^\s*(?P<name>(?:\w+!)?_?[A-Za-z_][\w:<>]*)\s*$")

# "0x51568e00`0010e700": a plain hex literal (its backtick is dropped like an address's).
_HEX_LITERAL_RE = re.compile(r"0x[0-9a-fA-F`]+")

_INDENT_STEP = 3


def parse_type_dump(command: str, raw: str) -> TypeDumpRecord | None:
    """A ``TypeDumpRecord``; ``None`` if no ``+0x`` field line is present."""
    lines = split_lines(raw)
    matches: list[re.Match[str]] = []
    type_name: str | None = None
    preview: str | None = None
    for line in lines:
        m = FIELD_RE.match(line)
        if m is not None:
            matches.append(m)
            continue
        if not matches and line.strip():
            if type_name is None:
                t = _TYPE_NAME_RE.match(line)
                if t is not None:
                    type_name = t.group("name")
                    continue
            if line.startswith(" ") and line.strip().startswith('"'):
                preview = line.strip()
    if not matches:
        return None
    instance = any(_VALUE_START_RE.match(m.group("text")) for m in matches)
    base = min(len(m.group("indent")) for m in matches)
    fields = [_field(m, instance, base) for m in matches]
    if preview is not None and preview.startswith('"') and preview.endswith('"') and len(preview) >= 2:
        preview = preview[1:-1]
    return TypeDumpRecord.model_validate(
        {
            "command": command,
            "raw": raw,
            "type_name": type_name,
            "instance": instance,
            "preview": preview,
            "fields": fields,
        }
    )


def _field(m: re.Match[str], instance: bool, base: int) -> dict[str, Any]:
    text = m.group("text")
    field: dict[str, Any] = {
        "offset": m.group("offset").lower(),
        "name": m.group("name"),
        "depth": max(0, (len(m.group("indent")) - base) // _INDENT_STEP),
    }
    if not instance:
        field["type"] = text or None
        field["bitfield"] = text.startswith("Pos ")
        return field
    field["bitfield"] = text.startswith("0y")
    vt = _VALUE_TYPE_RE.match(text)
    if vt is not None:
        field["value"] = vt.group("value").replace("`", "")
        field["type"] = vt.group("type")
        return field
    tv = _TYPE_VALUE_RE.match(text)
    if tv is not None:
        field["type"] = tv.group("type")
        if tv.group("value"):
            field["value"] = tv.group("value").replace("`", "")
        return field
    field["value"] = text.replace("`", "") if _HEX_LITERAL_RE.fullmatch(text) else text
    return field
