"""Answering a command from the world: split off its name, find its handler, run it.

kd's command names are read the way the debugger reads them (Debugger Commands: "Syntax"):
an extension ``!name``, a meta-command ``.name``, or a regular command's letters, which may run
straight into their arguments (``dq@rsp``, ``u.``, ``dd rsp``, ``~1s``). The handler gets the
rest of the line. An expression it cannot evaluate is kd's ``Couldn't resolve error at '…'``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import kdmcp.sim.world
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.registry import COMMANDS
from kdmcp.sim.world.symbols import ExprError

__all__ = ["answer", "split"]

# every cmd_* module registers its commands when imported: the table is whatever they define
_HANDLER_MODULES = tuple(
    importlib.import_module(f"kdmcp.sim.world.{info.name}")
    for info in pkgutil.iter_modules(kdmcp.sim.world.__path__)
    if info.name.startswith("cmd_")
)
_NAME_RE = re.compile(r"(?P<name>![\w.]+|\.\w+|\?\?|\?|~|\||[a-zA-Z]+)(?P<rest>.*)$", re.DOTALL)


def split(command: str) -> tuple[str, str]:
    """``("dq", "@rsp")`` for ``dq@rsp``; ``("!process", "0 0")``; ``("", command)`` if no name."""
    m = _NAME_RE.match(command.strip())
    if m is None:
        return "", command
    return m.group("name").lower(), m.group("rest").strip()


def answer(world: World, command: str, *, kernel: bool = True) -> str | None:
    """kd's output for ``command`` from the world, or ``None`` if the world does not answer it."""
    name, rest = split(command)
    mode = "kernel" if kernel else "user"
    entries = COMMANDS.get(name)
    if entries is None and name[1:] in _UNMODELLED_EXTENSIONS:
        return None  # a real extension the world does not model: a scenario may answer it
    if entries is None and name.startswith("!") and len(name) > 1:
        # an extension no loaded extension DLL exports (kd: "No export bogus found")
        return f"No export {name[1:]} found\n"
    if entries is None:
        # regular commands whose letters run on: "lmvm" is lm with options, "kb" is k with b
        for size in range(len(name) - 1, 0, -1):
            entries = COMMANDS.get(name[:size])
            if entries is not None and name[:size] in _PREFIX_COMMANDS:
                name, rest = name[:size], (name[size:] + " " + rest).strip()
                break
        else:
            return None
    entry = entries.get(mode)
    if entry is None:
        return None
    try:
        return entry.handler(world, name, rest)
    except ExprError as exc:
        return f"Couldn't resolve error at '{exc}'\n"


# Extensions kd's standard DLLs (ext, exts, kdexts) export that the world does not model in any
# debugger (one it answers in the other falls through by itself): kd
# would never say "No export" for them, so they fall through to the scenario (or the syntax error).
_UNMODELLED_EXTENSIONS = frozenset({
    "acl", "arbiter", "avrf", "bugdump", "chkimg", "cpuinfo", "cs", "db", "dd", "defwrites", "devnode", "dh",
    "dpcs", "dq", "exqueue", "filecache", "findstack", "fltkd.filters", "for_each_module", "frag",
    "gflag", "gle", "ioresdes", "lmi", "memusage", "ndiskd.netadapter", "obja", "object", "pfn", "ready",
    "rebuildpdb", "reload", "sd", "session", "sym", "sysinfo", "sysptes", "timer", "token", "uniqstack",
    "vad", "verifier", "wdfkd.wdfdriverinfo",
})


# commands whose options follow their letters without a blank (lm, k, d*, u, bl...)
_PREFIX_COMMANDS = frozenset(
    {
        "lm",
        "k",
        "u",
        "ub",
        "uf",
        "x",
        "bp",
        "bu",
        "ba",
        "bl",
        "bc",
        "bd",
        "be",
        "r",
        "p",
        "t",
        "pt",
        "gu",
        "d",
        "e",
        "dt",
        "dx",
        "ln",
    }
)
