"""One debugger process and its byte stream, behind the ``Console`` protocol.

This is the only package that knows about ptys, pipes and Win32 console control events.
"""

from __future__ import annotations

import sys
from typing import Literal

from kdmcp.console.base import Console, ConsoleClosed, ConsoleError, SpawnSpec, child_environment

BackendName = Literal["auto", "pexpect", "pipe", "wexpect"]

__all__ = [
    "BackendName",
    "Console",
    "ConsoleClosed",
    "ConsoleError",
    "SpawnSpec",
    "child_environment",
    "default_backend",
    "open_console",
]


def default_backend() -> Literal["pexpect", "pipe"]:
    """pexpect (a pty) on POSIX; pipes on Windows (see docs/architecture.md for why)."""
    return "pipe" if sys.platform == "win32" else "pexpect"


def open_console(spec: SpawnSpec, backend: BackendName = "auto") -> Console:
    """Start the debugger described by ``spec`` on the chosen backend."""
    name = default_backend() if backend == "auto" else backend
    if name == "pexpect":
        if sys.platform == "win32":
            raise ConsoleError("the pexpect backend needs a POSIX pty; use 'pipe' or 'wexpect' on Windows")
        from kdmcp.console.pexpect_backend import PexpectConsole

        return PexpectConsole.spawn(spec)
    if name == "pipe":
        from kdmcp.console.pipe_backend import PipeConsole

        return PipeConsole.spawn(spec)
    if name == "wexpect":
        from kdmcp.console.wexpect_backend import WexpectConsole

        return WexpectConsole.spawn(spec)
    raise ConsoleError(f"unknown console backend {backend!r}")
