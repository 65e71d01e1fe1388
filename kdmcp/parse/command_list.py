"""Split a kd command line into the commands kd will run, as kd itself splits it.

A view of the one command reader (:mod:`kdmcp.command.syntax`) under kd's documented
reading, so the parser routes output by the same commands the policy checked, the engine
sent and the simulator ran: ``;`` ends a command, but not inside the quoted argument of a
command that takes one (``bp x "k; g"``) nor inside ``{}`` blocks (``.block { r; k }``).
"""

from __future__ import annotations

from kdmcp.command.lexing import KD_LEXING
from kdmcp.command.syntax import command_texts


def split_command_list(line: str) -> list[str]:
    """The ``;``-separated commands of ``line``, stripped, empty ones dropped."""
    return command_texts(line, KD_LEXING)
