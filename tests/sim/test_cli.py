"""``python -m kdmcp.sim`` (kdmcp/sim/cli.py and all behind it) on its own, byte for byte, as kd.exe / cdb.exe
would show it.

Driven through pexpect: ``PopenSpawn`` for pipes (kd writes ``\\r\\n`` and no echo) and
``spawn`` for a pty (the terminal echoes what is typed). Every expect has a timeout.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from pexpect.popen_spawn import PopenSpawn

from tests.conftest import scenario

pytestmark = pytest.mark.process  # starts processes (tests/tiers.py)

KDNET = ["-k", "net:port=50000,key=1.2.3.4"]
T = 10  # seconds: the bound on every expect


def sim_pipes(*args: str) -> PopenSpawn:
    return PopenSpawn([sys.executable, "-m", "kdmcp.sim", *args], timeout=T)


def reap(child: PopenSpawn | pexpect.spawn) -> None:
    """Kill if still running, wait, and close every descriptor."""
    if isinstance(child, PopenSpawn):
        if child.proc.poll() is None:
            child.proc.kill()
        child.proc.wait(timeout=T)
        child._read_thread.join(timeout=T)
        for stream in (child.proc.stdin, child.proc.stdout):
            if stream is not None:
                stream.close()
    else:
        child.close(force=True)


@pytest.fixture
def children() -> Iterator[list]:
    started: list = []
    yield started
    for child in started:
        reap(child)


@pytest.fixture(scope="module")
def kd_at_initial_break() -> Iterator[tuple[PopenSpawn, str]]:
    """One ``kd -b`` on pipes, shared by the tests that need only that: the process and what it
    printed before its first prompt. Each user leaves it at a prompt, the prompt read."""
    kd = sim_pipes("kd", "-b", *KDNET)
    try:
        kd.expect_exact("0: kd> ")
        yield kd, kd.before.decode()
    finally:
        reap(kd)


def test_kdnet_banner_then_initial_break_prompt_exact_bytes(kd_at_initial_break):
    _, text = kd_at_initial_break
    assert text.startswith(
        "\r\nMicrosoft (R) Windows Debugger Version 10.0.26100.1 AMD64\r\n"
        "Copyright (c) Microsoft Corporation. All rights reserved.\r\n\r\n"
        "Using NET for debugging\r\nOpened WinSock 2.0\r\nWaiting to reconnect...\r\n"
        "Connected to target 127.0.0.2 on port 50000 on local IP 127.0.0.1\r\n"
    )
    assert "Kernel Debugger connection established.  (Initial Breakpoint requested)\r\n" in text
    assert "Windows 10 Kernel Version 19041 MP (4 procs) Free x64\r\n" in text
    assert text.endswith(
        "Break instruction exception - code 80000003 (first chance)\r\n"
        + "*" * 79 + "\r\n"
        + text.split("*" * 79 + "\r\n", 1)[1].rsplit("*" * 79 + "\r\n", 1)[0]
        + "*" * 79 + "\r\n"
        "nt!DbgBreakPointWithStatus:\r\nfffff800`62a05c20 cc              int     3\r\n"
    )
    assert "THIS IS NOT A BUG OR A SYSTEM CRASH" in text


def test_wrong_key_waits_forever(children):
    kd = sim_pipes("kd", "--scenario", scenario("strict_key"), "-k", "net:port=50005,key=a.b.c.d")
    children.append(kd)
    kd.expect_exact("Waiting to reconnect...\r\n")
    with pytest.raises(pexpect.TIMEOUT):
        kd.expect_exact("Connected", timeout=0.5)
    assert kd.proc.poll() is None


def test_malformed_key_is_not_accepted(children):
    kd = sim_pipes("kd", "-k", "net:port=50000,key=not-a-key")
    children.append(kd)
    kd.expect_exact("Waiting to reconnect...\r\n")
    with pytest.raises(pexpect.TIMEOUT):
        kd.expect_exact("Connected", timeout=0.5)


def test_target_runs_after_connect_until_sigint(children):
    kd = sim_pipes("kd", *KDNET)
    children.append(kd)
    kd.expect_exact("Kernel Debugger connection established.\r\n")
    kd.expect_exact("System Uptime:")
    # Running: typed input waits unread until the next stop.
    kd.sendline(".echo queued")
    with pytest.raises(pexpect.TIMEOUT):
        kd.expect_exact("kd> ", timeout=0.3)
    kd.kill(signal.SIGINT)
    kd.expect_exact("Break instruction exception - code 80000003 (first chance)\r\n")
    kd.expect_exact("nt!DbgBreakPointWithStatus:\r\n")
    kd.expect_exact("0: kd> ")
    kd.expect_exact("queued\r\n0: kd> ")


def test_a_burst_of_ctrl_c_at_the_prompt_loses_neither_input_nor_the_next_break(kd_at_initial_break):
    # A storm of break-in requests lands on a debugger already at its prompt (every client
    # asking at once): kd drops them, then must still read the g and break on the next one.
    # (The exact state that once blocked the simulator here: tests/sim/test_console_io.py.)
    kd, _ = kd_at_initial_break  # at its prompt, the prompt read
    for _ in range(5):
        for _ in range(500):
            kd.kill(signal.SIGINT)
        kd.sendline(".echo still reading")
        kd.expect_exact("still reading\r\n0: kd> ")
        kd.sendline("g")
        with pytest.raises(pexpect.TIMEOUT):
            kd.expect_exact("kd> ", timeout=0.05)  # running: no prompt until a break-in
        kd.kill(signal.SIGINT)
        kd.expect_exact("Break instruction exception - code 80000003 (first chance)\r\n")
        kd.expect_exact("0: kd> ")


def test_pty_echo_processor_switch_and_empty_line_repeat(children):
    kd = pexpect.spawn(sys.executable, ["-m", "kdmcp.sim", "kd", "-b", *KDNET], timeout=T)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    kd.sendline("~2s")
    kd.expect_exact("~2s\r\n")  # the terminal's echo
    # processor 2 was frozen by the break-in on processor 0: kd shows where its thread is
    kd.expect_exact("nt!KiFreezeTargetExecution+0x1b9:\r\n")
    kd.expect_exact("2: kd> ")
    kd.sendline(".echo again")
    kd.expect_exact("again\r\n2: kd> ")
    kd.sendline("")  # kd repeats the last command
    kd.expect_exact("again\r\n2: kd> ")
    kd.sendline("~9s")
    kd.expect_exact("9 is not a valid processor number")
    kd.sendline("q")
    kd.expect_exact("quit:")
    kd.expect(pexpect.EOF)
    kd.close()
    assert kd.exitstatus == 0


def test_ctrl_c_on_a_pty_breaks_in(children):
    kd = pexpect.spawn(sys.executable, ["-m", "kdmcp.sim", "kd", *KDNET], timeout=T)
    children.append(kd)
    kd.expect_exact("System Uptime:")
    kd.sendintr()
    kd.expect_exact("Break instruction exception - code 80000003 (first chance)")
    kd.expect_exact("0: kd> ")


def test_prompt_forms(children, tmp_path):
    dump = tmp_path / "MEMORY.DMP"
    dump.write_bytes(b"PAGEDU64")
    cases = [
        (["kd", "--scenario", scenario("strict_key"), "-b", "-k",
          "net:port=50005,key=2steg4fzbj2sz.3tqgjxx3kdz6y.1thq6ipbwyebm.2y9aa2z6g1tdk"], "\r\nkd> "),
        (["kd", "-kl"], "lkd> "),
        (["kd", "-z", str(dump)], "0: kd> "),
        (["cdb", "-z", str(dump)], "0:000> "),
        (["cdb", "-p", "4242"], "0:002> "),  # attached: the break-in thread
        (["cdb", "C:\\app.exe", "--flag"], "0:000> "),
    ]
    # All started before any is read: their start-ups overlap instead of adding up.
    children.extend(sim_pipes(*argv) for argv, _ in cases)
    for child, (_, prompt) in zip(children, cases, strict=True):
        child.expect_exact(prompt)
    cdb = children[3]
    cdb.sendline(".effmach x86")
    cdb.expect_exact("Effective machine: x86 compatible (x86)\r\n0:000:x86> ")


def test_dump_banner_and_missing_dump(children, tmp_path):
    dump = tmp_path / "MEMORY.DMP"
    dump.write_bytes(b"PAGEDU64")
    kd = sim_pipes("kd", "-z", str(dump))
    missing = sim_pipes("kd", "-z", str(tmp_path / "nope.dmp"))  # started now: the start-ups overlap
    children.extend((kd, missing))
    kd.expect_exact(f"Loading Dump File [{dump}]\r\n")
    kd.expect_exact("For analysis of this file, run !analyze -v\r\n")
    kd.expect_exact("0: kd> ")
    kd.sendline("g")
    kd.expect_exact("No runnable debuggees error in 'g'")
    missing.expect_exact("Win32 error 0n2")
    missing.expect(pexpect.EOF)
    assert missing.wait() == 1


def test_cdb_launch_and_attach_banners(children):
    cdb = sim_pipes("cdb", "C:\\app.exe", "--flag")
    children.append(cdb)
    cdb.expect_exact("CommandLine: C:\\app.exe --flag\r\n")
    cdb.expect_exact("(1a2c.1a8): Break instruction exception - code 80000003 (first chance)\r\n")
    cdb.expect_exact("0:000> ")
    cdb.kill(signal.SIGINT)  # at a prompt Ctrl+C changes nothing
    cdb.sendline("g")
    # the launched app runs into its access violation (the user world's exception scenario)
    cdb.expect_exact("(1a2c.1a8): Access violation - code c0000005 (first chance)\r\n")
    cdb.expect_exact("0:000> ")
    attach = sim_pipes("cdb", "-p", "4242")
    children.append(attach)
    attach.expect_exact("0:002> ")
    attach.sendline(".echo running; g")  # the echo shows once the line runs, the g with it
    attach.expect_exact("running\r\n")
    attach.kill(signal.SIGINT)
    attach.expect_exact("(1092.5d0): Break instruction exception - code 80000003 (first chance)\r\n")
    attach.expect_exact("ntdll!DbgBreakPoint:\r\n")
    attach.expect_exact("0:002> ")  # Ctrl+C breaks in on a thread of its own


def test_initial_command_and_server_options(children):
    kd = sim_pipes("kd", "-server", "tcp:port=1025:65535", "-c", ".echo first", "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("Server started.  Client can connect with any of these command lines\r\n")
    kd.expect(r"0: <debugger> -remote tcp:Port=\d+,Server=\S+\r\n")  # the first free port (test_remoting.py)
    kd.expect_exact("0: kd> .echo first\r\nfirst\r\n0: kd> ")


def test_scripted_run_dbgprint_then_breakpoint(children):
    kd = sim_pipes("kd", "--scenario", scenario("running"), "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    kd.sendline("g")
    kd.expect_exact("EchoDriver: DriverEntry called\r\n")
    kd.expect_exact("EchoDriver: AddDevice 0xffffc50e`3a1b2c30\r\n")
    kd.expect_exact("Breakpoint 0 hit\r\nnt!NtCreateFile:\r\n")
    kd.expect_exact("0: kd> ")


def test_bugcheck_stop_text(children):
    kd = sim_pipes("kd", "--scenario", scenario("bugcheck"), "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    kd.sendline("g")
    kd.expect_exact("*** Fatal System Error: 0x000000d1\r\n"
                    "                       (0xFFFFD0010B3E5000,0x0000000000000002,"
                    "0x0000000000000000,0xFFFFF80764A51234)\r\n")
    kd.expect_exact("A fatal system error has occurred.\r\n")
    kd.expect_exact("0: kd> ")


def test_a_bugcheck_on_processor_1_moves_the_prompt_and_printf_leaves_it_glued(children):
    """The whole sequence on pipes, byte for byte where it is fixed (set1 exceptions_errors/a_14):
    the refresh, the header, kd's break, the prompt on the crashing processor; g breaks again;
    a .printf without a line end has the prompt on its line."""
    kd = sim_pipes("kd", "--scenario", scenario("bugcheck_mp"), "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("KDTARGET: Refreshing KD connection\r\nBreak instruction exception")  # the first stop's
    kd.expect_exact("0: kd> ")
    kd.sendline("g")
    kd.expect_exact("\r\n*** Fatal System Error: 0x000000d1\r\n")
    kd.expect_exact("For analysis of this file, run !analyze -v\r\nnt!DbgBreakPointWithStatus:\r\n")
    kd.expect_exact("int     3\r\n1: kd> ")
    kd.sendline("g")
    kd.expect_exact("Break instruction exception - code 80000003 (first chance)\r\n\r\nA fatal system error")
    kd.expect_exact("int     3\r\n1: kd> ")
    kd.sendline('.printf "still here"')
    kd.expect_exact("still here1: kd> ")


def test_a_program_that_ends_under_cdb(children):
    """cdb's run to the end (world.program: exits): ModLoad and (after sxn ud) Unload module while
    running, the first-chance C++ exception, the exit stop, then nothing runs."""
    cdb = sim_pipes("cdb", "--scenario", scenario("program_exits"), "C:\\target\\app.exe")
    children.append(cdb)
    cdb.expect_exact("0:000> ")
    cdb.sendline("sxn ud")
    cdb.expect_exact("0:000> ")
    cdb.sendline("g")
    cdb.expect_exact("ModLoad: 00007ffc`7f9a0000 00007ffc`7f9b6000   C:\\target\\plugin.dll\r\n")
    cdb.expect_exact("(1a2c.1a8): C++ EH exception - code e06d7363 (first chance)\r\n")
    cdb.expect_exact("Unload module C:\\target\\plugin.dll at 00007ffc`7f9a0000\r\n")
    cdb.expect_exact("ntdll!NtTerminateProcess+0x14:\r\n00007ffc`81a953c4 c3              ret\r\n0:000> ")
    cdb.sendline("g")
    cdb.expect_exact("       ^ No runnable debuggees error in 'g'\r\n0:000> ")


def test_reboot_and_reconnect(children):
    kd = sim_pipes("kd", "--scenario", scenario("reboot"), "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    kd.sendline(".reboot")
    # set1 connect/a_10 (KDNET): the transport starts again before "Waiting to reconnect..."
    kd.expect(
        rb"Shutdown occurred at \(.+\)\.\.\.unloading all symbol tables\.\r\n"
        rb"Using NET for debugging\r\nOpened WinSock 2\.0\r\nWaiting to reconnect\.\.\.\r\n"
    )
    kd.expect_exact("Kernel Debugger connection established.  (Initial Breakpoint requested)\r\n")
    kd.expect_exact("0: kd> ")


def test_transport_loss_text(children):
    kd = sim_pipes("kd", "--scenario", scenario("transport"), "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    kd.sendline("g")
    kd.expect_exact("Retry sending the same data packet for 64 times.\r\n")
    kd.expect_exact("Waiting to reconnect...\r\n")
    kd.expect_exact("Kernel Debugger connection established.")


def test_ctrl_b_quits_while_running(children):
    kd = sim_pipes("kd", *KDNET)
    children.append(kd)
    kd.expect_exact("System Uptime:")
    kd.send(b"\x02\n")
    kd.expect(pexpect.EOF)
    assert kd.wait() == 0


def test_fault_knobs(children):
    kd = sim_pipes("kd", "--scenario", scenario("faults"), "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    kd.sendline("!binary")
    kd.expect_exact(b"bytes follow:\r\n" + bytes.fromhex("41fffe0042c328e282280a43000a") + b"0: kd> ")
    kd.sendline("!bulk1")
    kd.expect_exact("0: kd> ")
    lines = kd.before.split(b"\r\n")
    assert len(lines) == 1024 * 1024 // 64 + 1 and lines[0].startswith(b"ffffd000`00000000  ")
    kd.sendline("!crash")
    kd.expect(pexpect.EOF)
    assert kd.before == b"Loading extension...\r\nWalking 4096 entries\r\n0001 fffff800`62"  # 60 bytes emitted
    assert kd.wait() == 3


def test_sigint_cancels_a_soft_hang(children):
    kd = sim_pipes("kd", "--scenario", scenario("faults"), "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    kd.sendline("!hang")
    kd.expect_exact("Scanning pool...\r\n")
    with pytest.raises(pexpect.TIMEOUT):
        kd.expect_exact("kd> ", timeout=0.3)
    kd.kill(signal.SIGINT)
    kd.expect_exact("0: kd> ")


def test_usage_errors_exit_2(children):
    argvs = (["kd"], ["notadebugger"], ["cdb", "-p", "abc"], ["kd", "--scenario"])
    children.extend(sim_pipes(*argv) for argv in argvs)  # all at once: the start-ups overlap
    for child, argv in zip(children, argvs, strict=True):
        child.expect(pexpect.EOF)
        assert child.wait() == 2, argv


def test_a_real_minidump_answers_from_what_it_holds(children):
    """``cdb -z`` on a real minidump: its banner, the event thread's prompt, and ``.exr -1``,
    ``~`` and ``lm`` from the dump (thread_name_list.dmp: the exception is on thread 5)."""
    dump = Path(__file__).resolve().parents[2] / "fixtures" / "dumps" / "thread_name_list.dmp"
    cdb = sim_pipes("cdb", "-z", str(dump))
    children.append(cdb)
    cdb.expect_exact("User Mini Dump File: Only registers, stack and portions of memory are available\r\n")
    cdb.expect_exact("Windows 10 Version 17763 ")
    cdb.expect_exact(".2ae0): Access violation - code c0000005 (first/second chance not available)\r\n")
    cdb.expect_exact("0:005> ")
    cdb.sendline(".exr -1")
    cdb.expect_exact("ExceptionAddress: 004015fd (")
    cdb.expect_exact("   ExceptionCode: c0000005 (Access violation)\r\n")
    cdb.expect_exact("0:005> ")
    cdb.sendline("~")
    cdb.expect_exact(".  5  Id: 1798.2ae0 Suspend: ")
    cdb.expect_exact("0:005> ")
    cdb.sendline("lm")
    cdb.expect_exact("start    end        module name\r\n")
    cdb.expect_exact("0:005> ")
    cdb.sendline("g")
    cdb.expect_exact("No runnable debuggees error in 'g'")
