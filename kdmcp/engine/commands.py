"""How a command line behaves at the console: returns to a prompt, or lets the target run.

kd stops reading input while the target runs, so a ``.echo`` marker sent after ``g`` would
sit unread until the next break; go-class commands are therefore sent without a marker and
confirmed by the session's state instead (architecture.md, "Go-class commands").

Which lines are go-class is the command reader's answer (:func:`kdmcp.command.run_effect`),
the same reader the policy and the simulator use: a ``g`` inside ``.block { }``, a ``j``
branch, an ``.if`` body, a ``.foreach`` body or a ``~*e`` string counts, a ``g`` in a
breakpoint's command string (which runs later) does not.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from kdmcp import command as reader
from kdmcp.command import RunEffect
from kdmcp.command.tables import is_step
from kdmcp.parse.prompt import PROMPT_PATTERN

# A prompt, or nothing, alone before an echo on its line ("0: kd> " + "ho KDMCP…").
_PROMPT_OR_NOTHING_RE = re.compile(("(?:" + PROMPT_PATTERN + ")?").encode())

__all__ = ["MAX_COMMAND_BYTES", "CommandKind", "checked", "command_kind", "is_step", "strip_echo", "validate"]

CommandKind = Literal["immediate", "go", "reboot", "quit"]

MAX_COMMAND_BYTES = 4000  # under the pty's 4096-byte canonical line limit

_KIND: dict[RunEffect, CommandKind] = {
    RunEffect.IMMEDIATE: "immediate",
    RunEffect.RESUMES: "go",
    RunEffect.REBOOTS: "reboot",
    RunEffect.ENDS: "quit",
}


def command_kind(line: str) -> CommandKind:
    """The strongest behaviour of any command the line runs (quit > reboot > go > immediate)."""
    return _KIND[reader.run_effect(line)]  # the policy module, imported on the first line read


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


@lru_cache(maxsize=1024)
def checked(line: str) -> tuple[str | None, CommandKind]:
    """``validate`` and, for a line that passes, ``command_kind`` ("immediate" otherwise), at once
    and cached: both are pure, agents repeat lines, and every command asks (~2.5 µs for an ``r``)."""
    problem = validate(line)
    return problem, "immediate" if problem is not None else command_kind(line)


def _without_cut_echo(raw: bytes, echo: bytes, after: bytes) -> bytes | None:
    """``raw`` without the marker line's echo where kd's answer cut it in two, else None.

    A pty echoes the marker line as its line discipline gets to it, while kd has already read
    the command line before it and answers meanwhile: ``.`` + ``s1-449\r\n`` + ``echo KDMCP…\r\n``
    (seen under load), or with kd's prompt between: ``.ec`` + ``s4-49\r\n0: kd> `` + ``ho KDMCP…``.
    The echo's head then starts ``raw``; its tail ends ``raw`` or comes in ``after`` (what
    followed the command's output). Only a tail seen proves the head is echo, not output that
    starts like it.
    """
    # Only cuts within the prefix ``raw`` shares with the echo can match: most outputs share none.
    shared = 0
    longest = min(len(echo) - 1, len(raw))
    while shared < longest and raw[shared] == echo[shared]:
        shared += 1
    for cut in range(shared, 0, -1):
        tail = echo[cut:]
        if raw.endswith(tail) and len(raw) >= len(echo):
            end = len(raw) - len(tail)
            line_start = raw.rfind(b"\n", 0, end) + 1
            if line_start > cut and _PROMPT_OR_NOTHING_RE.fullmatch(raw[line_start:end]):
                end = line_start  # the tail behind kd's prompt: the prompt goes with it
            return raw[cut:end]
        if tail in after:  # past the output: behind kd's marker line, or its prompt
            return raw[cut:]
    return None


def strip_echo(raw: bytes, command: bytes, marker: bytes | None, after: bytes = b"") -> bytes:
    """Remove what a console echoes: the command line and the ``.echo <marker>`` line (if one was sent).

    Under a pty both lines are echoed as soon as they are written; a Windows console echoes
    each as kd reads it, so the marker's echo sits before the marker, behind a prompt.
    """
    for echoed in (command,) if marker is None else (command, b".echo " + marker):
        for ending in (b"\r\n", b"\n"):
            if raw.startswith(echoed + ending):
                raw = raw[len(echoed) + len(ending) :]
                break
    if marker is None:
        return raw
    echo_line = b".echo " + marker
    for ending in (b"\r\n", b"\n"):
        answer = _without_cut_echo(raw, echo_line + ending, after)
        if answer is not None:
            return answer
    pos = raw.rfind(echo_line)
    if pos >= 0:
        line_start = raw.rfind(b"\n", 0, pos) + 1
        raw = raw[:line_start] + raw[pos + len(echo_line) :].lstrip(b"\r\n")
    return raw
