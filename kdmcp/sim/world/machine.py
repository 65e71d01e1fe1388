"""The world the simulated kd and cdb look at: its objects, memory and the debugger's view of it.

:class:`World` holds what :mod:`~kdmcp.sim.world.build` made -- modules, processes and threads,
processors, drivers, devices, IRPs, pool blocks -- plus the state a debugger changes: the
current processor, the ``.thread``/``.process`` context, breakpoints, memory written with
``e*``. Commands (:mod:`~kdmcp.sim.world.commands`) read it; none keeps state of its own, so
``~1s`` followed by ``k``, ``r`` and ``!thread`` all describe processor 1's thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.memory import AddressSpace, Memory
from kdmcp.sim.world.model import Arrival, Device, Driver, Irp, Module, PoolBlock, Process, Processor, Thread
from kdmcp.sim.world.symbols import ExprError, SymbolTable, evaluate

__all__ = ["Breakpoint", "RunState", "World"]

# x64 registers kd's r prints, in its order
S = TypeVar("S")

REGISTER_NAMES = (
    "rax",
    "rbx",
    "rcx",
    "rdx",
    "rsi",
    "rdi",
    "rip",
    "rsp",
    "rbp",
    "r8",
    "r9",
    "r10",
    "r11",
    "r12",
    "r13",
    "r14",
    "r15",
)
_SUBREGS = {
    "eax": ("rax", 0xFFFFFFFF),
    "ebx": ("rbx", 0xFFFFFFFF),
    "ecx": ("rcx", 0xFFFFFFFF),
    "edx": ("rdx", 0xFFFFFFFF),
    "esi": ("rsi", 0xFFFFFFFF),
    "edi": ("rdi", 0xFFFFFFFF),
    "esp": ("rsp", 0xFFFFFFFF),
    "ebp": ("rbp", 0xFFFFFFFF),
    "eip": ("rip", 0xFFFFFFFF),
    "ax": ("rax", 0xFFFF),
    "al": ("rax", 0xFF),
    "cx": ("rcx", 0xFFFF),
    "cl": ("rcx", 0xFF),
}


@dataclass
class Breakpoint:
    """One breakpoint as ``bl`` lists it."""

    id: int
    kind: str  # "bp", "bu", "ba"
    expression: str  # what was typed: nt!NtCreateFile, myfault+0x1e00
    address: int | None  # None: deferred (bu on a module not loaded)
    enabled: bool = True
    hits: int = 0
    pass_count: int = 1
    command: str = ""
    one_shot: bool = False
    access: str = ""  # ba: e, r, w, i
    size: int = 0
    process: int = 0  # /p EPROCESS
    condition: str = ""  # bp /w "expression": the target stops only where it is nonzero


@dataclass
class RunState:
    """The running world's own state (:mod:`~kdmcp.sim.world.activity`): where its cycle of
    events is, and what a stop or a step changed, kept to be put back when the target runs
    again -- bookkeeping of the run, never part of the machine's model."""

    cursor: int = 0  # the next event
    saved_threads: dict[int, Thread] = field(default_factory=dict)  # originals, by address
    saved_current: list[int] | None = None  # processors' current threads
    saved_cpu: int | None = None
    saved_bytes: dict[int, bytes] = field(default_factory=dict)  # stack slots written
    saved_irp_args: tuple[int, int, int, int] | None = None
    last_event: tuple[str, int, int] = ("break", 0, 0)  # kind, breakpoint id, thread
    played: int = 0  # events played since connect (a driver loads at a fixed count: loading.py)
    load_depth: int = 0  # a load event stopped part-way resumes below the frame it stopped in
    load_noticed: bool = False  # an "sxe ld" stop for the load has been made (activity._load_notice)
    load_module: tuple[str, int] = ("", 0)  # the image a load notice reported, and its base
    boot_loads: list[tuple[str, int]] = field(default_factory=list)  # a reboot's images still to report
    go_to: list[tuple[str, int | None]] = field(default_factory=list)  # g BreakAddress: expression, address


