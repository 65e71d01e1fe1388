"""The simulated cdb's world: the one user-mode process ``cdb -p PID`` attaches to or launches.

The same :class:`~kdmcp.sim.world.machine.World` as the kernel's, so the shared commands (``db``,
``u``, ``x``, ``ln``, ``dt``, ``?``, ``bp``) work on it unchanged: its ``modules`` are the
process's images (app.exe, ntdll, KERNEL32, KERNELBASE, ucrtbase -- the canned cdb target's
``lm``), its one process holds the threads, and everything lives in that process's user memory
(``world.user_memory[process.address]``; the kernel half is empty). What only a user-mode target
has -- the PEB, the TEBs, the loader's module lists, heaps, the last event -- is laid in that
memory by the published layouts (``data/types_user_x64.txt``) and summarised in a
:class:`UserState` the commands of :mod:`~kdmcp.sim.world.cmd_user` read. A :class:`UserWorld` is
that World with the state declared: the :class:`UserState`, and the builder, which goes on laying
threads and stacks after the build (the events of :mod:`~kdmcp.sim.world.user_events`).

Two starts: an attach (``command_line`` empty) breaks in on cdb's own thread in
``ntdll!DbgBreakPoint`` while the main thread waits in ``WaitForSingleObjectEx`` and a pool worker
waits for work; a launch stops at the loader's initial breakpoint with only app.exe and ntdll
mapped (cdb's launch banner), and :func:`~kdmcp.sim.world.user_events.fault` plays what ``g``
brings: the other images load and ``app!wmain`` writes through a null pointer.
"""

from __future__ import annotations

import functools
import itertools
import ntpath
import random
import re
import struct
from dataclasses import dataclass, field

from kdmcp.sim.world import user_catalog as cat
from kdmcp.sim.world.code import Routine, assemble
from kdmcp.sim.world.laying import pe_header as _pe_header
from kdmcp.sim.world.layouts import put
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import Memory
from kdmcp.sim.world.model import Frame, Module, Process, Processor, Symbol, Thread

__all__ = ["Event", "ProcessBuilder", "UserRun", "UserState", "UserWorld", "build_user", "lay_loader", "user_state"]

_SITE_RE = re.compile(r"(?P<mod>\w+)!(?P<sym>\w+)(?:\+0x(?P<off>[0-9a-f]+))?$")
_PROCESS_KEY = 0xFFFFE70F2F1A2080  # the EPROCESS the user memory is keyed by (never shown by cdb)
_THREAD_KEY = 0xFFFFE70F2F3B4080
# cdb's thread ids for the canned process: main, pool worker, the attach's break-in thread; a
# launch's main thread is 1a8 (cdb's launch banner, corpus connect/07)
_TIDS = {"main": 0x3B4, "worker": 0x1E48, "break_in": 0x5D0, "launch_main": 0x1A8}
_USER_SEGMENTS = {"cs": 0x33, "ss": 0x2B, "ds": 0x2B, "es": 0x2B, "fs": 0x53, "gs": 0x2B}
# ntdll's system-call stub (Windows 10 x64): mov r10,rcx; mov eax,N; test byte ptr
# [SharedUserData+0x308],1; jne +3; syscall; ret (+0x14); int 2Eh; ret; nop dword ptr [rax+rax]
_STUB = "4c8bd1b8{n}f604250803fe7f0175030f05c3cd2ec30f1f840000000000"
# DbgBreakPoint and its neighbours: int 3; ret; int 3 padding; a 8-byte nop (the canned db)
_BREAK = bytes.fromhex("ccc3cccccccccccc0f1f840000000000")
_FIXED_BODIES = {
    "ntdll!DbgPrompt": bytes.fromhex(
        "4883ec38488364242000488d442420c744242802000000448bca4c8bc28bd1488bc8e8b5feffff4883c438c3cccccccc"
    ),
}
_FIXED_AT = {
    "ntdll!DbgPrintReturnControlC": {
        0: bytes.fromhex("4c8bdc4883ec58498363e800498d43e849894bd8498953e04d8943f0c744245c")
    },
    # wmain: xor r11d,r11d; mov dword ptr [r11],r11d -- the canned .cxr's faulting instruction
    "app!wmain": {0x11: bytes.fromhex("4533db"), 0x14: bytes.fromhex("45891b")},
}


