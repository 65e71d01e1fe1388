"""The debugger's own words: banners and event text, as kd.exe / cdb.exe print them.

Each string follows a published transcript (``../shared/corpus/connect``, Microsoft's docs);
where no transcript shows a message, the closest documented wording is used and marked.
"""

from __future__ import annotations

import time

from kdmcp.sim.scenario import Scenario

VERSION_BANNER = (
    "\n"
    "Microsoft (R) Windows Debugger Version 10.0.26100.1 AMD64\n"
    "Copyright (c) Microsoft Corporation. All rights reserved.\n"
    "\n"
)

# corpus connect/04: the box kd prints when a Ctrl+C / Ctrl+Break break-in arrives.
BREAK_BOX = (
    "*******************************************************************************\n"
    "*                                                                             *\n"
    "*   You are seeing this message because you pressed either                    *\n"
    "*       CTRL+C (if you run console kernel debugger) or,                       *\n"
    "*       CTRL+BREAK (if you run GUI kernel debugger),                          *\n"
    "*   on your debugger machine's keyboard.                                      *\n"
    "*                                                                             *\n"
    "*                   THIS IS NOT A BUG OR A SYSTEM CRASH                       *\n"
    "*                                                                             *\n"
    "* If you did not intend to break into the debugger, press the \"g\" key, then   *\n"
    "* press the \"Enter\" key now.  This message might immediately reappear.  If it *\n"
    "* does, press \"g\" and \"Enter\" again.                                          *\n"
    "*                                                                             *\n"
    "*******************************************************************************\n"
)

BREAK_EXCEPTION = "Break instruction exception - code 80000003 (first chance)\n"

# Documented KDNET give-up message (no corpus sample; wording from kd's KDNET transport).
TRANSPORT_LOSS = (
    "Retry sending the same data packet for 64 times.\n"
    "The transport connection between host kernel debugger and target Windows seems lost.\n"
    "please try resync with target, recycle the host debugger, or reboot the target Windows.\n"
)


def timestamp() -> str:
    """kd's time format: ``Wed Feb 28 17:16:23.051 2018 (UTC - 8:00)``."""
    now = time.time()
    t = time.gmtime(now)
    millis = int((now % 1) * 1000)
    return time.strftime("%a %b %e %H:%M:%S", t) + f".{millis:03d} " + time.strftime("%Y", t) + " (UTC + 0:00)"


def kdnet_waiting(symbol_path: str | None) -> str:
    """What kd prints from start until the target answers (corpus connect/01, connect/02)."""
    del symbol_path
    return VERSION_BANNER + "Using NET for debugging\nOpened WinSock 2.0\nWaiting to reconnect...\n"


def kdnet_connected(sc: Scenario, port: int, initial_break: bool, symbol_path: str | None) -> str:
    """Connection banner, corpus connect/01 shape."""
    t = sc.target
    requested = "  (Initial Breakpoint requested)" if initial_break else ""
    return (
        f"Connected to target {t.ip} on port {port} on local IP 127.0.0.1\n"
        "You can get the target MAC address by running .kdtargetmac command.\n"
        f"Connected to {t.os_name} {t.build} {t.arch} target at ({timestamp()}), ptr64 TRUE\n"
        f"Kernel Debugger connection established.{requested}\n"
        + system_summary(sc, symbol_path)
    )


def system_summary(sc: Scenario, symbol_path: str | None) -> str:
    """The symbol path / kernel version block that follows a connect or dump load."""
    t = sc.target
    mp = "MP" if t.processors > 1 else "UP"
    return (
        f"Symbol search path is: {symbol_path or 'srv*'}\n"
        "Executable search path is: \n"
        f"{t.os_name} Kernel Version {t.build} {mp} ({t.processors} procs) Free {t.arch}\n"
        "Product: WinNt, suite: TerminalServer SingleUserTS\n"
        f"Edition build lab: {t.build_lab}\n"
        "Machine Name:\n"
        f"Kernel base = 0x{t.kernel_base} PsLoadedModuleList = 0x{t.ps_loaded_module_list}\n"
        f"Debug session time: {timestamp()}\n"
        "System Uptime: 0 days 0:00:20.534\n"
    )


def break_location(sc: Scenario) -> str:
    t = sc.target
    return f"{t.break_symbol}:\n{t.break_address} cc              int     3\n"


def kernel_break_in(sc: Scenario) -> str:
    """Ctrl+C while the kernel target runs (corpus connect/04)."""
    return BREAK_EXCEPTION + BREAK_BOX + break_location(sc)


