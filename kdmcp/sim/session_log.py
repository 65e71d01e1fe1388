"""``.logopen``, ``.logappend``, ``.logclose``: the debugger's log of the session.

"KD can write a log file that records the debugging session. This log file contains all of
the commands that you type and the responses from the debugger" (Keeping a Log File in KD).
dbgeng opens the file and says so -- ``dprintf("Opened log file '%s'\\n", File)``, on failure
``ErrOut("log file could not be opened\\n")``; closing prints ``Closing open log file %s`` (its
source, stored-index file id 8450687867; Microsoft's .logopen page shows the same line:
"Opened log file 'c:\\logs\\mylogfile_02BC_2005-02-28_09-05-50-935.txt'"). Opening a new log
closes the old one first. ``/t`` appends the process id and the local time to the name, as in
that example.

The simulator writes the file for real. A Windows path (a drive letter or a backslash) has no
meaning on this machine: it is kept in ``$TMPDIR/kdmcp-sim-logs/`` under its last component
(as a named pipe becomes a socket there, :mod:`~kdmcp.sim.remoting`); the messages name the
path as typed.
"""

from __future__ import annotations

import ntpath
import os
import re
import tempfile
import time
from typing import BinaryIO

__all__ = ["SessionLog", "local_path"]

_WINDOWS_RE = re.compile(r"^[A-Za-z]:|\\")


def local_path(path: str, folder: str | None = None) -> str:
    """Where the log named ``path`` is written on this machine (a Windows path: in ``folder``,
    by default ``$TMPDIR/kdmcp-sim-logs``)."""
    if not _WINDOWS_RE.search(path):
        return path
    folder = folder or os.path.join(tempfile.gettempdir(), "kdmcp-sim-logs")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return os.path.join(folder, ntpath.basename(path) or "dbgeng.log")


def _unique(path: str, pid: int) -> str:
    """``/t``: ``name_PID_YYYY-MM-DD_HH-MM-SS-mmm.ext`` (the .logopen example's form)."""
    root, ext = ntpath.splitext(path)
    now = time.time()
    stamp = time.strftime("%Y-%m-%d_%H-%M-%S", time.localtime(now)) + f"-{int(now % 1 * 1000):03d}"
    return f"{root}_{pid:04X}_{stamp}{ext}"


class SessionLog:
    """The open log file, if any: what the console shows is appended to it."""

    def __init__(self, folder: str | None = None) -> None:
        self.name = ""
        self.folder = folder  # where Windows paths go (local_path)
        self._file: BinaryIO | None = None

    def command(self, name: str, args: str, pid: int) -> str:
        """``.logopen``/``.logappend`` ``[/t] [File]`` or ``.logclose``: what the debugger prints."""
        if name == "logclose":
            return self.close()
        words = args.split()
        unique = False
        while words and words[0].lower() in ("/t", "/u"):  # a POSIX path starts with "/" too
            unique = unique or words[0].lower() == "/t"
            words.pop(0)
        path = words[0] if words else "dbgeng.log"  # dbgeng's default log name
        if unique:
            path = _unique(path, pid)
        said = self.close()
        try:
            self._file = open(local_path(path, self.folder), "ab" if name == "logappend" else "wb")  # noqa: SIM115
        except OSError:
            return said + "log file could not be opened\n"
        self.name = path
        return said + f"Opened log file '{path}'\n"

    def close(self) -> str:
        if self._file is None:
            return ""
        self._file.close()
        self._file = None
        name, self.name = self.name, ""
        return f"Closing open log file {name}\n"

    def write(self, data: bytes) -> None:
        if self._file is not None:
            self._file.write(data)
            self._file.flush()
