"""The loop: one frame with --once or without a terminal; a live view redrawn as the log grows; Ctrl+C is 0."""

from __future__ import annotations

import io
import threading

import pytest
from rich.console import Console

from kdmcp.watch import WatchRefused, run_watch
from tests.watch.helpers import write_private, write_transcript


class Ticks(threading.Event):
    """A stop event that drives the loop by hand: ``on_wait(n)`` runs at the n-th wait, instead of time passing."""

    def __init__(self, on_wait) -> None:
        super().__init__()
        self.waits = 0
        self._on_wait = on_wait

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None and 0 < timeout <= 1  # bounded: the loop never spins, never hangs
        self.waits += 1
        self._on_wait(self, self.waits)
        return self.is_set()


def a_console(terminal: bool) -> Console:
    return Console(
        file=io.StringIO(), width=100, height=30, force_terminal=terminal, color_system=None, legacy_windows=False
    )


def test_once_prints_one_frame(tmp_path):
    console = a_console(terminal=True)
    assert run_watch(write_transcript(tmp_path), once=True, lines=4, console=console) == 0
    out = console.file.getvalue()
    assert out.count("kd-mcp watch") == 1 and "last 4 of" in out and "\x1b[?1049h" not in out  # no alternate screen


def test_without_a_terminal_it_prints_one_frame_as_once_does(tmp_path):
    console = a_console(terminal=False)
    stop = Ticks(lambda ev, n: pytest.fail("a pipe must not be fed frames forever"))
    assert run_watch(write_transcript(tmp_path), console=console, stop=stop) == 0
    assert console.file.getvalue().count("kd-mcp watch") == 1


def test_the_live_view_shows_what_arrives_while_it_runs(tmp_path):
    path = write_transcript(tmp_path)

    def on_wait(stop: Ticks, n: int) -> None:
        if n == 1:  # the target prints while running: the server's flusher appends it to the log
            write_private(tmp_path / "run.jsonl.s1.log", "EchoDriver: DriverEntry called\r\n")
        else:
            stop.set()

    console = a_console(terminal=True)
    stop = Ticks(on_wait)
    assert run_watch(path, console=console, stop=stop, interval=0.01) == 0
    out = console.file.getvalue()
    assert stop.waits == 2 and "\x1b[?1049h" in out  # an alternate screen, like top
    assert "EchoDriver: DriverEntry called" in out.rsplit("kd-mcp watch", 1)[1]  # in the last frame


def test_ctrl_c_ends_the_live_view_with_0(tmp_path):
    def interrupt(stop: Ticks, n: int) -> None:
        raise KeyboardInterrupt

    assert run_watch(write_transcript(tmp_path), console=a_console(terminal=True), stop=Ticks(interrupt)) == 0


def test_a_missing_transcript_is_refused_before_anything_is_drawn(tmp_path):
    console = a_console(terminal=True)
    with pytest.raises(WatchRefused):
        run_watch(tmp_path / "none.jsonl", console=console)
    assert console.file.getvalue() == ""
