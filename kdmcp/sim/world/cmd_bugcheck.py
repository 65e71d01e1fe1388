"""``.bugcheck`` from the world: the bug check code and its four parameters the world stopped in.

kd prints them as published crash triages show (a 0x139 ``kd> .bugcheck``; a 0x9F one)::

    Bugcheck code 00000139
    Arguments 00000000`0000001d ffffb88f`1487ec30 ffffb88f`1487eb88 00000000`00000000

the code zero-padded to eight digits, each argument as a 64-bit address. A world in the D1
bugcheck (:func:`.cmd_report.crash`, ``kd -z MEMORY.DMP``) prints myfault's: the referenced
address, IRQL 2, a read, the faulting instruction -- the arguments ``!analyze -v`` explains. A
live target in no bugcheck prints zeros (kd reads ``KiBugCheckData``, which holds nothing until
a crash; no published transcript shows that case, so that answer is reconstructed).
"""

from __future__ import annotations

import struct

from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.registry import command

__all__ = ["bugcheck_text", "set_bugcheck"]


def set_bugcheck(world: World, code: int, args: tuple[int, ...]) -> None:
    """The world stops in bug check ``code``: ``.bugcheck`` and ``!analyze`` read it, and so does
    memory -- ``nt!KiBugCheckData``'s five ULONG_PTRs hold the code and the four parameters, as
    ``dq nt!KiBugCheckData L5`` shows them (dbgeng's ReadBugCheckData reads the same slots)."""
    params = (*args, 0, 0, 0, 0)[:4]
    world.bugcheck = (code, params)  # type: ignore[assignment]
    world.kernel.write(cat.NT_DATA["KiBugCheckData"][0], struct.pack("<5Q", code, *params))


def bugcheck_text(world: World) -> str:
    """``.bugcheck``'s two lines for the world as it stands."""
    code, args = world.bugcheck if world.bugcheck is not None else (0, (0, 0, 0, 0))
    return f"Bugcheck code {code:08X}\nArguments {' '.join(fmt_addr(a) for a in args)}\n"


@command(".bugcheck", summary="the bug check code and parameters the target stopped in")
def _bugcheck(world: World, name: str, args: str) -> str | None:
    del name
    if args.strip():
        return None  # .bugcheck takes no arguments: kd's syntax error
    return bugcheck_text(world)
