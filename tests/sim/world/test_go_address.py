"""``g BreakAddress`` and the driver's load through the real simulator (``kdmcp.sim kd`` on pipes).

g (Go), kernel syntax ``g[a] [= StartAddress] [BreakAddress ... [; BreakCommands]]``: the run
stops where an event reaches a BreakAddress and kd prints only the location (no "Breakpoint N
hit"); the breakpoint is a one-time one, gone at the stop. Every expect is bounded.
"""

from __future__ import annotations

import pexpect
import pytest
from pexpect.popen_spawn import PopenSpawn

from tests.sim.world.helpers import ask, break_in

pytestmark = pytest.mark.process  # starts the simulator (tests/tiers.py)

CREATE_FILE = "nt!NtCreateFile:\r\nfffff800`62c3a1e0 48895c2408      mov     qword ptr [rsp+8],rbx\r\n"
DRIVER_ENTRY = "sampledrv!DriverEntry:\r\nfffff800`60db5010 48895c2408      mov     qword ptr [rsp+8],rbx\r\n"
BREAK_IN = "nt!DbgBreakPointWithStatus:\r\nfffff800`62a05c20 cc              int     3\r\n0: kd> "


def _still_running(kd: PopenSpawn) -> None:
    with pytest.raises(pexpect.TIMEOUT):
        kd.expect_exact("kd> ", timeout=0.2)


def test_g_address_stops_there_printing_only_the_location_and_is_gone_after(kd: PopenSpawn) -> None:
    kd.sendline("g nt!NtCreateFile")
    kd.expect_exact("2: kd> ")
    assert kd.before.decode().endswith(CREATE_FILE)
    assert "Breakpoint" not in kd.before.decode()
    assert ask(kd, "bl", "2: kd> ") == ""  # a one-time breakpoint: not in the list
    assert ask(kd, "k 1", "2: kd> ").splitlines()[1].endswith("nt!NtCreateFile")
    kd.sendline("g")  # the one-time breakpoint is gone: the next NtCreateFile does not stop
    _still_running(kd)
    break_in(kd)
    kd.expect_exact(BREAK_IN)


def test_g_on_an_address_no_event_reaches_runs_until_break_in(kd: PopenSpawn) -> None:
    kd.sendline("g nt!KiPageFault")
    _still_running(kd)
    break_in(kd)
    kd.expect_exact(BREAK_IN)
    kd.sendline("g")  # the break-in ended g's breakpoint too
    _still_running(kd)
    break_in(kd)
    kd.expect_exact(BREAK_IN)


def test_g_on_a_name_that_does_not_resolve_stays_at_the_prompt(kd: PopenSpawn) -> None:
    assert ask(kd, "g nosuchname", "0: kd> ") == "Couldn't resolve error at 'nosuchname'\r\n"


def test_g_on_a_driver_not_loaded_yet_stops_in_its_entry_when_it_loads(kd: PopenSpawn) -> None:
    kd.sendline("g sampledrv!DriverEntry")  # "stored as an unresolved breakpoint" until the load
    kd.expect_exact("0: kd> ")
    assert kd.before.decode().endswith(DRIVER_ENTRY)
    assert "Breakpoint" not in kd.before.decode()


def test_a_deferred_bp_resolves_and_hits_when_the_driver_loads(kd: PopenSpawn) -> None:
    assert ask(kd, "bu sampledrv!DriverEntry", "0: kd> ") == ""
    kd.sendline("g")
    kd.expect_exact("Breakpoint 0 hit\r\n" + DRIVER_ENTRY + "0: kd> ")
    k = ask(kd, "k", "0: kd> ").splitlines()
    assert k[2].endswith("sampledrv!GsDriverEntry+0x20") and k[3].endswith("nt!PnpCallDriverEntry+0x4c")
    assert ask(kd, "bl", "0: kd> ") == (
        "     0 e Disable Clear  fffff800`60db5010     0001 (0001) sampledrv!DriverEntry\r\n"
    )


def test_a_breakpoint_command_ending_in_gc_goes_on(kd: PopenSpawn) -> None:
    ask(kd, 'bp nt!NtCreateFile "r rcx; gc"', "0: kd> ")
    ask(kd, "bp /1 nt!ExAllocatePoolWithTag", "0: kd> ")
    kd.sendline("g")
    kd.expect_exact("Breakpoint 0 hit\r\n" + CREATE_FILE + "rcx=0000000000000000\r\n")
    kd.expect_exact("Breakpoint 1 hit\r\nnt!ExAllocatePoolWithTag:\r\n")
    kd.expect_exact("3: kd> ")
    # bp /1: deleted after its hit
    assert ask(kd, "bl", "3: kd> ") == (
        '     0 e Disable Clear  fffff800`62c3a1e0     0001 (0001) nt!NtCreateFile "r rcx; gc"\r\n'
    )


def test_a_condition_lets_the_target_run_past_hits_where_it_is_zero(kd: PopenSpawn) -> None:
    ask(kd, 'bp /w "@r8 == 0x8336a012" nt!NtDeviceIoControlFile', "0: kd> ")
    kd.sendline("g")
    kd.expect_exact("Breakpoint 0 hit\r\nnt!NtDeviceIoControlFile:\r\n")
    kd.expect_exact("1: kd> ")
    assert ask(kd, "r r8", "1: kd> ") == "r8=000000008336a012\r\n"
