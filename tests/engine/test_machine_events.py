"""SessionMachine: the events kd and cdb report as they report them (issue 29, item 1).

The streams are a real debugger's words, copied from published sessions: those in
fixtures/sessions/ (named beside each) or, marked "seen in", sessions the search tools found whose
repository could not be identified (so they are not fixtures). The exit-thread stop is
reconstructed from the documented forms (marked so): no published session shows one. Each test also runs its
stream split at every byte, so no chunking changes what the machine says.
"""

from __future__ import annotations

from kdmcp.engine.events import SessionState
from kdmcp.engine.machine import SessionMachine

S = SessionState


def _machine() -> SessionMachine:
    return SessionMachine(marker_prefix=b"KDMCPTESTN", clock=lambda: 1.5)


def _feed_both_ways(script: list[tuple[str, bytes]]) -> SessionMachine:
    """Run ``script`` (("feed", bytes) / ("go", echo)) whole and byte by byte; the two must agree."""
    results = []
    for split in (lambda d: [d], lambda d: [d[i : i + 1] for i in range(len(d))]):
        m = _machine()
        for action, data in script:
            if action == "go":
                m.go_sent(data or None)
            else:
                for chunk in split(data):
                    m.feed(chunk)
        results.append(m)
    whole, bytewise = results
    summary = [[(e.kind, e.text.strip() if e.kind == "dbgprint" else e.text, e.code, e.first_chance, e.stopped,
                 e.module, e.base, e.note) for e in m.events if e.kind != "dbgprint" or e.text.strip()]
               for m in results]
    dbgprint = ["".join(e.text for e in m.events if e.kind == "dbgprint").split() for m in results]
    assert summary[0] == summary[1] and dbgprint[0] == dbgprint[1]
    assert whole.state == bytewise.state
    return whole


KD_AT_PROMPT = b"Kernel Debugger connection established.\r\nSystem Uptime: 0 days\r\n0: kd> "


def _kinds(m: SessionMachine) -> list[str]:
    return [e.kind for e in m.events]


# cdb launching a program: seen in a rust debuginfo test's CI log (cdb 10.0.14321, pretty-std-collections-hash)
CDB_START = (
    b"\nMicrosoft (R) Windows Debugger Version 10.0.14321.1024 AMD64\n"
    b"Copyright (c) Microsoft Corporation. All rights reserved.\n\n"
    b"CommandLine: C:\\msys64\\home\\we\\rust\\build\\a.exe\n"
    b"Symbol search path is: srv*\n"
    b"Executable search path is: \n"
    b"ModLoad: 00007ff7`ed610000 00007ff7`ed627000   a.exe   \n"
    b"ModLoad: 00007ffb`1d610000 00007ffb`1d7bd000   ntdll.dll\n"
    b"SHIMVIEW: ShimInfo(Complete)\n"
    b"(1478.25f4): Break instruction exception - code 80000003 (first chance)\n"
    b"ntdll!LdrpDoDebuggerBreak+0x30:\n"
    b"00007ffb`1d6d1c20 cc              int     3\n"
    b"0:000> "
)


def test_cdb_start_up_lines_are_the_starts_and_modloads_are_module_loads():
    m = _feed_both_ways([("feed", CDB_START)])
    assert _kinds(m) == ["connected", "module_load", "module_load", "dbgprint", "break_in"]
    load = m.events[1]
    assert (load.module, load.base, load.module_end) == ("a.exe", "00007ff7`ed610000", "00007ff7`ed627000")
    # Only the shim engine's debug string is the debuggee's output: no symbol path, no ModLoad.
    assert m.events[3].text.strip() == "SHIMVIEW: ShimInfo(Complete)"
    assert m.events[4].stopped and not load.stopped and m.state == S.broken


def test_a_first_chance_exception_the_program_handles_lets_it_run_on():
    # fixtures/sessions/aiblog-cdb-attach-exit.txt: Control-C exceptions under "sxn", then the exit stop
    m = _feed_both_ways([
        ("feed", CDB_START), ("go", b"g\n"),
        ("feed", b"g\n(d04.1674): Control-C exception - code 40010005 (first chance)\n"
                 b"ModLoad: 00007fff`be540000 00007fff`be55b000   C:\\WINDOWS\\SYSTEM32\\kernel.appcore.dll\n"
                 b"ntdll!NtTerminateProcess+0x14:\n00007fff`c2782174 c3              ret\n0:000> "),
    ])
    exc, load, exit_ = list(m.events)[-3:]
    assert (exc.kind, exc.code, exc.first_chance, exc.stopped) == ("exception", "0x40010005", True, False)
    assert load.kind == "module_load" and not load.stopped
    assert exit_.kind == "process_exit" and exit_.stopped and m.state == S.broken


