"""PipeConsole against real child processes (tiny Python programs with known behaviour)."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kdmcp.console.base import OUTPUT_BUFFER_LIMIT, Console, ConsoleClosed, ConsoleError, SpawnSpec
from kdmcp.console.pipe_backend import READ_CHUNK, PipeConsole, spawn

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="drives POSIX signals on real children"),
    pytest.mark.process,  # starts processes (tests/tiers.py)
]

WAIT = 10.0  # upper bound for any single wait in these tests

# An echo loop with a prompt, like a debugger: prints "> ", answers "got: LINE".
ECHO_WITH_PROMPT = """
import sys
while True:
    sys.stdout.write("> ")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line or line.strip() == "quit":
        break
    print("got: " + line.rstrip("\\n"), flush=True)
"""

# Prints LINES numbered lines (about 1.3 MB), then exits.
PRINT_A_LOT = """
import sys
out = sys.stdout
for i in range(LINES):
    out.write("line %06d " % i + "x" * 50 + "\\n")
out.flush()
"""
LINES = 20000


def expected_lot() -> bytes:
    return b"".join(b"line %06d " % i + b"x" * 50 + b"\n" for i in range(LINES))


# Turns SIGINT into a line of output, as kd turns Ctrl+C into a break-in.
SIGINT_PRINTS = """
import signal, sys
def on_int(signum, frame):
    print("interrupted", flush=True)
signal.signal(signal.SIGINT, on_int)
print("ready", flush=True)
for line in sys.stdin:
    pass
"""

# Same, but the SIGINT handler lives in a grandchild: the whole process group must get it.
GRANDCHILD_SIGINT = f"""
import signal, subprocess, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the grandchild may answer
subprocess.run([sys.executable, "-c", {SIGINT_PRINTS!r}])
"""

EXIT_3 = """
print("bye", flush=True)
raise SystemExit(3)
"""

IGNORES_SIGTERM = """
import signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
sys.stdin.read()
"""

SHOW_ENV = """
import os
token, extra = os.environ.get("FOO_TOKEN"), os.environ.get("KDMCP_EXTRA")
print("FOO_TOKEN=%s KDMCP_EXTRA=%s" % (token, extra), flush=True)
"""


def python(program: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(program)]


@pytest.fixture
def start() -> Iterator[Callable[..., PipeConsole]]:
    """Start children; afterwards kill whatever is still running and release its pipes."""
    consoles: list[PipeConsole] = []

    def _start(program: str, **spec_args: object) -> PipeConsole:
        console = PipeConsole.spawn(SpawnSpec(argv=python(program), **spec_args))
        consoles.append(console)
        return console

    yield _start
    for console in consoles:
        if console.is_alive():
            console.terminate(force=True)
        assert console.wait(WAIT) is not None, f"pid {console.pid} survived SIGKILL"
        console.close()


def read_until(console: Console, needle: bytes, timeout: float = WAIT) -> bytes:
    """Everything read until ``needle`` appears; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    data = b""
    while needle not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"{needle!r} not seen within {timeout} s; got {data[-200:]!r}")
        data += console.read(65536, remaining)
    return data


