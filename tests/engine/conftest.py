"""Engine fixtures: one kd session a module's tests share, where none needs a fresh debugger.

Starting the simulator is most of a process-tier test's time; tests that only send commands
and leave the debugger at its prompt share one session per module instead. The session runs
on the platform's default backend (see ``DEFAULT_BACKEND_ONLY`` in tests/engine/__init__.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kdmcp.engine import DebuggerSession, SessionConfig, SessionState, build_plan, simulator_command
from tests.conftest import kdnet


@pytest.fixture(scope="module")
def _module_kd() -> Iterator[DebuggerSession]:
    plan = build_plan(simulator_command("kd", None), kdnet(), initial_break=True)
    session = DebuggerSession("shared", plan, SessionConfig(backend="auto"))
    session.start(10.0)
    yield session
    session.stop(timeout=5.0)
    session.store.close()


@pytest.fixture
def shared_kd(_module_kd: DebuggerSession) -> Iterator[DebuggerSession]:
    """The module's kd session, at its prompt; a test that leaves it elsewhere is put back."""
    assert _module_kd.state == SessionState.broken
    yield _module_kd
    if _module_kd.state != SessionState.broken:
        _module_kd.break_in()
