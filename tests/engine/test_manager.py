"""SessionManager: ids, the session limit, lookup, ended sessions."""

from __future__ import annotations

import pytest

from kdmcp.engine import KdnetTarget, SessionState, build_plan, simulator_command
from kdmcp.errors import CapacityError, UnknownSession
from kdmcp.secret import Secret
from tests.engine import DEFAULT_BACKEND_ONLY

# Starts processes (tests/tiers.py); bookkeeping, not I/O, so the default backend alone.
pytestmark = [pytest.mark.process, DEFAULT_BACKEND_ONLY]


def _plan(port: int):
    return build_plan(simulator_command("kd"), KdnetTarget(port=port, key=Secret("1.2.3.4")), initial_break=True)


def test_four_sessions_at_once_and_a_fifth_is_refused(manager):
    sessions = [manager.create(_plan(50000 + i)) for i in range(4)]
    for s in sessions:
        assert s.start(10).state == SessionState.broken
    assert sorted(s.session_id for s in sessions) == ["s1", "s2", "s3", "s4"]
    with pytest.raises(CapacityError, match=r"4 sessions are live, the limit \(max_sessions 4\)") as info:
        manager.create(_plan(50009))
    assert info.value.category == "capacity"
    # Each session answers on its own, in parallel processes.
    for i, s in enumerate(sessions):
        assert s.execute(f".echo from {i}").output.strip() == f"from {i}"
    # Stopping one frees a slot.
    manager.stop("s2")
    fifth = manager.create(_plan(50010))
    assert fifth.session_id == "s5"


def test_lookup_rules(manager):
    with pytest.raises(UnknownSession, match="no session is live"):
        manager.get()
    first = manager.create(_plan(50000))
    first.start(10)
    assert manager.get() is first  # the only live session needs no id
    second = manager.create(_plan(50001))
    second.start(10)
    with pytest.raises(UnknownSession, match="name one with session_id"):
        manager.get()
    with pytest.raises(UnknownSession, match="no session 's99'"):
        manager.get("s99")
    assert manager.get("s2") is second


def test_ended_sessions_stay_readable_but_free_their_slot(manager):
    s = manager.create(_plan(50000))
    s.start(10)
    r = s.execute(".echo keep me")
    result = manager.stop("s1")
    assert result.state == SessionState.exited
    with pytest.raises(UnknownSession):
        manager.get("s1")
    ended = manager.get("s1", include_ended=True)
    assert b"keep me" in ended.read_output(r.output_offset, r.output_end - r.output_offset)
    infos = {i.session_id: i for i in manager.infos()}
    assert infos["s1"].state == SessionState.exited and "key=***" in infos["s1"].command_line


def test_a_debugger_that_died_frees_its_slot(manager):
    manager.max_sessions = 1
    s = manager.create(build_plan(simulator_command("kd", None), KdnetTarget(port=1, key=Secret("1.2.3.4")),
                                  initial_break=True))
    s.start(10)
    s._console.terminate(force=True)  # the debugger dies on its own
    assert s.wait_for(lambda: s.state == SessionState.exited, 10)
    manager.create(_plan(50001))  # no CapacityError


def test_sessions_are_invisible_to_other_owners(manager):
    alice = manager.create(_plan(50000), owner="alice")
    alice.start(10)
    bob = manager.create(_plan(50001), owner="bob")
    bob.start(10)
    assert manager.get(owner="alice") is alice and manager.get(owner="bob") is bob
    with pytest.raises(UnknownSession, match="no session 's2'"):
        manager.get("s2", owner="alice")
    with pytest.raises(UnknownSession):
        manager.get("s1")  # the stdio owner (None) sees neither
    with pytest.raises(UnknownSession):
        manager.stop("s1", owner="bob")
    assert [i.session_id for i in manager.infos(owner="alice")] == ["s1"]
    manager.max_sessions = 2
    with pytest.raises(CapacityError) as info:
        manager.create(_plan(50002), owner="carol")
    assert "s1" not in info.value.message and "s2" not in info.value.message  # others' ids stay hidden
    manager.stop("s1", owner="alice")
    assert manager.get("s1", include_ended=True, owner="alice").state == SessionState.exited
    with pytest.raises(UnknownSession):
        manager.get("s1", include_ended=True, owner="bob")
