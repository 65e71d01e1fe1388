"""The simulated machine's objects: modules and their symbols, processes, threads, processors,
drivers and devices, IRPs, pool blocks and handles.

These are plain dataclasses, not pydantic records: they are the simulator's own mutable state
(a breakpoint hit moves a thread, ``.process`` changes the context), never a result a client
reads, and hundreds of them are built at every start, where validation would only cost time.
What the debugger *prints* about them is laid into :mod:`~kdmcp.sim.world.memory` by the
builder as well, so a structure read with ``dt`` agrees with the command that summarises it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kdmcp.sim.world.memory import Memory

__all__ = [
    "Arrival",
    "Device",
    "Driver",
    "Frame",
    "Handle",
    "Irp",
    "IrpStack",
    "Module",
    "PoolBlock",
    "Process",
    "Processor",
    "Symbol",
    "Thread",
]


@dataclass
class Symbol:
    """A public symbol of a module: a routine (with code bytes) or a datum."""

    name: str
    address: int
    size: int
    kind: Literal["code", "data"] = "code"


@dataclass
class Module:
    """A loaded image: ``lm``'s row, ``lmv``'s block, and the symbols ``x``/``ln`` search."""

    name: str  # as lm names it: nt, hal, myfault
    image: str  # file name: ntkrnlmp.exe, hal.dll, myfault.sys
    path: str  # Image path as lmv shows it
    base: int
    size: int
    timestamp: int
    checksum: int
    symbols: list[Symbol] = field(default_factory=list)
    pdb: str | None = None  # a symbol file path once symbols are loaded
    deferred: bool = True  # lm: "(deferred)" until .reload or first use loads them
    third_party: bool = False
    brepro: bool = False  # built with /Brepro: the timestamp is a hash (lmv says so)
    symbol_status: str = ""  # cdb's lm column, fixed by the user world's catalogue: "(pdb symbols)"...

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclass
class Frame:
    """One stack frame: the stack pointer in it and the address it is executing (or returns to)."""

    child_sp: int
    site: int  # frame 0: the instruction pointer; frame n: the return address frame n-1 returns to


@dataclass
class Thread:
    """A thread: its ETHREAD, ids, state, and the frames of its kernel stack."""

    address: int
    tid: int
    process: int  # its EPROCESS address
    teb: int
    start: int  # StartAddress (nt!PspSystemThreadStartup, ntdll!RtlUserThreadStart...)
    win32_start: int
    state: Literal["RUNNING", "WAIT", "READY"] = "WAIT"
    wait_reason: str = "UserRequest"
    wait_mode: Literal["KernelMode", "UserMode"] = "UserMode"
    cpu: int | None = None  # the processor it runs on, when RUNNING
    frames: list[Frame] = field(default_factory=list)
    stack_base: int = 0
    stack_limit: int = 0
    stack_init: int = 0
    priority: int = 8
    base_priority: int = 8
    context_switches: int = 0
    kernel_ms: int = 0
    user_ms: int = 0
    wait_ticks: int = 0
    registers: dict[str, int] = field(default_factory=dict)  # a captured context (broken-in thread)
    role: str = ""  # a user process's thread: "main", "worker", "break_in" (cdb's break-in thread)


@dataclass
class Handle:
    """One entry of a process's handle table."""

    value: int
    object: int  # the object body's address
    type: str  # File, Key, Event, Process, Thread, Section, ...
    access: int
    name: str = ""


@dataclass
class Process:
    """A process: EPROCESS fields ``!process`` prints, its threads and its handles."""

    address: int
    pid: int
    parent: int
    image: str
    session: int | None
    peb: int
    dirbase: int
    object_table: int
    token: int
    handle_count: int
    threads: list[Thread] = field(default_factory=list)
    handles: list[Handle] = field(default_factory=list)
    command_line: str = ""
    create_ms: int = 0  # boot-relative creation time


@dataclass
class Processor:
    """A processor: its PCR/PRCB and the thread it runs."""

    index: int
    pcr: int
    prcb: int
    idle_thread: int
    current_thread: int
    irql: int = 0


@dataclass
class Driver:
    """A DRIVER_OBJECT: its module, devices and dispatch table (28 entries, IRP_MJ_*)."""

    address: int
    name: str  # \Driver\myfault
    module: str  # the module name (lm)
    dispatch: list[int]  # routine addresses, index = major function
    devices: list[int] = field(default_factory=list)  # DEVICE_OBJECT addresses, newest first
    init: int = 0
    unload: int = 0
    flags: int = 0x12


@dataclass
class Device:
    """A DEVICE_OBJECT and its place in a device stack."""

    address: int
    driver: int  # DRIVER_OBJECT address
    name: str  # \Device\Myfault, or "" for an unnamed device
    device_type: int
    flags: int
    characteristics: int
    extension: int
    attached: int = 0  # AttachedDevice: the device above this one
    lower: int = 0  # the device this one is attached to
    current_irp: int = 0
    stack_size: int = 1


@dataclass
class IrpStack:
    """One IO_STACK_LOCATION."""

    major: int
    minor: int
    device: int
    file: int
    completion: int = 0
    context: int = 0
    flags: int = 0
    control: int = 0
    args: tuple[int, int, int, int] = (0, 0, 0, 0)  # Parameters, as !irp prints "Args:"


@dataclass
class Irp:
    """An IRP in flight: its thread, buffers and stack locations (current one 1-based)."""

    address: int
    thread: int
    stacks: list[IrpStack]
    current: int
    flags: int = 0x60900
    mdl: int = 0
    system_buffer: int = 0
    user_buffer: int = 0
    pending: bool = True


@dataclass
class PoolBlock:
    """One pool allocation: the header's address, size (with header), tag and state."""

    address: int
    size: int
    tag: str
    pool_type: Literal["Nonpaged pool", "Paged pool", "NonPagedNx pool"] = "NonPagedNx pool"
    allocated: bool = True
    owner: int = 0  # the object it holds, if any (after its header)
    process_billed: int = 0


@dataclass
class Arrival:
    """A driver that loads while the target runs (:mod:`~kdmcp.sim.world.loading`): its module,
    its image's bytes (mapped into kernel space at the load), its DRIVER_OBJECT and device."""

    module: Module
    image: Memory
    driver: Driver
    device: Device
    mapped: bool = False  # in lm and the symbol table, its object made (IopLoadDriver's part)
    done: bool = False  # DriverEntry returned: the object is initialised
