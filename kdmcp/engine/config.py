"""A session's timeouts and limits: one record the manager, the server's config and the session share."""

from __future__ import annotations

from kdmcp.console import BackendName
from kdmcp.engine.output_store import DEFAULT_MEMORY_BYTES
from kdmcp.validation import LazyModel

__all__ = ["SessionConfig"]


class SessionConfig(LazyModel):
    """Timeouts and limits of one session (seconds unless named otherwise)."""

    startup_timeout: float = 30.0
    command_timeout: float = 60.0
    break_timeout: float = 10.0
    stop_timeout: float = 10.0
    # After g: how long to watch for an immediate stop before calling the target running.
    # kd prints nothing when a target resumes, so "running" is the absence of a prompt.
    go_settle_s: float = 0.015
    # A break-in request that gets no prompt is sent again this often until break_timeout:
    # Ctrl+C is lost when it reaches kd before kd has read the preceding g (kd drops a
    # Ctrl+C at its prompt), and a KDNET break packet can be lost on the wire.
    break_retry_s: float = 1.0
    inline_output_bytes: int = 64 * 1024
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    spill_dir: str | None = None
    event_log_size: int = 10_000
    backend: BackendName = "auto"