@dataclass
class World:
    """The machine: built once per debugger process, deterministic from its seed."""

    seed: int
    kernel: Memory
    modules: list[Module]
    user_modules: list[Module]
    unloaded: list[tuple[str, int, int]]
    processes: list[Process]  # in ActiveProcessLinks order
    idle_process: Process
    processors: list[Processor]
    drivers: list[Driver]
    devices: list[Device]
    irps: list[Irp]
    pool: list[PoolBlock]  # by address
    user_memory: dict[int, Memory] = field(default_factory=dict)  # by EPROCESS address
    uptime_ms: int = 151_407  # System Uptime: 0 days 0:02:31.407 at the first break-in
    session_epoch: str = "Mon Mar  4 10:15:42.118 2024 (UTC + 0:00)"
    cpu: int = 0
    context_thread: int | None = None  # .thread
    context_process: int | None = None  # .process
    breakpoints: list[Breakpoint] = field(default_factory=list)
    bugcheck: tuple[int, tuple[int, int, int, int]] | None = None  # a stop the world is in
    temps: dict[int, int] = field(default_factory=dict)
    registers_written: dict[tuple[int, str], int] = field(default_factory=dict)  # r rax=...
    # What a command family or a module of the world remembers between calls (where a bare ``u``
    # or ``d`` goes on, the symbol path, the pool's pages, the handle tables laid), one object per
    # state class, declared beside its module: ``state_of``.
    command_state: dict[type, object] = field(default_factory=dict)
    arriving: list[Arrival] = field(default_factory=list)  # drivers that load while it runs
    run: RunState = field(default_factory=RunState)  # what the running world changed (activity)

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        """The symbol table and the thread and process indexes follow the model again, after a
        module arrived (a driver loads, a launch maps its images) or a thread joined or left."""
        self.symbols = SymbolTable(self.modules + self.user_modules)
        self._threads = {t.address: t for p in [self.idle_process, *self.processes] for t in p.threads}
        self._processes = {p.address: p for p in [self.idle_process, *self.processes]}

    def state_of(self, kind: type[S]) -> S:
        """The state a command family keeps in this world, made (``kind()``) on first use."""
        got = self.command_state.get(kind)
        if not isinstance(got, kind):
            got = kind()
            self.command_state[kind] = got
        return got

    # ------------------------------------------------------------ lookups

    def thread(self, address: int) -> Thread | None:
        return self._threads.get(address)

    def process(self, address: int) -> Process | None:
        return self._processes.get(address)

    def process_by_pid(self, pid: int) -> Process | None:
        return next((p for p in self.processes if p.pid == pid), None)

    def owner(self, thread: Thread) -> Process:
        return self._processes[thread.process]

    def all_threads(self) -> list[Thread]:
        return list(self._threads.values())

    def driver(self, name: str) -> Driver | None:
        """``myfault``, ``\\Driver\\myfault`` or the DRIVER_OBJECT's address as text."""
        low = name.lower()
        for d in self.drivers:
            if low in (d.name.lower(), d.name.split("\\")[-1].lower()) or low == f"{d.address:x}":
                return d
        return None

    def device(self, address: int) -> Device | None:
        return next((d for d in self.devices if d.address == address), None)

    # ------------------------------------------------------- current view

    @property
    def processor(self) -> Processor:
        return self.processors[self.cpu]

    def current_thread(self) -> Thread:
        addr = self.context_thread if self.context_thread is not None else self.processor.current_thread
        return self._threads[addr]

    def current_process(self) -> Process:
        """The process context: ``.process``'s, else the current thread's."""
        if self.context_process is not None:
            return self._processes[self.context_process]
        return self.owner(self.current_thread())

    def space(self, process: Process | None = None) -> AddressSpace:
        proc = process or self.current_process()
        user = self.user_memory.setdefault(proc.address, Memory())
        return AddressSpace(self.kernel, user)

    def registers(self, thread: Thread | None = None) -> dict[str, int]:
        t = thread or self.current_thread()
        regs = dict(t.registers)
        for (addr, name), value in self.registers_written.items():
            if addr == t.address:
                regs[name] = value
        return regs

    def register(self, name: str) -> int | None:
        """A register or pseudo-register of the current thread, as an expression reads it."""
        name = name.lstrip("@").lower()
        regs = self.registers()
        if name in regs:
            return regs[name]
        if name in _SUBREGS:
            full, mask = _SUBREGS[name]
            return regs.get(full, 0) & mask
        t = self.current_thread()
        pseudo = {
            "$ip": regs.get("rip"),
            "$csp": regs.get("rsp"),
            "$proc": self.current_process().address,
            "$thread": t.address,
            "$prcb": self.processor.prcb,
            "$pcr": self.processor.pcr,
            "$teb": t.teb,
            "$peb": self.current_process().peb,
            "$ra": t.frames[1].site if len(t.frames) > 1 else 0,
            "$tid": t.tid,
            "$tpid": self.current_process().pid,
        }
        if name in pseudo:
            return pseudo[name]
        if name.startswith("$t") and name[2:].isdigit() and int(name[2:]) < 20:
            return self.temps.get(int(name[2:]), 0)
        return None

    def evaluate(self, text: str) -> int:
        """A MASM expression in the current context; :class:`ExprError` where kd would fail."""
        space = self.space()

        def read(addr: int, size: int) -> int | None:
            data = space.read(addr, size)
            return None if data is None else int.from_bytes(data, "little")

        return evaluate(text, self.symbols, self.register, read, self.temps)

    def name(self, addr: int) -> str:
        return self.symbols.name(addr)

    def describe(self, addr: int) -> str:
        """``nt!KiIdleLoop+0x54 (fffff800`62a00d64)``: kd's branch-target spelling."""
        return f"{self.name(addr)} ({fmt_addr(addr)})"


__all__ += ["REGISTER_NAMES", "ExprError"]
