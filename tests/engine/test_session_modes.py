"""Sessions in the other modes: cdb attach/launch, kernel and user dumps, local kernel."""

from __future__ import annotations

import pytest

from kdmcp.engine import DumpTarget, LocalKernelTarget, ProcessTarget, RemoteTarget, SessionState

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)


def test_cdb_attach_break_continue_and_quit_detaches(make_session):
    s = make_session(target=ProcessTarget(pid=4242), flavor="cdb")
    assert s.state == SessionState.broken
    assert s.prompt is not None and s.prompt.text == "0:002> " and s.prompt.mode == "user"
    assert s.execute(".echo user mode").output.strip() == "user mode"
    assert s.go().state == SessionState.running
    b = s.break_in()
    assert b.state == SessionState.broken
    assert [e.text for e in b.events if e.kind == "break_in"] == [
        "(1092.5d0): Break instruction exception - code 80000003 (first chance)"  # pid 4242
    ]
    result = s.stop()
    assert result.actions == ["sent qd"] and result.exit_code == 0


def test_cdb_launch_reports_the_initial_break(make_session):
    s = make_session(target=ProcessTarget(command_line=["C:\\app.exe"]), flavor="cdb")
    assert s.state == SessionState.broken
    assert "break_in" in [e.kind for e in s.events_since(0)]
    assert s.stop().actions == ["sent q"]


def test_kernel_dump_cannot_run(make_session, tmp_path):
    dump = tmp_path / "MEMORY.DMP"
    dump.write_bytes(b"PAGEDU64")
    s = make_session(target=DumpTarget(path=str(dump)))
    assert s.prompt is not None and s.prompt.text == "0: kd> "
    c = s.go()
    assert c.confirmed == "stopped" and c.state == SessionState.broken  # kd refused to go
    assert "No runnable debuggees" in s.read_output(c.output_offset, 200).decode()


def test_user_dump_and_local_kernel_and_remote_prompts(make_session, tmp_path):
    dump = tmp_path / "app.dmp"
    dump.write_bytes(b"MDMP")
    assert make_session(target=DumpTarget(path=str(dump), kernel=False), flavor="cdb").prompt.text == "0:000> "
    local = make_session(target=LocalKernelTarget())
    assert local.prompt.text == "lkd> " and local.prompt.mode == "local_kernel"
    assert local.execute(".echo lkd").output.strip() == "lkd"
    remote = make_session(target=RemoteTarget(connection="tcp:server=127.0.0.1,port=5005"))
    assert remote.state == SessionState.broken


def test_missing_dump_is_reported_as_exit(make_session, tmp_path):
    s = make_session(target=DumpTarget(path=str(tmp_path / "none.dmp")))
    assert s.state == SessionState.exited and s.exit_code == 1
    assert b"Could not open dump file" in s.read_output(0, 4096)
