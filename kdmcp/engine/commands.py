"""How a command line behaves at the console: returns to a prompt, or lets the target run.

kd stops reading input while the target runs, so a ``.echo`` marker sent after ``g`` would
sit unread until the next break; go-class commands are therefore sent without a marker and
confirmed by the session's state instead (design.md, "Go-class commands").
"""

from __future__ import annotations

import re
from typing import Literal

from kdmcp.parse.command_list import split_command_list

__all__ = ["MAX_COMMAND_BYTES", "CommandKind", "classify", "split_command_list", "validate"]

CommandKind = Literal["immediate", "go", "reboot", "quit"]

MAX_COMMAND_BYTES = 4000  # under the pty's 4096-byte canonical line limit

# g gh gn gN gc gu, behind an optional ~N / ~* / |N prefix; arguments follow a space or '='.
_GO_RE = re.compile(r"(?:~[\d.#*]*\s*|\|\d*\s*)?g[hncu]?(?:[\s=].*)?", re.IGNORECASE | re.DOTALL)
_REBOOT_RE = re.compile(r"\.(?:reboot|restart)\b.*", re.IGNORECASE | re.DOTALL)
_QUIT_RE = re.compile(r"q[qd]?", re.IGNORECASE)


def classify(line: str) -> CommandKind:
    """The strongest behaviour among the pieces of a command list (quit > reboot > go)."""
    kinds: set[str] = set()
    for piece in split_command_list(line):
        if _QUIT_RE.fullmatch(piece):
            kinds.add("quit")
        elif _REBOOT_RE.fullmatch(piece):
            kinds.add("reboot")
        elif _GO_RE.fullmatch(piece):
            kinds.add("go")
    if "quit" in kinds:
        return "quit"
    if "reboot" in kinds:
        return "reboot"
    return "go" if "go" in kinds else "immediate"


def validate(line: str) -> str | None:
    """Why ``line`` cannot be sent as one command, or None when it can.

    An embedded newline would become two commands, and an empty line makes kd repeat the
    previous command; control characters would be taken as console keys (Ctrl+C, Ctrl+B).
    """
    if not line.strip():
        return "empty command (kd repeats the last command on an empty line)"
    if "\n" in line or "\r" in line:
        return "the command contains a line break; send one command per call"
    bad = [c for c in line if (ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F]
    if bad:
        return f"the command contains control character 0x{ord(bad[0]):02x}"
    if len(line.encode("utf-8")) > MAX_COMMAND_BYTES:
        return f"the command is longer than {MAX_COMMAND_BYTES} bytes"
    return None
