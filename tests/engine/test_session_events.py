"""Issue 29's events end to end: ``DebuggerSession`` over a real console against the simulator,
which prints them in real sessions' words (kdmcp/sim: the program that exits, the load notice,
the bugcheck sequence). The machine's side is proven byte by byte in test_machine_events.py and
against published logs in test_session_replay.py; here the session, its console and its commands
carry them."""

from __future__ import annotations

import pytest

from kdmcp.engine import ProcessTarget, SessionState
from tests.engine import DEFAULT_BACKEND_ONLY

pytestmark = pytest.mark.process  # starts the simulator (tests/tiers.py)

APP = "C:\\target\\app.exe"


def _run_to_stop(s, command: str = "g"):
    seq = s.last_event_seq
    s.go(command)
    assert s.wait_for(lambda: s.state == SessionState.broken, 10.0), s.state
    return [e for e in s.events_since(seq)]


@DEFAULT_BACKEND_ONLY
def test_a_program_that_ends(make_session):
    s = make_session(target=ProcessTarget(command_line=[APP]), scenario_name="program_exits", flavor="cdb")
    assert s.state == SessionState.broken
    s.execute("sxn ud")  # cdb prints unloads only when asked ("ud - Unload module - ignore")
    events = _run_to_stop(s)
    kinds = [e.kind for e in events]
    assert "dbgprint" not in kinds
    loads = [e for e in events if e.kind == "module_load"]
    assert loads[-1].module == "C:\\target\\plugin.dll" and loads[-1].base == "00007ffc`7f9a0000"
    exc = next(e for e in events if e.kind == "exception")
    assert (exc.code, exc.first_chance, exc.stopped) == ("0xe06d7363", True, False)  # the program went on
    unload = next(e for e in events if e.kind == "module_unload")
    assert unload.module == "C:\\target\\plugin.dll" and not unload.stopped
    assert kinds[-1] == "process_exit" and events[-1].stopped
    # after the exit, g is refused: no second exit, nothing printed counts as the target's
    again = _run_to_stop(s)
    assert [e.kind for e in again] == []


@DEFAULT_BACKEND_ONLY
def test_sxe_et_stops_at_the_workers_exit(make_session):
    s = make_session(target=ProcessTarget(command_line=[APP]), scenario_name="program_exits", flavor="cdb")
    s.execute("sxe et")
    events = _run_to_stop(s)
    assert events[-1].kind == "thread_exit" and events[-1].stopped
    assert _run_to_stop(s)[-1].kind == "process_exit"


@DEFAULT_BACKEND_ONLY
def test_kd_sxe_ld_stops_at_the_load_and_a_resuming_filter_prints_no_dbgprint(make_session):
    s = make_session()
    s.execute("sxe ld:sampledrv.sys")
    events = _run_to_stop(s)
    assert events[-1].kind == "module_load" and events[-1].stopped
    assert events[-1].text.startswith("nt!DebugService2+0x5:")

    k = make_session()
    k.execute('sxe -c ".lastevent ; g" ld')
    seq = k.last_event_seq
    k.go()
    assert k.wait_for(lambda: any(e.kind == "module_load" for e in k.events_since(seq)), 10.0)
    load = next(e for e in k.events_since(seq) if e.kind == "module_load")
    assert (load.module, load.base, load.stopped) == ("sampledrv.sys", "fffff800`60db0000", False)
    assert not [e for e in k.events_since(seq) if e.kind == "dbgprint" and "debugger time" in e.text]
    assert k.state == SessionState.running


@DEFAULT_BACKEND_ONLY
def test_a_bugcheck_stays_the_reason_and_g_only_breaks_again(make_session):
    s = make_session(scenario_name="bugcheck_mp")
    events = _run_to_stop(s)
    assert [e.kind for e in events] == ["bugcheck"] and events[0].stopped and events[0].code == "0x000000d1"
    assert s.prompt is not None and s.prompt.text == "1: kd> "
    assert _run_to_stop(s) == []  # kd's break again: still the bugcheck, no break_in