@dataclass
class Event:
    """The last event: the thread it happened on, its exception record and (for .ecxr) context."""

    thread: int  # the Thread's key address
    code: int
    address: int
    parameters: tuple[int, ...]
    first_chance: bool = True
    context: dict[str, int] | None = None  # the exception's context record, when it has one
    breakpoint: int | None = None  # a breakpoint's number, when one stopped the process
    exit: str = ""  # "process" or "thread": an exit event (user_program.py), no exception


@dataclass
class UserRun:
    """Where the running process is (:mod:`~kdmcp.sim.world.user_activity`), and what a stop
    wrote into its stacks, to be put back when it runs again."""

    cursor: int = 0  # the next event of the cycle
    started: bool = False  # a launch's main thread has run into wmain
    start_depth: int = 0  # a stop part-way through the start resumes below the frame it stopped in
    program_step: int = 0  # where an "exits" program is after its start (user_program.py)
    saved_slots: dict[int, bytes] = field(default_factory=dict)  # stack slots a stop wrote


@dataclass
class UserState:
    """What a user-mode target has beyond the shared World: its start, heaps, last event, the
    images a launch maps later, and where its run is."""

    mode: str  # "attach" or "launch"
    image: str  # the exe's path
    command_line: str
    event: Event
    heaps: tuple[cat.Heap, ...] = cat.HEAPS
    pending: list[Module] = field(default_factory=list)  # a launch's images not mapped yet
    pending_memory: Memory = field(default_factory=Memory)
    faults: int = 0  # access violations reported so far (first chance, then second)
    program: str = "fault"  # what a launch does after g: "fault" or "exits" (scenario world.program)
    exited: bool = False  # the process has ended: cdb's "No runnable debuggees" for g, p, t
    run: UserRun = field(default_factory=UserRun)


@dataclass
class UserWorld(World):
    """cdb's world: the shared machine holding one process, and what only a user-mode target has."""

    user: UserState = field(kw_only=True)
    # the process's builder, kept: the events lay threads and stacks after the build (a fault's
    # stack, cdb's break-in thread), from the same routines and the same random sequence
    builder: ProcessBuilder = field(kw_only=True, repr=False)


def user_state(world: World) -> UserState | None:
    """The user target's state, or ``None`` on a kernel world."""
    return world.user if isinstance(world, UserWorld) else None


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le")


