"""Engine against the simulator: connect, prompts, commands, markers, echo handling."""

from __future__ import annotations

import time

import pytest

from kdmcp.engine import SessionState
from kdmcp.errors import CommandTimeout, InvalidArgument, NotConnected, TargetRunning
from tests.conftest import kdnet

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)


def test_initial_break_gives_smp_prompt_and_commands_complete(make_session):
    s = make_session()
    assert s.state == SessionState.broken
    assert s.prompt is not None and s.prompt.text == "0: kd> " and s.prompt.processor == 0
    r = s.execute("r")
    assert r.state == SessionState.broken
    assert r.output.startswith("rax=0000000000000000 rbx=fffff80062f25180")
    assert "nt!DbgBreakPointWithStatus:" in r.output
    # The echo of the command and of the marker never reaches the caller.
    assert "KDMCP" not in r.output and not r.output.startswith("r\r\n")
    assert r.prompt is not None and r.prompt.text == "0: kd> "


def test_processor_switch_changes_prompt(make_session):
    s = make_session()
    r = s.execute("~3s")
    assert r.prompt is not None and r.prompt.text == "3: kd> " and r.prompt.processor == 3
    assert "nt!KiIdleLoop" in r.output
    assert s.execute("~0s").prompt.processor == 0  # type: ignore[union-attr]


def test_uniprocessor_prompt(make_session):
    key = "2steg4fzbj2sz.3tqgjxx3kdz6y.1thq6ipbwyebm.2y9aa2z6g1tdk"
    s = make_session(target=kdnet(50005, key), scenario_name="strict_key")
    assert s.state == SessionState.broken
    assert s.prompt is not None and s.prompt.text == "kd> " and s.prompt.processor is None


def test_effective_machine_prompt(make_session):
    s = make_session()
    r = s.execute(".effmach x86")
    assert r.prompt is not None and r.prompt.text == "0: kd:x86> " and r.prompt.machine == "x86"
    assert "Effective machine: x86 compatible (x86)" in r.output


def test_marker_survives_prompt_like_text_and_fake_markers(make_session):
    s = make_session(scenario_name="faults")
    r = s.execute("!fakeprompt")
    assert r.output.replace("\r\n", "\n") == (
        "line one\n0: kd> \n0: kd> .echo KDMCPDEADBEEF\nKDMCPDEADBEEF\nkd> lkd> 0:000> \nlast line\n"
    )
    assert s.execute(".echo next").output.strip() == "next"


def test_unknown_command_is_kd_syntax_error_not_a_hang(make_session):
    s = make_session()
    r = s.execute("frobnicate 12")
    assert "Syntax error in 'frobnicate 12'" in r.output
    assert r.state == SessionState.broken


def test_rejects_unsendable_commands(make_session):
    s = make_session()
    for bad in ["", "   ", "r\nk", "r\rk", "r\x03", "r\x02", "x" * 5000]:
        with pytest.raises(InvalidArgument):
            s.execute(bad)
    with pytest.raises(InvalidArgument, match="stop"):
        s.execute("q")
    assert s.execute(".echo still fine").output.strip() == "still fine"


def test_target_running_after_connect_without_initial_break(make_session):
    s = make_session(initial_break=False)
    assert s.state == SessionState.running
    assert any(e.kind == "connected" for e in s.events_since(0))
    with pytest.raises(TargetRunning):
        s.execute("r")
    b = s.break_in()
    assert b.state == SessionState.broken and not b.already_broken
    assert any(e.kind == "break_in" for e in b.events)
    assert s.execute("r").state == SessionState.broken


def test_a_lost_break_in_request_is_sent_again(make_session):
    s = make_session(scenario_name="lossy_break", initial_break=False, break_retry_s=0.1)
    assert s.state == SessionState.running
    b = s.break_in(timeout=5.0)
    assert b.state == SessionState.broken and not b.already_broken
    assert b.elapsed_ms >= 200  # two requests went unanswered before the third broke in
    assert any(e.kind == "break_in" for e in b.events)
    assert s.execute(".echo calm").output.strip() == "calm"


def test_break_in_gives_up_at_its_timeout_when_nothing_answers(make_session):
    s = make_session(scenario_name="lossy_break", initial_break=False, break_retry_s=0.1)
    with pytest.raises(CommandTimeout):
        s.break_in(timeout=0.15)  # at most two requests fit: both are lost
    assert s.state == SessionState.running
    assert s.break_in(timeout=5.0).state == SessionState.broken


def test_wrong_key_stays_waiting_and_start_returns_in_time(make_session):
    t0 = time.monotonic()
    s = make_session(target=kdnet(50005, "aaaa.bbbb.cccc.dddd"), scenario_name="strict_key", start_timeout=2.0)
    elapsed = time.monotonic() - t0
    assert s.state == SessionState.waiting_for_target
    assert elapsed < 5.0
    assert any(e.kind == "waiting_for_target" for e in s.events_since(0))
    with pytest.raises(NotConnected):
        s.execute("r")
    with pytest.raises(NotConnected):
        s.break_in(0.5)


def test_wrong_port_stays_waiting(make_session):
    key = "2steg4fzbj2sz.3tqgjxx3kdz6y.1thq6ipbwyebm.2y9aa2z6g1tdk"
    s = make_session(target=kdnet(50006, key), scenario_name="strict_key", start_timeout=2.0)
    assert s.state == SessionState.waiting_for_target


def test_latency_is_waited_for(make_session):
    s = make_session(scenario_name="faults")
    r = s.execute("!slow")
    assert r.output.strip() == "slow answer"
    assert r.elapsed_ms >= 300


def test_invalid_utf8_and_nul_bytes_are_kept_exactly(make_session):
    s = make_session(scenario_name="faults")
    r = s.execute("!binary")
    raw = s.read_output(r.output_offset, r.output_end - r.output_offset)
    assert bytes.fromhex("41fffe0042c328e28228") in raw
    assert b"\x00" in raw
    assert "\ufffd" in r.output and "\x00" in r.output
    assert s.execute(".echo ok").output.strip() == "ok"


def test_banner_is_kept_and_key_is_redacted(make_session):
    s = make_session()
    banner = s.read_output(0, 4096).decode()
    assert "Using NET for debugging" in banner and "Kernel Debugger connection established." in banner
    assert "key=***" in s.plan.display and "1.2.3.4" not in s.plan.display


def test_key_echoed_by_the_debugger_is_redacted(make_session):
    canary = "k3yc4n4ry0000.zzzz.yyyy.xxxx"
    s = make_session(target=kdnet(50000, canary))
    r = s.execute("version")  # kd's "command line:" line repeats -k net:...,key=...
    assert "command line:" in r.output and "key=***" in r.output
    assert "k3yc4n4ry0000" not in r.output
    assert "k3yc4n4ry0000" not in s.plan.display
    assert all("k3yc4n4ry0000" not in e.text for e in s.events_since(0))
