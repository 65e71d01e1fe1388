"""``kd-mcp watch``: what the agent is doing, live, for the person sitting beside it.

On stdio the MCP client owns the server's stdin and stdout, so the view cannot be inside the
server: it is this separate, read-only process, which follows the server's transcript (the
JSONL records of every call, result and session: docs/transcripts.md) and each session's
console log beside it (``<transcript>.<session>.log``, copied while the target runs by the
server's ``LogFlusher``). ``state`` ingests records and bytes (no I/O), ``render`` draws a
frame from it, ``files`` follows and checks the files, ``live`` runs the loop.
"""

from kdmcp.watch.files import WatchRefused
from kdmcp.watch.live import run_watch

__all__ = ["WatchRefused", "run_watch"]