class ProcessBuilder:
    """Lays the process: its images and code, threads, stacks, TEBs, the PEB and the loader's lists."""

    def __init__(self, seed: int, pid: int, command_line: str) -> None:
        self.rng = random.Random(seed)
        self.pid = pid
        self.mode = "launch" if command_line.strip() else "attach"
        self.command_line = command_line.strip() or f'"{cat.IMAGE}" '
        self.image = _image_of(command_line) if self.mode == "launch" else cat.IMAGE
        self.exe = ntpath.splitext(ntpath.basename(self.image))[0]
        self.mem = Memory()
        self.routines: dict[str, tuple[int, int]] = {}
        self.calls: dict[str, dict[int, int]] = {}
        self.fixed: dict[str, dict[int, bytes]] = {k: dict(v) for k, v in _FIXED_AT.items()}
        self.modules: list[Module] = []
        self.facts: dict[str, cat.UserModule] = {}
        self.imports: list[tuple[int, int]] = []  # (IAT slot, the routine it points to)

    def name(self, qualified: str) -> str:
        """The exe's routines are catalogued under ``app``; a launch names the exe's module."""
        return self.exe + qualified[3:] if qualified.startswith("app!") else qualified

    # ------------------------------------------------------------- modules

    def lay_modules(self) -> None:
        for facts in cat.MODULES:
            name, path = facts.name, facts.path
            if name == "app":
                name, path = self.exe, self.image
            mod = Module(name, ntpath.basename(path), path, facts.base, facts.size, facts.timestamp, 0)
            mod.pdb = facts.pdb or None
            mod.deferred = facts.status == "(deferred)"
            mod.symbol_status = facts.status
            for sym, (off, size) in cat.ROUTINES.get(facts.name, {}).items():
                mod.symbols.append(Symbol(sym, facts.base + off, size))
                self.routines[f"{name}!{sym}"] = (facts.base + off, size)
            for sym, (off, size) in cat.DATA.get(facts.name, {}).items():
                mod.symbols.append(Symbol(sym, facts.base + off, size, "data"))
            self.modules.append(mod)
            self.facts[name] = facts

    def site(self, text: str) -> int:
        m = _SITE_RE.match(self.name(text))
        assert m is not None, text
        return self.routines[f"{m.group('mod')}!{m.group('sym')}"][0] + int(m.group("off") or "0", 16)

    def chain(self, names: list[str]) -> list[int]:
        """The stack's sites; each caller's call is recorded for the assembler (a direct call
        ending at the return address, or CFG's indirect call where the caller calls a pointer)."""
        names = [self.name(n) for n in names]
        for callee, caller in itertools.pairwise(names):
            cm, km = _SITE_RE.match(callee), _SITE_RE.match(caller)
            assert cm is not None and km is not None
            key, ret = f"{km.group('mod')}!{km.group('sym')}", int(km.group("off") or "0", 16)
            if key in cat.INDIRECT or f"{key}+{ret:#x}" in cat.INDIRECT_SITES:
                base = self.routines[key][0]
                slot = next(
                    s.address
                    for m in self.modules
                    if m.name == km.group("mod")
                    for s in m.symbols
                    if s.name == "__guard_dispatch_icall_fptr"
                )
                disp = slot - (base + ret)
                self.fixed.setdefault(key, {})[ret - 6] = b"\xff\x15" + struct.pack("<i", disp)
                continue
            target = self.routines[f"{cm.group('mod')}!{cm.group('sym')}"][0]
            base = self.routines[key][0]
            if abs(target - (base + ret)) < 1 << 31:
                self.calls.setdefault(key, {})[ret] = target
                continue
            # another image beyond rel32's reach: through the caller's import address table, as
            # an exe calls KERNELBASE (call qword ptr [app!__imp_WaitForSingleObjectEx])
            slot = self.import_slot(km.group("mod"), cm.group("sym"), target)
            self.fixed.setdefault(key, {})[ret - 6] = b"\xff\x15" + struct.pack("<i", slot - (base + ret))
        return [self.site(n) for n in names]

    def import_slot(self, module: str, name: str, target: int) -> int:
        """The IAT entry ``module!__imp_name`` holding ``target`` (in the image's last page)."""
        mod = next(m for m in self.modules if m.name == module)
        want = f"__imp_{name}"
        for sym in mod.symbols:
            if sym.name == want:
                return sym.address
        count = sum(1 for sym in mod.symbols if sym.name.startswith("__imp_"))
        slot = mod.base + mod.size - 0x1000 + 8 * count
        mod.symbols.append(Symbol(want, slot, 8, "data"))
        self.imports.append((slot, target))
        return slot

    def lay_code(self, mem_of: dict[str, Memory]) -> None:
        for mod in self.modules:
            mem = mem_of[mod.name]
            mem.defer(mod.base, 0x400, _pe_header(mod))
            mem.map(mod.base, mod.size)
        for key, (addr, size) in self.routines.items():
            mod_name, sym = key.split("!")
            body = None
            if sym in cat.SYSCALLS:
                code = bytes.fromhex(_STUB.format(n=struct.pack("<I", cat.SYSCALLS[sym]).hex()))
                body = functools.partial(_const, code)
            elif sym in ("DbgBreakPoint", "DbgUserBreakPoint", "DbgBreakPointWithStatus"):
                body = functools.partial(_const, _BREAK)
            elif key in _FIXED_BODIES:
                body = functools.partial(_const, _FIXED_BODIES[key])
            r = Routine(key, addr, size, self.calls.get(key, {}), body, self.fixed.get(key, {}))
            mem_of[mod_name].defer(addr, size, functools.partial(assemble, r))
        for slot, target in self.imports:
            mem_of[next(m.name for m in self.modules if m.base <= slot < m.end)].load(slot, struct.pack("<Q", target))
        self.mem.map(0x7FFE0000, 0x1000)  # KUSER_SHARED_DATA, which every stub tests

    # ------------------------------------------------------------- threads

    def thread(self, proc: Process, index: int, role: str, stack: str) -> Thread:
        base, limit = cat.THREAD_STACKS["break_in" if role == "break_in" else role]
        tid = _TIDS["launch_main" if role == "main" and self.mode == "launch" else role]
        win32 = {"main": f"{self.exe}!wmainCRTStartup", "worker": "ntdll!TppWorkerThread"}.get(
            role, "ntdll!DbgUiRemoteBreakin"
        )
        t = Thread(
            _THREAD_KEY + 0x1000 * index,
            tid,
            proc.address,
            cat.TEB_BASE + 0x2000 * index,
            start=self.routines["ntdll!RtlUserThreadStart"][0],
            win32_start=self.routines[win32][0],
            state="RUNNING" if role == "break_in" else "WAIT",
            stack_base=base,
            stack_limit=limit,
            stack_init=base,
        )
        t.role = role
        self.set_stack(t, stack)
        proc.threads.append(t)
        return t

    def set_stack(self, t: Thread, stack: str) -> None:
        sites = self.chain(cat.STACKS[stack])
        t.frames = [Frame(sp, site) for sp, site in zip(cat.STACK_SPS[stack], sites, strict=True)]
        regs = dict.fromkeys(("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10", "r11"), 0)
        regs.update(dict.fromkeys(("r12", "r13", "r14", "r15"), 0))
        regs.update(rip=sites[0], rsp=t.frames[0].child_sp, efl=0x246, **_USER_SEGMENTS)
        if stack == "break_in":  # the canned r
            regs.update(rax=cat.PEB, rcx=self.routines["ntdll!DbgUiRemoteBreakin"][0], r8=regs["rsp"], r11=0x246)
        elif stack == "fault":  # the canned .cxr
            regs.update(rcx=0x00007FFC81A954D4, rdi=1, r8=0x6FF808, efl=0x10246)
        elif stack == "loader":
            regs.update(rbx=0x10, rdi=cat.PEB, r8=regs["rsp"], r11=0x246)
        else:  # a thread in a system call: syscall keeps the return address in rcx, the flags in r11
            name = cat.STACKS[stack][0].split("!")[1].split("+")[0]
            regs.update(rax=cat.SYSCALLS.get(name, 0), rcx=sites[0], r10=0x8C + 4 * self.rng.randrange(8), r11=0x246)
            regs["rbx"] = regs["r10"]
        t.registers = regs

    def lay_stack(self, t: Thread) -> None:
        """Each return address where the callee's frame ends (x64: ``Child-SP - 8`` of the
        caller's frame), so ``dq @rsp`` and ``k`` agree (the canned ``dq 00affb68``)."""
        self.mem.map(t.stack_limit, t.stack_base - t.stack_limit)
        for f in t.frames[1:]:
            self.mem.load(f.child_sp - 8, struct.pack("<Q", f.site))
        if t.role == "break_in":  # the canned dq: DbgUiRemoteBreakin's home slot
            self.mem.load(t.frames[1].child_sp + 0x20, struct.pack("<Q", self.routines["ntdll!DbgUiRemoteBreakin"][0]))

    def lay_teb(self, t: Thread, tls: int) -> None:
        put(
            self.mem,
            "_TEB",
            t.teb,
            {
                "NtTib.StackBase": t.stack_base,
                "NtTib.StackLimit": t.stack_limit,
                "NtTib.Version": 0x1E00,  # the canned !teb's FiberData
                "NtTib.Self": t.teb,
                "ClientId.UniqueProcess": self.pid,
                "ClientId.UniqueThread": t.tid,
                "ThreadLocalStoragePointer": tls,
                "ProcessEnvironmentBlock": cat.PEB,
                "RealClientId.UniqueProcess": self.pid,
                "RealClientId.UniqueThread": t.tid,
            },
        )
        self.mem.map(t.teb, 0x2000)

    # ------------------------------------------------------------- process

    def lay_peb(self, proc: Process) -> None:
        heaps = cat.PEB + 0x7D0  # ProcessHeaps: the array follows the PEB in its page
        self.mem.map(cat.PEB, 0x1000)
        put(
            self.mem,
            "_PEB",
            cat.PEB,
            {
                "BeingDebugged": 1,
                "ImageBaseAddress": self.modules[0].base,
                "Ldr": cat.PEB_LDR,
                "ProcessParameters": cat.PROCESS_PARAMETERS,
                "ProcessHeap": cat.HEAPS[0].address,
                "NumberOfProcessors": 2,
                "NumberOfHeaps": len(cat.HEAPS),
                "MaximumNumberOfHeaps": 16,
                "ProcessHeaps": heaps,
                "OSMajorVersion": 10,
                "OSBuildNumber": 19041,
                "OSPlatformId": 2,
                "ImageSubsystem": 3,
                "ImageSubsystemMajorVersion": 6,
                "SessionId": 1,
            },
        )
        for i, heap in enumerate(cat.HEAPS):
            self.mem.load(heaps + 8 * i, struct.pack("<Q", heap.address))
            committed = heap.commit_kb * 1024
            self.mem.map(heap.address, committed)
            # _HEAP: SegmentSignature 0xffeeffee at +0x10 (an NT heap), Flags +0x70, ForceFlags +0x74
            self.mem.load(heap.address + 0x10, struct.pack("<I", 0xFFEEFFEE))
            self.mem.load(heap.address + 0x70, struct.pack("<II", heap.flags, 0))
        self.lay_parameters()
        self.lay_loader([m for m in self.modules if m.name not in {x.name for x in self.pending()}])
        del proc

    def lay_parameters(self) -> None:
        p = cat.PROCESS_PARAMETERS
        cursor = p + 0x440
        strings: dict[str, int | bytes | str] = {}
        image_dir = ntpath.dirname(self.image) + "\\"
        for path, text in (
            ("CurrentDirectory.DosPath", image_dir),
            ("ImagePathName", self.image),
            ("CommandLine", self.command_line),
            ("WindowTitle", self.image),
            ("DesktopInfo", "Winsta0\\Default"),
        ):
            data = _utf16(text)
            self.mem.load(cursor, data + b"\0\0")
            strings.update(
                {f"{path}.Length": len(data), f"{path}.MaximumLength": len(data) + 2, f"{path}.Buffer": cursor}
            )
            cursor = (cursor + len(data) + 2 + 7) & ~7
            if path == "CurrentDirectory.DosPath":
                cursor = p + 0x488  # ImagePathName's buffer at 00532098 (the canned du)
        env = b"".join(_utf16(v) + b"\0\0" for v in cat.ENVIRONMENT) + b"\0\0"
        self.mem.load(cat.ENVIRONMENT_BLOCK, env)
        put(self.mem, "_RTL_USER_PROCESS_PARAMETERS", p, {
            "MaximumLength": 0x440, "Length": 0x440, "Flags": 0x6001,
            "Environment": cat.ENVIRONMENT_BLOCK, "EnvironmentSize": len(env), **strings,
        })  # fmt: skip

    def pending(self) -> list[Module]:
        if self.mode != "launch":
            return []
        return [m for m in self.modules if self.facts[m.name].name not in cat.LAUNCH_INITIAL]

    def lay_loader(self, loaded: list[Module]) -> None:
        lay_loader(self.mem, loaded, {m.name: self.facts[m.name] for m in loaded})


