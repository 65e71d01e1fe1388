"""``.logopen`` / ``.logappend`` / ``.logclose`` (kdmcp/sim/session_log.py): dbgeng's words, and a
log that holds what the console showed. Fast tier: in process."""

from __future__ import annotations

import re
from pathlib import Path

from kdmcp.sim.session_log import SessionLog, local_path
from tests.sim.live import KDNET, debugger, run


def test_logopen_says_so_and_the_log_gets_the_console(tmp_path: Path) -> None:
    path = tmp_path / "kd.log"
    with debugger(["kd", *KDNET]) as kd:
        # dbgeng: dprintf("Opened log file '%s'\n", File) -- the .logopen page's example:
        # "Opened log file 'c:\logs\mylogfile_02BC_2005-02-28_09-05-50-935.txt'"
        assert run(kd, f".logopen {path}") == f"Opened log file '{path}'\n"
        kd.out("0: kd> ")  # what the console shows from now on goes to the log as well
        kd.out("lm\n")
        kd.flush()
        # dprintf("Closing open log file %s\n", g_OpenLogFileName)
        assert run(kd, ".logclose") == f"Closing open log file {path}\n"
        assert run(kd, ".logclose") == ""  # nothing open: nothing said
    assert path.read_bytes() == b"0: kd> lm\r\n"  # the console's bytes (kd on Windows: \r\n)


def test_a_new_log_closes_the_old_one_and_logappend_appends(tmp_path: Path) -> None:
    log = SessionLog()
    first, second = tmp_path / "a.log", tmp_path / "b.log"
    assert log.command("logopen", str(first), 0x1A2C) == f"Opened log file '{first}'\n"
    log.write(b"one\n")
    assert log.command("logappend", str(first), 0x1A2C) == (
        f"Closing open log file {first}\nOpened log file '{first}'\n"
    )
    log.write(b"two\n")
    assert first.read_bytes() == b"one\ntwo\n"
    log.command("logopen", str(second), 0x1A2C)
    assert log.close() == f"Closing open log file {second}\n"


def test_slash_t_appends_the_process_id_and_the_time(tmp_path: Path) -> None:
    log = SessionLog()
    said = log.command("logopen", f"/t {tmp_path / 'mylogfile.txt'}", 0x2BC)
    # "mylogfile_02BC_2005-02-28_09-05-50-935.txt"
    assert re.fullmatch(r"Opened log file '.*mylogfile_02BC_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d{3}\.txt'\n", said), said
    log.close()


def test_a_windows_path_is_kept_in_the_simulators_folder_and_named_as_typed(tmp_path: Path) -> None:
    log = SessionLog(str(tmp_path))
    assert log.command("logopen", "c:\\logs\\kdmcp-test-session.log", 1) == (
        "Opened log file 'c:\\logs\\kdmcp-test-session.log'\n"
    )
    log.close()
    assert local_path("c:\\logs\\kdmcp-test-session.log", str(tmp_path)) == str(tmp_path / "kdmcp-test-session.log")
    assert (tmp_path / "kdmcp-test-session.log").exists()
    assert local_path("/var/tmp/kd.log") == "/var/tmp/kd.log"  # a POSIX path is used as typed


def test_a_log_that_cannot_be_opened_says_so(tmp_path: Path) -> None:
    # dbgeng: ErrOut("log file could not be opened\n")
    assert SessionLog().command("logopen", str(tmp_path / "no" / "such" / "dir.log"), 1) == (
        "log file could not be opened\n"
    )
