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
families/dx/02.txt), so a level is "deeper than the line above", not a fixed width. A head line
without a value is the expression whole, blanks included (``@$cursession.TTD.Memory(0x1bf7d0,
0x1bf7d4, "rw")``, families/dx/19.txt); a line that is only ``[Type: T]`` (a function pointer's
pointee, families/dx/18.txt) is a child without a name.
"""

from __future__ import annotations

import re
from bisect import bisect_left
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
_TYPE_ONLY = "[Type: "
# DML links dx appends: "[Switch To]"
_LINK_RE = re.compile(r"\[(?P<link>Switch To|Browse|Dump|Details)\]")
# dx -g draws a grid: a rule of "=", the header row (columns split by " = ", "(+)" marks a column
# that expands), another rule, then one row per element with cells split by " - " at the header's
# column positions (families/dx/12.txt)
_GRID_RULE_RE = re.compile(r"^=+$")
_GRID_EXPANDER = "(+) "
# the expression of "dx -g @$x", "dx -gc 20 -r2 @$x": a grid prints no head line
_DX_EXPRESSION_RE = re.compile(r"^dx(?:\s+-(?:gc\s+\d+|c\s+\d+|\w+))*\s+(?P<expression>\S.*)$")
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


def _split(body: str) -> tuple[str, str, bool]:
    """``(name, what follows, whether a colon split them)`` of one line: split at the first " :"
    that ends the name (blanks before the colon, a blank or the end after it - so "[Type: T]" and
    "( 0: 0)" never split), else after the bare name."""
    at = body.find(" :")
    while at >= 0 and at + 2 < len(body) and body[at + 2] != " ":
        at = body.find(" :", at + 1)
    if at >= 0:
        return body[:at].rstrip(), body[at + 2 :], True
    m = _BARE_NAME_RE.match(body)
    end = m.end() if m is not None else len(body)
    return body[:end], body[end:], False


def parse_data_model(command: str, raw: str) -> DataModelRecord | None:
    """A ``DataModelRecord``; ``None`` for empty output."""
    record: dict[str, Any] = {"command": command, "raw": raw, "children": []}
    children: list[dict[str, Any]] = record["children"]
    seen_head = False
    # the indentation of each open ancestor, outermost first
    levels: list[int] = []
    lines = split_lines(raw)
    if any(_GRID_RULE_RE.match(line) for line in lines[:2]):
        return _grid(command, raw, lines)
    for line in lines:
        if not line.strip() or line.startswith(_ERROR_PREFIX):
            continue  # blank; an error line is the dispatcher's warning
        body = line.lstrip()
        indent = len(line) - len(body)
        if "\t" in line[:indent]:
            indent = len(line[:indent].expandtabs())
        if not seen_head and indent == 0:
            head, rest, split = _split(body)
            if split:
                record["expression"] = head
                record["value"], record["type"] = _value_parts(rest)[:2]
            else:
                # no " : value": the whole line is the expression as dx echoes it, blanks and all
                # ('@$cursession.TTD.Memory(0x1bf7d0,0x1bf7d4, "rw")', families/dx/19.txt)
                record["expression"], record["type"] = _value_parts(body)[:2]
            seen_head = True
            continue
        if body.startswith(_TYPE_ONLY):
            # a line that is only a type: under a function pointer dx prints the function's type
            # ("    [Type: void __cdecl(wchar_t *,unsigned int)]", families/dx/18.txt) - no name
            name: str | None = None
            value, typ, links = _value_parts(body)
        else:
            name, rest, _ = _split(body)
            value, typ, links = _value_parts(rest)
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


def _grid(command: str, raw: str, lines: list[str]) -> DataModelRecord:
    """``dx -g``: each row a child (named by its first cell, the element's index), its cells
    children one level down, named by their column - the tree ``dx -r2`` would print."""
    children: list[dict[str, Any]] = []
    # where each column's separator sits, and the column's name
    starts: list[int] = []
    names: list[str] = []
    for line in lines:
        if not line.startswith("= "):
            continue
        if not starts:
            starts = [0] + [i for i in range(1, len(line) - 1) if line[i] == "=" and line[i - 1] == " "]
            names = [_column_name(line, start) for start in starts]
            continue
        # only the columns the row reaches: a short row must not fan out into every column
        reached = bisect_left(starts, len(line))
        cells = [line[starts[i] + 1 : starts[i + 1] if i + 1 < reached else len(line)].strip() for i in range(reached)]
        if cells and cells[-1].endswith(" ="):
            cells[-1] = cells[-1][:-2].rstrip()
        elif cells and cells[-1] == "=":
            cells[-1] = ""
        children.append({"name": cells[0] or "?", "depth": 1})
        for name, cell in zip(names[1:], cells[1:], strict=False):
            children.append({"name": name, "value": cell or None, "depth": 2})
    m = _DX_EXPRESSION_RE.match(command.strip())
    record = {"command": command, "raw": raw, "children": children}
    if m is not None:
        record["expression"] = m.group("expression")
    return DataModelRecord.model_validate(record)


def _column_name(header: str, start: int) -> str:
    end = header.find(" =", start + 1)
    name = header[start + 1 : end if end >= 0 else len(header)].strip()
    return name[len(_GRID_EXPANDER) :] if name.startswith(_GRID_EXPANDER) else name
