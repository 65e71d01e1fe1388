"""The world's command table: for each command the world answers, who answers it in kd
(``kernel``) and in cdb (``user``) -- one handler may serve both, or each its own (cdb's ``k``,
``r`` and ``lm`` print a user-mode process as cdb does).

Each ``cmd_*`` module registers its handlers with :func:`command`; :mod:`.commands` imports them
all and dispatches. The table is the one list of what the world answers: docs/simulator.md's
command list is checked against it (tests/sim/world/test_docs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kdmcp.sim.world.machine import World

__all__ = ["COMMANDS", "Entry", "Handler", "command"]

# (world, the command's name as typed, lower-cased -- "db", "!process" -- and the rest of the
# line) -> kd's output, each line ending in "\n"; None: this handler does not take that form,
# and the debugger goes on to the scenario's responses and then kd's syntax error.
Handler = Callable[[World, str, str], "str | None"]


@dataclass(frozen=True)
class Entry:
    handler: Handler
    summary: str


# name -> mode ("kernel": kd, "user": cdb) -> its entry
COMMANDS: dict[str, dict[str, Entry]] = {}


def command(*names: str, modes: tuple[str, ...] = ("kernel",), summary: str = "") -> Callable[[Handler], Handler]:
    """Register ``handler`` for each of ``names`` (lower-case, as kd's command names are read) in
    each of ``modes``; a name and mode registered twice is a mistake."""

    def register(handler: Handler) -> Handler:
        for name in names:
            entries = COMMANDS.setdefault(name, {})
            for mode in modes:
                if mode in entries:
                    raise ValueError(f"{name} is registered twice for {mode}")
                entries[mode] = Entry(handler, summary)
        return handler

    return register
