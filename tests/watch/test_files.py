"""Following files as tail -f does, and refusing what the server would not have written."""

from __future__ import annotations

import json
import os

import pytest

from kdmcp.watch.files import LOG_TAIL_START, Follower, TranscriptReader, WatchRefused, file_problem
from tests.watch.helpers import CONSOLE, a_session_records, record, write_private, write_transcript

posix_only = pytest.mark.skipif(os.name != "posix", reason="modes and owners are POSIX; Windows files carry ACLs")


def test_a_follower_reads_what_was_appended_and_a_file_that_appears_later(tmp_path):
    path = tmp_path / "run.jsonl.s1.log"
    follower = Follower(path)
    assert follower.read() == b"" and follower.problem is None  # not there yet: nothing, no error
    write_private(path, "one\r\n")
    assert follower.read() == b"one\r\n"
    assert follower.read() == b""
    write_private(path, "two")
    assert follower.read() == b"two" and follower.offset == follower.size == 8


def test_a_replaced_or_shortened_file_is_read_from_its_start(tmp_path):
    path = write_private(tmp_path / "f.log", "first run\n")
    follower = Follower(path)
    follower.read()
    path.unlink()
    write_private(path, "new\n")
    assert follower.read() == b"new\n"
    with open(path, "w") as handle:  # same inode, cut shorter
        handle.write("x")
    assert follower.read() == b"x"


def test_a_long_log_met_first_is_read_from_near_its_end(tmp_path):
    path = write_private(tmp_path / "run.jsonl.s1.log", "".join(f"line {i}\n" for i in range(60000)))
    follower = Follower(path, tail_start=LOG_TAIL_START)
    assert len(follower.read()) == LOG_TAIL_START and follower.skipped


@posix_only
def test_files_others_may_read_or_links_are_refused(tmp_path):
    path = write_transcript(tmp_path)
    path.chmod(0o644)
    follower = Follower(path)
    assert follower.read() == b"" and "mode 0644" in (follower.problem or "")
    link = tmp_path / "link.jsonl"
    path.chmod(0o600)
    link.symlink_to(path)
    linked = Follower(link)
    assert linked.read() == b"" and "cannot open" in (linked.problem or "")
    assert file_problem(os.stat(tmp_path)) == "it is not a regular file"


@posix_only
def test_a_file_of_another_user_is_refused(tmp_path, monkeypatch):
    st = os.stat(write_transcript(tmp_path))
    monkeypatch.setattr(os, "getuid", lambda: st.st_uid + 1)
    assert f"owned by uid {st.st_uid}, not by you" in (file_problem(st) or "")


def test_check_says_how_to_get_a_transcript_when_there_is_none(tmp_path):
    with pytest.raises(WatchRefused, match=r"no transcript at .*kd-mcp serve --transcript .*KDMCP_TRANSCRIPT="):
        TranscriptReader(tmp_path / "run.jsonl").check()


@posix_only
def test_check_refuses_an_unsafe_transcript_and_says_why(tmp_path):
    path = write_transcript(tmp_path)
    path.chmod(0o640)
    with pytest.raises(WatchRefused, match=r"refusing to read .*mode 0640.*everything the guest printed"):
        TranscriptReader(path).check()
    path.chmod(0o600)
    link = tmp_path / "l.jsonl"
    link.symlink_to(path)
    with pytest.raises(WatchRefused, match="symbolic link"):
        TranscriptReader(link).check()


@posix_only
def test_an_unsafe_session_log_is_not_read_and_the_view_says_so(tmp_path):
    path = write_transcript(tmp_path)
    (tmp_path / "run.jsonl.s1.log").chmod(0o644)
    reader = TranscriptReader(path)
    reader.poll()
    view = reader.state.sessions["s1"]
    assert "mode 0644" in (view.log_problem or "") and not view.lines


def test_a_poll_ingests_whole_records_and_holds_a_half_written_one(tmp_path):
    records = a_session_records()
    path = write_transcript(tmp_path, records[:5])
    reader = TranscriptReader(path)
    assert reader.poll()
    assert reader.state.records == 5 and reader.state.sessions["s1"].lines[-1].startswith("fffff800`62600000")
    line = json.dumps(records[5]) + "\n"
    write_private(path, line[:20])
    reader.poll()
    assert reader.state.records == 5 and not reader.state.pending  # half a line: not yet a record
    write_private(path, line[20:] + "not json\n")
    reader.poll()
    assert reader.state.records == 6 and reader.state.pending[0].args == {"command": "lm"}
    assert not reader.poll()  # nothing new


def test_a_session_log_that_appears_later_and_grows_is_followed(tmp_path):
    path = write_transcript(tmp_path, console=None)
    reader = TranscriptReader(path)
    reader.poll()
    assert reader.state.sessions["s1"].log_bytes == 0
    log = write_private(tmp_path / "run.jsonl.s1.log", CONSOLE)
    assert reader.poll(now=500.0)
    write_private(log, "EchoDriver: DriverEntry called\r\n")
    reader.poll(now=501.0)
    view = reader.state.sessions["s1"]
    assert view.console_lines()[-1] == "0: kd> EchoDriver: DriverEntry called"
    assert view.log_bytes == log.stat().st_size and view.last_active == 501.0
    write_private(path, json.dumps(record("stop", 600.0)) + "\n")
    reader.poll()
    assert reader.state.stopped_at == 600.0
