"""Symbols: ``x`` and ``ln`` (lookups), ``.sympath``/``.symfix`` (the path), ``.reload``/``ld`` (loading).

::

    fffff800`64521020 FirstDriverSample!DriverEntry (struct _DRIVER_OBJECT *, struct _UNICODE_STRING *)
    prv func   00000001`00003340  249 notepad!WinMain (struct HINSTANCE__ *, ...)     x /v: kind, size
    global 806c9e68   a8 nt!CmTypeString = unsigned short *[42]                      x /v: "= type"
    00427d84 char * myModule!__nullstring = 0x00425de8 "(null)"                      x /t: type, "= value"
    MyApp!AddTwoIntegers                                                             x /1: name only
    00b513d0                                                                         x /0: address only
    (fffff801`5f9a3a10)   nt!KiPageFault+0x469   |  (fffff801`5f9a3f00)   nt!KiRaiseSecurityCheckFailure
    Exact matches:
        nt!KiPageFault (<no parameter info>)
    Symbol search path is: srv*
    Symbols already loaded for kernel32
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import DOTS_RE, addr, split_lines
from kdmcp.parse.models import SymbolLoadRecord, SymbolPathRecord, SymbolsRecord

_ADDRESS = r"[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?"

# x: "[kind] address [size] [type] module!name [(signature)] [= value]". The kind column is
# printed by /v: "prv func   00000001`00003340  249 notepad!WinMain (...)", "global 806c9e68
# 0 nt!CmTypeName = struct _UNICODE_STRING []" (x--examine-symbols-.md); a size follows the
# address under /v, /f and /d. Group "pre" is what stands between address and name: the size,
# then the type /t prints ("00427d84 char * myModule!__nullstring", "<NoType> mmcss!Ci...").
_X_RE = re.compile(
    r"^\s*(?:(?P<kind>(?:prv|pub)\s+\w+|global|local|param|parameter|func|function|unknown)\s+)?"
    rf"(?P<addr>{_ADDRESS})\s+(?P<pre>(?:\S+\s+)*?)(?P<rest>[\w.$-]+!.*)$"
)
# x /1: the name alone ("MyApp!AddThreeIntegers"); x /0: the address alone ("00b51410").
_X_NAME_RE = re.compile(r"^\s*(?P<rest>[\w.$-]+!\S.*)$")
_X_ADDRESS_RE = re.compile(rf"^\s*(?P<addr>{_ADDRESS})$")
_SIZE_RE = re.compile(r"[0-9a-fA-F]+")
# ln neighbour: "(fffff801`5f9a3a10)   nt!KiPageFault+0x469", up to the "|" between the two; a
# name may hold blanks, as x nt!* prints compiler-made ones ("nt! ?? ::FNODOBFM::`string'"). Older
# kd put one blank or none after the address ("(fe6b2c04)rdr!_RdrReferenceServer-0x20", MS docs'
# manually-walking-a-stack.md) and wrapped a long pair onto an indented second line.
_LN_RE = re.compile(r"\((?P<addr>[0-9a-fA-F`]{8,17})\)\s*(?P<name>[^|]*[^|\s])")
_LN_LINE_RE = re.compile(r"^\s*\([0-9a-fA-F`]{8,17}\)")
# ln exact match: "    nt!KiPageFault (<no parameter info>)", or a data symbol as x prints it,
# "    nt!KeServiceDescriptorTable = <no type information>"
_LN_EXACT_RE = re.compile(r"^\s+(?P<rest>\S+!.*)$")
# "KiPageFault+0x469": a displacement from the symbol, as ln and dps print it; the right-hand
# neighbour of ln is the distance back from the next symbol: "NT!_KiServiceExit2-0x177".
_OFFSET_RE = re.compile(r"^(?P<symbol>.+?)(?P<sign>[+-])(?P<offset>0x[0-9a-fA-F]+)$")


def _split_signature(rest: str) -> tuple[str, str | None]:
    """``name (sig)`` -> (name, "(sig)"), matching the final parenthesis group."""
    if not rest.endswith(")"):
        return rest, None
    depth = 0
    for i in range(len(rest) - 1, -1, -1):
        ch = rest[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                if i > 0 and rest[i - 1] == " ":
                    return rest[: i - 1].rstrip(), rest[i:]
                return rest, None
    return rest, None


def _symbol(name: str) -> dict[str, Any]:
    """``module!symbol[+0xN]`` split; ``name`` stays as printed, ``symbol`` loses the ``+0xN``."""
    module, _, sym = name.partition("!")
    entry: dict[str, Any] = {"name": name, "module": module or None, "symbol": sym or None}
    m = _OFFSET_RE.match(sym) if "0x" in sym else None
    if m is not None:
        entry["symbol"] = m.group("symbol")
        entry["offset"] = ("-" if m.group("sign") == "-" else "") + m.group("offset").lower()
    return entry


def _x_row(m: re.Match[str], verbose: bool) -> dict[str, Any]:
    """One ``x`` row. After `` = `` x prints a global's value, or under /v its data type
    ("nt!CmTypeName = struct _UNICODE_STRING []"); the text is kept as printed."""
    rest = m.group("rest")
    rest, eq, after = rest.partition(" = ")
    name, sig = _split_signature(rest)
    entry = _symbol(name)
    if sig is not None:
        entry["signature"] = sig
    if eq:
        entry["type" if verbose else "value"] = after.strip() or None
    pre = m.group("pre") if "pre" in m.re.groupindex else None
    if pre:
        first, _, tail = pre.strip().partition(" ")
        if _SIZE_RE.fullmatch(first):  # the size column: hex, as printed ("249", "1c")
            entry["size"] = first.lower()
            pre = tail
        pre = pre.strip()
        if pre and "type" not in entry:
            entry["type"] = pre
    return entry


def parse_symbols(command: str, raw: str) -> SymbolsRecord | None:
    """``x`` / ``ln`` results; ``None`` if none."""
    symbols: list[dict[str, Any]] = []
    neighbours: dict[str, str] = {}  # ln: name -> address, to place the exact matches
    exact = False
    for line in split_lines(raw):
        if line.strip() == "Exact matches:":
            exact = True
            continue
        if exact:
            e = _LN_EXACT_RE.match(line)
            if e is not None:
                s = _x_row(e, verbose=False)
                # the exact match is the neighbour printed at its own address, displacement 0
                s.update(exact=True, address=neighbours.get(s["name"]))
                symbols.append(s)
                continue
        if _LN_LINE_RE.match(line):
            for n in _LN_RE.finditer(line):
                s = _symbol(n.group("name"))
                s.update(address=addr(n.group("addr")), exact=False)
                neighbours.setdefault(n.group("name"), s["address"])
                symbols.append(s)
            continue
        m = _X_RE.match(line)
        if m is not None:
            s = _x_row(m, verbose=m.group("kind") is not None)
            s["address"] = addr(m.group("addr"))
            if m.group("kind"):
                s["kind"] = " ".join(m.group("kind").split())
            symbols.append(s)
            continue
        n1 = _X_NAME_RE.match(line)
        if n1 is not None:
            symbols.append(_x_row(n1, verbose=False))
            continue
        a0 = _X_ADDRESS_RE.match(line)
        if a0 is not None:
            symbols.append({"address": addr(a0.group("addr"))})
    if not symbols:
        return None
    return SymbolsRecord.model_validate({"command": command, "raw": raw, "symbols": symbols})


# "Symbol search path is: srv*" / "Expanded Symbol search path is: SRV*C:\...", and the other
# paths' answers in the same words: "Source search path is: C:\Projects\WebKit\OpenSource"
# (.srcpath in a cdb crash log kept by WebKit's tools), "Local source search path is: SRV*",
# "Executable image search path is: ..."; "No source search path" when none is set (dbgeng).
_PATH_RE = re.compile(
    r"^\s*(?P<expanded>Expanded )?(?:Symbol|Source|Local source|Executable image) search path is: (?P<path>.*)$",
    re.IGNORECASE,
)
_NO_PATH_RE = re.compile(r"^\s*No (?:symbol|source|executable image) search path\s*$", re.IGNORECASE)
# validation row: "Deferred                                       srv*" / "OK    12    C:\sym"
_VALIDATION_RE = re.compile(
    r"^(?P<response>Deferred|OK|Failed|Cancelled|Timeout)\s+(?:(?P<time>\d+)\s+)?(?P<location>\S.*)$"
)


def parse_symbol_path(command: str, raw: str) -> SymbolPathRecord | None:
    """``.sympath`` / ``.symfix`` (and ``.srcpath``, ``.exepath``) output; ``None`` if no path line is present."""
    record: dict[str, Any] = {"command": command, "raw": raw, "validation": []}
    found = False
    for line in split_lines(raw):
        m = _PATH_RE.match(line)
        if m is not None:
            record["expanded_path" if m.group("expanded") else "path"] = m.group("path")
            found = True
            continue
        if _NO_PATH_RE.match(line):
            found = True
            continue
        v = _VALIDATION_RE.match(line)
        if v is not None:
            row = {"response": v.group("response"), "location": v.group("location")}
            if v.group("time"):
                row["time_ms"] = v.group("time")
            record["validation"].append(row)
            found = True
    if not found:
        return None
    return SymbolPathRecord.model_validate(record)


# "Symbols already loaded for kernel32" / "Symbols loaded for ntdll"
_LOADED_RE = re.compile(r"^\s*Symbols (?:already )?loaded for (?P<module>\S+)")
# progress and phase messages
_LOAD_MESSAGE_RE = re.compile(
    r"^\s*(?:Reloading current modules|Loading (?:Kernel|User) Symbols?|Loading unloaded module list)\b"
)


def parse_symbol_load(command: str, raw: str) -> SymbolLoadRecord | None:
    """``.reload`` / ``ld``; ``None`` if nothing recognisable was printed."""
    modules: list[str] = []
    messages: list[str] = []
    dots = 0
    for line in split_lines(raw):
        m = _LOADED_RE.match(line)
        if m is not None:
            modules.append(m.group("module"))
            continue
        if _LOAD_MESSAGE_RE.match(line):
            messages.append(line.strip())
            continue
        if DOTS_RE.match(line):
            dots += line.count(".")
    if not modules and not messages and not dots:
        return None
    return SymbolLoadRecord.model_validate(
        {"command": command, "raw": raw, "modules": modules, "messages": messages, "progress_dots": dots}
    )