def user_break_in(pid: int, tid: int) -> str:
    """Ctrl+C in cdb: the break thread's banner (corpus connect/07, connect/08)."""
    return (
        f"({pid:x}.{tid:x}): {BREAK_EXCEPTION}"
        "ntdll!DbgBreakPoint:\n"
        "00007ffc`81a986a0 cc              int     3\n"
    )


def breakpoint_hit(number: int) -> str:
    """A breakpoint stop (corpus misc/05, stack/07)."""
    return (
        f"Breakpoint {number} hit\n"
        "nt!NtCreateFile:\n"
        "fffff800`62c3a1e0 4881ec88000000  sub     rsp,88h\n"
    )


# What kd prints when the target asks it to refresh the connection, before the first stop
# after a connect. Real sessions: set1 connect/a_13 (after the connect banner's "System
# Uptime" line), misc/a_12 ("kd> g" / this line / "nt!DebugService2+0x5:"), exceptions_errors/
# a_14 ("0: kd> g" / this line / "*** Fatal System Error: 0x00000050"), corpus connect/04
# (before a break-in's "Break instruction exception").
KD_REFRESH = "KDTARGET: Refreshing KD connection\n"

# The lines kd prints after a bugcheck's break (set1 exceptions_errors/a_14; Microsoft's
# "Handling a Bug Check When Driver Verifier is Enabled").
FATAL_LINES = (
    "A fatal system error has occurred.\n"
    "Debugger entered on first try; Bugcheck callbacks have not been invoked.\n"
    "\n"
    "A fatal system error has occurred.\n"
    "\n"
)


def bugcheck(sc: Scenario, code: int, args: list[int]) -> str:
    """A bugcheck stop as kd shows it before ``!analyze -v``: the header kd prints from
    ``KeBugCheck2``'s ``DbgPrintEx("\\n*** Fatal System Error: 0x%08lx\\n ... (0x%p,0x%p,0x%p,0x%p)\\n\\n")``,
    its own break, the fatal lines, the hint, the break location (set1 exceptions_errors/a_14,
    a Windows 10 26100 session, verbatim but for the addresses)."""
    params = ",".join(f"0x{a:016X}" for a in [*args, 0, 0, 0, 0][:4])
    return (
        "\n"
        f"*** Fatal System Error: 0x{code:08x}\n"
        f"                       ({params})\n"
        "\n"
        + BREAK_EXCEPTION
        + "\n"
        + FATAL_LINES
        + "For analysis of this file, run !analyze -v\n"
        + break_location(sc)
    )


def bugcheck_again(sc: Scenario) -> str:
    """``g`` at a bugcheck stop: the machine cannot go on, kd breaks again at once with the
    fatal lines and no header. Real session (a Windows 10 19041 kd log, stored-index file id
    44320646580)::

        1: kd> g
        Break instruction exception - code 80000003 (first chance)

        A fatal system error has occurred.
        Debugger entered on first try; Bugcheck callbacks have not been invoked.

        A fatal system error has occurred.

        nt!DbgBreakPointWithStatus:
        fffff804`445fd0b0 cc              int     3
    """
    return BREAK_EXCEPTION + "\n" + FATAL_LINES + break_location(sc)


def analyze_reload(sc: Scenario) -> str:
    """What the first ``!analyze -v`` after a live bugcheck prints before its analysis: kd
    reloads the target's state. Real sessions: Microsoft's "Handling a Bug Check When Driver
    Verifier is Enabled" (windows-driver-docs: "0: kd> !analyze -v" / "Connected to Windows 8
    9200 x64 target at (...), ptr64 TRUE" / "Loading Kernel Symbols" / dot rows / "Loading User
    Symbols" / "Loading unloaded module list"), and the Windows 10 26100 write-up of set1
    exceptions_errors/a_14 (stored-index file id 18566956584: "1: kd> !analyze -v" /
    "Connected to Windows 10 26100 x64 target at (...)"). The dot counts are that session's."""
    t = sc.target
    return (
        f"Connected to {t.os_name} {t.build} {t.arch} target at ({timestamp()}), ptr64 TRUE\n"
        "Loading Kernel Symbols\n"
        + "." * 63 + "\n" + "." * 64 + "\n" + "." * 13 + "\n"
        "Loading User Symbols\n"
        + "." * 21 + "\n"
        "Loading unloaded module list\n"
        + "." * 8 + "\n"
    )


