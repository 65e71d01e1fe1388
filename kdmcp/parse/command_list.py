"""Split a kd command line into the commands kd will run, as kd itself splits it.

Shared by the engine (to classify what a line will do) and the simulator (to run it), so
both agree on where one command ends: at ``;``, but not inside double quotes (``bp x "k; g"``)
or ``{}`` blocks (``.block { r; k }``).
"""

from __future__ import annotations


def split_command_list(line: str) -> list[str]:
    """The ``;``-separated commands of ``line``, stripped, empty ones dropped."""
    pieces: list[str] = []
    depth, quoted, start = 0, False, 0
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "{":
            depth += 1
        elif not quoted and ch == "}":
            depth = max(0, depth - 1)
        elif ch == ";" and not quoted and depth == 0:
            pieces.append(line[start:i])
            start = i + 1
    pieces.append(line[start:])
    return [p.strip() for p in pieces if p.strip()]
