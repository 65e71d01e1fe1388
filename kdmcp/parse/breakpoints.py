"""``bl`` (and the ``bm`` lines that list what it set).

::

         0 e Disable Clear  00007ff6`8402c0f8     0001 (0001)  0:**** notepad!wWinMain
         1 e Disable Clear  fffff803`52c4a2fc     0001 (0001) nt!MmCreateProcessAddressSpace
     2 eu             0001 (0001) (foo!bar)                  <- deferred, unresolved
         0 e Disable Clear u     0001 (0001) (foo!bar)       <- the same in current WinDbg (DML)
     3 e fffff803`11112222 w 4 0001 (0001) nt!KiFoo          <- ba: access and size
         "r rax; g"                                          <- command, on its own line
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse._text import addr, split_lines
from kdmcp.parse.models import BreakpointsRecord

BREAKPOINT_RE = re.compile(
    r"^\s*(?P<id>\d+)\s+(?P<state>[ed])(?P<u>u)?\s+(?:(?:Disable|Enable) Clear\s+(?:(?P<dml_u>u)\s+)?)?"
    r"(?:(?P<addr>[0-9a-fA-F]{8}(?:`[0-9a-fA-F]{8})?)\s+)?"
    r"(?:(?P<access>[erwi])\s+(?P<size>\d+)\s+)?"
    r"(?P<pass>[0-9a-fA-F]{4})\s+\((?P<initial>[0-9a-fA-F]{4})\)\s*"
    r"(?:(?P<thread>\d+:\S+)\s+)?(?P<sym>.*)$"
)

# bm: "  1: fffff803`52c4a2fc @!"nt!MmCreateProcessAddressSpace""
_BM_RE = re.compile(r"^\s*(?P<id>\d+):\s+(?P<addr>[0-9a-fA-F`]{8,17})\s+@!\"(?P<sym>[^\"]*)\"")

# bp on a symbol not loaded yet: the breakpoint is set, deferred (the line is a warning).
# "Bp expression 'securekernel!IumInvokeSecureService' could not be resolved, adding deferred bp"
_DEFERRED_HEAD = "Bp expression '"
_DEFERRED_TAIL = "' could not be resolved, adding deferred bp"

# the command attached to the breakpoint above: '     "r rax; g"'
_COMMAND_RE = re.compile(r'^\s+"(?P<cmd>.*)"$')


def parse_breakpoints(command: str, raw: str) -> BreakpointsRecord | None:
    """A ``BreakpointsRecord``; ``None`` if no breakpoint line is present."""
    bps: list[dict[str, Any]] = []
    lines = split_lines(raw)
    for line in lines:
        m = BREAKPOINT_RE.match(line)
        if m is not None:
            sym = m.group("sym")
            bp: dict[str, Any] = {
                "id": int(m.group("id")),
                "enabled": m.group("state") == "e",
                "unresolved": m.group("u") is not None or m.group("dml_u") is not None,
                "pass_count": int(m.group("pass"), 16),
                "initial_pass_count": int(m.group("initial"), 16),
            }
            if m.group("addr"):
                bp["address"] = addr(m.group("addr"))
            if m.group("access"):
                bp["access"] = m.group("access")
                bp["size"] = int(m.group("size"))
            if m.group("thread"):
                bp["thread"] = m.group("thread")
            if sym:
                bp["symbol"] = sym[1:-1] if sym.startswith("(") and sym.endswith(")") else sym
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
    if not bps and not _lists_nothing(command, lines):
        return None
    return BreakpointsRecord.model_validate({"command": command, "raw": raw, "breakpoints": bps})


def _lists_nothing(command: str, lines: list[str]) -> bool:
    """True when the output says the command worked without listing a breakpoint: ``bl``
    printing nothing (no breakpoints are set), or only deferred-breakpoint notes.

    Other empty outputs (``bp x``, ``bc 0``) stay text: they say nothing.
    """
    printed = [line.strip() for line in lines if line.strip()]
    if printed:
        return all(line.startswith(_DEFERRED_HEAD) and line.endswith(_DEFERRED_TAIL) for line in printed)
    return command.split(maxsplit=1)[:1] == ["bl"]
