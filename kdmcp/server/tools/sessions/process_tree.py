"""The processes ``attach_process`` must never debug: kd-mcp, its ancestors, and whatever it started.

Attaching cdb to a process reads and writes all of its memory. Pointed at kd-mcp's own kd child
it reads the KDNET key; at kd-mcp or its parent (the MCP client, the shell holding tokens) it
reads their secrets; at another listener client's debugger it takes over that client's session.
So a pid is refused when it is kd-mcp itself, any ancestor of it, any process descending from
it (every debugger it started, for any client, and what those started: a launched program), or
the pid of any of its sessions' debuggers. The check reads the host's process table by pid and
parent pid at the moment of the call:

- Linux: ``/proc/<pid>/stat``, whose fourth field is the parent pid (proc(5)); the second field,
  the command name in parentheses, may itself hold ``)`` and blanks, so the fields are read
  after the *last* ``)``.
- Windows: a Toolhelp snapshot (``CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0)``, then
  ``Process32FirstW``/``Process32NextW`` over ``PROCESSENTRY32W``, whose ``th32ParentProcessID``
  is the creator's pid). Windows keeps that number after the parent exits and may reuse it, so
  a walk can name an unrelated process as a relative: that refuses more, never less.

Elsewhere there is no table to read, and every attach is refused (fail closed).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from kdmcp.errors import PolicyDenied

__all__ = ["PROCESSENTRY32W", "ParentTable", "Toolhelp", "host_table", "linux_table", "refuse_own_process",
           "windows_table"]

ParentTable = Mapping[int, int]  # pid -> parent pid

TH32CS_SNAPPROCESS = 0x00000002  # tlhelp32.h
ERROR_NO_MORE_FILES = 18  # winerror.h: Process32NextW's "no more entries"
_INVALID_HANDLE = ctypes.c_void_p(-1).value


class PROCESSENTRY32W(ctypes.Structure):
    """tlhelp32.h's PROCESSENTRY32W (568 bytes on x64: ULONG_PTR th32DefaultHeapID aligns to 8)."""

    _fields_ = [
        ("dwSize", ctypes.c_uint32),
        ("cntUsage", ctypes.c_uint32),
        ("th32ProcessID", ctypes.c_uint32),
        ("th32DefaultHeapID", ctypes.c_size_t),
        ("th32ModuleID", ctypes.c_uint32),
        ("cntThreads", ctypes.c_uint32),
        ("th32ParentProcessID", ctypes.c_uint32),
        ("pcPriClassBase", ctypes.c_int32),
        ("dwFlags", ctypes.c_uint32),
        ("szExeFile", ctypes.c_uint16 * 260),  # WCHAR[MAX_PATH]: 16 bits on Windows (c_wchar is 32 elsewhere)
    ]


class Toolhelp(Protocol):
    """The kernel32 calls a snapshot needs (their own names), and the thread's last error."""

    def CreateToolhelp32Snapshot(self, flags: int, process_id: int, /) -> Any: ...

    def Process32FirstW(self, snapshot: Any, entry: PROCESSENTRY32W, /) -> int: ...

    def Process32NextW(self, snapshot: Any, entry: PROCESSENTRY32W, /) -> int: ...

    def CloseHandle(self, handle: Any, /) -> int: ...

    def last_error(self) -> int: ...


class _CtypesToolhelp:
    """kernel32.dll through ctypes, with argument types declared so handles are not truncated."""

    def __init__(self) -> None:
        self._dll = getattr(ctypes, "WinDLL")("kernel32", use_last_error=True)  # noqa: B009 (Windows only)
        self._get_last_error = getattr(ctypes, "get_last_error")  # noqa: B009
        handle, entry = ctypes.c_void_p, ctypes.POINTER(PROCESSENTRY32W)
        for name, argtypes, restype in (
            ("CreateToolhelp32Snapshot", [ctypes.c_uint32, ctypes.c_uint32], handle),
            ("Process32FirstW", [handle, entry], ctypes.c_int),
            ("Process32NextW", [handle, entry], ctypes.c_int),
            ("CloseHandle", [handle], ctypes.c_int),
        ):
            function = getattr(self._dll, name)
            function.argtypes, function.restype = argtypes, restype

    def CreateToolhelp32Snapshot(self, flags: int, process_id: int, /) -> Any:
        return self._dll.CreateToolhelp32Snapshot(flags, process_id)

    def Process32FirstW(self, snapshot: Any, entry: PROCESSENTRY32W, /) -> int:
        return int(self._dll.Process32FirstW(snapshot, ctypes.byref(entry)))

    def Process32NextW(self, snapshot: Any, entry: PROCESSENTRY32W, /) -> int:
        return int(self._dll.Process32NextW(snapshot, ctypes.byref(entry)))

    def CloseHandle(self, handle: Any, /) -> int:
        return int(self._dll.CloseHandle(handle))

    def last_error(self) -> int:
        return int(self._get_last_error())


