"""The user-mode world's fixed facts: app.exe's process, its modules, routines, threads and heaps.

These are the figures the simulator's default cdb target has always printed (its canned ``lm``,
``~``, ``|``, ``!peb``, ``!teb``, ``k``, ``r``, ``.exr -1`` and ``!heap -s``, modelled on the
shared corpus; ``git show c564865:kdmcp/sim/data/default_cdb.yaml``), gathered here so the
user world (:mod:`~kdmcp.sim.world.user`) reproduces them: a routine's address is where the canned
stacks put it (``KERNEL32!BaseThreadInitThunk+0x14`` returning to ``00007ffc`80e37034`` puts
``BaseThreadInitThunk`` at ``00007ffc`80e37020``), and the system-call stubs sit where their
service numbers put them (``ntdll!NtWaitForMultipleObjects``, service 0x5b, at ``…81a95990``,
as the ``.jdinfo`` example the banners follow shows it).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ENVIRONMENT",
    "HEAPS",
    "IMAGE",
    "MODULES",
    "PEB",
    "PID",
    "PLUGIN",
    "ROUTINES",
    "RUN_CHAINS",
    "STACKS",
    "SYSCALLS",
    "UserModule",
]

PID = 0x1A2C
IMAGE = "C:\\target\\app.exe"
PEB = 0x2D1000
TEB_BASE = 0x2D2000  # thread n's TEB at TEB_BASE + 0x2000 * n (the canned ~)
PEB_LDR = 0x00007FFC81B3A4C0  # ntdll!PebLdr (the canned !peb's Ldr)
PROCESS_PARAMETERS = 0x531C10
ENVIRONMENT_BLOCK = 0x531220
TLS_STORAGE = 0x533F10  # the break-in thread's ThreadLocalStoragePointer (the canned !teb)


@dataclass(frozen=True)
class UserModule:
    """One image in the process: lm's row and the PEB loader entry's facts."""

    name: str  # lm's name: app, ntdll, KERNEL32
    path: str  # the loader's FullDllName, as !peb lists it
    base: int
    size: int
    timestamp: int
    status: str  # lm: "(deferred)", "(pdb symbols)", "(private pdb symbols)"
    pdb: str = ""
    ldr_entry: int = 0  # its _LDR_DATA_TABLE_ENTRY (the canned !peb's list heads)
    init_order: int = 0  # place in InInitializationOrderModuleList (0: not in it: the exe)


# In load order (InLoadOrderModuleList: the exe, ntdll, then what ntdll loaded). The canned lm
# and !peb; ucrtbase (the CRT app.exe's wprintf comes from) follows KERNELBASE.
MODULES: tuple[UserModule, ...] = (
    UserModule(
        "app", IMAGE, 0x00007FF791D80000, 0x1B000, 0x65E1B2C4, "(private pdb symbols)", "C:\\target\\app.pdb", 0x532BA0
    ),
    UserModule(
        "ntdll",
        "C:\\Windows\\SYSTEM32\\ntdll.dll",
        0x00007FFC81A00000,
        0x1F0000,
        0xA52B7C6A,
        "(pdb symbols)",
        "C:\\ProgramData\\Dbg\\sym\\ntdll.pdb\\63E12347526A46144B98F8CF61CDED791\\ntdll.pdb",
        0x532A10,
        1,
    ),
    UserModule(
        "KERNEL32",
        "C:\\Windows\\System32\\KERNEL32.DLL",
        0x00007FFC80E20000,
        0xB2000,
        0x9E0E7A25,
        "(deferred)",
        ldr_entry=0x533200,
        init_order=3,
    ),
    UserModule(
        "KERNELBASE",
        "C:\\Windows\\System32\\KERNELBASE.dll",
        0x00007FFC7F600000,
        0x2C7000,
        0x2B6A0C33,
        "(deferred)",
        ldr_entry=0x5339F0,
        init_order=2,
    ),
    UserModule(
        "ucrtbase",
        "C:\\Windows\\System32\\ucrtbase.dll",
        0x00007FFC7F3E0000,
        0x100000,
        0x81CF5D89,
        "(deferred)",
        ldr_entry=0x533C30,
        init_order=4,
    ),
)
# What a launch has mapped at its initial breakpoint (cdb's launch banner: app.exe, ntdll.dll);
# the rest load when the app runs.
LAUNCH_INITIAL = ("app", "ntdll")

# Routines: module -> name -> (offset, size). Where the canned stacks fix an address, the offset
# is that address less the base (comments give the canned site).
ROUTINES: dict[str, dict[str, tuple[int, int]]] = {
    "app": {
        "wmain": (0x1000, 0x40),  # the canned bl: app!wmain at 00007ff7`91d81000
        "WorkCallback": (0x1040, 0x70),  # the pool work item the worker thread runs (user_activity)
        "__tmainCRTStartup": (0x10B8, 0x1C0),  # +0x11a returns to 00007ff7`91d811d2
        "wmainCRTStartup": (0x1290, 0x20),
    },
    "ntdll": {
        "RtlUserThreadStart": (0x52630, 0x40),  # +0x21 at 00007ffc`81a52651
        "TppWorkerThread": (0x32EC0, 0x7A0),  # +0x2f4 at 00007ffc`81a331b4
        "NtWaitForWorkViaWorkerFactory": (0x94E50, 0x20),
        "NtWaitForSingleObject": (0x94EB0, 0x20),
        "NtDelayExecution": (0x954C0, 0x20),  # the canned context's rcx: 00007ffc`81a954d4 (+0x14)
        "NtWaitForMultipleObjects": (0x95990, 0x20),  # .jdinfo: ZwWaitForMultipleObjects+0x14 …959a4
        "DbgBreakPoint": (0x986A0, 0x10),  # the canned r/u
        "DbgUserBreakPoint": (0x986B0, 0x10),
        "DbgBreakPointWithStatus": (0x986C0, 0x10),
        "DbgPrompt": (0x986D0, 0x30),
        "DbgPrintReturnControlC": (0x98700, 0x90),
        "DbgUiRemoteBreakin": (0xC7BC0, 0x60),  # +0x4e at 00007ffc`81ac7c0e; the canned rcx
        "LdrpDoDebuggerBreak": (0xD0B30, 0x40),  # +0x30 at 00007ffc`81ad0b60 (the launch banner)
        "LdrpInitializeProcess": (0x7C3A0, 0x1E00),
        "LdrpInitialize": (0x6B250, 0x1A0),
        "LdrpInitializeInternal": (0x6B1E0, 0x70),
        "LdrInitializeThunk": (0x9F0F0, 0x20),
        "KiUserExceptionDispatcher": (0x9FE40, 0x60),
        "RtlAllocateHeap": (0x3A7F0, 0xA0),
        "RtlFreeHeap": (0x3B910, 0x60),
        # the program's end (user_program.py): the stubs at their service numbers' slots
        "NtTerminateProcess": (0x953B0, 0x20),
        "NtTerminateThread": (0x95890, 0x20),
        "RtlExitUserProcess": (0x5C9D0, 0xF0),
        "RtlExitUserThread": (0x5D2A0, 0x60),
    },
    "KERNEL32": {
        "BaseThreadInitThunk": (0x17020, 0x40),  # +0x14 at 00007ffc`80e37034
        "WaitForSingleObjectEx": (0x1E6B0, 0x10),
        "Sleep": (0x1B8D0, 0x10),
        "ExitProcessImplementation": (0x1E1B0, 0x20),
    },
    "KERNELBASE": {
        "WaitForSingleObjectEx": (0x3A460, 0xF0),
        "WaitForMultipleObjectsEx": (0xA9A10, 0x2A0),  # +0xf0 at 00007ffc`7f6a9b00
        "SleepEx": (0x3C8F0, 0xA0),
        "CreateEventW": (0x2B4A0, 0x90),
        "RaiseException": (0x34B10, 0x90),
    },
    "ucrtbase": {
        "wprintf": (0x6F2A0, 0x60),
        "malloc": (0x1A6B0, 0x20),
        "exit": (0x7E3C0, 0x20),
        "exit_or_terminate_process": (0x7E150, 0x60),
        "common_exit": (0x7E230, 0x120),
    },
}
# a module's data symbols: module -> name -> (offset, size)
DATA: dict[str, dict[str, tuple[int, int]]] = {
    "ntdll": {"PebLdr": (0x13A4C0, 0x58), "__guard_dispatch_icall_fptr": (0x16B3F8, 8)},
    "KERNEL32": {"__guard_dispatch_icall_fptr": (0x81000, 8)},
}
# ntdll's system-call stubs and their service numbers (Windows 10 19041 x64)
SYSCALLS: dict[str, int] = {
    "NtWaitForWorkViaWorkerFactory": 0x1,
    "NtWaitForSingleObject": 0x4,
    "NtDelayExecution": 0x34,
    "NtWaitForMultipleObjects": 0x5B,
    "NtTerminateProcess": 0x2C,
    "NtTerminateThread": 0x53,
}
# Call sites made through a function pointer (CFG's guard dispatch): the caller's return offset
# follows a six-byte ``call qword ptr [module!__guard_dispatch_icall_fptr]``, whoever the callee.
INDIRECT = {"KERNEL32!BaseThreadInitThunk", "ntdll!RtlUserThreadStart"}
# single call sites made through CFG's guard dispatch where the routine's other calls are direct:
# the thread pool calls its work item's callback through a pointer
INDIRECT_SITES = {"ntdll!TppWorkerThread+0x1a4"}

_TAIL = ["KERNEL32!BaseThreadInitThunk+0x14", "ntdll!RtlUserThreadStart+0x21"]
# Stacks, innermost first (the brief's three threads of an attach, the loader's initial break of
# a launch, and the main thread at its access violation).
STACKS: dict[str, list[str]] = {
    "main_wait": [
        "ntdll!NtWaitForSingleObject+0x14",
        "KERNELBASE!WaitForSingleObjectEx+0x8e",
        "app!wmain+0xf",
        "app!__tmainCRTStartup+0x11a",
        *_TAIL,
    ],
    "worker": ["ntdll!NtWaitForWorkViaWorkerFactory+0x14", "ntdll!TppWorkerThread+0x2f4", *_TAIL],
    "break_in": ["ntdll!DbgBreakPoint", "ntdll!DbgUiRemoteBreakin+0x4e", *_TAIL],
    "loader": [
        "ntdll!LdrpDoDebuggerBreak+0x30",
        "ntdll!LdrpInitializeProcess+0x1cfa",
        "ntdll!LdrpInitialize+0x16c",
        "ntdll!LdrpInitializeInternal+0x5a",
        "ntdll!LdrInitializeThunk+0xe",
    ],
    "fault": ["app!wmain+0x14", "app!__tmainCRTStartup+0x11a", *_TAIL],
    # the program's end (user_program.py): the main thread in the process's last system call,
    # stopped where cdb shows it ("ntdll!NtTerminateProcess+0x14:" / "c3 ret", published cdb
    # sessions); the frames above are the CRT's exit path as Windows 10 x64 stacks show it
    "exit": [
        "ntdll!NtTerminateProcess+0x14",
        "ntdll!RtlExitUserProcess+0xb8",
        "KERNEL32!ExitProcessImplementation+0xa",
        "ucrtbase!exit_or_terminate_process+0x44",
        "ucrtbase!common_exit+0x6f",
        "app!__tmainCRTStartup+0x13e",
        *_TAIL,
    ],
    # a thread whose routine returned: BaseThreadInitThunk ends it (reconstructed offsets)
    "exit_thread": [
        "ntdll!NtTerminateThread+0x14",
        "ntdll!RtlExitUserThread+0x4e",
        "KERNEL32!BaseThreadInitThunk+0x1d",
        "ntdll!RtlUserThreadStart+0x21",
    ],
}
# the DLL the "exits" program loads and unloads while it runs (user_program.py)
PLUGIN = UserModule(
    "plugin", "C:\\target\\plugin.dll", 0x00007FFC7F9A0000, 0x16000, 0x65E1B2C9, "(deferred)",
    ldr_entry=0x534400, init_order=5,
)
# What the running process calls, innermost first (each a chain the builder assembles, so ``ub`` at
# every return address shows the call): the thread pool's worker runs app!WorkCallback, which
# allocates, prints, frees and sleeps, in that order, one call an event (user_activity.py).
_WORK = "ntdll!TppWorkerThread+0x1a4"
RUN_CHAINS: tuple[list[str], ...] = (
    ["ntdll!RtlAllocateHeap", "ucrtbase!malloc+0x19", "app!WorkCallback+0x1b", _WORK],
    ["ucrtbase!wprintf", "app!WorkCallback+0x2c", _WORK],
    ["ntdll!RtlFreeHeap", "app!WorkCallback+0x3d", _WORK],
    ["ntdll!NtDelayExecution", "KERNELBASE!SleepEx+0x5e", "KERNEL32!Sleep+0xa", "app!WorkCallback+0x4e", _WORK],
)
# the canned Child-SPs (k, ~*k): frame 0 first
STACK_SPS: dict[str, list[int]] = {
    "break_in": [0xAFFB68, 0xAFFB70, 0xAFFBA0, 0xAFFBD0],
    "worker": [0x8FF6F8, 0x8FF700, 0x8FF9E0, 0x8FFA10],
    "fault": [0x6FF8B0, 0x6FF8E0, 0x6FF910, 0x6FF940],
    "main_wait": [0x6FF7E8, 0x6FF7F0, 0x6FF8B0, 0x6FF8E0, 0x6FF910, 0x6FF940],
    "loader": [0x6FF0A0, 0x6FF0E0, 0x6FF450, 0x6FF4D0, 0x6FF500],
    "exit": [0x6FF6F8, 0x6FF700, 0x6FF830, 0x6FF860, 0x6FF890, 0x6FF8E0, 0x6FF910, 0x6FF940],
    "exit_thread": [0x8FF998, 0x8FF9A0, 0x8FF9E0, 0x8FFA10],
}
# (StackBase, StackLimit) of each thread's stack; the canned !teb gives the break-in thread's
THREAD_STACKS: dict[str, tuple[int, int]] = {
    "main": (0x700000, 0x6FC000),
    "worker": (0x900000, 0x8FC000),
    "break_in": (0xB00000, 0xAFC000),
}
# source lines of app's frames (private symbols; the canned ~*k and !analyze -v's source block)
SOURCE: dict[str, tuple[str, list[tuple[int, int]]]] = {
    "wmain": ("C:\\src\\app\\app.cpp", [(0x0, 12), (0x0A, 13), (0x11, 14), (0x17, 15)]),
    "__tmainCRTStartup": ("f:\\dd\\vctools\\crt_bld\\self_64_amd64\\crt\\src\\crtexe.c", [(0x0, 473), (0x115, 579)]),
}


@dataclass(frozen=True)
class Heap:
    """One NT heap as ``!heap -s`` summarises it (sizes in KB, as its columns are)."""

    address: int
    flags: int
    reserve_kb: int
    commit_kb: int
    virtual_kb: int
    free_kb: int
    free_list: int
    ucr: int
    virtual_blocks: int
    lock_contention: int
    lfh: bool


# the canned !heap -s: the process heap (LFH on) and a non-growable private heap
HEAPS: tuple[Heap, ...] = (
    Heap(0x530000, 0x00000002, 1020, 148, 1020, 13, 6, 1, 0, 0, True),
    Heap(0x410000, 0x00008000, 64, 4, 64, 2, 1, 1, 0, 0, False),
)
LFH_KEY = 0x5C3A91E07D24B6F8

# the canned !peb's environment block, in its order
ENVIRONMENT: tuple[str, ...] = (
    "=::=::\\",
    "ALLUSERSPROFILE=C:\\ProgramData",
    "APPDATA=C:\\Users\\dev\\AppData\\Roaming",
    "CommonProgramFiles=C:\\Program Files\\Common Files",
    "COMPUTERNAME=DESKTOP-K7Q2M4R",
    "ComSpec=C:\\Windows\\system32\\cmd.exe",
    "HOMEDRIVE=C:",
    "HOMEPATH=\\Users\\dev",
    "LOCALAPPDATA=C:\\Users\\dev\\AppData\\Local",
    "LOGONSERVER=\\\\DESKTOP-K7Q2M4R",
    "NUMBER_OF_PROCESSORS=2",
    "OS=Windows_NT",
    "Path=C:\\Windows\\system32;C:\\Windows;C:\\Windows\\System32\\Wbem;"
    "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\;C:\\Windows\\System32\\OpenSSH\\",
    "PATHEXT=.COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC",
    "PROCESSOR_ARCHITECTURE=AMD64",
    "PROCESSOR_IDENTIFIER=Intel64 Family 6 Model 158 Stepping 10, GenuineIntel",
    "PROCESSOR_LEVEL=6",
    "PROCESSOR_REVISION=9e0a",
    "ProgramData=C:\\ProgramData",
    "ProgramFiles=C:\\Program Files",
    "PUBLIC=C:\\Users\\Public",
    "SystemDrive=C:",
    "SystemRoot=C:\\Windows",
    "TEMP=C:\\Users\\dev\\AppData\\Local\\Temp",
    "TMP=C:\\Users\\dev\\AppData\\Local\\Temp",
    "USERDOMAIN=DESKTOP-K7Q2M4R",
    "USERNAME=dev",
    "USERPROFILE=C:\\Users\\dev",
    "windir=C:\\Windows",
)
