"""The target's run states as kd prints them (kdmcp/sim/target.py): the bugcheck sequence and the
prompt's move to the crashing processor, kd's connection refresh, g at a bugcheck, the first
!analyze -v after it, DbgPrint without a line end. Fast tier: in process (tests/sim/live.py).

Each expected text is the real session's, quoted beside it, with the simulated machine's
addresses and times."""

from __future__ import annotations

import re

from kdmcp.parse import parse
from tests.sim.live import KDNET, ctrl_c, debugger, play, run

# set1 exceptions_errors/a_14 (a Windows 10 26100 session, verbatim but for the addresses):
#   0: kd> g
#   KDTARGET: Refreshing KD connection
#   <blank>
#   *** Fatal System Error: 0x00000050
#                          (0xFFFFF78000001000,0x0000000000000000,0xFFFFF80528F293CB,0x0000000000000002)
#   <blank>
#   Break instruction exception - code 80000003 (first chance)
#   ... "For analysis of this file, run !analyze -v" / "nt!DbgBreakPointWithStatus:" / int 3
#   1: kd> !analyze -v
BUGCHECK_SEQUENCE = (
    "KDTARGET: Refreshing KD connection\n"
    "\n"
    "*** Fatal System Error: 0x000000d1\n"
    "                       (0xFFFFB28D4AAA8010,0x0000000000000002,0x0000000000000000,0xFFFFF80060DA1981)\n"
    "\n"
    "Break instruction exception - code 80000003 (first chance)\n"
    "\n"
    "A fatal system error has occurred.\n"
    "Debugger entered on first try; Bugcheck callbacks have not been invoked.\n"
    "\n"
    "A fatal system error has occurred.\n"
    "\n"
    "For analysis of this file, run !analyze -v\n"
    "nt!DbgBreakPointWithStatus:\n"
    "fffff800`62a05c20 cc              int     3\n"
)


def test_a_bugcheck_on_processor_1_prints_the_sequence_and_moves_the_prompt() -> None:
    with debugger(["kd", *KDNET], "bugcheck_mp") as kd:
        assert kd.prompt_text() == "0: kd> "
        assert run(kd, "g") == ""
        assert play(kd) == BUGCHECK_SEQUENCE
        assert kd.state == "broken"
        assert kd.prompt_text() == "1: kd> "  # the crashing processor's prompt
        # the world is in it: .bugcheck, nt!KiBugCheckData and the processor's thread agree
        assert run(kd, ".bugcheck") == (
            "Bugcheck code 000000D1\n"
            "Arguments ffffb28d`4aaa8010 00000000`00000002 00000000`00000000 fffff800`60da1981\n"
        )
        assert run(kd, "dq nt!KiBugCheckData L5") == (
            "fffff800`63200b40  00000000`000000d1 ffffb28d`4aaa8010\n"
            "fffff800`63200b50  00000000`00000002 00000000`00000000\n"
            "fffff800`63200b60  fffff800`60da1981\n"
        )
        # processor 1 stopped where kd says: set1 analyze/a_09's live stack, down to the fault
        frames = [line.split()[-1] for line in run(kd, "k").splitlines()[1:]]
        assert frames[:6] == [
            "nt!DbgBreakPointWithStatus", "nt!KiBugCheckDebugBreak+0x12", "nt!KeBugCheck2+0xb2c",
            "nt!KeBugCheckEx+0x107", "nt!KiBugCheckDispatch+0x69", "nt!KiPageFault+0x469",
        ]  # fmt: skip
        assert run(kd, "r rip") == "rip=fffff80062a05c20\n"


def test_g_at_a_bugcheck_breaks_again_at_once() -> None:
    # a Windows 10 19041 kd log (stored-index file id 44320646580): "1: kd> g" /
    # "Break instruction exception - code 80000003 (first chance)" / blank / the fatal lines /
    # "nt!DbgBreakPointWithStatus:" / int 3 -- no "*** Fatal System Error" header again
    with debugger(["kd", *KDNET], "bugcheck_mp") as kd:
        run(kd, "g")
        play(kd)
        again = run(kd, "g")
        assert kd.state == "broken"
        assert again == BUGCHECK_SEQUENCE[BUGCHECK_SEQUENCE.index("Break instruction"):].replace(
            "For analysis of this file, run !analyze -v\n", "")
        assert kd.prompt_text() == "1: kd> "


def test_the_first_analyze_after_a_live_bugcheck_reconnects_first() -> None:
    # "1: kd> !analyze -v" / "Connected to Windows 10 26100 x64 target at (Wed Jun 11
    # 11:05:56.399 2025 (UTC + 8:00)), ptr64 TRUE" / "Loading Kernel Symbols" / dot rows /
    # "Loading User Symbols" / ... / "Loading unloaded module list" / ... / the analysis
    with debugger(["kd", *KDNET], "bugcheck_mp") as kd:
        run(kd, "g")
        play(kd)
        first = run(kd, "!analyze -v")
        assert re.match(
            r"Connected to Windows 10 19041 x64 target at \(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\.\d{3} \d{4} "
            r"\(UTC \+ 0:00\)\), ptr64 TRUE\n"
            r"Loading Kernel Symbols\n\.{63}\n\.{64}\n\.{13}\n"
            r"Loading User Symbols\n\.+\n"
            r"Loading unloaded module list\n\.+\n"
            r"\*{79}\n",
            first,
        ), first[:400]
        assert "DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)" in first
        assert not run(kd, "!analyze -v").startswith("Connected to")  # only the first reloads
        assert parse("!analyze -v", first) is not None


def test_kd_refreshes_before_a_connects_first_stop_only() -> None:
    # corpus connect/04: the connect banner's "System Uptime" line, then
    # "KDTARGET: Refreshing KD connection", then "Break instruction exception - code 80000003"
    with debugger(["kd", *KDNET], "bugcheck_mp") as kd:
        run(kd, "g")
        first = ctrl_c(kd)
        assert first.startswith("KDTARGET: Refreshing KD connection\nBreak instruction exception - code 80000003")
        run(kd, "g")
        assert ctrl_c(kd).startswith("Break instruction exception")
        assert kd.prompt_text() == "0: kd> "


def test_a_dbgprint_without_a_line_end_is_glued_to_what_follows() -> None:
    with debugger(["kd", *KDNET], "glued") as kd:
        run(kd, "g")
        assert play(kd) == "MyDriver: polling device"  # DbgPrint("MyDriver: polling device") -- no \n
        assert play(kd).startswith("Breakpoint 0 hit\nnt!NtCreateFile:\n")  # on the same line as it


def test_printf_leaves_its_line_open_for_the_prompt() -> None:
    # ".printf does not automatically add a newline" (.printf): "abc" then "0: kd> " on its line
    with debugger(["kd", *KDNET]) as kd:
        assert run(kd, '.printf "abc"') == "abc"
        assert run(kd, '.printf "%p %d %x\\n", nt!KiBugCheckData, 0n10, 1f') == "fffff80063200b40 10 1f\n"
        assert run(kd, '.printf "%p", bogus!nothing') == "Couldn't resolve error at 'bogus!nothing'\n"
