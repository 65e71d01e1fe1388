"""World commands that report the target's state: ``!analyze [-v]``, ``vertarget``, ``version``,
``.lastevent``; and :func:`crash`, which puts the world in the bugcheck its analysis describes.

The facts come from the world: the build lab string from ``nt!NtBuildLabEx`` in memory (as
``da`` shows it), the kernel base and ``PsLoadedModuleList`` from the symbols, the processor
count, the uptime (which the running world advances), the current thread's frames for
``STACK_TEXT``, the faulting instruction's bytes for the trap frame's disassembly.

Two analyses: a live target stopped by a break-in or a breakpoint is a break instruction
exception, not a bugcheck -- kd's analysis names no bugcheck (``Unknown bugcheck code (0)``,
zero arguments) and points at the break instruction; a world in a bugcheck
(``world.bugcheck``, after :func:`crash`) gets the DRIVER_IRQL_NOT_LESS_OR_EQUAL analysis of
NotMyFault's myfault.sys that the default target has always printed (corpus analyze/01, 02,
12), its figures taken from the world.
"""

from __future__ import annotations

import datetime as dt
import struct

from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world import drivers as drv
from kdmcp.sim.world.activity import resume
from kdmcp.sim.world.cmd_bugcheck import set_bugcheck
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.layouts import put
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Frame
from kdmcp.sim.world.registry import command

__all__ = ["COMMAND_LINE_TOKEN", "D1_ARGS", "TRAP_FRAME", "TRAP_REGS", "crash", "debugger_time", "uptime"]

# the debugger's own command line, which the debugger puts in (as in its canned texts)
COMMAND_LINE_TOKEN = "@@COMMAND_LINE@@"  # noqa: S105 (a placeholder, not a secret)
_FIRST_UPTIME_MS = 151_407  # the uptime at the session_epoch (World.uptime_ms's default)
_FAULT_OFFSET = 0x1981  # myfault+0x1981: "mov eax,dword ptr [rbx]" (drivers.py lays 8b03 there)
_READ_ADDRESS = 0xFFFFB28D4AAA8010  # the paged-pool address the driver reads at DISPATCH_LEVEL
D1_ARGS = (_READ_ADDRESS, 2, 0, drv.MYFAULT + _FAULT_OFFSET)
_D1_STACK = 0xFFFFD48F77AF4000  # the client's kernel stack in the crash (the canned frames')
TRAP_FRAME = 0xFFFFD48F77AF97E0
# the canned D1 stack (corpus analyze/02's shape): Child-SP, site
_D1_FRAMES = (
    (0xFFFFD48F77AF9698, "nt!KeBugCheckEx"),
    (0xFFFFD48F77AF96A0, "nt!KiBugCheckDispatch+0x69"),
    (0xFFFFD48F77AF97E0, "nt!KiPageFault+0x469"),
    (0xFFFFD48F77AF9970, f"myfault+{_FAULT_OFFSET:#x}"),
    (0xFFFFD48F77AF99A0, "myfault+0x1d3d"),
    (0xFFFFD48F77AF9AE0, "myfault+0x1ea1"),
    (0xFFFFD48F77AF9B40, "nt!IofCallDriver+0x55"),
    (0xFFFFD48F77AF9B80, "nt!IopSynchronousServiceTail+0x1a8"),
    (0xFFFFD48F77AF9C20, "nt!IopXxxControlFile+0x5e5"),
    (0xFFFFD48F77AF9D60, "nt!NtDeviceIoControlFile+0x56"),
    (0xFFFFD48F77AF9DD0, "nt!KiSystemServiceCopyEnd+0x25"),
    (0x0000007AE6BDE8D8, "ntdll!NtDeviceIoControlFile+0x14"),
)
# the trap frame's registers (the canned TRAP_FRAME; rip is the faulting instruction)
TRAP_REGS = {
    "rax": 0xC85C00F0,
    "rbx": 0,
    "rcx": 0xFFFFB28D41E00340,
    "rdx": 0x890,
    "rsi": 0,
    "rdi": 0,
    "rip": drv.MYFAULT + _FAULT_OFFSET,
    "rsp": 0xFFFFD48F77AF9970,
    "rbp": 2,
    "r8": 0xFFFFB28D4ABBDC80,
    "r9": 0,
    "r10": 0xFFFFB28D41E002C0,
    "r11": 0xFFFFB28D4AA9BFF0,
    "r12": 0,
    "r13": 0,
    "r14": 0,
    "r15": 0,
}


# ------------------------------------------------------------------- the crash


