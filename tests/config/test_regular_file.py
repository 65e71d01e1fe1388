"""kdmcp/regular_file.py, through ``load_state``: every hostile state-file path is a prompt
``state_file`` error, never a hang.

A state file is named by a tool argument, so any client can point it at a FIFO, a terminal,
``/proc/self/fd/1`` (the server's own MCP stdout) or ``/dev/zero``. Each load runs in a daemon
thread under a bound; a load that outlives it fails the test, and the cleanup unblocks it (a
writer opens the FIFO, the pipe's write end closes) so no thread is left behind.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kdmcp import regular_file
from kdmcp.config import load_config
from kdmcp.errors import ConfigError, KdMcpError, StateFileError
from kdmcp.statefile import load_state

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="FIFOs, /proc and /dev as Linux has them")

PROMPT_S = 2.0  # a refusal is a stat and an fstat: far below this
BOUND_S = 10.0


def bounded(load: Callable[[], object], unblock: Callable[[], None] = lambda: None) -> BaseException:
    """Run ``load`` in a daemon thread; return what it raised. Fail if it outlives ``BOUND_S``."""
    box: dict[str, BaseException] = {}
    done = threading.Event()

    def run() -> None:
        try:
            load()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    t0 = time.monotonic()
    threading.Thread(target=run, daemon=True).start()
    finished = done.wait(BOUND_S)
    elapsed = time.monotonic() - t0
    if not finished:
        unblock()
        done.wait(BOUND_S)
        pytest.fail(f"the load hung for more than {BOUND_S} s")
    assert elapsed < PROMPT_S, f"took {elapsed:.1f} s"
    assert "error" in box, "the load succeeded"
    return box["error"]


def state_error(path: str, unblock: Callable[[], None] = lambda: None) -> str:
    exc = bounded(lambda: load_state(path, env={}), unblock)
    assert isinstance(exc, StateFileError), repr(exc)
    assert exc.category == "state_file"
    assert path in exc.message
    return exc.message


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "kd-session.json"
    os.mkfifo(path)
    yield path


def open_writer(path: Path) -> Callable[[], None]:
    """Unblock a reader stuck in open()/read() on the FIFO: a writer comes and goes."""

    def unblock() -> None:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)

    return unblock


def test_fifo(fifo: Path) -> None:
    message = state_error(str(fifo), open_writer(fifo))
    assert "FIFO" in message and "not a regular file" in message


def test_symlink_to_a_fifo(fifo: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(fifo)
    message = state_error(str(link), open_writer(fifo))
    assert "FIFO" in message and "not a regular file" in message


def test_proc_fd_of_a_pipe() -> None:
    """``/proc/self/fd/N`` of a pipe nobody writes to: the shape of the server's own stdin/stdout."""
    read_end, write_end = os.pipe()
    try:
        message = state_error(f"/proc/self/fd/{read_end}", lambda: os.close(write_end))
    finally:
        os.close(read_end)
        with contextlib.suppress(OSError):  # the unblock may have closed it
            os.close(write_end)
    assert "/proc" in message and "not a regular file" in message


@pytest.mark.process
def test_proc_self_fd_1_in_a_server_shaped_process() -> None:
    """In a process whose stdout is a pipe (stdio MCP), ``/proc/self/fd/1`` must not block."""
    program = (
        "from kdmcp.statefile import load_state\n"
        "from kdmcp.errors import StateFileError\n"
        "import sys\n"
        "try:\n"
        "    load_state('/proc/self/fd/1', env={})\n"
        "except StateFileError as exc:\n"
        "    sys.stderr.write(exc.category + ': ' + exc.message)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], stdin=subprocess.PIPE, capture_output=True,
                          timeout=30, check=False)
    assert done.stderr.startswith(b"state_file: "), done.stderr
    assert b"/proc" in done.stderr and b"not a regular file" in done.stderr


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "character device"), ("/dev/null", "character device")])
def test_devices(path: str, kind: str) -> None:
    message = state_error(path)
    assert kind in message and "not a regular file" in message


@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/self/status", "/sys/kernel/mm/transparent_hugepage"])
def test_proc_and_sys_entries(path: str) -> None:
    """procfs files claim to be regular and empty, and may hold our environment: refused by place."""
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    message = state_error(path)
    assert "/proc or /sys" in message


def test_symlink_into_proc(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to("/proc/self/environ")
    assert "/proc or /sys" in state_error(str(link))


def test_directory(tmp_path: Path) -> None:
    assert "is a directory" in state_error(str(tmp_path))


def test_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        message = state_error(str(path))
    assert "socket" in message and "not a regular file" in message


def test_oversized_sparse_file(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(8 * 1024**3)  # 8 GiB of nothing: refused by size before any read
    assert "larger than 64 KiB" in state_error(str(path))


def test_a_file_that_grows_past_the_cap_while_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The size is checked on the opened file and again on what was read."""
    path = tmp_path / "s.json"
    path.write_bytes(b"x" * 10)
    real_read = os.read
    monkeypatch.setattr(regular_file.os, "read", lambda fd, n: b"y" * n if n > 0 else real_read(fd, n))
    assert "larger than 64 KiB" in state_error(str(path))


def test_a_read_that_never_returns_hits_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hung network filesystem: the read blocks in the kernel. The caller gets an error anyway."""
    path = tmp_path / "s.json"
    path.write_text("{}")
    release = threading.Event()
    real_read = os.read

    def stuck(fd: int, n: int) -> bytes:
        release.wait(BOUND_S)
        return real_read(fd, n)

    monkeypatch.setattr(regular_file.os, "read", stuck)
    monkeypatch.setattr(regular_file, "READ_DEADLINE_S", 0.2)
    try:
        message = state_error(str(path), release.set)
    finally:
        release.set()
    assert "did not finish reading within 0.2 s" in message


def test_many_hostile_calls_at_once_all_return(tmp_path: Path) -> None:
    """45 FIFO loads used to hold 45 worker threads forever; now each is refused at once."""
    fifos = []
    for n in range(50):
        path = tmp_path / f"f{n}"
        os.mkfifo(path)
        fifos.append(path)
    errors: list[KdMcpError] = []
    lock = threading.Lock()

    def load_all(path: Path) -> None:
        try:
            load_state(str(path), env={})
        except KdMcpError as exc:
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=load_all, args=(p,), daemon=True) for p in fifos]
    for t in threads:
        t.start()
    deadline = time.monotonic() + BOUND_S
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    stuck = [p for p, t in zip(fifos, threads, strict=True) if t.is_alive()]
    for path in stuck:
        open_writer(path)()
    assert not stuck, f"{len(stuck)} loads hung"
    assert len(errors) == 50 and all(e.category == "state_file" for e in errors)


def test_config_file_gets_the_same_treatment(fifo: Path) -> None:
    exc = bounded(lambda: load_config(str(fifo), env={}), open_writer(fifo))
    assert isinstance(exc, ConfigError)
    assert "FIFO" in exc.message and "not a regular file" in exc.message


def test_a_regular_file_through_a_symlink_still_loads(tmp_path: Path) -> None:
    """Symlinked dotfiles are common: a link to a regular file is followed."""
    target = tmp_path / "real.json"
    target.write_text('{"schema": "winrm-kd-session-v1", "guest_host": "10.0.0.5", "host_ip": "10.0.0.1", '
                      '"port": 50000, "key": "1.2.3.4"}')
    target.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert load_state(str(link), env={}).state.guest_host == "10.0.0.5"