def windows_table(kernel32: Toolhelp | None = None) -> dict[int, int]:
    """Every process's parent pid, from one Toolhelp snapshot."""
    k = kernel32 if kernel32 is not None else _CtypesToolhelp()
    snapshot = k.CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0)
    if snapshot is None or snapshot == _INVALID_HANDLE:
        raise OSError(f"CreateToolhelp32Snapshot failed (Windows error {k.last_error()})")
    table: dict[int, int] = {}
    try:
        entry = PROCESSENTRY32W()
        entry.dwSize = ctypes.sizeof(PROCESSENTRY32W)  # the call fails unless dwSize is set
        more = k.Process32FirstW(snapshot, entry)
        while more:
            table[int(entry.th32ProcessID)] = int(entry.th32ParentProcessID)
            more = k.Process32NextW(snapshot, entry)
        error = k.last_error()
        if error != ERROR_NO_MORE_FILES:
            raise OSError(f"Process32NextW failed (Windows error {error})")
    finally:
        k.CloseHandle(snapshot)
    return table


def linux_table(proc: Path = Path("/proc")) -> dict[int, int]:
    """Every process's parent pid, from ``/proc/<pid>/stat`` (a process gone meanwhile is skipped)."""
    table: dict[int, int] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue  # it exited between the listing and the read
        # "pid (comm) state ppid ...": comm may hold ") " itself, so read after the last ')'.
        fields = stat[stat.rfind(b")") + 1:].split()
        if len(fields) >= 2 and fields[1].isdigit():
            table[int(entry.name)] = int(fields[1])
    return table


def host_table() -> dict[int, int]:
    """This host's process table (``linux_table``, ``windows_table``); OSError where there is none."""
    if sys.platform == "win32":
        return windows_table()
    if Path("/proc/self/stat").exists():
        return linux_table()
    raise OSError(f"no process table kd-mcp can read on {sys.platform}")


def _ancestors(table: ParentTable, pid: int) -> list[int]:
    """``pid``'s parent, grandparent… up to the root (a loop, as pid reuse can make, ends the walk)."""
    chain: list[int] = []
    seen = {pid}
    parent = table.get(pid)
    while parent is not None and parent > 0 and parent not in seen:
        chain.append(parent)
        seen.add(parent)
        parent = table.get(parent)
    return chain


def _descendants(table: ParentTable, roots: Iterable[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for child, parent in table.items():
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = [pid for pid in roots if pid > 0]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def refuse_own_process(pid: int, debugger_pids: Iterable[int], *, table: Callable[[], ParentTable] = host_table,
                       self_pid: int | None = None) -> None:
    """``policy_denied`` when ``pid`` is kd-mcp, an ancestor of it, a process it started (a
    debugger of any client, or what a debugger started), or one of its sessions' debuggers."""
    me = os.getpid() if self_pid is None else self_pid
    try:
        parents = table()
    except OSError as exc:
        raise PolicyDenied(f"pid: cannot tell whether {pid} is kd-mcp's own ({exc}), so it is not attached") from None
    debuggers = {p for p in debugger_pids if p > 0}
    why = None
    if pid == me:
        why = "is kd-mcp itself"
    elif pid in _ancestors(parents, me):
        why = "is an ancestor of kd-mcp (the client or shell that started it)"
    elif pid in debuggers or pid in _descendants(parents, debuggers):
        why = "is a debugger kd-mcp started, or a process one of them started"
    elif pid in _descendants(parents, [me]):
        why = "is a process kd-mcp started"
    if why is not None:
        raise PolicyDenied(f"pid {pid} {why}: kd-mcp never attaches to its own process tree (docs/security.md)")
