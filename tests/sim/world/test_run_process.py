"""The running world through the real simulator: ``bp``, ``g``, the stop, and what the stop shows.

``python -m kdmcp.sim kd … -b`` on pipes (as tests/sim/test_cli.py drives it); every expect is
bounded.
"""

from __future__ import annotations

import pytest
from pexpect.popen_spawn import PopenSpawn

from tests.sim.world.helpers import ask, break_in

pytestmark = pytest.mark.process  # starts the simulator (tests/tiers.py)


def test_bp_g_stops_in_nt_create_file_on_the_events_processor(kd: PopenSpawn) -> None:
    assert ask(kd, "bp nt!NtCreateFile", "0: kd> ") == ""
    kd.sendline("g")
    # kd's breakpoint stop (corpus misc/05), then the prompt of the processor it hit on
    kd.expect_exact(
        "Breakpoint 0 hit\r\nnt!NtCreateFile:\r\n"
        "fffff800`62c3a1e0 48895c2408      mov     qword ptr [rsp+8],rbx\r\n2: kd> "
    )
    assert ask(kd, ".lastevent", "2: kd> ").startswith("Last event: Hit breakpoint 0\r\n")
    analysis = ask(kd, "!analyze -v", "2: kd> ")
    stack = analysis.split("STACK_TEXT:  \r\n", 1)[1]
    assert stack.split("\r\n", 1)[0].endswith(" : nt!NtCreateFile")
    assert "PROCESS_NAME:  svchost.exe\r\n" in analysis
    # k and r rip answer from the world once their commands are there (cmd_process/cmd_memory)
    k = ask(kd, "k", "2: kd> ")
    assert k.splitlines()[1].endswith("nt!NtCreateFile")
    rip = ask(kd, "r rip", "2: kd> ")
    assert rip == "rip=fffff80062c3a1e0\r\n"
    step = ask(kd, "p", "2: kd> ")
    assert "rip=fffff80062c3a1e5 " in step and step.endswith(
        "nt!NtCreateFile+0x5:\r\nfffff800`62c3a1e5 57              push    rdi\r\n"
    )
    # g again: the thread returns to its wait; a Ctrl+C stops processor 0 in the break routine
    ask(kd, "bc *", "2: kd> ")
    kd.sendline("g")
    # running: the world's events come (the wait is on the event, bounded), and no prompt before them
    kd.expect(r"myfault: IOCTL 0x8336[0-9a-f]{4} received\r\n")
    assert "kd> " not in kd.before.decode()
    break_in(kd)
    kd.expect_exact("nt!DbgBreakPointWithStatus:\r\nfffff800`62a05c20 cc              int     3\r\n0: kd> ")
    assert ask(kd, ".lastevent", "0: kd> ").startswith("Last event: Break instruction exception")


def test_a_breakpoints_commands_run_at_the_stop(kd: PopenSpawn) -> None:
    ask(kd, 'bp nt!ExAllocatePoolWithTag ".lastevent; bl"', "0: kd> ")
    kd.sendline("g")
    kd.expect_exact("Breakpoint 0 hit\r\nnt!ExAllocatePoolWithTag:\r\n")
    kd.expect_exact("Last event: Hit breakpoint 0\r\n")
    kd.expect_exact(
        '     0 e Disable Clear  fffff800`62b6f030     0001 (0001) nt!ExAllocatePoolWithTag ".lastevent; bl"\r\n3: kd> '
    )
