"""SessionManager's bookkeeping of who holds the slots and who has not used a session for a while.

No debugger is started: ``create`` only reserves a slot (``start`` spawns), so these run in the
fast tier with fake plans; the sessions made are stopped before the manager goes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kdmcp.console import SpawnSpec
from kdmcp.engine import KdnetTarget, build_plan
from kdmcp.engine.manager import SessionManager
from kdmcp.errors import CapacityError
from kdmcp.secret import Secret


def _no_console(spec: SpawnSpec, backend: str) -> object:
    raise AssertionError("these tests start no debugger")


@pytest.fixture
def manager() -> Iterator[SessionManager]:
    made = SessionManager(max_sessions=3, console_factory=_no_console)  # type: ignore[arg-type]
    yield made
    for info in made.all_infos():
        session = made.session_of(info.session_id)
        if session is not None:
            session.store.close()


def _plan(port: int = 50000):
    return build_plan(["kd.exe"], KdnetTarget(port=port, key=Secret("1.2.3.4")), initial_break=True)


def test_the_limit_error_says_which_sessions_hold_the_slots_and_what_frees_one(manager: SessionManager) -> None:
    manager.create(_plan(), owner="alice")
    manager.create(_plan(), owner="bob")
    manager.create(_plan(), owner="alice")
    with pytest.raises(CapacityError) as mine:
        manager.create(_plan(), owner="alice")
    assert mine.value.message == (
        "3 sessions are live, the limit (max_sessions 3): yours: s1 (kdnet, starting), s3 (kdnet, starting); "
        "1 of another client's; stop_kd session_id=s1 (or another of yours) frees a slot")
    with pytest.raises(CapacityError) as theirs:
        manager.create(_plan(), owner="carol")
    assert theirs.value.message == (
        "3 sessions are live, the limit (max_sessions 3): 3 of other clients'; only their clients can stop "
        "them (or the server's idle stop, docs/remote-listener.md)")


def test_idle_sessions_are_a_named_owners_unused_ones(manager: SessionManager) -> None:
    manager.create(_plan(), owner="alice")  # s1
    manager.create(_plan(), owner=None)  # s2: the stdio client's, which ends with its client
    manager.create(_plan(), owner="bob")  # s3
    now = manager._used["s3"]
    assert manager.idle(60, now=now + 59) == []
    assert sorted(manager.idle(60, now=now + 61)) == [("s1", "alice"), ("s3", "bob")]
    manager.get("s1", owner="alice")  # a use: the clock starts again
    used = manager._used["s1"]
    assert manager.idle(60, now=used + 30) == []
    assert manager.idle(60, now=used + 61) == [("s1", "alice"), ("s3", "bob")]
