"""The pids ``attach_process`` refuses (issue 28, item 5): the process-table readers (Linux /proc,
Windows Toolhelp through a fake kernel32) and the rule over the table."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from kdmcp.errors import PolicyDenied
from kdmcp.server.tools.sessions import process_tree
from kdmcp.server.tools.sessions.process_tree import (
    ERROR_NO_MORE_FILES,
    PROCESSENTRY32W,
    TH32CS_SNAPPROCESS,
    host_table,
    linux_table,
    refuse_own_process,
    windows_table,
)

# init(1) -> sshd(100) -> shell(200) -> kd-mcp(300) -> kd sim(400) -> its child(401); kd-mcp -> cdb(500);
# an unrelated tree: 1 -> cron(600) -> job(601); a pid-reuse loop: 700 <-> 701.
TABLE = {1: 0, 100: 1, 200: 100, 300: 200, 400: 300, 401: 400, 500: 300, 600: 1, 601: 600, 700: 701, 701: 700}


def _refused(pid: int, debuggers: tuple[int, ...] = (400, 500), table: dict[int, int] = TABLE) -> str | None:
    try:
        refuse_own_process(pid, debuggers, table=lambda: table, self_pid=300)
    except PolicyDenied as exc:
        return exc.message
    return None


@pytest.mark.parametrize(("pid", "why"), [
    (300, "is kd-mcp itself"),
    (200, "ancestor"), (100, "ancestor"), (1, "ancestor"),
    (400, "a debugger kd-mcp started"), (401, "a debugger kd-mcp started"), (500, "a debugger kd-mcp started"),
])
def test_kd_mcp_its_ancestors_and_what_it_started_are_refused(pid: int, why: str) -> None:
    message = _refused(pid)
    assert message is not None and why in message and f"pid {pid} " in message, message
    assert "docs/security.md" in message


def test_a_child_of_kd_mcp_that_is_no_session_is_refused_and_strangers_are_not() -> None:
    assert "is a process kd-mcp started" in str(_refused(400, debuggers=()))
    for stranger in (600, 601, 700, 4242):
        assert _refused(stranger) is None
    # A session's debugger the table does not (yet) show is still refused by its pid.
    assert _refused(900, debuggers=(900,)) is not None


def test_a_parent_loop_ends_the_walk() -> None:
    looped = {300: 700, 700: 701, 701: 700}
    assert "ancestor" in str(_refused(701, table=looped)) and _refused(600, table=looped) is None


def test_no_table_means_no_attach() -> None:
    def broken() -> dict[int, int]:
        raise OSError("no process table kd-mcp can read on plan9")

    with pytest.raises(PolicyDenied, match="cannot tell whether 4242 is kd-mcp's own"):
        refuse_own_process(4242, (), table=broken)


def _stat(proc: Path, pid: int, comm: str, ppid: int) -> None:
    (proc / str(pid)).mkdir()
    (proc / str(pid) / "stat").write_bytes(f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560".encode())


def test_linux_table_reads_the_parent_after_the_last_parenthesis(tmp_path: Path) -> None:
    _stat(tmp_path, 1, "init", 0)
    _stat(tmp_path, 42, "evil) S 1 (x", 7)  # a command name made to look like other fields
    _stat(tmp_path, 43, "kd", 42)
    (tmp_path / "self").mkdir()
    (tmp_path / "44").mkdir()  # gone before its stat was read
    assert linux_table(tmp_path) == {1: 0, 42: 7, 43: 42}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="a Linux /proc")
def test_the_host_table_holds_this_process_and_its_parent() -> None:
    table = host_table()
    assert table[os.getpid()] == os.getppid()


class FakeToolhelp:
    """kernel32 as the snapshot calls see it: a list of (pid, parent), then ERROR_NO_MORE_FILES."""

    def __init__(self, processes: list[tuple[int, int]], handle: Any = 0x1234, fail_next: int = 0) -> None:
        self.processes, self.handle, self.fail_next = processes, handle, fail_next
        self.calls: list[str] = []
        self.sizes: list[int] = []
        self._at = 0
        self._error = 0

    def CreateToolhelp32Snapshot(self, flags: int, process_id: int, /) -> Any:
        self.calls.append(f"snapshot {flags:#x} {process_id}")
        self._error = 5 if self.handle == ctypes.c_void_p(-1).value else 0
        return self.handle

    def _fill(self, entry: PROCESSENTRY32W) -> int:
        self.sizes.append(entry.dwSize)
        if self._at >= len(self.processes):
            self._error = self.fail_next or ERROR_NO_MORE_FILES
            return 0
        entry.th32ProcessID, entry.th32ParentProcessID = self.processes[self._at]
        self._at += 1
        return 1

    def Process32FirstW(self, snapshot: Any, entry: PROCESSENTRY32W, /) -> int:
        assert snapshot == self.handle
        self.calls.append("first")
        return self._fill(entry)

    def Process32NextW(self, snapshot: Any, entry: PROCESSENTRY32W, /) -> int:
        self.calls.append("next")
        return self._fill(entry)

    def CloseHandle(self, handle: Any, /) -> int:
        self.calls.append(f"close {handle:#x}")
        return 1

    def last_error(self) -> int:
        return self._error


def test_windows_table_walks_one_snapshot_and_closes_it() -> None:
    fake = FakeToolhelp([(0, 0), (4, 0), (812, 640), (4242, 812)])
    assert windows_table(fake) == {0: 0, 4: 0, 812: 640, 4242: 812}
    assert fake.calls == [f"snapshot {TH32CS_SNAPPROCESS:#x} 0", "first", "next", "next", "next", "next",
                          "close 0x1234"]
    assert set(fake.sizes) == {ctypes.sizeof(PROCESSENTRY32W)}  # dwSize set before the first call


def test_windows_table_failures_are_errors_never_a_partial_table() -> None:
    with pytest.raises(OSError, match="CreateToolhelp32Snapshot failed"):
        windows_table(FakeToolhelp([], handle=ctypes.c_void_p(-1).value))
    failing = FakeToolhelp([(4, 0)], fail_next=299)  # ERROR_PARTIAL_COPY instead of the end of the list
    with pytest.raises(OSError, match="Process32NextW failed"):
        windows_table(failing)
    assert failing.calls[-1] == "close 0x1234"  # the snapshot is closed on every path


def test_processentry32w_has_the_windows_layout() -> None:
    """tlhelp32.h: 9 DWORD-sized fields, a ULONG_PTR, then WCHAR szExeFile[MAX_PATH]."""
    pointer = ctypes.sizeof(ctypes.c_void_p)
    assert ctypes.sizeof(PROCESSENTRY32W) == (568 if pointer == 8 else 556)
    assert PROCESSENTRY32W.th32ParentProcessID.offset == (32 if pointer == 8 else 24)  # type: ignore[attr-defined]
    assert PROCESSENTRY32W.szExeFile.offset == (44 if pointer == 8 else 36)  # type: ignore[attr-defined]


def test_the_windows_reader_is_the_one_used_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(process_tree, "windows_table", lambda: {7: 1})
    assert host_table() == {7: 1}
