"""``dt``: a type's layout (``dt _KPCR``) or an instance (``dt nt!_PEB 7ffdf000``).

::

    ntdll!_PEB                                         <- type name
       +0x002 BeingDebugged    : 0x1 ''               <- instance: value
       +0x00c Ldr              : 0x77c08880 _PEB_LDR_DATA   value + pointed-to type
       +0x003 ImageUsesLargePages : 0y0              <- bit field
       +0x000 NtTib            : _NT_TIB              <- layout: type
          +0x000 ExceptionList    : ...               <- nested (-r): deeper than the line above
       +0x00c gn               :
        [00] 0x1                                     <- array element (-a, -b), or alone (-ca10)
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import TypeDumpRecord

# "   +0x010 TimeoutReason    : 9 ( TdrEngineTimeoutPromotedToAdapterReset )"; the value
# may follow the colon after two blanks ("CriticalSectionTimeout   :  0xffffe86d`079b8000").
FIELD_RE = re.compile(r"^(?P<indent>\s*)\+(?P<offset>0x[0-9a-fA-F]+) (?P<name>\S+)\s*:(?P<text>.*)$")

# An array element: under its field with -a ("    [00] 0x1") or -b (a bare "    [00]" with
# the element's fields below it), or on its own with -ca ("[0] 0x1001098").
ELEMENT_RE = re.compile(r"^(?P<indent>\s*)(?P<name>\[\d+\])(?:\s+(?P<text>\S.*))?$")

# A value-looking start: hex/decimal/binary literal, a number, (null), a quote.
_VALUE_START_RE = re.compile(r"^(?:0x|0n|0y|-?\d|\(null\)|\"|'|<)")

# "0x77c08880 _PEB_LDR_DATA", "0x00f70000 Void", "0xffffe000`c2b12a40 ??", and with what
# dt prints after the type: the pointed-to list entry ("0xfffff800`01c78bd0 _LIST_ENTRY
# [ 0x... - 0x... ]") or a function's symbol ("0x827fa2b4        void  nt!IopDeleteDevice+0").
_VALUE_TYPE_RE = re.compile(
    r"^(?P<value>0x[0-9a-fA-F`]+)\s+(?P<type>[A-Za-z_?][\w:<>*?-]*(?: \*+)?)(?:\s+(?P<preview>\S.*))?$"
)

# A function pointer: the value, blanks, the return type (which may hold blanks), two blanks,
# then the target: "0xfffff803`2fea9100     unsigned char  +fffff8032fea9100" (no symbol for
# it, dt nt!_KINTERRUPT in nohuto's windbg-notes), "0x827fa2b4        void  nt!IopDeleteDevice+0".
_FUNCTION_RE = re.compile(
    r"^(?P<value>0x[0-9a-fA-F`]+)\s{2,}(?P<type>[A-Za-z_][^\s\"]*(?: [^\s\"]+)*)\s{2,}(?P<preview>\S.*)$"
)

# "_ULARGE_INTEGER 0xb2", "_NT_TIB", "_TDR_RECOVERY_CONTEXT::<unnamed-type-CrtcTimeoutData>",
# and an embedded structure dt summarises on its line: "_LIST_ENTRY [ 0x471c98 - 0x47ee28 ]",
# '_UNICODE_STRING "C:\Windows\system32\notepad.exe"' (dt NT!_PEB 7ffd8000 -r, nixawk's dt.md).
_TYPE_VALUE_RE = re.compile(r"^(?P<type>_[\w:<>-]+)(?:\s+(?P<value>0x[0-9a-fA-F`]+)|\s+(?P<preview>\[.*\]|\".*\"))?$")

# A pointer followed by what it points at: '0x00471788  "C:\Windows\..."' (a Buffer's string),
# "0x7f6f0590  -> (null)", "0x77758500  -> 0x00470000 Void" (a pointer to a pointer).
_VALUE_PREVIEW_RE = re.compile(r"^(?P<value>0x[0-9a-fA-F`]+)\s+(?:-> (?P<pointee>\S.*)|(?P<string>\".*\"))$")

# An annotation the author appended to a published row: "[256] Ptr64 Void //256 pointers max
# as noted earlier" (dt _KPRCB, RedTeaming notes); dt prints no "//" in a type or value.
_COMMENT_RE = re.compile(r"(?<=\s)//")  # a lookbehind, not "\s+//": linear on long blank runs

# A type-name header line: "ntdll!_KIDTENTRY64", "_KPCR"
_TYPE_NAME_RE = re.compile(r"^\s*(?P<name>(?:\w+!)?_?[A-Za-z_][\w:<>]*)\s*$")

# A row of a type listing, "dt nt!*" (nixawk's windows_6_x64_NT_dt.md) or "dt thismodule!MY*"
# (dt page, MS docs): a global with its address ("010029b8  thismodule!myglobal1"), a type
# indented without one ("          ntkrnlmp!_KPCR"), and under -v a size column between them
# ("00427a34   002 thismodule!numberOfShips", "           002 thismodule!WORD"). A header line
# ("ntdll!_PEB") starts in column 0.
_LISTED_TYPE_RE = re.compile(
    r"^(?:(?P<address>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?)|(?=\s))\s+(?:(?P<size>[0-9a-fA-F]{1,8})\s+)?"
    r"(?P<name>[\w.]+![^\s!]+)$"
)

# dt -l: "## ActiveProcessLinks.Flink at 0x814856f0" opens each entry of the walked list.
_LIST_ENTRY_RE = re.compile(r"^## (?P<link>\S+) at (?P<address>0x[0-9a-fA-F`]+)$")

# A field row under -o (offsets omitted): "UniqueProcessId : 0x00000008" (dt -yoi, MS docs).
_BARE_FIELD_RE = re.compile(r"^(?P<indent>\s*)(?P<name>[A-Za-z_][\w.]*) +:(?P<text>(?: .*)?)$")

# -ca of the last type ("dt -ca4 . 01002d00") names the type it uses: "Using sym ULONG".
_USING_SYM_RE = re.compile(r"^Using sym (?P<name>\S+)$")

# The type a dt command names, for an instance dump that prints no header line: "dt nt!_POOL_HEADER
# 85246428" prints only the "+0x000 PreviousSize : 0y000010111 (0x17)" rows (released set2
# types_symbols/n_01, h0mbre's HEVD pool overflow post). dt's options that take an argument are
# "-l ListField" and "-s Size"; a bare hex word is an address, not a type.
_COMMAND_TYPE_RE = re.compile(r"^(?:[\w.]+!)?[A-Za-z_][\w:<>*]*$")
_HEX_WORD_RE = re.compile(r"^[0-9a-fA-F`]+$")

# "0x51568e00`0010e700": a plain hex literal (its backtick is dropped like an address's).
_HEX_LITERAL_RE = re.compile(r"0x[0-9a-fA-F`]+")


def command_type(command: str) -> str | None:
    """The type a ``dt`` command line names (``dt -r1 nt!_EPROCESS ffff...`` -> ``nt!_EPROCESS``);
    ``dt_IO_STACK_LOCATION addr`` (no blank after ``dt``, which kd accepts) names ``_IO_STACK_LOCATION``."""
    words = command[2:].split() if command.startswith("dt") else []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in ("-l", "-s")
        elif _COMMAND_TYPE_RE.match(word) and not _HEX_WORD_RE.match(word):
            return word
        else:
            return None
    return None


def parse_type_dump(command: str, raw: str) -> TypeDumpRecord | None:
    """A ``TypeDumpRecord``; ``None`` if no field, ``[N]`` element or listed type is present.

    A line's ``depth`` counts the open lines above it that are indented less, not blanks:
    ``-r1`` indents a child 7 blanks deeper than its parent and ``-b`` an element marker 1
    blank deeper than its field; each is one level. Under ``-l`` each ``## link at address``
    line opens a list entry, and the fields after it are that entry's.
    """
    items: list[tuple[str, str, str, int]] = []  # (offset, name, text, depth) per line
    open_indents: list[int] = []  # indents of the lines the next one may nest under
    type_name: str | None = None
    preview: str | None = None
    listed: list[dict[str, Any]] = []  # dt module!*: the names, while no field has been seen
    entries: list[tuple[str, str, int]] = []  # dt -l: (link, address, index of its first item)
    for line in split_lines(raw):
        m = FIELD_RE.match(line) or ELEMENT_RE.match(line) or (_BARE_FIELD_RE.match(line) if " :" in line else None)
        if m is not None:
            indent = len(m.group("indent"))
            while open_indents and open_indents[-1] >= indent:
                open_indents.pop()
            offset = m.group("offset").lower() if m.re is FIELD_RE else ""
            items.append((offset, m.group("name"), (m.group("text") or "").strip(), len(open_indents)))
            open_indents.append(indent)
            continue
        if line.startswith("## "):
            e = _LIST_ENTRY_RE.match(line)
            if e is not None:
                entries.append((e.group("link"), e.group("address").replace("`", "").lower(), len(items)))
                open_indents = []
                continue
        if not items and line.strip():
            listed_type = _LISTED_TYPE_RE.match(line) if "!" in line else None
            if listed_type is not None:
                row = {"name": listed_type.group("name"), "size": listed_type.group("size")}
                if listed_type.group("address"):
                    row["address"] = addr(listed_type.group("address"))
                listed.append(row)
                continue
            if type_name is None:
                t = _TYPE_NAME_RE.match(line) or _USING_SYM_RE.match(line)
                if t is not None:
                    type_name = t.group("name")
                    continue
            if line.startswith(" ") and line.strip().startswith('"'):
                preview = line.strip()
    if not items:
        if not listed:
            return None
        return TypeDumpRecord.model_validate({"command": command, "raw": raw, "types": listed})
    instance = any(_VALUE_START_RE.match(text) for _, _, text, _ in items)
    if type_name is None:
        type_name = command_type(command)
    fields = [_field(offset, name, text, instance, depth) for offset, name, text, depth in items]
    if preview is not None and preview.startswith('"') and preview.endswith('"') and len(preview) >= 2:
        preview = preview[1:-1]
    list_entries = [
        {
            "link": link,
            "address": address,
            "fields": fields[first : entries[i + 1][2] if i + 1 < len(entries) else None],
        }
        for i, (link, address, first) in enumerate(entries)
    ]
    return TypeDumpRecord.model_validate(
        {
            "command": command,
            "raw": raw,
            "type_name": type_name,
            "instance": instance,
            "preview": preview,
            "fields": fields[: entries[0][2]] if entries else fields,
            "list_entries": list_entries,
        }
    )


def _unquoted(text: str) -> str:
    """A string dt prints in quotes, without them (as ``TypeDumpRecord.preview``)."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1]
    return text


