"""``dx``: the debugger data model's expression, value and children.

::

    @$curprocess.COM.GlobalObjects                 : [object Object]
        [0x100]          : 0x12f4fb0 [Type: IUnknown *]
        [0x6f8]          : nt!KiSwapContext+0x76 (fffff806`4466a186)  [Switch To]
    @$curthread.Environment
        EnvironmentBlock [Type: _TEB]                             <- no ": value"
            [+0x000] NtTib            [Type: _NT_TIB]
            [+0x038] EnvironmentPointer : Unable to read memory at Address 0x38
    @$curprocess.Io.Handles
        [0x8]                                                     <- a list head, no value at all

A line is ``name``, then either `` : value`` (dx aligns the colon with blanks; the value may be
empty: ``Display          : ``) or nothing but an optional ``[Type: T]``. Lines without a value
are children like the others (families/dx/04.txt, 06.txt, 07.txt, 08.txt). The nesting is the
indentation: four blanks a level in current dx, two in older builds (``dx -r3 Debugger.Sessions``,
families/dx/02.txt), so a level is "deeper than the line above", not a fixed width.
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import split_lines
from kdmcp.parse.models import DataModelRecord

# a line without " : value" names its node by a bracketed index or offset ("[0x8]", "[<Raw View>]",
# and bit fields whose brackets hold a colon: "[+0x003 ( 0: 0)] ImageUsesLargePages"), with an
# optional field name after it, or by one word ("EnvironmentBlock"); what follows is its type
_BARE_NAME_RE = re.compile(r"\[[^\[\]]*\](?: [^\s\[]\S*)?|\S+")
# "[Type: unsigned long [26]]": a type may hold one level of brackets
# (no leading "\s*": searched over a long blank run, it would be quadratic; the text is stripped after)
_TYPE_RE = re.compile(r"\[Type: (?P<type>(?:[^\[\]]|\[[^\[\]]*\])+)\]")
# DML links dx appends: "[Switch To]"
_LINK_RE = re.compile(r"\[(?P<link>Switch To|Browse|Dump|Details)\]")
# the error dx prints instead of a tree: "Error: No type (or void) for object at Address 0x..."
_ERROR_PREFIX = "Error: "


def _value_parts(text: str) -> tuple[str | None, str | None, list[str]]:
    t = _TYPE_RE.search(text) if "[Type: " in text else None
    typ = t.group("type") if t else None
    if t:
        text = text[: t.start()] + text[t.end() :]
    links = [m.group("link") for m in _LINK_RE.finditer(text)] if "[" in text else []
    if links:
        text = _LINK_RE.sub("", text)
    text = text.strip()
    return (text or None), typ, links


def _split(body: str) -> tuple[str, str]:
    """``(name, what follows)`` of one line: split at the first " :" that ends the name (blanks
    before the colon, a blank or the end after it - so "[Type: T]" and "( 0: 0)" never split),
    else after the bare name."""
    at = body.find(" :")
    while at >= 0 and at + 2 < len(body) and body[at + 2] != " ":
        at = body.find(" :", at + 1)
    if at >= 0:
        return body[:at].rstrip(), body[at + 2 :]
    m = _BARE_NAME_RE.match(body)
    end = m.end() if m is not None else len(body)
    return body[:end], body[end:]


def parse_data_model(command: str, raw: str) -> DataModelRecord | None:
    """A ``DataModelRecord``; ``None`` for empty output."""
    record: dict[str, Any] = {"command": command, "raw": raw, "children": []}
    children: list[dict[str, Any]] = record["children"]
    seen_head = False
    # the indentation of each open ancestor, outermost first
    levels: list[int] = []
    for line in split_lines(raw):
        if not line.strip() or line.startswith(_ERROR_PREFIX):
            continue  # blank; an error line is the dispatcher's warning
        body = line.lstrip()
        indent = len(line) - len(body)
        if "\t" in line[:indent]:
            indent = len(line[:indent].expandtabs())
        name, rest = _split(body)
        value, typ, links = _value_parts(rest)
        if not seen_head and indent == 0:
            record["expression"] = name
            record["value"], record["type"] = value, typ
            seen_head = True
            continue
        if name == "..." and children:
            # the continuation dx (or the author) prints under a cut list: a sibling of the line above
            depth = children[-1]["depth"]
        elif indent == 0:
            levels.clear()  # another top-level line (several dx outputs in one block): a root
            depth = 0
        else:
            while levels and levels[-1] >= indent:
                levels.pop()
            levels.append(indent)
            depth = len(levels)
        children.append({"name": name, "value": value, "type": typ, "depth": depth, "links": links})
    if not seen_head and not children:
        return None
    return DataModelRecord.model_validate(record)