def lay_loader(mem: Memory, loaded: list[Module], facts: dict[str, cat.UserModule]) -> None:
    """ntdll!PebLdr and one _LDR_DATA_TABLE_ENTRY a loaded image, on the three lists: load order
    and memory order (the exe first) and initialisation order (ntdll first, the exe never)."""
    entries = [(m, facts[m.name]) for m in loaded]
    load = [f.ldr_entry for _, f in entries]
    init = [f.ldr_entry for _, f in sorted(entries, key=lambda e: e[1].init_order) if f.init_order]
    for list_off, link_off, order in ((0x10, 0x00, load), (0x20, 0x10, load), (0x30, 0x20, init)):
        ring = [cat.PEB_LDR + list_off] + [e + link_off for e in order]
        for i, node in enumerate(ring):
            mem.load(node, struct.pack("<QQ", ring[(i + 1) % len(ring)], ring[i - 1]))
    put(mem, "_PEB_LDR_DATA", cat.PEB_LDR, {"Length": 0x58, "Initialized": 1})
    for mod, f in entries:
        full, base = _utf16(mod.path), _utf16(mod.image)
        at = f.ldr_entry + 0x120
        mem.load(at, full + b"\0\0")
        at_base = (at + len(full) + 2 + 7) & ~7
        mem.load(at_base, base + b"\0\0")
        put(mem, "_LDR_DATA_TABLE_ENTRY", f.ldr_entry, {
            "DllBase": mod.base, "SizeOfImage": mod.size, "TimeDateStamp": mod.timestamp,
            "FullDllName.Length": len(full), "FullDllName.MaximumLength": len(full) + 2, "FullDllName.Buffer": at,
            "BaseDllName.Length": len(base), "BaseDllName.MaximumLength": len(base) + 2, "BaseDllName.Buffer": at_base,
            "ObsoleteLoadCount": 0xFFFF, "Flags": 0xA2CC if f.init_order else 0x22CC,
        })  # fmt: skip