def test_a_first_chance_exception_that_stops_is_the_stops_reason():
    # the access violation cdb stops on, with its notice and registers: seen in an exploit's notes
    m = _feed_both_ways([
        ("feed", CDB_START), ("go", b""),
        ("feed", b"(a24.a74): C++ EH exception - code e06d7363 (first chance)\n"
                 b"(a24.a74): Access violation - code c0000005 (first chance)\n"
                 b"First chance exceptions are reported before any exception handling.\n"
                 b"This exception may be expected and handled.\n"
                 b"eax=ffffffff ebx=0000000b ecx=42424236 edx=baad0000 esi=0012f598 edi=004a3970\n"
                 b"eip=761dbb2d esp=0012f3c8 ebp=0012f590 iopl=0         nv up ei pl nz na po nc\n"
                 b"KERNELBASE!RaiseException+0x54:\n761dbb2d c9              leave\n0:000> "),
    ])
    cpp, av = list(m.events)[-2:]
    assert (cpp.code, cpp.stopped, av.code, av.first_chance, av.stopped) == (
        "0xe06d7363", False, "0xc0000005", True, True)
    assert not any(e.kind == "dbgprint" for e in list(m.events)[-2:])


def test_a_second_chance_exception_in_kd_and_cdb():
    m = _feed_both_ways([
        ("feed", CDB_START), ("go", b""),
        ("feed", b"(340.17cc): C++ EH exception - code e06d7363 (!!! second chance !!!)\n"
                 b"KERNELBASE!RaiseException+0x69:\n00007ffb`1aab1f28 48 ret\n0:000> "),
    ])
    assert (m.events[-1].code, m.events[-1].first_chance, m.events[-1].stopped) == ("0xe06d7363", False, True)


def test_a_bugcheck_stays_the_stops_reason_through_the_break_kd_prints_after_it():
    # the bugcheck, kd's own break, its notice: seen in a blog's Driver Verifier session (0xC4)
    m = _feed_both_ways([
        ("feed", b"Kernel Debugger connection established.\r\nSystem Uptime: 0 days 0:00:01.000\r\n1: kd> "),
        ("go", b""),
        ("feed", b"Sample driver Unload called\n\n*** Fatal System Error: 0x000000c4\n"
                 b"                       (0x00000062,0x86A84EBC,0x86A2D4F8,0x00000001)\n\n"
                 b"Break instruction exception - code 80000003 (first chance)\n\n"
                 b"A fatal system error has occurred.\n"
                 b"Debugger entered on first try; Bugcheck callbacks have not been invoked.\n\n"
                 b"For analysis of this file, run !analyze -v\n"
                 b"nt!RtlpBreakWithStatusInstruction:\n82a89110 int     3\n1: kd> "),
    ])
    newest = m.events[-1]
    assert (newest.kind, newest.code, newest.stopped) == ("bugcheck", "0x000000c4", True)
    assert [e.text.strip() for e in m.events if e.kind == "dbgprint"] == ["Sample driver Unload called"]


def test_kd_refreshing_its_connection_is_not_dbgprint():
    m = _feed_both_ways([
        ("feed", KD_AT_PROMPT), ("go", b""),
        ("feed", b"KDTARGET: Refreshing KD connection\r\n\r\n*** Fatal System Error: 0x00000050\r\n"
                 b"(0xFFFFB906D428D880,0x0000000000000002,0xFFFFF802125744AC,0x000000000000000C)\r\n"
                 b"Break instruction exception - code 80000003 (first chance)\r\n"
                 b"nt!DbgBreakPointWithStatus:\r\nfffff802`87541450 cc int 3\r\n0: kd> "),
    ])
    assert _kinds(m)[-1] == "bugcheck" and "dbgprint" not in _kinds(m)


