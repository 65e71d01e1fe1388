"""Thin wrappers over the kernel32 console-control calls the Windows backends need.

Python's standard library can send a console control event only to a process group that
shares *our* console (``os.kill(pid, CTRL_BREAK_EVENT)``). A server started by a GUI MCP
client has no console at all, so breaking into kd.exe needs the raw calls: attach to the
debugger's console, make ourselves immune, generate the event. Those calls live here.

kernel32 is loaded lazily, so importing this module on Linux works; every function takes
an optional ``kernel32`` object so tests can pass a fake that records calls.
"""

from __future__ import annotations

import ctypes
import logging
import subprocess
import sys
from typing import Any, Protocol

logger = logging.getLogger(__name__)

# Console control events (wincon.h). signal.CTRL_C_EVENT / CTRL_BREAK_EVENT exist only on
# Windows builds of Python; these constants let the Windows paths run under test on Linux.
CTRL_C_EVENT = 0
CTRL_BREAK_EVENT = 1

# Process creation flags (winbase.h); subprocess defines them only on Windows.
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_NO_WINDOW = 0x08000000


class Win32Error(OSError):
    """A kernel32 call failed; ``winerror`` holds GetLastError()."""

    def __init__(self, function: str, winerror: int) -> None:
        super().__init__(f"{function} failed (Windows error {winerror})")
        self.function = function
        self.winerror = winerror


class Kernel32(Protocol):
    """The subset of kernel32 we call, plus the thread's last error.

    The names are kernel32's own so a reader can match them to the Win32 documentation.
    """

    def AttachConsole(self, process_id: int, /) -> int: ...

    def FreeConsole(self) -> int: ...

    def SetConsoleCtrlHandler(self, handler: Any, add: int, /) -> int: ...

    def GenerateConsoleCtrlEvent(self, ctrl_event: int, process_group_id: int, /) -> int: ...

    def GetConsoleProcessList(self, process_list: Any, count: int, /) -> int: ...

    def GetConsoleWindow(self) -> Any: ...

    def last_error(self) -> int: ...


class _CtypesKernel32:
    """kernel32.dll through ctypes, with argument types declared so handles are not truncated."""

    def __init__(self) -> None:
        # getattr: ctypes.WinDLL / get_last_error exist only on Windows, and mypy on Linux
        # must not see them as attribute errors.
        win_dll = getattr(ctypes, "WinDLL")  # noqa: B009
        self._dll = win_dll("kernel32", use_last_error=True)
        self._get_last_error = getattr(ctypes, "get_last_error")  # noqa: B009
        dword, bool_ = ctypes.c_uint32, ctypes.c_int
        self._declare("AttachConsole", [dword], bool_)
        self._declare("FreeConsole", [], bool_)
        self._declare("SetConsoleCtrlHandler", [ctypes.c_void_p, bool_], bool_)
        self._declare("GenerateConsoleCtrlEvent", [dword, dword], bool_)
        self._declare("GetConsoleProcessList", [ctypes.POINTER(dword), dword], dword)
        self._declare("GetConsoleWindow", [], ctypes.c_void_p)

    def _declare(self, name: str, argtypes: list[Any], restype: Any) -> None:
        function = getattr(self._dll, name)
        function.argtypes = argtypes
        function.restype = restype

    def AttachConsole(self, process_id: int, /) -> int:
        return int(self._dll.AttachConsole(process_id))

    def FreeConsole(self) -> int:
        return int(self._dll.FreeConsole())

    def SetConsoleCtrlHandler(self, handler: Any, add: int, /) -> int:
        return int(self._dll.SetConsoleCtrlHandler(handler, add))

    def GenerateConsoleCtrlEvent(self, ctrl_event: int, process_group_id: int, /) -> int:
        return int(self._dll.GenerateConsoleCtrlEvent(ctrl_event, process_group_id))

    def GetConsoleProcessList(self, process_list: Any, count: int, /) -> int:
        return int(self._dll.GetConsoleProcessList(process_list, count))

    def GetConsoleWindow(self) -> Any:
        return self._dll.GetConsoleWindow()

    def last_error(self) -> int:
        return int(self._get_last_error())


