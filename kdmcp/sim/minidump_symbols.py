"""A user dump's symbol commands behind the simulated ``cdb -z``: ``.sympath`` and ``.reload``.

A minidump carries no symbols, but cdb keeps a search path for it all the same: the banner's
``Symbol search path is: srv*`` (or ``-y``'s), which ``.sympath`` prints, replaces and
``.sympath+`` extends, in the layout the world's ``.sympath`` prints (corpus misc/01: the path,
its expansion, the validation summary; :func:`kdmcp.sim.world.cmd_symbols.sympath_text`).
``.reload`` in user mode prints ``Reloading current modules`` and a dot a module (corpus
misc/08, a WinDbg x64 session's ``0:000> .reload``); with nothing to fetch it loads nothing,
and the modules stay deferred.
"""

from __future__ import annotations

import re

from kdmcp.sim.minidump_target import MinidumpTarget
from kdmcp.sim.world.cmd_symbols import sympath_text

__all__ = ["answer"]

_SYMPATH_RE = re.compile(r"\.sympath(?P<args>(?:\s|\+).*)?", re.IGNORECASE | re.DOTALL)
_RELOAD_RE = re.compile(r"\.reload(?:\s+/\w+)*", re.IGNORECASE)


def answer(t: MinidumpTarget, command: str) -> str | None:
    """``.sympath [+][path]`` and ``.reload [/f]`` on the dump; ``None``: neither."""
    text = command.strip()
    if m := _SYMPATH_RE.fullmatch(text):
        return sympath_text(t.symbol_path, m.group("args") or "")
    if _RELOAD_RE.fullmatch(text):
        return "Reloading current modules\n" + "." * len(t.modules) + "\n"
    return None