def test_reboot_then_a_module_load_stop_and_breakpoints_to_re_arm():
    # seen in a blog's session debugging an lsass security package from boot (.reboot, sxe ld)
    m = _feed_both_ways([
        ("feed", b"Kernel Debugger connection established.\nSystem Uptime: 0 days\nkd> "), ("go", b""),
        ("feed", b"Shutdown occurred at (Wed Jul 25 21:34:14.874 2018 (UTC + 8:00))"
                 b"...unloading all symbol tables.\n"
                 b"Waiting to reconnect...\n"
                 b"Connected to Windows 10 17134 x64 target at (Wed Jul 25 21:34:26.826 2018 (UTC + 8:00)), "
                 b"ptr64 TRUE\n"
                 b"Kernel Debugger connection established.\n\n"
                 b"************* Path validation summary **************\n"
                 b"Response                         Time (ms)     Location\n"
                 b"Symbol search path is: *****\nExecutable search path is: \n"
                 b"Windows 10 Kernel Version 17134 MP (1 procs) Free x64\n"
                 b"System Uptime: 0 days 0:00:00.000\n"
                 b"nt!DebugService2+0x5:\nfffff803`7f3a70e5 cc              int     3\nkd> "),
        ("go", b""),
        ("feed", b"KDTARGET: Refreshing KD connection\nnt!DebugService2+0x5:\n"
                 b"fffff803`7f3a70e5 cc              int     3\n"
                 b"kd> "),
    ])
    kinds = _kinds(m)
    assert kinds[1:] == ["reboot", "reconnecting", "connected", "module_load", "module_load"]
    assert m.events[3].note is not None and "re-arm" in m.events[3].note and m.rearm_breakpoints
    assert all(e.stopped for e in list(m.events)[-2:]) and m.state == S.broken
    assert "dbgprint" not in kinds


def test_an_event_filters_lastevent_output_is_the_loads_not_dbgprint():
    # seen in notes on breaking on module loads: sxe -c ".lastevent ; g" ld, target running
    m = _feed_both_ways([
        ("feed", KD_AT_PROMPT), ("go", b"g\r\n"),
        ("feed", b"g\r\nLast event: Load module KmdfHelloWorld.sys at fffff806`30580000\r\n"
                 b"  debugger time: Mon Dec 29 22:30:24.627 2025 (UTC - 8:00)\r\n"
                 b"Last event: Load module hal.dll at fffff806`7bd60000\r\n"
                 b"  debugger time: Mon Dec 29 22:30:50.705 2025 (UTC - 8:00)\r\n"),
    ])
    loads = [e for e in m.events if e.kind == "module_load"]
    assert [(e.module, e.base, e.stopped) for e in loads] == [
        ("KmdfHelloWorld.sys", "fffff806`30580000", False), ("hal.dll", "fffff806`7bd60000", False)]
    assert "dbgprint" not in _kinds(m) and m.state == S.running


def test_a_typed_lastevent_is_command_output_not_an_event():
    m = _machine()
    m.feed(KD_AT_PROMPT)
    pending = m.command_sent(m.new_marker())
    m.feed(b"Last event: Load module hal.dll at fffff806`7bd60000\r\n  debugger time: Mon\r\n"
           b"0: kd> KDMCPTESTN1\r\n0: kd> ")
    assert pending.done and "module_load" not in _kinds(m)


def test_no_runnable_debuggees_is_the_exit_once():
    m = _feed_both_ways([
        ("feed", CDB_START), ("go", b"g\n"),
        ("feed", b"g\n       ^ No runnable debuggees error in 'g'\n0:000> "), ("go", b"g\n"),
        ("feed", b"g\n       ^ No runnable debuggees error in 'g'\n0:000> "),
    ])
    assert _kinds(m).count("process_exit") == 1 and "dbgprint" not in _kinds(m)[5:]


def test_an_exit_thread_and_an_unload_stop():
    # reconstructed: the exit-thread stop by analogy with the exit-process one, the unload line as
    # a cdb front end's source quotes it ("Unload module C:\Windows\System32\wininet.dll at ...")
    m = _feed_both_ways([
        ("feed", CDB_START), ("go", b""),
        ("feed", b"ntdll!NtTerminateThread+0x14:\n00007ffb`1d6d0a14 c3              ret\n0:000> "), ("go", b""),
        ("feed", b"Unload module C:\\Windows\\System32\\wininet.dll at 00007ffa`0b670000\n"
                 b"ntdll!NtUnmapViewOfSection+0x14:\n00007ffb`1d6d0b14 c3              ret\n0:000> "),
    ])
    thread_exit, unload = list(m.events)[-2:]
    assert (thread_exit.kind, thread_exit.stopped) == ("thread_exit", True)
    assert (unload.kind, unload.module, unload.base, unload.stopped) == (
        "module_unload", "C:\\Windows\\System32\\wininet.dll", "00007ffa`0b670000", True)


