"""kdmcp/shutdown.py: every way out runs one shutdown; a second request forces it (fakes, no process).

The real paths -- signals to a serving process, end of input -- are tests/faults/test_exit_paths.py;
Windows' console events are driven here through the registered handler with a fake kernel32.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from kdmcp.console import win32
from kdmcp.shutdown import ServeExit
from tests.console.test_win32 import FakeKernel32

WAIT = 10.0


class FakeApp:
    """What ServeExit needs of KdMcpApp; ``hold`` keeps the shutdown running until released."""

    def __init__(self, hold: bool = False) -> None:
        self.options = SimpleNamespace(config=SimpleNamespace(timeouts=SimpleNamespace(stop=3.0)))
        self.calls: list[tuple[str, str]] = []
        self.release = threading.Event()
        self.started = threading.Event()
        if not hold:
            self.release.set()

    def shutdown(self, reason: str) -> None:
        self.calls.append(("shutdown", reason))
        self.started.set()
        self.release.wait(WAIT)

    def force_shutdown(self, reason: str) -> None:
        self.calls.append(("force", reason))
        self.release.set()  # the forced kills end the stops in progress


class Exits:
    def __init__(self) -> None:
        self.codes: list[int] = []
        self.event = threading.Event()

    def __call__(self, code: int) -> None:
        self.codes.append(code)
        self.event.set()


@pytest.fixture
def handlers() -> Iterator[None]:
    """ServeExit.install replaces the process's handlers: put pytest's back."""
    names = [n for n in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, n)]
    saved = {n: signal.getsignal(getattr(signal, n)) for n in names}
    yield
    for name, handler in saved.items():
        signal.signal(getattr(signal, name), handler)


def _exit(app: FakeApp) -> tuple[ServeExit, Exits]:
    exits = Exits()
    return ServeExit(app, ok=0, forced=130, exit_process=exits), exits  # type: ignore[arg-type]


def test_a_signal_runs_the_shutdown_on_its_own_thread_then_ends_the_process() -> None:
    app = FakeApp()
    ending, exits = _exit(app)
    ending.request("SIGTERM")
    assert exits.event.wait(WAIT) and exits.codes == [0]
    assert app.calls == [("shutdown", "SIGTERM")] and ending.done.is_set()


def test_a_second_request_takes_the_forced_path_and_exits_130() -> None:
    app = FakeApp(hold=True)
    ending, exits = _exit(app)
    ending.request("SIGTERM")
    assert app.started.wait(WAIT)
    ending.request("SIGINT")
    assert exits.event.wait(WAIT) and exits.codes == [130]
    assert app.calls == [("shutdown", "SIGTERM"), ("force", "SIGINT")]


def test_end_of_input_shuts_down_in_the_callers_thread_once() -> None:
    app = FakeApp()
    ending, exits = _exit(app)
    assert ending.finish("end of input") == 0
    assert app.calls == [("shutdown", "end of input")] and exits.codes == []  # the caller returns the code


def test_the_main_thread_waits_for_a_shutdown_a_signal_started() -> None:
    app = FakeApp(hold=True)
    ending, _ = _exit(app)
    ending.request("SIGHUP")
    assert app.started.wait(WAIT)
    threading.Timer(0.05, app.release.set).start()
    assert ending.finish("listener stopped") == 0
    assert app.calls == [("shutdown", "SIGHUP")]  # one shutdown, the signal's


@pytest.mark.parametrize(("event", "name"), [(win32.CTRL_CLOSE_EVENT, "console closed"),
                                             (win32.CTRL_LOGOFF_EVENT, "logoff"),
                                             (win32.CTRL_SHUTDOWN_EVENT, "system shutdown")])
def test_a_console_event_that_ends_the_process_returns_only_once_the_sessions_are_stopped(
        handlers: None, event: int, name: str) -> None:
    """After CTRL_CLOSE_EVENT (and logoff, shutdown) Windows ends the process when the handler
    returns: it must not return before the shutdown is done."""
    app = FakeApp(hold=True)
    ending, exits = _exit(app)
    k = FakeKernel32()
    ending.install(kernel32=k)
    callback = k.calls[-1][1]
    answered: list[Any] = []
    handler = threading.Thread(target=lambda: answered.append(callback(event)))
    handler.start()
    assert app.started.wait(WAIT)
    handler.join(0.2)
    assert handler.is_alive() and not answered  # still stopping: the handler waits
    app.release.set()
    handler.join(WAIT)
    assert answered == [1] and app.calls == [("shutdown", name)]
    assert exits.event.wait(WAIT) and exits.codes == [0]


def test_ctrl_break_starts_the_shutdown_and_returns_at_once(handlers: None) -> None:
    app = FakeApp(hold=True)
    ending, exits = _exit(app)
    k = FakeKernel32()
    ending.install(kernel32=k)
    assert k.calls[-1][0] == "SetConsoleCtrlHandler"
    assert k.calls[-1][1](win32.CTRL_BREAK_EVENT) == 1  # handled; Windows does not end us for it
    assert app.started.wait(WAIT) and app.calls == [("shutdown", "Ctrl+Break")]
    app.release.set()
    assert exits.event.wait(WAIT)


def test_install_routes_sigterm_sigint_and_sighup(handlers: None) -> None:
    ending, _ = _exit(FakeApp())
    ending.install()
    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        assert signal.getsignal(getattr(signal, name)) == ending._on_signal