_kernel32: Kernel32 | None = None


def load_kernel32() -> Kernel32:
    """The process-wide kernel32 wrapper, loaded on first use (Windows only)."""
    global _kernel32  # noqa: PLW0603 - one lazily created handle per process
    if _kernel32 is None:
        if sys.platform != "win32":
            raise OSError("kernel32 console functions are available only on Windows")
        _kernel32 = _CtypesKernel32()
    return _kernel32


def _k32(kernel32: Kernel32 | None) -> Kernel32:
    return kernel32 if kernel32 is not None else load_kernel32()


def _check(kernel32: Kernel32, function: str, result: int) -> None:
    if not result:
        raise Win32Error(function, kernel32.last_error())


def attach_console(process_id: int, kernel32: Kernel32 | None = None) -> None:
    """Attach to the console of ``process_id``; we must have freed our own first."""
    k = _k32(kernel32)
    _check(k, "AttachConsole", k.AttachConsole(process_id))


def free_console(kernel32: Kernel32 | None = None) -> bool:
    """Detach from our console; False when we had none (not an error for our callers)."""
    k = _k32(kernel32)
    return bool(k.FreeConsole())


def ignore_ctrl_c(kernel32: Kernel32 | None = None) -> None:
    """SetConsoleCtrlHandler(NULL, TRUE): this process stops reacting to Ctrl+C.

    Only Ctrl+C: Windows never lets a process ignore Ctrl+Break this way, which is why the
    helper sends Ctrl+Break to the debugger's own process group rather than to group 0.
    """
    k = _k32(kernel32)
    _check(k, "SetConsoleCtrlHandler", k.SetConsoleCtrlHandler(None, 1))


def generate_ctrl_event(ctrl_event: int, process_group_id: int, kernel32: Kernel32 | None = None) -> None:
    """Send ``ctrl_event`` to ``process_group_id`` (0: every process on our console)."""
    k = _k32(kernel32)
    _check(k, "GenerateConsoleCtrlEvent", k.GenerateConsoleCtrlEvent(ctrl_event, process_group_id))


def console_process_count(kernel32: Kernel32 | None = None) -> int:
    """How many processes share our console; 0 when we have no console."""
    k = _k32(kernel32)
    buffer = (ctypes.c_uint32 * 1)()
    # With a one-entry buffer the call still returns the full count (it reports the size
    # it would need); 0 means failure, i.e. no console is attached.
    return k.GetConsoleProcessList(buffer, 1)


def console_window(kernel32: Kernel32 | None = None) -> int:
    """Our console's window handle, 0 when none (no console, or one created hidden)."""
    k = _k32(kernel32)
    return int(k.GetConsoleWindow() or 0)


def has_console(kernel32: Kernel32 | None = None) -> bool:
    """Whether this process is attached to a console a child would inherit.

    A visible window proves it cheaply; otherwise ask for the process list, because a
    console created with CREATE_NO_WINDOW has no window yet is still shared with children.
    """
    if console_window(kernel32):
        return True
    return console_process_count(kernel32) > 0


def taskkill_tree_argv(pid: int) -> list[str]:
    """``taskkill /T /F /PID pid``: kd may have started helpers (``.shell``) we must end too."""
    return ["taskkill", "/T", "/F", "/PID", str(pid)]


def kill_process_tree(pid: int, timeout: float = 10.0) -> bool:
    """Kill ``pid`` and its descendants with taskkill; True when taskkill reported success."""
    try:
        completed = subprocess.run(
            taskkill_tree_argv(pid),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
            creationflags=CREATE_NO_WINDOW,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.warning("taskkill for pid %d failed: %s", pid, exc)
        return False
    if completed.returncode != 0:
        output = completed.stdout.decode(errors="replace").strip()
        logger.warning("taskkill for pid %d exited %d: %s", pid, completed.returncode, output)
        return False
    return True