def test_an_exception_only_reported_then_an_exit_stop():
    # the exception line as skullbonez-cdb-launch reports one the program survives; the exit stop as
    # aiblog-cdb-attach-exit shows it. A first-chance stop would print its notice first.
    m = _feed_both_ways([
        ("feed", CDB_START), ("go", b""),
        ("feed", b"(af38.d590): C++ EH exception - code e06d7363 (first chance)\n"
                 b"ntdll!NtTerminateProcess+0x14:\n00007fff`c2782174 c3              ret\n0:000> "),
    ])
    exc, exit_ = [e for e in m.events if e.kind in ("exception", "process_exit")]
    assert (exc.code, exc.first_chance, exc.stopped) == ("0xe06d7363", True, False)
    assert exit_.stopped and m.state == S.broken


def test_kd_unload_notices_and_an_sxe_ud_stop():
    # fixtures/sessions/geocausa-kd-arm64-unload-logopen.log: after "sxe ud:qccamsecureisp8380.sys"
    # kd stops at that unload (on ARM64 at nt!DebugService2+0x8, "brk #0xF000") and prints the
    # other images' unloads while the target runs
    m = _feed_both_ways([
        ("feed", KD_AT_PROMPT), ("go", b"g\r\n"),
        ("feed", b"g\r\n\r\nUnload module qccamsecureisp8380.sys at fffff803`7c6d0000\r\n"
                 b"nt!DebugService2+0x8:\r\nfffff803`7e001408 d43e0000 brk         #0xF000\r\n5: kd> "),
        ("go", b"g\r\n"),
        ("feed", b"g\r\nDriverEntry failed 0xc0000034 for driver \\REGISTRY\\MACHINE\\SYSTEM\\ControlSet001"
                 b"\\Services\\WUDFRd\r\nUnload module WUDFRd.sys at fffff803`7fac0000\r\n"
                 b"qcsp [spcomEvtDeviceAdd] device count [1] .\r\n"),
    ])
    stop, notice = [e for e in m.events if e.kind == "module_unload"]
    assert (stop.module, stop.base, stop.stopped) == ("qccamsecureisp8380.sys", "fffff803`7c6d0000", True)
    assert (notice.module, notice.base, notice.stopped) == ("WUDFRd.sys", "fffff803`7fac0000", False)
    assert "module_load" not in _kinds(m) and m.state == S.running
    dbgprint = "".join(e.text for e in m.events if e.kind == "dbgprint")
    assert "DriverEntry failed" in dbgprint and "qcsp [spcomEvtDeviceAdd]" in dbgprint and "Unload" not in dbgprint


def test_an_exit_stop_whose_lines_carry_trailing_blanks():
    # fixtures/sessions/msmania-cdb-launch-exit.txt (Windows 8.1's ntdll: +0xa, each line ending in
    # two blanks as the blog printed them): the exit stop and a t's step are still stops
    m = _feed_both_ways([
        ("feed", CDB_START), ("go", b"t  \r\n"),
        ("feed", b"t  \r\ntest!ILT+5(?Func1ClassAQEAAXXZ):  \r\n"
                 b"00007ff7`f40d100a e9c1000000      jmp     test!ClassA::Func1 (00007ff7`f40d10d0)  \r\n0:000> "),
        ("go", b"g  \r\n"),
        ("feed", b"g  \r\n+ClassA::Func1()  \r\nntdll!NtTerminateProcess+0xa:  \r\n"
                 b"00007ffe`85170f0a c3              ret  \r\n0:000> "),
    ])
    kinds = [e.kind for e in m.events if e.kind not in ("dbgprint", "module_load")]
    assert kinds[-2:] == ["step", "process_exit"] and m.events[-1].stopped
    assert "".join(e.text for e in m.events if e.kind == "dbgprint").strip().endswith("+ClassA::Func1()")


def test_the_no_target_prompt_and_a_glued_prompt_end_a_stop():
    m = _feed_both_ways([("feed", b"Microsoft (R) Windows Debugger Version 10.0\r\n?:???> ")])
    assert m.state == S.broken and m.prompt is not None and m.prompt.mode == "no_target"
    m = _feed_both_ways([
        ("feed", CDB_START), ("go", b""),
        ("feed", b"hello without a line end0:000> "),
    ])
    assert m.state == S.broken and m.prompt is not None and m.prompt.text == "0:000> "
    assert [e.text for e in m.events if e.kind == "dbgprint"][-1].strip() == "hello without a line end"
