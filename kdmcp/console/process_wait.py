"""Wait for a child process to exit, with a bound, without polling where the OS can tell us.

Linux has pidfds: a descriptor that becomes readable when the process exits, so the wait is
one ``select``. Elsewhere on POSIX we fall back to ``waitid(WNOHANG | WNOWAIT)`` (which
leaves the child for its owner to reap) with a backoff that starts at 1 ms; the fallback only
runs while a debugger is being stopped.
"""

from __future__ import annotations

import os
import select
import time


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Return True once ``pid`` has exited (not reaped: the owner reaps), False on timeout."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(pid)
        except ProcessLookupError:
            return True
        except OSError:
            pass
        else:
            try:
                ready, _, _ = select.select([fd], [], [], max(0.0, timeout))
                return bool(ready)
            finally:
                os.close(fd)
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            status = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        if status is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
