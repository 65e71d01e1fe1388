"""The debugger's event filters (``sxe``/``sxd``/``sxn``/``sxi``): which events stop the target.

"Controlling Exceptions and Events" lists each event's code; its default is what ``sx`` prints
in published sessions: ``ld`` (load module) is *output* -- cdb prints its ``ModLoad:`` line and
the target runs on -- and ``ud`` (unload module) is *ignore* ("ud - Unload module - ignore" in
the ``sx`` listings of the sx page, of published cdb notes and of a kd session, stored-index
file ids 3397187740, 29297427726, 17721935390 and geocausa/SP11X1ECamera's E004AO-KD-TERMINAL):
no ``Unload module`` line unless ``sxn ud`` (what a cdb front end sends to see them, file id
59755972684) or ``sxe ud``; ``et`` (exit thread) is *ignore*; ``epr`` (exit process) breaks in cdb
(the stop at ``ntdll!NtTerminateProcess+0x14``); ``eh`` (C++ EH exception) breaks at the second
chance only, the first chance is a line of output. ``sxe`` makes an event break (with ``-c
"Cmd"``, commands run at the stop: ``sxe -c ".lastevent ; g" ld`` in a real session, set1
connect/a_10), ``sxd`` second-chance only, ``sxn`` output only, ``sxi`` ignore. ``ld:Module``
limits the load filter to one image ("sxe ld:lsasrv.dll", set1 misc/a_12), ``ud:Module`` the
unload filter; the other images' events are then *output* at least: after ``sxe
ud:qccamsecureisp8380.sys`` a real kd log prints "Unload module WUDFRd.sys at fffff803`7fac0000"
for the others and stops only at that one (fixtures/sessions/geocausa-kd-arm64-unload-logopen.log).

The world keeps one :class:`EventFilters` (``World.state_of``); the running world's events ask
:func:`breaks` and :func:`shown`. kd prints nothing when a filter is set (set1 misc/a_12:
``kd> sxe ld:lsasrv.dll`` is followed by the prompt).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kdmcp.sim.world.machine import World

__all__ = ["DEFAULTS", "EventFilters", "Filter", "breaks", "commands", "set_filter", "shown"]

# code -> default mode ("break", "second", "output", "ignore")
DEFAULTS = {"ld": "output", "ud": "ignore", "et": "ignore", "ct": "ignore", "cpr": "ignore", "epr": "break",
            "eh": "second", "av": "break"}  # fmt: skip
_MODES = {"sxe": "break", "sxd": "second", "sxn": "output", "sxi": "ignore"}
_ARGS_RE = re.compile(r'\s*(?:-c2?\s+"(?P<cmd>(?:[^"\\]|\\.)*)"\s*|-h\s*)*(?P<events>.*)', re.DOTALL)


@dataclass
class Filter:
    mode: str
    command: str = ""
    module: str = ""  # ld:Module -- only this image


@dataclass
class EventFilters:
    """The filters set in this session, by event code (``ld``, ``et``, ...); others keep DEFAULTS."""

    by_code: dict[str, Filter] = field(default_factory=dict)


def set_filter(world: World, name: str, args: str) -> bool:
    """``sxe``/``sxd``/``sxn``/``sxi`` ``[-c "Cmd"] Event[:Module]``; ``False``: not a form kd takes."""
    m = _ARGS_RE.fullmatch(args)
    events = (m.group("events") if m else "").split()
    if m is None or len(events) != 1:
        return False
    code, _, module = events[0].partition(":")
    command = re.search(r'-c\s+"((?:[^"\\]|\\.)*)"', args)
    world.state_of(EventFilters).by_code[code.lower()] = Filter(
        _MODES[name], command.group(1) if command else "", module.lower()
    )
    return True


def _filter(world: World, code: str, module: str = "") -> Filter:
    f = world.state_of(EventFilters).by_code.get(code)
    default = DEFAULTS.get(code, "ignore")
    if f is None:
        return Filter(default)
    if f.module and module.lower() not in (f.module, f.module.rsplit(".", 1)[0]):
        return Filter("output" if default == "ignore" else default)  # a named filter: the others are shown
    return f


def breaks(world: World, code: str, module: str = "") -> bool:
    """Whether event ``code`` (for ``module``, a load) stops the target now."""
    return _filter(world, code, module).mode == "break"


def shown(world: World, code: str, module: str = "") -> bool:
    """Whether the debugger prints the event's line: unless it is ignored (``sxi``); an
    exception whose filter breaks at the second chance still prints its first chance."""
    return _filter(world, code, module).mode != "ignore"


def commands(world: World, code: str, module: str = "") -> str:
    """The filter's ``-c`` commands, run at its stop."""
    return _filter(world, code, module).command
