"""What a transcript's writer and its readers share: where its files are, and how its text is shown inert.

A base module of its own so that the readers (``kd-mcp watch``, ``transcript show`` and
``cast``, separate processes started by a person) do not import the server package (the MCP
SDK: seconds of start-up) to learn a variable's name or to print a line.

Everything a transcript holds came from the guest or the agent: DbgPrint text, command output,
tool arguments. A guest that prints ``ESC ] 52 ; c ; <base64> BEL`` writes the viewer's
clipboard, ``ESC ] 0 ;`` sets the window title, ``ESC ] 8 ;;`` makes a hyperlink, ``ESC [ 2 J``
clears the screen -- in whichever terminal shows it later. So every reader shows that text
through :func:`inert`: no escape or control byte reaches a terminal, only its visible spelling.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ENV_TRANSCRIPT", "inert", "session_log_path"]

ENV_TRANSCRIPT = "KDMCP_TRANSCRIPT"


def _visible(ch: str) -> str:
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return "^" + chr(code ^ 0x40)  # caret notation, as a terminal echoes it: Ctrl+B is ^B, ESC is ^[
    return f"\\u{code:04x}"  # C1 controls (0x9b is a one-byte CSI), bidi overrides, other format characters


def inert(line: str) -> str:
    """One line safe to print on a terminal: tabs expanded, every other control character (C0,
    DEL, C1, format characters such as bidi overrides) made visible (``^[``, ``\\u009b``), so
    no OSC, CSI or DCS sequence, hyperlink or bell survives. A line break is a control
    character too: split text into lines first."""
    return "\t".join("".join(map(_visible, part)) for part in line.split("\t")).expandtabs(8)


def session_log_path(transcript: Path, session_id: str) -> Path:
    """Where session ``session_id``'s console goes: ``<transcript>.<session>.log`` beside it."""
    return transcript.with_name(f"{transcript.name}.{session_id}.log")
