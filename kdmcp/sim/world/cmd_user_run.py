"""cdb's breakpoints and steps on the user world: ``bp``/``bu``/``bm``/``ba``, ``bl``/``bc``/``bd``/``be``,
``p``/``t``/``pt``/``gu``.

The kernel world's handlers (:mod:`.cmd_run`) do the work -- setting a breakpoint, stepping the
current thread through the code the world assembled -- on the user world as well (the same
:class:`~kdmcp.sim.world.machine.World`); what differs in cdb is said here: ``bl`` rows carry
the process:thread column (``0:****``, any thread of process 0; corpus misc/06), and ``bm``
sets one breakpoint per symbol its pattern matches. The running process stops on them in
:mod:`.user_activity`.
"""

from __future__ import annotations

import fnmatch
import re

import kdmcp.sim.world.cmd_run  # noqa: F401  (the kernel's handlers, registered before these)
from kdmcp.sim.world.cmd_run import bl_row
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.machine import Breakpoint, World
from kdmcp.sim.world.registry import COMMANDS, command

__all__ = ["user_bl_row"]

# bl's counts, "0001 (0001)": cdb puts the process:thread column after them (corpus misc/06)
_COUNTS_RE = re.compile(r"(?P<counts>[0-9a-f]{4} \([0-9a-f]{4}\)) ")


def _kernel(name: str, world: World, typed: str, args: str) -> str | None:
    return COMMANDS[name]["kernel"].handler(world, typed, args)


@command("bp", "bu", modes=("user",), summary="set a breakpoint (bu: unresolved until its module loads)")
def _bp(world: World, name: str, args: str) -> str | None:
    return _kernel("bp", world, name, args)


@command("ba", modes=("user",), summary="set a processor (data) breakpoint")
def _ba(world: World, name: str, args: str) -> str | None:
    return _kernel("ba", world, name, args)


@command("bm", modes=("user",), summary="set breakpoints on every symbol a pattern matches")
def _bm(world: World, name: str, args: str) -> str | None:
    """``bm [Options] SymbolPattern``: a breakpoint per matching routine, each reported as
    ``  0: 00007ff7`91d81000 @!"app!wmain"`` (bm (Set Symbol Breakpoint): the breakpoints it
    sets are listed as it sets them); a pattern matching nothing says so."""
    del name
    words = [w for w in args.split() if not w.startswith("/")]
    if len(words) != 1 or "!" not in words[0]:
        return None
    module, _, pattern = words[0].partition("!")
    out = ""
    for mod in world.modules:
        if not fnmatch.fnmatch(mod.name.lower(), module.lower()):
            continue
        for sym in sorted(mod.symbols, key=lambda s: s.address):
            if sym.kind != "code" or not fnmatch.fnmatchcase(sym.name.lower(), pattern.lower()):
                continue
            qualified = f"{mod.name}!{sym.name}"
            before = {bp.id for bp in world.breakpoints}
            _kernel("bp", world, "bp", qualified)
            new = next((bp for bp in world.breakpoints if bp.id not in before), None)
            if new is not None:
                out += f'{new.id:3d}: {fmt_addr(sym.address)} @!"{qualified}"\n'
    return out or f"No matching symbols found for '{words[0]}'\n"  # wording: not in the corpus


def user_bl_row(world: World, bp: Breakpoint) -> str:
    """One cdb ``bl`` row: kd's row with ``0:****`` after the counts (corpus misc/06)::

    ``     0 e Disable Clear  00007ff6`8402c0f8     0001 (0001)  0:**** notepad!wWinMain``
    """
    return _COUNTS_RE.sub(lambda m: f"{m.group('counts')}  0:**** ", bl_row(world, bp), count=1)


@command("bl", modes=("user",), summary="list breakpoints")
def _bl(world: World, name: str, args: str) -> str | None:
    del name, args
    return "".join(user_bl_row(world, bp) for bp in world.breakpoints)


@command("bc", "bd", "be", modes=("user",), summary="clear, disable, enable breakpoints")
def _bc(world: World, name: str, args: str) -> str | None:
    return _kernel("bc", world, name, args)


@command("p", "t", modes=("user",), summary="step over (p) or into (t) calls")
def _p(world: World, name: str, args: str) -> str | None:
    return _kernel("p", world, name, args)


@command("pt", modes=("user",), summary="step to the next return")
def _pt(world: World, name: str, args: str) -> str | None:
    return _kernel("pt", world, name, args)


@command("gu", modes=("user",), summary="go up: run until the current routine returns")
def _gu(world: World, name: str, args: str) -> str | None:
    return _kernel("gu", world, name, args)