# a live bugcheck: KeBugCheck2 breaks into kd before anything else runs, so the processor stops
# in nt!DbgBreakPointWithStatus above KeBugCheckEx (set1 analyze/a_09, a Windows 10 26100 session:
# "nt!DbgBreakPointWithStatus" / "nt!KiBugCheckDebugBreak+0x12" / "nt!KeBugCheck2+0xb2c" /
# "nt!KeBugCheckEx+0x107", Child-SPs 8, 0x60 and 0x790 apart); a dump's thread stops in KeBugCheckEx
_LIVE_FRAMES = (("nt!DbgBreakPointWithStatus", 0x7F8), ("nt!KiBugCheckDebugBreak+0x12", 0x7F0),
                ("nt!KeBugCheck2+0xb2c", 0x790))  # fmt: skip


def crash(world: World, cpu: int = 0, *, live: bool = False) -> None:
    """Put the world in the D1 bugcheck: the client's IOCTL (the bug's control code) reached
    myfault's faulting read at DISPATCH_LEVEL; its thread is processor ``cpu``'s (0 unless a
    scenario says which processor crashed), stopped in
    ``nt!KeBugCheckEx`` on the canned stack. For ``kd -z MEMORY.DMP``, ``.crash``, a scenario's
    bugcheck. Permanent: the target does not run on from a bugcheck."""
    resume(world)
    t = world.thread(cat.CLIENT_THREAD)
    if t is None:
        return
    set_bugcheck(world, 0xD1, D1_ARGS)
    t.stack_limit, t.stack_base, t.stack_init = _D1_STACK, _D1_STACK + 0x6000, _D1_STACK + 0x5FD0
    t.frames = [Frame(sp, world.evaluate(site)) for sp, site in _D1_FRAMES]
    home = t.frames[0].child_sp  # KeBugCheckEx's frame: its home slots hold its arguments
    if live:
        t.frames[0] = Frame(home, world.evaluate("nt!KeBugCheckEx+0x107"))
        t.frames[:0] = [Frame(home - below, world.evaluate(site)) for site, below in _LIVE_FRAMES]
    world.kernel.map(t.stack_limit, t.stack_base - t.stack_limit)
    space = world.space(world.owner(t))
    for nxt in t.frames[1:]:
        if nxt.child_sp >= t.stack_limit:
            space.write(nxt.child_sp - 8, struct.pack("<Q", nxt.site))
    # KeBugCheckEx's home slots: its arguments (the code and the four parameters' first three)
    space.write(home + 8, struct.pack("<QQQQ", 0xD1, *D1_ARGS[:3]))
    put(
        world.kernel,
        "_ETHREAD",
        t.address,
        {
            "Tcb.InitialStack": t.stack_init,
            "Tcb.StackLimit": t.stack_limit,
            "Tcb.StackBase": t.stack_base,
            "Tcb.KernelStack": t.frames[0].child_sp,
            "Tcb.State": 2,
        },
    )
    regs = dict(t.registers)
    regs.update(TRAP_REGS)
    regs.update(rip=t.frames[0].site, rsp=t.frames[0].child_sp, rcx=0xD1, rdx=_READ_ADDRESS, r8=2, r9=0)
    if live:
        regs.update(rcx=3)  # DbgBreakPointWithStatus(DBG_STATUS_BUGCHECK_FIRST), as KiBugCheckDebugBreak calls it
    t.registers = regs
    cpu %= len(world.processors)
    t.state, t.cpu = "RUNNING", cpu
    world.processors[cpu].current_thread = t.address
    world.processors[cpu].irql = 2  # DISPATCH_LEVEL: Arg2
    world.cpu = cpu
    world.context_thread = world.context_process = None
    if world.irps:  # the IRP in the driver's hands carries the bug's control code
        irp = world.irps[0]
        s = irp.stacks[irp.current - 1]
        s.args = (s.args[0], s.args[1], drv.BUG_CODE, s.args[3])
        world.kernel.write(irp.address + 0xD0 + 0x48 * (irp.current - 1) + 0x18, struct.pack("<Q", drv.BUG_CODE))
    world.run.last_event = ("bugcheck", 0, t.address)


# ------------------------------------------------------------------- the clock


def uptime(world: World) -> str:
    """``0 days 0:02:31.407`` (vertarget's System Uptime, corpus misc/09)."""
    ms = world.uptime_ms
    days, rest = divmod(ms, 86_400_000)
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{days} days {hours}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def debugger_time(world: World) -> str:
    """``Mon Mar  4 10:15:42.118 2024 (UTC + 0:00)``: the session's start plus the target time
    that has passed since (the running world advances ``uptime_ms``)."""
    head, _, zone = world.session_epoch.partition(" (")
    start = dt.datetime.strptime(" ".join(head.split()), "%a %b %d %H:%M:%S.%f %Y")
    now = start + dt.timedelta(milliseconds=world.uptime_ms - _FIRST_UPTIME_MS)
    return f"{now:%a %b} {now.day:2d} {now:%H:%M:%S}.{now.microsecond // 1000:03d} {now.year} ({zone}"


