"""kdmcp/console/lifetime.py: debuggers die with the server.

The whole guarantee (``kill -9`` of a serving process with busy, hung and frozen debuggers) is
tests/faults/test_exit_paths.py; here its parts: the spawner thread, the parent-death hook and
why every fork goes through that thread (the Windows job: tests/console/test_win32.py).
"""

from __future__ import annotations

import sys
import threading

import pytest

from kdmcp.console import SpawnSpec, lifetime, open_console
from kdmcp.console.process_wait import wait_for_exit


def test_every_fork_runs_on_one_long_lived_thread() -> None:
    names = {lifetime.on_spawner_thread(lambda: threading.current_thread().name) for _ in range(3)}
    assert names == {"kdmcp-spawner"}


def test_the_spawner_hands_back_the_work_s_exception() -> None:
    def fails() -> None:
        raise OSError("no such debugger")

    with pytest.raises(OSError, match="no such debugger"):
        lifetime.on_spawner_thread(fails)
    assert lifetime.on_spawner_thread(lambda: 42) == 42  # and goes on serving


def test_no_parent_death_hook_where_the_system_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert lifetime.die_with_parent() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_hook_is_prctl_on_linux() -> None:
    assert callable(lifetime.die_with_parent())


@pytest.mark.process  # starts debuggers (tests/tiers.py)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("backend", ["pexpect", "pipe"])
def test_a_debugger_outlives_the_pool_thread_that_asked_for_it(backend: str) -> None:
    """The parent-death signal fires when the *forking thread* ends: tools run on pool threads
    that are retired when idle, so a debugger forked there would die minutes into a session."""
    started: list[object] = []
    asker = threading.Thread(target=lambda: started.append(open_console(
        SpawnSpec(argv=[sys.executable, "-c", "import time; time.sleep(60)"]), backend)))  # type: ignore[arg-type]
    asker.start()
    asker.join(30)
    console = started[0]
    assert not asker.is_alive()
    try:
        assert not wait_for_exit(console.pid, 0.5)  # type: ignore[attr-defined]  # alive after its asker ended
    finally:
        console.terminate(force=True)  # type: ignore[attr-defined]
        assert console.wait(10) is not None  # type: ignore[attr-defined]
        console.close()  # type: ignore[attr-defined]