def read_to_end(console: Console, max_bytes: int = 65536, timeout: float = WAIT) -> bytes:
    """Everything until ConsoleClosed; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"no end of output within {timeout} s; got {len(data)} bytes")
        try:
            chunk = console.read(max_bytes, remaining)
        except ConsoleClosed:
            return data
        assert len(chunk) <= max_bytes
        data += chunk


def test_is_a_console_without_echo(start: Callable[..., PipeConsole]) -> None:
    console = start(ECHO_WITH_PROMPT)
    assert isinstance(console, Console)
    assert console.echoes_input is False
    assert console.pid > 0


def test_prompt_write_and_answer(start: Callable[..., PipeConsole]) -> None:
    console = start(ECHO_WITH_PROMPT)
    assert read_until(console, b"> ") == b"> "
    console.write(b"hello\n")
    # No echo of the typed line: the answer follows the prompt directly.
    assert read_until(console, b"> ") == b"got: hello\n> "
    console.write(b"first\nsecond\n")
    assert read_until(console, b"got: second\n> ").endswith(b"got: first\n> got: second\n> ")


def test_end_of_output_raises_console_closed_after_all_data(start: Callable[..., PipeConsole]) -> None:
    console = start(ECHO_WITH_PROMPT)
    read_until(console, b"> ")
    console.write(b"last words\nquit\n")
    assert read_to_end(console) == b"got: last words\n> "
    with pytest.raises(ConsoleClosed):
        console.read(10, 0.01)  # and it stays closed
    assert console.wait(WAIT) == 0


def test_large_output_is_complete_and_bounded_by_max_bytes(start: Callable[..., PipeConsole]) -> None:
    console = start(PRINT_A_LOT.replace("LINES", str(LINES)))
    assert read_to_end(console, max_bytes=4096) == expected_lot()
    assert console.wait(WAIT) == 0


def test_read_ahead_is_bounded_and_loses_nothing(start: Callable[..., PipeConsole]) -> None:
    """~1.3 MB: the reader buffers at most its limit, then the child waits for us; nothing is lost."""
    console = start(PRINT_A_LOT.replace("LINES", str(LINES)))
    assert len(expected_lot()) > OUTPUT_BUFFER_LIMIT + 2 * READ_CHUNK
    assert console.wait(0.5) is None  # blocked on a full pipe while nobody reads
    assert len(console._output._buf) <= OUTPUT_BUFFER_LIMIT + READ_CHUNK
    assert read_to_end(console) == expected_lot()
    assert console.wait(WAIT) == 0


def test_read_times_out_with_empty_bytes(start: Callable[..., PipeConsole]) -> None:
    console = start(SIGINT_PRINTS)
    read_until(console, b"ready\n")
    began = time.monotonic()
    assert console.read(100, 0.05) == b""
    assert console.read(100, 0) == b""
    assert time.monotonic() - began < WAIT / 2


def test_read_rejects_a_useless_size(start: Callable[..., PipeConsole]) -> None:
    console = start(SIGINT_PRINTS)
    with pytest.raises(ValueError):
        console.read(0, 0.01)


def test_interrupt_delivers_sigint(start: Callable[..., PipeConsole]) -> None:
    console = start(SIGINT_PRINTS)
    read_until(console, b"ready\n")
    console.interrupt()
    read_until(console, b"interrupted\n")
    console.interrupt()
    read_until(console, b"interrupted\n")
    assert console.is_alive()


def test_interrupt_reaches_the_whole_process_group(start: Callable[..., PipeConsole]) -> None:
    console = start(GRANDCHILD_SIGINT)
    read_until(console, b"ready\n")
    assert os.getpgid(console.pid) == console.pid  # a session (and group) of its own
    console.interrupt()
    read_until(console, b"interrupted\n")


def test_exit_status(start: Callable[..., PipeConsole]) -> None:
    console = start(EXIT_3)
    assert read_to_end(console) == b"bye\n"
    assert console.wait(WAIT) == 3
    assert console.exit_status() == 3
    assert not console.is_alive()


def test_exit_status_is_none_while_running(start: Callable[..., PipeConsole]) -> None:
    console = start(SIGINT_PRINTS)
    assert console.exit_status() is None
    assert console.wait(0.01) is None
    assert console.is_alive()


def test_terminate_sends_sigterm(start: Callable[..., PipeConsole]) -> None:
    console = start(ECHO_WITH_PROMPT)
    read_until(console, b"> ")
    console.terminate()
    assert console.wait(WAIT) == -signal.SIGTERM


def test_terminate_force_kills_a_child_that_ignores_sigterm(start: Callable[..., PipeConsole]) -> None:
    console = start(IGNORES_SIGTERM)
    read_until(console, b"ready\n")
    console.terminate()
    assert console.wait(0.3) is None, "the child was meant to ignore SIGTERM"
    console.terminate(force=True)
    assert console.wait(WAIT) == -signal.SIGKILL
    console.terminate(force=True)  # already gone: not an error


def test_interrupt_and_write_after_exit_are_errors(start: Callable[..., PipeConsole]) -> None:
    console = start(EXIT_3)
    read_to_end(console)
    assert console.wait(WAIT) == 3
    with pytest.raises(ConsoleError):
        console.interrupt()
    with pytest.raises(ConsoleError):
        console.write(b"anyone?\n")  # nobody reads the pipe any more: EPIPE
    console.close()
    with pytest.raises(ConsoleError):
        console.write(b"anyone?\n")  # our end is closed


def test_secrets_are_not_inherited(
    start: Callable[..., PipeConsole], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOO_TOKEN", "canary-8d1f")
    console = start(SHOW_ENV, env={"KDMCP_EXTRA": "extra-1"})
    out = read_to_end(console)
    assert out == b"FOO_TOKEN=None KDMCP_EXTRA=extra-1\n"
    assert b"canary-8d1f" not in out


def test_working_directory(start: Callable[..., PipeConsole], tmp_path: Path) -> None:
    console = start("import os; print(os.getcwd(), flush=True)", cwd=str(tmp_path))
    assert read_to_end(console).strip() == os.fsencode(os.path.realpath(tmp_path))


def test_missing_program_is_a_console_error_that_hides_the_arguments() -> None:
    with pytest.raises(ConsoleError) as info:
        spawn(SpawnSpec(argv=["/nonexistent/kd.exe", "-k", "net:port=50000,key=1.2.3.4"]))
    assert "/nonexistent/kd.exe" in str(info.value)
    assert "1.2.3.4" not in str(info.value)


def test_empty_argv_is_a_console_error() -> None:
    with pytest.raises(ConsoleError):
        PipeConsole.spawn(SpawnSpec(argv=[]))


def test_close_after_exit_joins_the_reader(start: Callable[..., PipeConsole]) -> None:
    console = start(EXIT_3)
    read_to_end(console)
    assert console.wait(WAIT) == 3
    console.close()
    console.close()  # idempotent
