"""POSIX shims that let mcp-windbg 1.6.0 run on Linux for scripts/bench_mcp.py --peer.

Loaded by the peer's interpreter only (this directory is put on its PYTHONPATH). mcp-windbg is
Windows-only in three places the bench reaches:

- ``signal.CTRL_BREAK_EVENT``: it breaks into a kernel target (and cancels a runaway command) with
  ``Popen.send_signal(signal.CTRL_BREAK_EVENT)``. Console kd treats Ctrl+C as the same break-in
  request, and kd-mcp's simulator takes SIGINT for it, so the event is SIGINT here.
- ``import winreg`` at the top of its server module: a stand-in ``winreg`` sits next to this file.
- ``except (OSError, WindowsError)`` in its dump-folder lookup: ``WindowsError`` is ``OSError``.
"""

import builtins
import signal
import subprocess

signal.CTRL_BREAK_EVENT = signal.SIGINT  # type: ignore[attr-defined]
subprocess.CTRL_BREAK_EVENT = signal.SIGINT  # type: ignore[attr-defined]
if not hasattr(builtins, "WindowsError"):
    builtins.WindowsError = OSError  # type: ignore[attr-defined]
