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


BL_ROW = "     0 e Disable Clear  fffff800`62c3a1e0     0001 (0001) nt!NtCreateFile"


def test_commands_before_g_are_the_commands_answer_and_what_the_target_prints_is_dbgprint(make_session):
    # kd prints the commands' output, then runs the target: a marker between them says where one ends
    s = make_session()
    seq = s.last_event_seq
    r = s.execute("bp nt!NtCreateFile; bl; g")
    assert r.kind == "go" and r.output.splitlines() == [BL_ROW], r.output
    whole = s.read_output(r.output_offset, r.output_end - r.output_offset).decode()
    assert BL_ROW in whole and "KDMCP" not in whole.split(BL_ROW)[1]  # the range ends before the marker
    assert s.wait_for(lambda: s.state == SessionState.broken, 10.0), s.state
    events = s.events_since(seq)
    prints = [e.text for e in events if e.kind == "dbgprint"]
    assert prints == ["myfault: IOCTL 0x83362000 received\r\n"], prints  # the target's, after the marker
    assert events[-1].kind == "breakpoint" and events[-1].stopped


@DEFAULT_BACKEND_ONLY
def test_an_error_before_g_ends_the_line_and_the_target_never_runs(make_session):
    # "If .catch is not used, an error will terminate the entire debugger command program" (.catch)
    s = make_session()
    seq = s.last_event_seq
    r = s.execute("r foo; g")
    assert r.state == SessionState.broken and r.output.strip() == "^ Bad register error in 'r foo'", r.output
    assert s.events_since(seq) == []
    caught = s.execute(".catch { r foo; r rip }; .echo after")  # .catch goes on after its block
    assert "Bad register error" in caught.output and "rip=" not in caught.output and "after" in caught.output


@DEFAULT_BACKEND_ONLY
def test_commands_before_a_step_then_the_step_event(make_session):
    s = make_session()
    s.execute("bp nt!NtCreateFile")
    s.go()
    assert s.wait_for(lambda: s.state == SessionState.broken, 10.0)
    seq = s.last_event_seq
    r = s.execute(".echo stepping; p")
    assert r.output.strip() == "stepping"
    assert s.wait_for(lambda: s.state == SessionState.broken, 10.0)
    assert [(e.kind, e.text.splitlines()[0]) for e in s.events_since(seq)] == [("step", "nt!NtCreateFile+0x5:")]
