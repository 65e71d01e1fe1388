"""A launched program that runs to its end (kdmcp/sim/world/user_program.py), as cdb prints it:
``ModLoad`` while running, a first-chance C++ exception the program survives, ``Unload module``
(after ``sxn ud``: ``ud`` is ignored by default), the worker's exit (a stop after ``sxe et``), the
exit-process stop and ``No runnable debuggees``.
Fast tier: in process (tests/sim/live.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kdmcp.sim.debugger import SimDebugger
from tests.sim.live import debugger, play, run, until_stop

APP = "C:\\target\\app.exe"


@pytest.fixture
def cdb() -> Iterator[SimDebugger]:
    with debugger(["cdb", APP], "program_exits") as sim:
        yield sim



def test_the_program_prints_its_events_while_it_runs_and_stops_at_its_exit(cdb: SimDebugger) -> None:
    assert run(cdb, "g") == ""
    out = until_stop(cdb)
    assert out == (
        # the launch's own images, then the DLL it loads while running (corpus misc/05: "0:000> g" /
        # "ModLoad: 00007ff9`9cd70000 00007ff9`9cda0000   C:\WINDOWS\System32\IMM32.DLL")
        "ModLoad: 00007ffc`80e20000 00007ffc`80ed2000   C:\\Windows\\System32\\KERNEL32.DLL\n"
        "ModLoad: 00007ffc`7f600000 00007ffc`7f8c7000   C:\\Windows\\System32\\KERNELBASE.dll\n"
        "ModLoad: 00007ffc`7f3e0000 00007ffc`7f4e0000   C:\\Windows\\System32\\ucrtbase.dll\n"
        "ModLoad: 00007ffc`7f9a0000 00007ffc`7f9b6000   C:\\target\\plugin.dll\n"
        # "(2fcc.34c8): C++ EH exception - code e06d7363 (first chance)" -- and the program runs on
        "(1a2c.1a8): C++ EH exception - code e06d7363 (first chance)\n"
        # no "Unload module" line: "ud - Unload module - ignore" (published sx listings)
        # "ntdll!NtTerminateProcess+0x14:" / "00007ffc`a0500904 c3              ret"
        "ntdll!NtTerminateProcess+0x14:\n"
        "00007ffc`81a953c4 c3              ret\n"
    )
    assert cdb.prompt_text() == "0:000> "
    # "Last event: 8ec.1ff0: Exit process 0:8ec, code c"
    assert run(cdb, ".lastevent").startswith("Last event: 1a2c.1a8: Exit process 0:1a2c, code 0\n  debugger time: ")
    frames = run(cdb, "k").splitlines()
    assert "ntdll!NtTerminateProcess+0x14" in frames[1] and "ntdll!RtlUserThreadStart+0x21" in frames[-1]
    assert "app!__tmainCRTStartup+0x13e" in run(cdb, "k")
    assert "plugin" not in run(cdb, "lm")  # unloaded
    assert run(cdb, "u @rip L1") == "ntdll!NtTerminateProcess+0x14:\n00007ffc`81a953c4 c3              ret\n"


def test_sxn_ud_prints_the_unload(cdb: SimDebugger) -> None:
    assert run(cdb, "sxn ud") == ""
    run(cdb, "g")
    # "Unload module C:\Windows\System32\wininet.dll at 00007ffa`0b670000" (a cdb front end's sxn ud)
    assert "(first chance)\nUnload module C:\\target\\plugin.dll at 00007ffc`7f9a0000\nntdll!" in until_stop(cdb)


def test_a_named_unload_filter_shows_the_other_images(cdb: SimDebugger) -> None:
    # after "sxe ud:qccamsecureisp8380.sys" a real kd log prints "Unload module WUDFRd.sys at ..."
    assert run(cdb, "sxe ud:other.dll") == ""
    run(cdb, "g")
    assert "Unload module C:\\target\\plugin.dll at 00007ffc`7f9a0000\n" in until_stop(cdb)


def test_after_the_process_ends_nothing_runs(cdb: SimDebugger) -> None:
    # "0:000> p" / "       ^ No runnable debuggees error in 'p'"
    run(cdb, "g")
    until_stop(cdb)
    assert run(cdb, "g") == "       ^ No runnable debuggees error in 'g'\n"
    assert run(cdb, "p") == "       ^ No runnable debuggees error in 'p'\n"
    assert cdb.state == "broken"
    assert run(cdb, "r rip").startswith("rip=00007ffc81a953c4")


def test_the_dll_is_listed_while_it_is_loaded(cdb: SimDebugger) -> None:
    run(cdb, "g")
    play(cdb)  # the start
    play(cdb)  # LoadLibrary
    assert "00007ffc`7f9a0000 00007ffc`7f9b6000   plugin " in run(cdb, "lm")
    assert "C:\\target\\plugin.dll" in run(cdb, "!peb")  # on the loader's lists too


def test_sxe_et_stops_at_the_workers_exit_then_the_process_exits(cdb: SimDebugger) -> None:
    assert run(cdb, "sxe et") == ""  # cdb prints nothing for a filter
    run(cdb, "g")
    out = until_stop(cdb)
    assert out.endswith("ntdll!NtTerminateThread+0x14:\n00007ffc`81a958a4 c3              ret\n")
    assert cdb.prompt_text() == "0:001> "  # the exiting thread
    assert run(cdb, ".lastevent").startswith("Last event: 1a2c.1e48: Exit thread 1:1e48, exit code 0\n")
    run(cdb, "g")
    assert until_stop(cdb) == "ntdll!NtTerminateProcess+0x14:\n00007ffc`81a953c4 c3              ret\n"
    assert "1e48" not in run(cdb, "~")  # the thread is gone


def test_sxi_hides_the_events_lines(cdb: SimDebugger) -> None:
    for code in ("ld", "ud", "eh"):
        run(cdb, f"sxi {code}")
    run(cdb, "g")
    assert until_stop(cdb) == "ntdll!NtTerminateProcess+0x14:\n00007ffc`81a953c4 c3              ret\n"
