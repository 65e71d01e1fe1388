"""stop_rules: a stop's kind by its place, whether an exception stopped, commands that resume at a stop."""

from __future__ import annotations

import pytest

from kdmcp.engine.machine import SessionMachine
from kdmcp.engine.stop_rules import AutoCommands, exception_stopped, location_kind


@pytest.mark.parametrize(
    ("location", "kind"),
    [
        (b"ntdll!NtTerminateProcess+0x14:\n00007ff8`785824f4 c3 ret", "process_exit"),  # sincon-cdb-lab0
        (b"ntdll!ZwTerminateThread+0x14:\n00007ff8`785824f4 c3 ret", "thread_exit"),
        (b"nt!DebugService2+0x5:\nfffff803`7f3a70e5 cc int 3", "module_load"),
        (b"winload!DbgLoadImageSymbols+0x44:\n005632aa cc int 3", "module_load"),  # ioctlfuzzer-kd-logopen
        (b"nt!DbgLoadImageSymbols+0x47:\n83c19fa6 cc int 3", "module_load"),
        (b"Lab0!main+0x31:\n00007ff6`d5931151 e86a000000 call Lab0!printf", None),
        (b"myntdll!NtTerminateProcess+0x14:\n00007ff8`785824f4 c3 ret", None),
    ],
)
def test_a_stop_is_named_by_its_place(location, kind):
    assert location_kind(location) == kind


@pytest.mark.parametrize(
    ("text", "event_next", "verdict"),
    [
        (b"\r\nFirst chance exceptions are reported before any exception handling.\r\n", False, True),
        (b"\neax=00000000 ebx=00000000 ecx=00000f9c edx=00e23600 esi=00000003 edi=00000003\n", False, True),
        (b"\nChild-SP          RetAddr               Call Site\n", False, False),  # a filter's kP output
        (b"\r\n", True, False),  # another event line next: only reported
        (b"\r\nFirst chance", False, None),  # the next line is not whole yet
    ],
)
def test_whether_an_exception_stopped_comes_from_the_line_after_it(text, event_next, verdict):
    assert exception_stopped(text, event_next=event_next) is verdict


def test_commands_that_resume_are_learned_and_forgotten():
    auto = AutoCommands()
    auto.learn('sxe -c "kP 20; g" eh')  # skullbonez-cdb-launch
    auto.learn('sxe -c ".lastevent ; g" ld')
    auto.learn('bp5 nt!NtCreateFile "dt nt!_OBJECT_ATTRIBUTES @r8; gc"')
    auto.learn("sxe -c \"r\" av")  # a command that does not resume: the stop stays a stop
    assert auto.resumes_after("exception", "0xe06d7363", None)
    assert not auto.resumes_after("exception", "0xc0000005", None)
    assert auto.resumes_after("module_load", None, None)
    assert auto.resumes_after("breakpoint", None, 5) and not auto.resumes_after("breakpoint", None, 1)
    auto.learn("sxe eh")  # set again without a command
    assert not auto.resumes_after("exception", "0xe06d7363", None)


def test_a_breakpoints_resuming_command_prints_the_stops_output_not_dbgprint():
    m = SessionMachine(marker_prefix=b"KDMCPTESTN", clock=lambda: 0.0)
    m.feed(b"Kernel Debugger connection established.\r\nSystem Uptime: 0 days\r\n0: kd> ")
    pending = m.command_sent(m.new_marker(), 'bp1 nt!NtCreateFile "dt nt!_UNICODE_STRING poi(@r8+10); g"')
    m.feed(b"0: kd> KDMCPTESTN1\r\n0: kd> ")
    assert pending.done
    m.go_sent(None, command="g")
    m.feed(b"MyDriver: before\r\nBreakpoint 1 hit\r\n +0x000 Length : 0x2c\r\n +0x008 Buffer : 0xffff\r\n"
           b"Breakpoint 1 hit\r\n +0x000 Length : 0x30\r\n")
    prints = [e.text.strip() for e in m.events if e.kind == "dbgprint"]
    assert prints == ["MyDriver: before"]
    assert [e.kind for e in m.events if e.kind == "breakpoint"] == ["breakpoint", "breakpoint"]
    assert m.state.value == "running"
