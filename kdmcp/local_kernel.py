"""Whether ``kd -kl`` can work on this machine, and what to do when it cannot.

Local kernel debugging reads the running kernel of the machine kd runs on. kd refuses it
unless two things hold, and says only "The system does not support local kernel debugging"
when they do not: the debugger runs elevated (an administrator's token), and the machine was
booted with kernel debugging enabled (``bcdedit /debug on``, then a restart; Secure Boot must
allow the change). The second is what the kernel reports as ``KernelDebuggerEnabled`` in
``SYSTEM_KERNEL_DEBUGGER_INFORMATION`` (``NtQuerySystemInformation`` class 35).

The probes are functions a test can replace: Windows code that cannot run here.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

__all__ = ["ENABLE_STEPS", "readiness"]

ENABLE_STEPS = ("run `bcdedit /debug on` in an elevated prompt and restart Windows (with Secure Boot on, "
                "turn it off first or bcdedit refuses)")
_SYSTEM_KERNEL_DEBUGGER_INFORMATION = 35


def _is_admin() -> bool:
    return bool(ctypes.windll.shell32.IsUserAnAdmin())  # type: ignore[attr-defined]


def _kernel_debugging_enabled() -> bool | None:
    """``KernelDebuggerEnabled`` as the kernel reports it; ``None`` if it cannot be asked."""
    info = (ctypes.c_ubyte * 2)()
    status = ctypes.windll.ntdll.NtQuerySystemInformation(  # type: ignore[attr-defined]
        _SYSTEM_KERNEL_DEBUGGER_INFORMATION, ctypes.byref(info), ctypes.sizeof(info), None)
    return None if status != 0 else bool(info[0])


def readiness(
    *,
    windows: bool | None = None,
    is_admin: Callable[[], bool] = _is_admin,
    debugging_enabled: Callable[[], bool | None] = _kernel_debugging_enabled,
) -> list[str]:
    """What stands in the way of ``kd -kl`` here (empty: nothing known to)."""
    if not (os.name == "nt" if windows is None else windows):
        return ["kd -kl debugs the Windows machine it runs on: this is not Windows (kd-mcp --simulate answers -kl)"]
    problems: list[str] = []
    if not is_admin():
        problems.append("kd -kl needs an elevated debugger: start the MCP client (and so kd-mcp) as administrator")
    enabled = debugging_enabled()
    if enabled is False:
        problems.append(f"kernel debugging is not enabled at boot: {ENABLE_STEPS}")
    elif enabled is None:
        problems.append(f"could not ask the kernel whether debugging is enabled; if kd -kl fails, {ENABLE_STEPS}")
    return problems
