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
from collections.abc import Callable
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


# ------------------------------------------------------------------ the server's own console events

# Console control events a console program receives (wincon.h; HandlerRoutine): the window
# closed, the user logged off, the system shuts down. After CTRL_CLOSE_EVENT returns, or after
# the system's wait (5 s for a close; up to 20 s at logoff or shutdown), the process is ended.
CTRL_CLOSE_EVENT = 2
CTRL_LOGOFF_EVENT = 5
CTRL_SHUTDOWN_EVENT = 6
CTRL_EVENT_NAMES = {
    CTRL_C_EVENT: "Ctrl+C", CTRL_BREAK_EVENT: "Ctrl+Break", CTRL_CLOSE_EVENT: "console closed",
    CTRL_LOGOFF_EVENT: "logoff", CTRL_SHUTDOWN_EVENT: "system shutdown",
}
# Events after which Windows ends the process once the handler returns: the handler must not
# return before the sessions are stopped.
ENDING_EVENTS = frozenset({CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT})

_ctrl_handlers: list[Any] = []  # the C callbacks must outlive the registration


def install_ctrl_handler(on_event: Callable[[str, bool], None], kernel32: Kernel32 | None = None) -> Any:
    """``SetConsoleCtrlHandler(handler, TRUE)``: every console event runs ``on_event(name, ending)``.

    ``ending``: Windows ends the process when the handler returns (close, logoff, shutdown), so
    ``on_event`` must block until the shutdown it starts is done (it is bounded by
    ``timeouts.stop``). The handler runs on a thread Windows creates for the event and returns
    TRUE (handled): the default handler, which would end the server at once, never runs. Returns
    the C callback (kept alive here as well).
    """
    k = _k32(kernel32)
    prototype = getattr(ctypes, "WINFUNCTYPE", ctypes.CFUNCTYPE)  # WINFUNCTYPE: Windows only
    handler_type = prototype(ctypes.c_int, ctypes.c_uint32)

    def handler(event: int) -> int:
        name = CTRL_EVENT_NAMES.get(event, f"console event {event}")
        try:
            on_event(name, event in ENDING_EVENTS)
        except Exception:  # never let an exception cross into kernel32's thread
            logger.exception("console event %s", name)
        return 1

    callback = handler_type(handler)
    _check(k, "SetConsoleCtrlHandler", k.SetConsoleCtrlHandler(callback, 1))
    _ctrl_handlers.append(callback)
    return callback


# ------------------------------------------------------------------ job objects (lifetime.py)

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9  # JobObjectExtendedLimitInformation


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),  # ULONG_PTR
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class IO_COUNTERS(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION),
        ("IoInfo", IO_COUNTERS),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


class JobKernel32(Protocol):
    """The kernel32 calls a kill-on-close job needs (kernel32's own names)."""

    def CreateJobObjectW(self, attributes: Any, name: Any, /) -> int: ...

    def SetInformationJobObject(self, job: int, info_class: int, info: Any, size: int, /) -> int: ...

    def AssignProcessToJobObject(self, job: int, process: int, /) -> int: ...

    def CloseHandle(self, handle: int, /) -> int: ...

    def last_error(self) -> int: ...


class _CtypesJobKernel32(_CtypesKernel32):
    """The job calls through ctypes too, handles declared pointer-sized."""

    def __init__(self) -> None:
        super().__init__()
        handle, bool_ = ctypes.c_void_p, ctypes.c_int
        self._declare("CreateJobObjectW", [ctypes.c_void_p, ctypes.c_wchar_p], handle)
        self._declare("SetInformationJobObject", [handle, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32], bool_)
        self._declare("AssignProcessToJobObject", [handle, handle], bool_)
        self._declare("CloseHandle", [handle], bool_)

    def CreateJobObjectW(self, attributes: Any, name: Any, /) -> int:
        return int(self._dll.CreateJobObjectW(attributes, name) or 0)

    def SetInformationJobObject(self, job: int, info_class: int, info: Any, size: int, /) -> int:
        return int(self._dll.SetInformationJobObject(job, info_class, info, size))

    def AssignProcessToJobObject(self, job: int, process: int, /) -> int:
        return int(self._dll.AssignProcessToJobObject(job, process))

    def CloseHandle(self, handle: int, /) -> int:
        return int(self._dll.CloseHandle(handle))


def load_job_kernel32() -> JobKernel32:
    """kernel32's job calls (Windows only)."""
    if sys.platform != "win32" or not hasattr(ctypes, "WinDLL"):
        raise OSError("job objects are available only on Windows")
    return _CtypesJobKernel32()


def create_kill_on_close_job(kernel32: JobKernel32) -> int:
    """``CreateJobObjectW(NULL, NULL)`` with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``; its handle.

    The handle is not inheritable (no security attributes), so no child keeps the job alive
    after the server is gone.
    """
    job = kernel32.CreateJobObjectW(None, None)
    if not job:
        raise Win32Error("CreateJobObjectW", kernel32.last_error())
    info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    if not kernel32.SetInformationJobObject(job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
                                            ctypes.byref(info), ctypes.sizeof(info)):
        error = kernel32.last_error()
        kernel32.CloseHandle(job)
        raise Win32Error("SetInformationJobObject", error)
    return job


def assign_to_job(job: int, process: int, kernel32: JobKernel32) -> None:
    """``AssignProcessToJobObject``: nested jobs work since Windows 8, so a server that runs in a
    job of its own (a CI runner, a service host) can still do this."""
    if not kernel32.AssignProcessToJobObject(job, process):
        raise Win32Error("AssignProcessToJobObject", kernel32.last_error())


def close_handle(handle: int, kernel32: JobKernel32) -> None:
    if not kernel32.CloseHandle(handle):
        raise Win32Error("CloseHandle", kernel32.last_error())
