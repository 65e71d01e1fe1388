"""Symbols: ``x`` and ``ln`` (lookups), ``.sympath``/``.symfix`` (the path), ``.reload``/``ld`` (loading).

::

    fffff800`64521020 FirstDriverSample!DriverEntry (struct _DRIVER_OBJECT *, struct _UNICODE_STRING *)
    (fffff801`5f9a3a10)   nt!KiPageFault+0x469   |  (fffff801`5f9a3f00)   nt!KiRaiseSecurityCheckFailure
    Symbol search path is: srv*
    Symbols already loaded for kernel32
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import DOTS_RE, addr, split_lines
from kdmcp.parse.models import SymbolLoadRecord, SymbolPathRecord, SymbolsRecord

# x: "[prv|pub kind] address [size] module!name [signature]"
_X_RE = re.compile(
    r"^\s*(?:(?:prv|pub)\s+\w+\s+)?(?P<addr>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?)\s+"
    r"(?:[0-9a-fA-F]+\s+(?=\S*!))?(?P<rest>\S*!.*)$"
)
# ln neighbour: "(fffff801`5f9a3a10)   nt!KiPageFault+0x469"
_LN_RE = re.compile(r"\((?P<addr>[0-9a-fA-F`]{8,17})\)\s+(?P<name>[^\s|]+)")
# ln exact match: "    nt!KiPageFault (<no parameter info>)"
_LN_EXACT_RE = re.compile(r"^\s+(?P<name>\S+!\S+)(?:\s+(?P<sig>\(.*\)))?$")


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
    module, _, sym = name.partition("!")
    return {"name": name, "module": module or None, "symbol": sym or None}


def parse_symbols(command: str, raw: str) -> SymbolsRecord | None:
    """``x`` / ``ln`` results; ``None`` if none."""
    symbols: list[dict[str, Any]] = []
    exact = False
    for line in split_lines(raw):
        if line.strip() == "Exact matches:":
            exact = True
            continue
        if exact:
            e = _LN_EXACT_RE.match(line)
            if e is not None:
                s = _symbol(e.group("name"))
                s.update(exact=True, signature=e.group("sig"))
                symbols.append(s)
                continue
        if line.lstrip().startswith("(") and "|" in line:
            for n in _LN_RE.finditer(line):
                s = _symbol(n.group("name"))
                s.update(address=addr(n.group("addr")), exact=False)
                symbols.append(s)
            continue
        m = _X_RE.match(line)
        if m is not None:
            name, sig = _split_signature(m.group("rest"))
            s = _symbol(name)
            s.update(address=addr(m.group("addr")), signature=sig)
            symbols.append(s)
    if not symbols:
        return None
    return SymbolsRecord.model_validate({"command": command, "raw": raw, "symbols": symbols})


# "Symbol search path is: srv*" / "Expanded Symbol search path is: SRV*C:\..."
_PATH_RE = re.compile(r"^\s*(?P<expanded>Expanded )?Symbol search path is: (?P<path>.*)$")
# validation row: "Deferred                                       srv*" / "OK    12    C:\sym"
_VALIDATION_RE = re.compile(
    r"^(?P<response>Deferred|OK|Failed|Cancelled|Timeout)\s+(?:(?P<time>\d+)\s+)?(?P<location>\S.*)$"
)


def parse_symbol_path(command: str, raw: str) -> SymbolPathRecord | None:
    """``.sympath`` / ``.symfix`` output; ``None`` if no path line is present."""
    record: dict[str, Any] = {"command": command, "raw": raw, "validation": []}
    found = False
    for line in split_lines(raw):
        m = _PATH_RE.match(line)
        if m is not None:
            record["expanded_path" if m.group("expanded") else "path"] = m.group("path")
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
