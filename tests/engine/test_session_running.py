"""Go-class commands, asynchronous output while running, break-in, reboot, transport loss."""

from __future__ import annotations

import pytest

from kdmcp.engine import SessionState
from kdmcp.errors import CommandTimeout, InvalidArgument

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)


def _kinds(events):
    return [e.kind for e in events]


def test_go_confirms_running_then_break_in(make_session):
    s = make_session()
    c = s.go()
    assert c.state == SessionState.running and c.confirmed == "running"
    b = s.break_in()
    assert b.state == SessionState.broken
    assert "break_in" in _kinds(b.events)
    assert b.prompt is not None and b.prompt.text == "0: kd> "
    assert s.break_in().already_broken


def test_go_class_forms_go_through_kd_command(make_session):
    s = make_session()
    for form in ["g", "gh", "gn", "~0 g", "r; g"]:
        r = s.execute(form)
        assert r.kind == "go" and r.state == SessionState.running, form
        s.break_in()
    with pytest.raises(InvalidArgument):
        s.go("r")


@pytest.mark.parametrize("form", [".block { g }", "j 1 'g';'r'", ".if (1) { gh }", '.foreach /s (x "g") {x}'])
def test_a_go_inside_a_block_a_branch_or_a_body_is_confirmed_running(make_session, form):
    """The one reader sees the g: no marker is sent, so no false timeout or busy state."""
    s = make_session()
    r = s.execute(form, timeout=5.0)
    assert r.kind == "go" and r.state == SessionState.running and r.output == "", form
    assert s.break_in().state == SessionState.broken


def test_a_go_class_line_that_stops_at_once_returns_its_output(make_session):
    """``j 0 'g';'r'`` takes the branch without g: kd is back at its prompt with the output."""
    s = make_session()
    r = s.execute("j 0 'g';'.echo not-taken'", timeout=5.0)
    assert r.kind == "go" and r.state == SessionState.broken
    assert r.output.strip() == "not-taken"
    assert s.execute("r").state == SessionState.broken


def test_the_rest_of_a_line_after_g_runs_at_the_next_stop(make_session):
    s = make_session()
    assert s.execute("g; .echo back-again").state == SessionState.running
    s.break_in()
    assert b"back-again" in s.store.read(0, s.store.size)


def test_dbgprint_and_breakpoint_while_running(make_session):
    s = make_session(scenario_name="running")
    s.go()
    assert s.wait_for(lambda: s.state == SessionState.broken, 5.0)
    events = s.events_since(0)
    prints = [e.text for e in events if e.kind == "dbgprint"]
    assert any("EchoDriver: DriverEntry called" in t for t in prints)
    assert any("AddDevice 0xffffc50e`3a1b2c30" in t for t in prints)
    bp = [e for e in events if e.kind == "breakpoint"]
    assert bp and bp[-1].breakpoint == 0
    # The stop's own lines are not DbgPrint output.
    assert not any("Breakpoint 0 hit" in t for t in prints)
    assert s.execute("k").state == SessionState.broken


def test_bugcheck_stop_is_an_event_with_its_code(make_session):
    s = make_session(scenario_name="bugcheck")
    s.go()
    assert s.wait_for(lambda: s.state == SessionState.broken, 5.0)
    bugchecks = [e for e in s.events_since(0) if e.kind == "bugcheck"]
    assert bugchecks and bugchecks[0].code == "0x000000d1"
    assert "*** Fatal System Error: 0x000000d1" in bugchecks[0].text


def test_reboot_command_goes_rebooting_then_back(make_session):
    s = make_session(scenario_name="reboot")
    r = s.execute(".reboot")
    assert r.kind == "reboot"
    assert s.wait_for(lambda: s.state == SessionState.broken, 5.0)  # -b: breaks again after reconnect
    kinds = _kinds(s.events_since(0))
    assert "reboot" in kinds and "reconnecting" in kinds
    assert kinds.count("connected") == 2
    assert s.execute("r").state == SessionState.broken


def test_guest_reboot_while_running(make_session):
    s = make_session(scenario_name="reboot", initial_break=False)
    s.break_in()
    s.go()
    # rebooting and reconnecting are passed through as the banner lines arrive.
    assert s.wait_for(lambda: "reboot" in _kinds(s.events_since(0)), 5.0)
    assert s.wait_for(lambda: s.state == SessionState.running and s.events_since(0)[-1].kind == "connected", 5.0)
    kinds = _kinds(s.events_since(0))
    assert kinds.index("reboot") < kinds.index("reconnecting") < len(kinds) - 1


def test_transport_loss_then_reconnect(make_session):
    s = make_session(scenario_name="transport")
    s.go()
    # lost, then reconnecting as soon as kd prints "Waiting to reconnect...".
    assert s.wait_for(lambda: "transport_lost" in _kinds(s.events_since(0)), 5.0)
    assert s.wait_for(lambda: s.state == SessionState.broken, 5.0)
    kinds = _kinds(s.events_since(0))
    lost = kinds.index("transport_lost")
    assert kinds[lost:].index("reconnecting") < kinds[lost:].index("connected")


def test_hang_times_out_with_partial_output_then_break_in_recovers(make_session):
    s = make_session(scenario_name="faults")
    with pytest.raises(CommandTimeout) as info:
        s.execute("!hang", timeout=0.5)
    assert "Scanning pool..." in info.value.partial_output
    assert s.state == SessionState.busy
    b = s.break_in()
    assert b.state == SessionState.broken
    assert s.execute(".echo alive").output.strip() == "alive"


def test_ctrl_c_cancels_long_output(make_session):
    s = make_session(scenario_name="faults")
    with pytest.raises(CommandTimeout):
        s.execute("!bulk100", timeout=0.2)
    s.break_in()
    assert s.store.size < 100 * 1024 * 1024
    assert s.execute(".echo after").output.strip() == "after"


def test_debugger_death_mid_output_keeps_output(make_session):
    from kdmcp.errors import DebuggerExited

    s = make_session(scenario_name="faults")
    before = s.store.size
    with pytest.raises(DebuggerExited):
        s.execute("!crash")
    assert s.state == SessionState.exited and s.exit_code == 3
    tail = s.read_output(before, s.store.size - before).decode()
    assert "Loading extension...\r\nWalking 4096 entries" in tail or "Loading extension...\nWalking 4096" in tail
    assert any(e.kind == "exited" for e in s.events_since(0))


def test_stop_resumes_live_kernel_target_first(make_session):
    s = make_session()
    result = s.stop()
    assert result.actions[0] == "resumed target"
    assert "terminated" not in result.actions and "killed" not in result.actions
    assert result.state == SessionState.exited and result.exit_code == 0


def test_stop_kills_a_hard_hung_debugger(make_session):
    s = make_session(scenario_name="faults")
    with pytest.raises(CommandTimeout):
        s.execute("!hardhang", timeout=0.3)
    with pytest.raises(CommandTimeout):
        s.break_in(0.3)
    result = s.stop(timeout=3.0)
    assert result.state == SessionState.exited
    assert "terminated" in result.actions or "killed" in result.actions


def test_break_in_reports_no_spurious_dbgprint(make_session):
    s = make_session(initial_break=False)
    b = s.break_in()
    assert _kinds(b.events) == ["break_in"]
    s.go()
    b = s.break_in()
    assert _kinds(b.events) == ["break_in"]
