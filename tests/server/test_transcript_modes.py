"""Transcripts and session logs hold all guest output: owner-only (0600) whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdmcp.config import Config
from kdmcp.server import KdMcpApp, ServerOptions
from kdmcp.server.call import Call
from kdmcp.server.tools.sessions.kdnet import start_kd
from kdmcp.server.tools.sessions.lifecycle import stop_kd
from kdmcp.server.transcript import Transcript

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
KEY = "1.2.3.4"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 000: every file is created as wide as its creator asks."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_transcript_is_0600(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "t.jsonl"
    transcript = Transcript(path, lambda text: text)
    transcript.close()
    assert mode(path) == 0o600


def test_an_existing_transcript_is_narrowed(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"kind": "old"}\n')
    path.chmod(0o644)
    transcript = Transcript(path, lambda text: text)
    transcript.close()
    assert mode(path) == 0o600
    assert path.read_text().startswith('{"kind": "old"}\n')  # appended to, not truncated


@pytest.mark.process
def test_a_session_log_is_0600(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "t.jsonl"
    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, transcript=str(path)))
    try:
        started = start_kd(Call(app, None), 50000, KEY, None, None, True, 20.0)
        app.flush_session_logs()
        assert app.transcript is not None
        log = app.transcript.session_log_path(started.session_id)
        assert log.exists() and mode(log) == 0o600
        log.chmod(0o644)  # as an earlier version left it: the next run that opens it narrows it
        stop_kd(Call(app, None), started.session_id, False)
        app.flush_session_logs(final=True)
        again = Transcript(tmp_path / "t.jsonl", lambda text: text)
        again.session_log(started.session_id)
        again.close()
        assert mode(log) == 0o600
    finally:
        app.shutdown()
        # shutdown keeps ended sessions' spill files open for the transcript and never frees
        # them (a leak of its own, reported separately): free them here.
        app.manager.stop_all()
    assert mode(path) == 0o600


def test_open_session_log_narrows_and_refuses_symlinks(tmp_path: Path, open_umask: None) -> None:
    transcript = Transcript(tmp_path / "t.jsonl", lambda text: text)
    try:
        log = transcript.session_log_path("s1")
        log.write_text("old\n")
        log.chmod(0o666)
        with transcript.open_session_log("s1") as handle:
            handle.write("new\n")
        assert mode(log) == 0o600 and log.read_text() == "old\nnew\n"

        elsewhere = tmp_path / "elsewhere.txt"
        elsewhere.write_text("not yours\n")
        elsewhere.chmod(0o644)
        transcript.session_log_path("s2").symlink_to(elsewhere)
        with pytest.raises(OSError):
            transcript.open_session_log("s2")
        assert elsewhere.read_text() == "not yours\n" and mode(elsewhere) == 0o644
    finally:
        transcript.close()