def shutdown(kdnet: bool = True) -> str:
    """What kd prints when the target reboots (``.reboot`` or a guest restart). Over KDNET kd
    starts its transport again, as at start-up (set1 connect/a_10, a Windows 10 19041 session:
    "Shutdown occurred at (Mon Dec 29 22:30:44.315 2025 (UTC - 8:00))...unloading all symbol
    tables." / the symbol path's validation block / "Using NET for debugging" / "Opened WinSock
    2.0" / "Waiting to reconnect..." / the connect banner); over another transport only
    "Waiting to reconnect..." follows (set1 connect/a_09: "kd> .reboot" / "Shutdown occurred at
    (...)...unloading all symbol tables." / "Waiting to reconnect..." / "Connected to Windows 10
    17134 x64 target at (...)"). The simulator prints no path validation block anywhere."""
    transport = "Using NET for debugging\nOpened WinSock 2.0\n" if kdnet else ""
    return f"Shutdown occurred at ({timestamp()})...unloading all symbol tables.\n{transport}Waiting to reconnect...\n"


def syntax_error(command: str) -> str:
    """kd's reply to a command it does not know."""
    return f"       ^ Syntax error in '{command}'\n"


def processor_switch(sc: Scenario, cpu: int) -> str:
    """``~Ns``: kd shows where the new processor is (an idle processor spins in KiIdleLoop)."""
    del sc, cpu
    return "nt!KiIdleLoop+0x54:\nfffff800`62a00d64 f390            pause\n"


def cdb_attach(pid: int) -> str:
    return VERSION_BANNER + (
        "*** wait with pending attach\nSymbol search path is: srv*\nExecutable search path is: \n"
    ) + (
        "ModLoad: 00007ff7`91d80000 00007ff7`91d9b000   C:\\target\\app.exe\n"
        "ModLoad: 00007ffc`81a00000 00007ffc`81bf0000   C:\\Windows\\SYSTEM32\\ntdll.dll\n"
        "ModLoad: 00007ffc`80e20000 00007ffc`80ed2000   C:\\Windows\\System32\\KERNEL32.DLL\n"
    ) + user_break_in(pid, 0x5D0)


def cdb_launch(command_line: str, pid: int) -> str:
    """Launching an executable under cdb (corpus connect/07)."""
    return (
        VERSION_BANNER
        + f"CommandLine: {command_line}\n"
        + "Symbol search path is: srv*\nExecutable search path is: \n"
        + "ModLoad: 00007ff7`91d80000 00007ff7`91d9b000   app.exe \n"
        + "ModLoad: 00007ffc`81a00000 00007ffc`81bf0000   ntdll.dll\n"
        + f"({pid:x}.1a8): {BREAK_EXCEPTION}"
        + "ntdll!LdrpDoDebuggerBreak+0x30:\n"
        + "00007ffc`81ad0b60 cc              int     3\n"
    )


def dump_loaded(sc: Scenario, path: str, kernel: bool, symbol_path: str | None,
                location: str | None = None) -> str:
    """Opening a crash dump (corpus connect/05, connect/12); ``location`` is where the dump's
    processor stopped (``nt!KeBugCheckEx:`` and its instruction), from the world when it has one."""
    if kernel:
        return (
            VERSION_BANNER
            + f"\nLoading Dump File [{path}]\n"
            + "Kernel Bitmap Dump File: Kernel address space is available, "
            + "User address space may not be available.\n\n"
            + system_summary(sc, symbol_path)
            + "Loading Kernel Symbols\n...............................................................\n"
            + "For analysis of this file, run !analyze -v\n"
            + (location or "nt!KeBugCheckEx:\n"
               "fffff800`62a1eba0 48894c2408      mov     qword ptr [rsp+8],rcx "
               "ss:0018:ffffcf06`53b5f6e0=000000000000000a\n")
        )
    return (
        VERSION_BANNER
        + f"\nLoading Dump File [{path}]\n"
        + "User Mini Dump File with Full Memory: Only application data is available\n\n"
        + f"Symbol search path is: {symbol_path or 'srv*'}\nExecutable search path is: \n"
        + "This dump file has an exception of interest stored in it.\n"
        + "The stored exception information can be accessed via .ecxr.\n"
        + "(1a2c.3b4): Access violation - code c0000005 (first/second chance not available)\n"
        + "app!wmain+0x14:\n"
        + "00007ff7`91d81014 45891b          mov     dword ptr [r11],r11d "
        + "ds:00000000`00000000=????????\n"
    )


def local_kernel(sc: Scenario, symbol_path: str | None) -> str:
    """``kd -kl``: local kernel debugging attaches at once, no break."""
    t = sc.target
    return (
        VERSION_BANNER
        + f"Connected to {t.os_name} {t.build} {t.arch} target at ({timestamp()}), ptr64 TRUE\n"
        + system_summary(sc, symbol_path)
    )