# ------------------------------------------------------------ vertarget, version


def _build_lab(world: World) -> str:
    sym = world.symbols.lookup("nt!NtBuildLabEx")
    data = world.space().read(sym.address, sym.size) if sym is not None else None
    return data.split(b"\0", 1)[0].decode("latin-1") if data else ""


def _target_block(world: World) -> str:
    """The target lines vertarget prints and version begins with (corpus misc/09, misc/04)."""
    nt = world.symbols.module("nt")
    modules = world.symbols.lookup("nt!PsLoadedModuleList")
    lab = _build_lab(world)
    build = lab.split(".", 1)[0] or "19041"
    return (
        f"Windows 10 Kernel Version {build} MP ({len(world.processors)} procs) Free x64\n"
        "Product: WinNt, suite: TerminalServer SingleUserTS\n"
        f"Edition build lab: {lab}\n"
        "Machine Name:\n"
        f"Kernel base = 0x{fmt_addr(nt.base if nt else 0)} PsLoadedModuleList = "
        f"0x{fmt_addr(modules.address if modules else 0)}\n"
        f"Debug session time: {debugger_time(world)}\n"
        f"System Uptime: {uptime(world)}\n"
    )


@command("vertarget", summary="the target's version and uptime")
def _vertarget(world: World, name: str, args: str) -> str | None:
    del name, args
    return _target_block(world)


_DEBUGGERS = "C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x64"
_EXT_PATH = ";".join(
    [
        f"{_DEBUGGERS}\\WINXP",
        f"{_DEBUGGERS}\\winext",
        f"{_DEBUGGERS}\\winext\\arcade",
        f"{_DEBUGGERS}\\pri",
        _DEBUGGERS,
        "C:\\Users\\dev\\AppData\\Local\\Dbg\\EngineExtensions",
        _DEBUGGERS,
        "C:\\Windows\\system32;C:\\Windows;C:\\Windows\\System32\\Wbem",
        "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\;C:\\Windows\\System32\\OpenSSH\\",
        "C:\\Users\\dev\\AppData\\Local\\Microsoft\\WindowsApps",
    ]
)


@command("version", summary="the target's and the debugger's versions")
def _version(world: World, name: str, args: str) -> str | None:
    """The target block, then the debugger's (corpus misc/04; 10.0.26100 dbgeng/dbghelp lines)."""
    del name, args
    chain = "".join(
        f"    {ext}: image 10.0.26100.1, API {api}, \n        [path: {_DEBUGGERS}\\{where}]\n"
        for ext, api, where in (
            ("dbghelp", "10.0.6", "dbghelp.dll"),
            ("ext", "1.0.0", "winext\\ext.dll"),
            ("exts", "1.0.0", "WINXP\\exts.dll"),
            ("kext", "1.0.0", "winext\\kext.dll"),
            ("kdexts", "1.0.0", "WINXP\\kdexts.dll"),
        )
    )
    return (
        _target_block(world) + "\n"
        "Microsoft (R) Windows Debugger Version 10.0.26100.1 AMD64\n"
        "Copyright (c) Microsoft Corporation. All rights reserved.\n"
        "\n"
        f"command line: '{COMMAND_LINE_TOKEN}'  Debugger Process 0x2F4C \n"
        "dbgeng:  image 10.0.26100.1, \n"
        f"        [path: {_DEBUGGERS}\\dbgeng.dll]\n"
        "dbghelp: image 10.0.26100.1, \n"
        f"        [path: {_DEBUGGERS}\\dbghelp.dll]\n"
        "        DIA version: 33140\n"
        "Extension DLL search Path:\n"
        f"    {_EXT_PATH}\n"
        "Extension DLL chain:\n" + chain
    )


@command(".lastevent", summary="the event that stopped the target")
def _lastevent(world: World, name: str, args: str) -> str | None:
    """``Last event: Hit breakpoint 0`` after a breakpoint, the break instruction exception after
    a break-in or a bugcheck's break (the user-mode form without cdb's ``pid.tid:`` prefix)."""
    del name, args
    kind, number, _thread = world.run.last_event
    if kind == "breakpoint":
        what = f"Hit breakpoint {number}"
    elif kind == "load":
        # an "sxe ld" stop: "Last event: Load module KmdfHelloWorld.sys at fffff806`30580000"
        # (a real session, set1 connect/a_10)
        image, base = world.run.load_module
        what = f"Load module {image} at {fmt_addr(base)}"
    else:
        what = "Break instruction exception - code 80000003 (first chance)"
    return f"Last event: {what}\n  debugger time: {debugger_time(world)}\n"
