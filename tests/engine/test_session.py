"""DebuggerSession against the simulator, over real consoles: reading, echo, Ctrl+C, kill, death, 100 MB.

What the bytes mean is proven byte by byte, in milliseconds, by test_machine.py; here every
test starts a debugger. Tests of I/O (echo removal, bytes kept exactly, Ctrl+C delivery and its
pty echo, cancel and resync, kill, death mid-output, the 100 MB store) run on every backend;
tests of what a session does with a state (``DEFAULT_BACKEND_ONLY``) run on the platform's
default backend.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from pathlib import Path

import psutil
import pytest

from kdmcp.engine import DumpTarget, LocalKernelTarget, ProcessTarget, RemoteTarget, SessionState
from kdmcp.errors import CommandTimeout, DebuggerExited, InvalidArgument, NotConnected, TargetRunning
from kdmcp.parse import parse
from kdmcp.sim import bulk
from tests.conftest import kdnet
from tests.engine import DEFAULT_BACKEND_ONLY

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)


def _kinds(events):
    return [e.kind for e in events]



# ------------------------------------------------------------ connect, prompts, commands, echo


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


def test_processor_switch_changes_prompt(shared_kd):
    s = shared_kd
    r = s.execute("~3s")
    assert r.prompt is not None and r.prompt.text == "3: kd> " and r.prompt.processor == 3
    assert "nt!KiFreezeTargetExecution" in r.output  # processor 3's thread, frozen by the break-in
    assert s.execute("~0s").prompt.processor == 0  # type: ignore[union-attr]


@DEFAULT_BACKEND_ONLY
def test_uniprocessor_prompt(make_session):
    key = "2steg4fzbj2sz.3tqgjxx3kdz6y.1thq6ipbwyebm.2y9aa2z6g1tdk"
    s = make_session(target=kdnet(50005, key), scenario_name="strict_key")
    assert s.state == SessionState.broken
    assert s.prompt is not None and s.prompt.text == "kd> " and s.prompt.processor is None


@DEFAULT_BACKEND_ONLY
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


def test_unknown_command_is_kd_syntax_error_not_a_hang(shared_kd):
    s = shared_kd
    r = s.execute("frobnicate 12")
    assert "Syntax error in 'frobnicate 12'" in r.output
    assert r.state == SessionState.broken


def test_rejects_unsendable_commands(shared_kd):
    s = shared_kd
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
    seq = s.last_event_seq  # events reach a reader by sequence (engine/results.py)
    b = s.break_in()
    assert b.state == SessionState.broken and not b.already_broken
    assert any(e.kind == "break_in" for e in s.events_since(seq))
    assert s.execute("r").state == SessionState.broken


def test_a_lost_break_in_request_is_sent_again(make_session):
    s = make_session(scenario_name="lossy_break", initial_break=False, break_retry_s=0.1)
    assert s.state == SessionState.running
    seq = s.last_event_seq  # events reach a reader by sequence (engine/results.py)
    b = s.break_in(timeout=5.0)
    assert b.state == SessionState.broken and not b.already_broken
    assert b.elapsed_ms >= 200  # two requests went unanswered before the third broke in
    assert any(e.kind == "break_in" for e in s.events_since(seq))
    assert s.execute(".echo calm").output.strip() == "calm"


@DEFAULT_BACKEND_ONLY
def test_break_in_gives_up_at_its_timeout_when_nothing_answers(make_session):
    s = make_session(scenario_name="lossy_break", initial_break=False, break_retry_s=0.1)
    with pytest.raises(CommandTimeout):
        s.break_in(timeout=0.15)  # at most two requests fit: both are lost
    assert s.state == SessionState.running
    assert s.break_in(timeout=5.0).state == SessionState.broken


@DEFAULT_BACKEND_ONLY
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


@DEFAULT_BACKEND_ONLY
def test_wrong_port_stays_waiting(make_session):
    key = "2steg4fzbj2sz.3tqgjxx3kdz6y.1thq6ipbwyebm.2y9aa2z6g1tdk"
    s = make_session(target=kdnet(50006, key), scenario_name="strict_key", start_timeout=2.0)
    assert s.state == SessionState.waiting_for_target


@DEFAULT_BACKEND_ONLY
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


def test_banner_is_kept_and_key_is_redacted(shared_kd):
    s = shared_kd
    banner = s.read_output(0, 4096).decode()
    assert "Using NET for debugging" in banner and "Kernel Debugger connection established." in banner
    assert "key=***" in s.plan.display and "1.2.3.4" not in s.plan.display


@DEFAULT_BACKEND_ONLY
def test_key_echoed_by_the_debugger_is_redacted(make_session):
    canary = "k3yc4n4ry0000.zzzz.yyyy.xxxx"
    s = make_session(target=kdnet(50000, canary))
    r = s.execute("version")  # kd's "command line:" line repeats -k net:...,key=...
    assert "command line:" in r.output and "key=***" in r.output
    assert "k3yc4n4ry0000" not in r.output
    assert "k3yc4n4ry0000" not in s.plan.display
    assert all("k3yc4n4ry0000" not in e.text for e in s.events_since(0))


# ------------------------------------------------------------ other modes: cdb, dumps, local kernel


@DEFAULT_BACKEND_ONLY
def test_cdb_attach_break_continue_and_quit_detaches(make_session):
    s = make_session(target=ProcessTarget(pid=4242), flavor="cdb")
    assert s.state == SessionState.broken
    assert s.prompt is not None and s.prompt.text == "0:002> " and s.prompt.mode == "user"
    assert s.execute(".echo user mode").output.strip() == "user mode"
    assert s.go().state == SessionState.running
    seq = s.last_event_seq  # events reach a reader by sequence (engine/results.py)
    b = s.break_in()
    assert b.state == SessionState.broken
    assert [e.text for e in s.events_since(seq) if e.kind == "break_in"] == [
        "(1092.5d0): Break instruction exception - code 80000003 (first chance)"  # pid 4242
    ]
    result = s.stop()
    assert result.actions == ["sent qd (detached: the process runs on)"] and result.exit_code == 0


@DEFAULT_BACKEND_ONLY
def test_cdb_launch_reports_the_initial_break(make_session):
    s = make_session(target=ProcessTarget(command_line=["C:\\app.exe"]), flavor="cdb")
    assert s.state == SessionState.broken
    assert "break_in" in [e.kind for e in s.events_since(0)]
    assert s.stop().actions == ["sent q (terminated the launched process)"]


@DEFAULT_BACKEND_ONLY
def test_kernel_dump_cannot_run(make_session, tmp_path):
    dump = tmp_path / "MEMORY.DMP"
    dump.write_bytes(b"PAGEDU64")
    s = make_session(target=DumpTarget(path=str(dump)))
    assert s.prompt is not None and s.prompt.text == "0: kd> "
    c = s.go()
    assert c.confirmed == "stopped" and c.state == SessionState.broken  # kd refused to go
    assert "No runnable debuggees" in s.read_output(c.output_offset, 200).decode()


@DEFAULT_BACKEND_ONLY
def test_user_dump_and_local_kernel_and_remote_prompts(make_session, tmp_path):
    dump = REPO / "fixtures" / "dumps" / "minidump2.dmp"  # a real dump: the exception is on thread 0
    assert make_session(target=DumpTarget(path=str(dump), kernel=False), flavor="cdb").prompt.text == "0:000> "
    local = make_session(target=LocalKernelTarget())
    assert local.prompt.text == "lkd> " and local.prompt.mode == "local_kernel"
    assert local.execute(".echo lkd").output.strip() == "lkd"
    server = make_session()
    port = re.search(r"tcp:Port=(\d+)", server.execute(".server tcp:port=40000:49999").output).group(1)
    remote = make_session(target=RemoteTarget(connection=f"tcp:server=127.0.0.1,port={port}"))
    assert remote.state == SessionState.broken


@DEFAULT_BACKEND_ONLY
def test_a_real_user_dump_answers_from_what_it_holds(make_session):
    """The engine on the simulated ``cdb -z`` of a real minidump: the prompt is the event
    thread's, and ``lm``, ``~``, ``.exr -1`` parse to what the dump holds (fixtures/dumps/README.md:
    17 modules, 6 threads, c0000005 at 004015fd on thread 10976)."""
    dump = REPO / "fixtures" / "dumps" / "thread_name_list.dmp"
    s = make_session(target=DumpTarget(path=str(dump), kernel=False), flavor="cdb")
    assert s.prompt is not None and s.prompt.text == "0:005> "
    assert len(parse("lm", s.execute("lm").output).modules) == 17
    threads = parse("~", s.execute("~").output).threads
    assert [t.current for t in threads] == [False] * 5 + [True] and threads[5].thread_id == "0x2ae0"
    exr = parse(".exr -1", s.execute(".exr -1").output)
    assert (exr.code, exr.address) == ("0xc0000005", "0x004015fd")


@DEFAULT_BACKEND_ONLY
def test_a_corrupt_user_dump_ends_the_debugger(make_session, tmp_path):
    dump = tmp_path / "app.dmp"
    dump.write_bytes(b"MDMP")  # the signature and nothing else
    s = make_session(target=DumpTarget(path=str(dump), kernel=False), flavor="cdb")
    assert s.state == SessionState.exited and s.exit_code == 1
    assert b"Could not open dump file" in s.read_output(0, 4096)


@DEFAULT_BACKEND_ONLY
def test_missing_dump_is_reported_as_exit(make_session, tmp_path):
    s = make_session(target=DumpTarget(path=str(tmp_path / "none.dmp")))
    assert s.state == SessionState.exited and s.exit_code == 1
    assert b"Could not open dump file" in s.read_output(0, 4096)


# ------------------------------------------------------------ go, running, break-in, reboot, transport loss, stop


def test_go_confirms_running_then_break_in(make_session):
    s = make_session()
    c = s.go()
    assert c.state == SessionState.running and c.confirmed == "running"
    seq = s.last_event_seq  # events reach a reader by sequence (engine/results.py)
    b = s.break_in()
    assert b.state == SessionState.broken
    assert "break_in" in _kinds(s.events_since(seq))
    assert b.prompt is not None and b.prompt.text == "0: kd> "
    assert s.break_in().already_broken


def test_go_class_forms_go_through_kd_command(shared_kd):
    s = shared_kd
    for form in ["g", "gh", "gn", "~0 g", "r; g"]:
        r = s.execute(form)
        assert r.kind == "go" and r.state == SessionState.running, form
        s.break_in()
    with pytest.raises(InvalidArgument):
        s.go("r")


@pytest.mark.parametrize("form", [".block { g }", "j 1 'g';'r'", ".if (1) { gh }", '.foreach /s (x "g") {x}'])
def test_a_go_inside_a_block_a_branch_or_a_body_is_confirmed_running(shared_kd, form):
    """The one reader sees the g: no marker is sent, so no false timeout or busy state."""
    s = shared_kd
    r = s.execute(form, timeout=5.0)
    assert r.kind == "go" and r.state == SessionState.running and r.output == "", form
    assert s.break_in().state == SessionState.broken


def test_a_go_class_line_that_stops_at_once_returns_its_output(shared_kd):
    """``j 0 'g';'r'`` takes the branch without g: kd is back at its prompt with the output."""
    s = shared_kd
    r = s.execute("j 0 'g';'.echo not-taken'", timeout=5.0)
    assert r.kind == "go" and r.state == SessionState.broken
    assert r.output.strip() == "not-taken"
    assert s.execute("r").state == SessionState.broken


def test_the_rest_of_a_line_after_g_runs_at_the_next_stop(shared_kd):
    s = shared_kd
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


@DEFAULT_BACKEND_ONLY
def test_bugcheck_stop_is_an_event_with_its_code(make_session):
    s = make_session(scenario_name="bugcheck")
    s.go()
    assert s.wait_for(lambda: s.state == SessionState.broken, 5.0)
    bugchecks = [e for e in s.events_since(0) if e.kind == "bugcheck"]
    assert bugchecks and bugchecks[0].code == "0x000000d1"
    assert "*** Fatal System Error: 0x000000d1" in bugchecks[0].text


@DEFAULT_BACKEND_ONLY
def test_reboot_command_goes_rebooting_then_back(make_session):
    s = make_session(scenario_name="reboot")
    r = s.execute(".reboot")
    assert r.kind == "reboot"
    assert s.wait_for(lambda: s.state == SessionState.broken, 5.0)  # -b: breaks again after reconnect
    kinds = _kinds(s.events_since(0))
    assert "reboot" in kinds and "reconnecting" in kinds
    assert kinds.count("connected") == 2
    assert s.execute("r").state == SessionState.broken


@DEFAULT_BACKEND_ONLY
def test_guest_reboot_while_running(make_session):
    s = make_session(scenario_name="reboot", initial_break=False)
    s.break_in()
    s.go()
    # rebooting and reconnecting are passed through as the banner lines arrive.
    assert s.wait_for(lambda: "reboot" in _kinds(s.events_since(0)), 5.0)
    assert s.wait_for(lambda: s.state == SessionState.running and s.events_since(0)[-1].kind == "connected", 5.0)
    kinds = _kinds(s.events_since(0))
    assert kinds.index("reboot") < kinds.index("reconnecting") < len(kinds) - 1


@DEFAULT_BACKEND_ONLY
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


@DEFAULT_BACKEND_ONLY
def test_a_break_in_leaves_the_marker_of_a_command_sent_after_the_one_it_cancelled(make_session, monkeypatch):
    # Ctrl+C ends a hung !hang, whose own marker then comes: its caller returns and the next
    # command begins (a batch's always step, another client's bl) before the break-in looks at
    # the session again. Busy now is that command, not the cancelled one: no resync may drop its
    # marker, or it ends as not_connected ("the target went away during the command (broken)").
    s = make_session(scenario_name="faults")
    answers: dict[str, str] = {}

    def run(name: str, command: str) -> None:
        try:
            answers[name] = s.execute(command, 20).output.strip()
        except Exception as exc:  # the answer the test reads
            answers[name] = f"{type(exc).__name__}: {exc}"

    hung = threading.Thread(target=run, args=("hang", "!hang"))
    hung.start()
    assert s.wait_for(lambda: s.state == SessionState.busy and b"Scanning pool" in s.store.read(0, s.store.size), 10)
    following = threading.Thread(target=run, args=("next", "!slow"))  # 300 ms: still busy at the resync check
    wait_for = s.wait_for
    resync_waited: list[bool] = []

    def then_the_next_command(predicate, timeout):
        ok = wait_for(predicate, timeout)
        if not resync_waited:  # the break-in's wait for the prompt after its Ctrl+C
            resync_waited.append(ok)
            hung.join(10)
            following.start()
            wait_for(lambda: s.state == SessionState.busy, 5)
        return ok

    monkeypatch.setattr(s, "wait_for", then_the_next_command)
    assert s.break_in(10).state == SessionState.broken
    following.join(10)
    assert resync_waited == [True] and "Scanning pool..." in answers["hang"]
    assert answers["next"] == "slow answer"
    assert s.state == SessionState.broken


def test_ctrl_c_cancels_long_output(make_session):
    s = make_session(scenario_name="faults")
    with pytest.raises(CommandTimeout):
        s.execute("!bulk100", timeout=0.2)
    s.break_in()
    assert s.store.size < 100 * 1024 * 1024
    assert s.execute(".echo after").output.strip() == "after"


def test_debugger_death_mid_output_keeps_output(make_session):
    s = make_session(scenario_name="faults")
    before = s.store.size
    with pytest.raises(DebuggerExited):
        s.execute("!crash")
    assert s.state == SessionState.exited and s.exit_code == 3
    tail = s.read_output(before, s.store.size - before).decode()
    assert "Loading extension...\r\nWalking 4096 entries" in tail or "Loading extension...\nWalking 4096" in tail
    assert any(e.kind == "exited" for e in s.events_since(0))


@DEFAULT_BACKEND_ONLY
def test_stop_resumes_live_kernel_target_first(make_session):
    s = make_session()
    result = s.stop()
    assert result.actions[0] == "resumed target (kd read the g)"
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
    seq = s.last_event_seq  # events reach a reader by sequence (engine/results.py)
    assert s.break_in().state == SessionState.broken
    assert _kinds(s.events_since(seq)) == ["break_in"]
    s.go()
    seq = s.last_event_seq
    assert s.break_in().state == SessionState.broken
    assert _kinds(s.events_since(seq)) == ["break_in"]


# ------------------------------------------------------------ 100 MB: every byte stored, in order, with bounded memory


MB = 100


def _expected_sha256() -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    for block in bulk.blocks(MB):
        data = block.replace("\n", "\r\n").encode("ascii")
        h.update(data)
        n += len(data)
    return h.hexdigest(), n


@pytest.mark.slow
def test_100mb_output_is_stored_exactly_with_bounded_memory(make_session):
    s = make_session(scenario_name="faults")
    rss_before = psutil.Process().memory_info().rss
    r = s.execute("!bulk100", timeout=120)
    rss_after = psutil.Process().memory_info().rss
    assert r.state == SessionState.broken
    assert r.truncated and len(r.output) <= s.config.inline_output_bytes

    # Find where the generated bytes start (after the echoed command line, if any).
    head = s.read_output(r.output_offset, 4096)
    first = head.index(b"ffffd000`00000000  ")
    start = r.output_offset + first
    want_hash, want_len = _expected_sha256()
    assert r.output_end - start == want_len
    h = hashlib.sha256()
    pos = start
    while pos < r.output_end:
        chunk = s.read_output(pos, min(8 << 20, r.output_end - pos))
        assert chunk
        h.update(chunk)
        pos += len(chunk)
    assert h.hexdigest() == want_hash

    # The whole-session hash also covers the bytes before and after.
    whole = hashlib.sha256()
    for off in range(0, s.store.size, 8 << 20):
        whole.update(s.read_output(off, 8 << 20))
    assert whole.hexdigest() == s.store.sha256()

    assert s.store.memory_in_use() <= 2 * s.config.memory_bytes
    # Nothing buffers the output wholesale (100 MB kept in memory would show here).
    assert rss_after - rss_before < 60 * 1024 * 1024