def _const(data: bytes, address: int) -> bytes:
    del address
    return data


def _image_of(command_line: str) -> str:
    """The exe a launch starts: the command line's first word (quoted or not), with the
    directory and extension Windows would search for (``app`` → ``C:\\target\\app.exe``)."""
    text = command_line.strip()
    word = text[1:].split('"', 1)[0] if text.startswith('"') else text.split()[0]
    if not ntpath.splitext(word)[1]:
        word += ".exe"
    return word if ntpath.isabs(word) else ntpath.join("C:\\target", word)


def build_user(seed: int, pid: int, command_line: str) -> UserWorld:
    """The process ``cdb -p PID`` attaches to, or the one it launches with ``command_line``."""
    b = ProcessBuilder(seed, pid, command_line)
    b.lay_modules()
    proc = Process(_PROCESS_KEY, pid, 0x0D3C, ntpath.basename(b.image), 1, cat.PEB, 0x1B2C4F002, 0, 0, 0)
    proc.command_line = b.command_line
    if b.mode == "attach":
        b.thread(proc, 0, "main", "main_wait")
        b.thread(proc, 1, "worker", "worker")
        event_thread = b.thread(proc, 2, "break_in", "break_in")
        event = Event(event_thread.address, 0x80000003, event_thread.frames[0].site, (0,))
    else:
        event_thread = b.thread(proc, 0, "main", "loader")
        b.thread(proc, 1, "worker", "worker")
        event = Event(event_thread.address, 0x80000003, event_thread.frames[0].site, (0,))
    b.chain(cat.STACKS["fault"])  # the code of what g runs into (wmain's write) is there from the start
    b.chain(cat.STACKS["exit"])  # and of how a program that ends ends (user_program.py)
    b.chain(cat.STACKS["exit_thread"])
    for chain in cat.RUN_CHAINS:  # and the calls the running process makes (user_activity)
        b.chain(chain)
    pending = b.pending()
    state = UserState(b.mode, b.image, b.command_line, event, pending=pending)
    mem_of = {m.name: (state.pending_memory if m in pending else b.mem) for m in b.modules}
    b.lay_code(mem_of)
    for i, t in enumerate(proc.threads):
        b.lay_stack(t)
        b.lay_teb(t, cat.TLS_STORAGE if t is event_thread and b.mode == "attach" else cat.TLS_STORAGE - 0x100 * (i + 1))
    b.lay_peb(proc)
    proc.handle_count = 41 + len(proc.threads)
    idle = Process(0, 0, 0, "Idle", None, 0, 0, 0, 0, 0)
    loaded = [m for m in b.modules if m not in pending]
    cpus = [Processor(i, 0, 0, event_thread.address, event_thread.address) for i in range(2)]
    return UserWorld(
        seed, Memory(), loaded, [], [], [proc], idle, cpus, [], [], [], [],
        user_memory={proc.address: b.mem}, user=state, builder=b,
    )  # fmt: skip
