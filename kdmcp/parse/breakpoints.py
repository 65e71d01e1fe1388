"""``bl`` (and the ``bm`` lines that list what it set).

::

         0 e Disable Clear  00007ff6`8402c0f8     0001 (0001)  0:**** notepad!wWinMain
         1 e Disable Clear  fffff803`52c4a2fc     0001 (0001) nt!MmCreateProcessAddressSpace
     2 eu             0001 (0001) (foo!bar)                  <- deferred, unresolved
         0 e Disable Clear u     0001 (0001) (foo!bar)       <- the same in current WinDbg (DML)
     3 e fffff803`11112222 w 4 0001 (0001) nt!KiFoo          <- ba: access and size
         "r rax; g"                                          <- command, on its own line
     0 e Disable Clear  00005555`55555225  [/mnt/c/.../DisplayGreeting.cpp @ 14]     0001 (0001)  0:**** Disp...
     2 e Disable Clear  <hierarchical breakpoint>     0001 (0001)  0:**** {BikeCatalog!BikeCatalog::Get}
         0 e Disable Clear  00007ff6`c6f52200  [C:\\BikeCatalog\\BikeCatalog.cpp @ 13]     0001 (0001)  0:**** Bike...

The columns, as the ``bl`` reference page lists them: id, status (``e``/``d``, then ``u`` when
unresolved), the address - or, with source line loading on, ``[file @ line]`` after it - the
``ba`` access type and size, "passes remaining (initial passes)", the process:thread the
breakpoint is restricted to (``0:****`` when it is not thread-specific; kernel ``bl`` prints no
such column), the symbol, and the command in quotes. A container row (``<inline function>``,
``<hierarchical breakpoint>``: the debugger groups the breakpoints of one inlined function or one
ambiguous expression under it) prints its symbol in braces, and its members follow it, indented
one step deeper (families/breakpoints/03.txt and 05.txt).
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import BreakpointsRecord
from kdmcp.parse.partial import partial_row

BREAKPOINT_RE = re.compile(
    r"^(?P<indent>\s*)(?P<id>\d+)\s+(?P<state>[ed])(?P<u>u)?\s+(?:(?:Disable|Enable) Clear\s+(?:(?P<dml_u>u)\s+)?)?"
    # the address, or the container a group of breakpoints hangs under
    r"(?:(?P<addr>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?)\s+|<(?P<group>[^<>]+)>\s+)?"
    # "[n:\win7\simple\simple.cpp @ 52]" (bl shows it when source line loading is on)
    r"(?:\[(?P<file>[^\[\]]*) @ (?P<line>\d+)\]\s+)?"
    r"(?:(?P<access>[erwi])\s+(?P<size>\d+)\s+)?"
    r"(?P<pass>[0-9a-fA-F]{4})\s+\((?P<initial>[0-9a-fA-F]{4})\)"
    # process:thread, "0:****" (any thread) or "0:~000"-like for a thread-specific one; it may
    # end the line when the breakpoint has no symbol ("... w 4 0001 (0001)  0:**** ")
    r"(?:\s+(?P<thread>\d+:[~*0-9a-fA-F]+)(?=\s|$))?"
    r"\s*(?P<sym>.*)$"
)

# bm: "  1: fffff803`52c4a2fc @!"nt!MmCreateProcessAddressSpace""
_BM_RE = re.compile(r"^\s*(?P<id>\d+):\s+(?P<addr>[0-9a-fA-F`]{8,17})\s+@!\"(?P<sym>[^\"]*)\"")

# bp on a symbol not loaded yet: the breakpoint is set, deferred (the line is a warning).
# "Bp expression 'securekernel!IumInvokeSecureService' could not be resolved, adding deferred bp"
_DEFERRED_HEAD = "Bp expression '"
_DEFERRED_TAIL = "' could not be resolved, adding deferred bp"

# the command attached to the breakpoint above: '     "r rax; g"'
_COMMAND_RE = re.compile(r'^\s+"(?P<cmd>.*)"$')

# A row by its start (the id and the status letter, then maybe the address), whatever follows:
# one BREAKPOINT_RE does not read is kept as a partial breakpoint (kdmcp/parse/partial.py).
_PARTIAL_ROW_RE = re.compile(
    r"^\s*(?P<id>\d+)\s+(?P<state>[ed])u?(?=\s|$)(?:\s+(?:(?:Disable|Enable) Clear\s+)?"
    r"(?P<addr>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?)(?=\s|$))?"
)

# what follows the symbol on one row: the breakpoint's command in quotes
# ('nt!NtTerminateProcess "dx ...; .if (@$t0 == 1) {} .else {gc}"'), and on a member of an
# <inline function> container the function it sits in ("simple!wmain+0x8d (inline function
# simple!MoreCalculate)")
_SYM_INLINE_RE = re.compile(r"^(?P<sym>\S+) \(inline function (?P<inline>[^()]+)\)$")


def parse_breakpoints(command: str, raw: str) -> BreakpointsRecord | None:
    """A ``BreakpointsRecord``; ``None`` if no breakpoint line is present."""
    bps: list[dict[str, Any]] = []
    lines = split_lines(raw)
    # the open container row: (its id, where its id column ends)
    group: tuple[int, int] | None = None
    for line in lines:
        m = BREAKPOINT_RE.match(line)
        if m is not None:
            bp = _row(m)
            end = m.end("id")
            if group is not None and end > group[1]:
                bp["parent"] = group[0]
            else:
                group = None
            if m.group("group"):
                group = (bp["id"], end)
            bps.append(bp)
            continue
        b = _BM_RE.match(line)
        if b is not None:
            bps.append(
                {"id": int(b.group("id")), "enabled": True, "address": addr(b.group("addr")), "symbol": b.group("sym")}
            )
            continue
        c = _COMMAND_RE.match(line)
        if c is not None and bps:
            bps[-1]["command"] = c.group("cmd")
            continue
        p = _PARTIAL_ROW_RE.match(line)
        if p is not None:
            read: dict[str, Any] = {"id": int(p.group("id")), "enabled": p.group("state") == "e"}
            if p.group("addr"):
                read["address"] = addr(p.group("addr"))
            bps.append(partial_row(line, **read))
    if not bps and not _lists_nothing(command, lines):
        return None
    return BreakpointsRecord.model_validate({"command": command, "raw": raw, "breakpoints": bps})


def _row(m: re.Match[str]) -> dict[str, Any]:
    bp: dict[str, Any] = {
        "id": int(m.group("id")),
        "enabled": m.group("state") == "e",
        "unresolved": m.group("u") is not None or m.group("dml_u") is not None,
        "pass_count": int(m.group("pass"), 16),
        "initial_pass_count": int(m.group("initial"), 16),
    }
    if m.group("addr"):
        bp["address"] = addr(m.group("addr"))
    if m.group("group"):
        bp["group"] = m.group("group")
    if m.group("file") is not None:
        bp["file"] = m.group("file")
        bp["line"] = int(m.group("line"))
    if m.group("access"):
        bp["access"] = m.group("access")
        bp["size"] = int(m.group("size"))
    if m.group("thread"):
        bp["thread"] = m.group("thread")
    sym = m.group("sym")
    quote = sym.find('"')
    if quote >= 0 and sym.endswith('"') and len(sym) - quote >= 2:
        bp["command"] = sym[quote + 1 : -1]
        sym = sym[:quote].rstrip()
    i = _SYM_INLINE_RE.match(sym)
    if i is not None:
        bp["inline_function"] = i.group("inline")
        sym = i.group("sym")
    if sym:
        # "(foo!bar)": unresolved; "{simple!MoreCalculate}": a container's symbol
        bp["symbol"] = sym[1:-1] if (sym[0], sym[-1]) in (("(", ")"), ("{", "}")) else sym
    return bp


def _lists_nothing(command: str, lines: list[str]) -> bool:
    """True when the output says the command worked without listing a breakpoint: ``bl``
    printing nothing (no breakpoints are set), or only deferred-breakpoint notes.

    Other empty outputs (``bp x``, ``bc 0``) stay text: they say nothing.
    """
    printed = [line.strip() for line in lines if line.strip()]
    if printed:
        return all(line.startswith(_DEFERRED_HEAD) and line.endswith(_DEFERRED_TAIL) for line in printed)
    return command.split(maxsplit=1)[:1] == ["bl"]
