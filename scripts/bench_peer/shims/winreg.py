"""A stand-in for Windows's ``winreg`` (scripts/bench_mcp.py --peer): every key is missing.

mcp-windbg reads one value with it, the Windows Error Reporting dump folder, and falls back to
``%LOCALAPPDATA%\\CrashDumps`` when the key cannot be opened, which is what this module makes happen.
"""

from __future__ import annotations

from typing import Any

HKEY_CURRENT_USER = 0x80000001
HKEY_LOCAL_MACHINE = 0x80000002


def OpenKey(key: Any, sub_key: str, *args: Any) -> Any:
    raise FileNotFoundError(2, "The system cannot find the file specified (winreg shim)", sub_key)


def QueryValueEx(key: Any, name: str) -> Any:
    raise FileNotFoundError(2, "The system cannot find the file specified (winreg shim)", name)
