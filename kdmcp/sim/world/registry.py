"""The world's command table: one entry per kd command the world answers, and who answers it.

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
    modes: frozenset[str]  # "kernel", "user": which debugger answers it from the world
    summary: str


COMMANDS: dict[str, Entry] = {}


def command(*names: str, modes: tuple[str, ...] = ("kernel",), summary: str = "") -> Callable[[Handler], Handler]:
    """Register ``handler`` for each of ``names`` (lower-case, as kd's command names are read)."""

    def register(handler: Handler) -> Handler:
        for name in names:
            if name in COMMANDS:
                raise ValueError(f"{name} is registered twice")
            COMMANDS[name] = Entry(handler, frozenset(modes), summary)
        return handler

    return register
