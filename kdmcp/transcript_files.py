"""Where a transcript's files are: shared by the server that writes them and ``kd-mcp watch`` that reads them.

A base module of its own so that the reader, a separate process started by a person, does not
import the server package (the MCP SDK: seconds of start-up) to learn a variable's name.
"""

from __future__ import annotations

from pathlib import Path

ENV_TRANSCRIPT = "KDMCP_TRANSCRIPT"


def session_log_path(transcript: Path, session_id: str) -> Path:
    """Where session ``session_id``'s console goes: ``<transcript>.<session>.log`` beside it."""
    return transcript.with_name(f"{transcript.name}.{session_id}.log")