def _field(offset: str, name: str, text: str, instance: bool, depth: int) -> dict[str, Any]:
    """A ``TypeField`` dict; an array element's ``offset`` is ``""`` (dt prints none)."""
    field: dict[str, Any] = {"offset": offset, "name": name, "depth": depth}
    if "//" in text:
        comment = _COMMENT_RE.search(text)
        if comment is not None:
            text = text[: comment.start()].rstrip()
    if not instance:
        field["type"] = text or None
        field["bitfield"] = text.startswith("Pos ")
        return field
    field["bitfield"] = text.startswith("0y")
    vt = (_FUNCTION_RE.match(text) if "  " in text else None) or _VALUE_TYPE_RE.match(text)
    if vt is not None:
        field["value"] = vt.group("value").replace("`", "")
        field["type"] = vt.group("type")
        field["preview"] = vt.group("preview")
        return field
    tv = _TYPE_VALUE_RE.match(text)
    if tv is not None:
        field["type"] = tv.group("type")
        if tv.group("value"):
            field["value"] = tv.group("value").replace("`", "")
        if tv.group("preview"):
            field["preview"] = _unquoted(tv.group("preview"))
        return field
    vp = _VALUE_PREVIEW_RE.match(text)
    if vp is not None:
        field["value"] = vp.group("value").replace("`", "")
        field["preview"] = vp.group("pointee") or _unquoted(vp.group("string"))
        return field
    if text:
        field["value"] = text.replace("`", "") if _HEX_LITERAL_RE.fullmatch(text) else text
    return field
