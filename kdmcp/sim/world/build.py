"""Building the default world from a seed: the canned machine's facts plus generated detail.

Everything the default kd target printed before the world existed is reproduced (module
bases, the break-in stack, the processes of ``!process 0 0``, the idle threads of ``!running
-i``; see :mod:`~kdmcp.sim.world.catalog`); the seed generates the rest -- the other
processes' addresses and ids, every thread, handle-table addresses, stack frame sizes -- with
one ``random.Random(seed)``, so the same seed builds the same bytes on every run.

Objects are laid into memory as Windows lays them: a ``_POOL_HEADER``, an ``_OBJECT_HEADER``
and the body (``_EPROCESS`` at ``…040``, as the canned addresses end), with the fields the
layouts (:mod:`~kdmcp.sim.world.layouts`) say; lists are linked (``PsActiveProcessHead`` →
``ActiveProcessLinks``, ``ThreadListHead`` → ``ThreadListEntry``, ``PsLoadedModuleList``).
"""

from __future__ import annotations

import functools
import itertools
import random
import re
import struct
from dataclasses import replace

from kdmcp.sim.world import activity, loading
from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world import drivers as drv
from kdmcp.sim.world.code import Routine, assemble
from kdmcp.sim.world.laying import link as _link
from kdmcp.sim.world.laying import pe_header as _pe_header
from kdmcp.sim.world.laying import stack_bytes as _stack_bytes
from kdmcp.sim.world.layouts import put
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import KERNEL_SPACE, Memory
from kdmcp.sim.world.model import Frame, Module, PoolBlock, Process, Processor, Symbol, Thread
from kdmcp.sim.world.pool import defer_fillers

__all__ = ["build", "object_header"]

OBJECT_HEADER = 0x30  # _OBJECT_HEADER.Body
POOL_HEADER = 0x10
_NONPAGED = 0xFFFFE70F30000000  # where generated objects go (the canned ones sit below)
_PAGED = 0xFFFFB28D50000000
_KSTACKS = 0xFFFFD48F70000000
_SITE_RE = re.compile(r"(?P<mod>\w+)(?:!(?P<sym>[\w:]+))?(?:\+0x(?P<off>[0-9a-f]+))?$")
# Transitions that are not calls: the frame above an interrupt or trap entry, or a system call,
# returns to where the interrupt/trap/syscall happened, not after a call instruction.
_NOT_CALLS = {"KiPageFault", "KiInterruptDispatchNoLockNoEtw", "KiIpiInterruptNoLockNoEtw", "KiSystemServiceCopyEnd"}
_PROCESS_TAG, _THREAD_TAG = "Proc", "Thre"
# Where a stopped thread resumes: a frozen processor spins ("pause" in its freeze loop); a
# thread switched out resumes after KiSwapContext's switch ("mov rbx,qword ptr [rsp+30h]").
_RESUME = {"nt!KiFreezeTargetExecution": bytes.fromhex("f390")}
# bytes a published sample shows at a routine's start: KeBugCheckEx homes its code first
# ("nt!KeBugCheckEx: mov qword ptr [rsp+8],rcx", corpus connect/05, connect/12)
_ENTRY = {"nt!KeBugCheckEx": bytes.fromhex("48894c2408")}
_RESUME_DEFAULT = bytes.fromhex("488b5c2430")
# Callers that reach many callees through one indirect call: the system-service dispatcher
# ("call r10" before KiSystemServiceCopyEnd+0x25) and IofCallDriver (the driver's MajorFunction
# entry, "call qword ptr [rax+rcx*8+70h]").
_INDIRECT = {"nt!KiSystemServiceCopyEnd": bytes.fromhex("41ffd2"), "nt!IofCallDriver": bytes.fromhex("ff54c870")}


def object_header(body: int) -> int:
    return body - OBJECT_HEADER


class _Builder:
    def __init__(self, seed: int, processors: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.ncpu = processors
        self.mem = Memory()
        self.pool: list[PoolBlock] = []
        self.next_np = _NONPAGED
        self.next_paged = _PAGED
        self.next_stack = _KSTACKS
        self.calls: dict[str, dict[int, int]] = {}  # routine -> return offset -> callee
        self.fixed: dict[str, dict[int, bytes]] = {}
        self.routines: dict[str, tuple[int, int]] = {}  # qualified name -> (address, size)
        self.bodies: dict[str, object] = {}
        self.used_ids: set[int] = set()

    # ---------------------------------------------------------------- pool

    def block(
        self,
        tag: str,
        body_size: int,
        *,
        at: int | None = None,
        header: int = OBJECT_HEADER,
        paged: bool = False,
        owner: bool = True,
    ) -> int:
        """Allocate a pool block for an object (or a plain buffer, ``header=0``); its body's address."""
        total = (POOL_HEADER + header + body_size + 0xF) & ~0xF
        if at is None:
            cursor = self.next_paged if paged else self.next_np
            if (cursor & 0xFFF) + total > 0x1000:  # blocks do not straddle pages (small pool)
                cursor = (cursor | 0xFFF) + 1
            start = cursor
            if paged:
                self.next_paged = start + total
            else:
                self.next_np = start + total
        else:
            start = at - header - POOL_HEADER
        units = min(total // 16, 0xFF)
        self.mem.load(start, struct.pack("<I4s", units << 16 | (3 if not paged else 1) << 24, tag.encode("latin-1")))
        body = start + POOL_HEADER + header
        self.pool.append(
            PoolBlock(
                start, total, tag, "Paged pool" if paged else "NonPagedNx pool", True, body if owner and header else 0
            )
        )
        return body

    def fresh_id(self, low: int = 0x100, high: int = 0x3000) -> int:
        while True:
            value = self.rng.randrange(low, high) & ~3
            if value not in self.used_ids:
                self.used_ids.add(value)
                return value

    # ------------------------------------------------------------- modules

    def modules(self) -> tuple[list[Module], list[Module]]:
        kernel: list[Module] = []
        for name, start, end, path, image, stamp, checksum in cat.MODULES:
            # "4C13BB79 brepro": a /Brepro hash (lmv: "This is a reproducible build file hash");
            # else lmv's date line, "Fri Jul 10 01:26:53 2020 (5F07C3DD)"
            m = re.match(r"([0-9A-F]{8}) brepro$", stamp)
            value = int(m.group(1), 16) if m else int(stamp[-9:-1], 16)
            mod = Module(
                name, image, path, start, end - start, value, checksum, pdb=None, third_party=name == "myfault"
            )
            mod.brepro = m is not None
            if name == "nt":
                mod.pdb = "C:\\ProgramData\\Dbg\\sym\\ntkrnlmp.pdb\\3844DBB920174967BE7AA4A2C20430FA1\\ntkrnlmp.pdb"
                mod.deferred = False
                for sym, (addr, size) in cat.NT_ROUTINES.items():
                    mod.symbols.append(Symbol(sym, addr, size))
                    self.routines[f"nt!{sym}"] = (addr, size)
                for sym, (addr, size) in cat.NT_DATA.items():
                    mod.symbols.append(Symbol(sym, addr, size, "data"))
            for sym, (off, size) in cat.MODULE_ROUTINES.get(name, {}).items():
                mod.symbols.append(Symbol(sym, start + off, size))
                self.routines[f"{name}!{sym}"] = (start + off, size)
            kernel.append(mod)
        user = []
        for name, base, size, syms in cat.USER_MODULES:
            mod = Module(name, f"{name}.dll", f"C:\\Windows\\System32\\{name}.dll", base, size, 0, 0)
            mod.brepro = True
            for sym, (off, sz) in syms.items():
                mod.symbols.append(Symbol(sym, base + off, sz))
                self.routines[f"{name}!{sym}"] = (base + off, sz)
            user.append(mod)
        return kernel, user

    def site(self, text: str) -> int:
        m = _SITE_RE.match(text)
        if m is None:
            raise ValueError(text)
        key = f"{m.group('mod')}!{m.group('sym')}"
        if m.group("sym") and key in self.routines:
            base = self.routines[key][0]
        else:  # a module offset with no symbol: myfault+0x1ea1
            base = next(mb for mn, mb, *_ in cat.MODULES if mn == m.group("mod"))
        return base + int(m.group("off") or "0", 16)

    def chain(self, names: list[str]) -> list[int]:
        """A stack's sites, and the call each caller must make (recorded for the assembler)."""
        sites = [self.site(n) for n in names]
        top = _SITE_RE.match(names[0])
        if top is not None and top.group("off") and (key := f"{top.group('mod')}!{top.group('sym')}") in self.routines:
            # frame 0 of a thread that is not running: the instruction it resumes at
            resume = _RESUME.get(key, _RESUME_DEFAULT)
            self.fixed.setdefault(key, {})[int(top.group("off"), 16)] = resume
        for i in range(len(names) - 1):
            callee = _SITE_RE.match(names[i])
            caller = _SITE_RE.match(names[i + 1])
            assert callee is not None and caller is not None
            if callee.group("sym") in _NOT_CALLS or caller.group("off") is None:
                continue
            key = f"{caller.group('mod')}!{caller.group('sym')}"
            if key not in self.routines:
                continue
            ret_off = int(caller.group("off"), 16)
            if key in _INDIRECT:
                self.fixed.setdefault(key, {})[ret_off - len(_INDIRECT[key])] = _INDIRECT[key]
                continue
            target = self.routines.get(f"{callee.group('mod')}!{callee.group('sym')}", (sites[i], 0))[0]
            self.calls.setdefault(key, {})[ret_off] = target
        return sites

    def code(self, kernel: list[Module], user: list[Module]) -> None:
        """Lay every routine's code into its image, lazily; headers at each image base."""
        spans = sorted(self.routines.values())
        for (a, size), (b, _) in itertools.pairwise(spans):
            if a + size > b:  # two routines sharing bytes would disassemble as neither
                raise ValueError(f"routines overlap at {a:#x}+{size:#x} and {b:#x}")
        for mod in kernel:
            self.mem.defer(mod.base, 0x400, _pe_header(mod))
            # between routines, int 3 padding, as MSVC pads code; the rest of the image zeros
            starts = [a for a, _ in self.routines.values() if mod.base <= a < mod.end]
            if starts:
                first = min(starts)
                last = max(a + s for a, s in self.routines.values() if mod.base <= a < mod.end)
                self.mem.map(first & ~0xFFF, ((last + 0xFFF) & ~0xFFF) - (first & ~0xFFF), fill=0xCC)
            self.mem.map(mod.base, mod.size)
        for key, entry in _ENTRY.items():
            self.fixed.setdefault(key, {})[0] = entry
        for key, (addr, size) in self.routines.items():
            if addr >= 0xFFFF800000000000:
                r = Routine(key, addr, size, self.calls.get(key, {}), drv.BODIES.get(key), self.fixed.get(key, {}))
                self.mem.defer(addr, size, functools.partial(assemble, r))

    # ------------------------------------------------------------ threads

    def frames(self, names: list[str], top: int, user_top: int) -> list[Frame]:
        sites = self.chain(names)
        sizes = [self.rng.choice((0x30, 0x40, 0x60, 0x90, 0xA0, 0x140)) for _ in sites]
        frames: list[Frame] = []
        sp = top - sum(s for n, s in zip(names, sizes, strict=True) if n.startswith("nt!"))
        user_sp = user_top - sum(s for n, s in zip(names, sizes, strict=True) if not n.startswith("nt!"))
        for name, site, size in zip(names, sites, sizes, strict=True):
            if name.startswith("nt!"):
                frames.append(Frame(sp, site))
                sp += size
            else:
                frames.append(Frame(user_sp, site))
                user_sp += size
        return frames

    def thread(
        self, proc: Process, stack: str, *, address: int | None = None, tid: int | None = None, cpu: int | None = None
    ) -> Thread:
        addr = address if address is not None else self.block(_THREAD_TAG, 0x810)
        if address is not None and cpu is None:  # idle threads live in nt's data and the PRCBs
            self.block(_THREAD_TAG, 0x810, at=address)
        tid = tid if tid is not None else self.fresh_id()
        base = self.next_stack + 0x6000
        self.next_stack += 0x8000
        user = proc.peb != 0
        teb = (proc.peb + 0x1000 + 0x2000 * len(proc.threads)) if user else 0
        user_top = (0x000000A0_00000000 + (proc.pid << 20) + (len(proc.threads) << 16)) if user else 0
        names = cat.STACKS[stack]
        if not user:
            names = [n for n in names if n.startswith("nt!")]
        t = Thread(
            addr,
            tid,
            proc.address,
            teb,
            start=self.routines["nt!PspSystemThreadStartup"][0]
            if not user
            else self.routines["ntdll!RtlUserThreadStart"][0],
            win32_start=self.routines["nt!ExpWorkerThread"][0]
            if not user
            else self.routines["ntdll!TppWorkerThread"][0],
            wait_reason="WrQueue"
            if stack in ("system_worker", "user_io_completion")
            else "DelayExecution"
            if stack == "user_delay"
            else "Executive"
            if stack == "ioctl_wait"
            else "UserRequest",
            wait_mode="KernelMode" if stack in ("system_worker", "ioctl_wait") else "UserMode",
            stack_base=base,
            stack_limit=base - 0x6000,
            stack_init=base - 0x30,
            priority=self.rng.choice((8, 9, 10, 13)) if user else 13,
            base_priority=8 if user else 13,
            context_switches=self.rng.randrange(3, 40000),
            kernel_ms=self.rng.randrange(0, 900),
            user_ms=self.rng.randrange(0, 3000) if user else 0,
            wait_ticks=self.rng.randrange(1, 9000),
        )
        t.frames = self.frames(names, base - 0x30, user_top)
        if cpu is not None:
            t.state, t.cpu = "RUNNING", cpu
        self.regs(t)
        proc.threads.append(t)
        return t

    def regs(self, t: Thread) -> None:
        r = {
            name: 0
            for name in ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
        }
        r.update(
            rip=t.frames[0].site,
            rsp=t.frames[0].child_sp,
            rbp=t.frames[0].child_sp + 0x80,
            rbx=t.address,
            rdi=t.process,
            efl=0x246,
            cs=0x10,
            ss=0x18,
            ds=0x2B,
            es=0x2B,
            fs=0x53,
            gs=0x2B,
        )
        t.registers = r

    def lay_thread(self, t: Thread, proc: Process) -> None:
        put(
            self.mem,
            "_ETHREAD",
            t.address,
            {
                "Tcb.Header.Type": 6,
                "Tcb.Header.Size": 0x81 & 0xFF,
                "Tcb.InitialStack": t.stack_init,
                "Tcb.StackLimit": t.stack_limit,
                "Tcb.StackBase": t.stack_base,
                "Tcb.KernelStack": t.frames[0].child_sp,
                "Tcb.Teb": t.teb,
                "Tcb.State": {"RUNNING": 2, "WAIT": 5, "READY": 1}[t.state],
                "Tcb.Priority": t.priority,
                "Tcb.Process": proc.address,
                "Tcb.ContextSwitches": t.context_switches,
                "StartAddress": t.start,
                "Cid.UniqueProcess": proc.pid,
                "Cid.UniqueThread": t.tid,
                "Win32StartAddress": t.win32_start,
            },
        )
        # made on first read, from the frames as they are now (a stop later rewrites its slots)
        frozen = replace(t, frames=list(t.frames))
        self.mem.defer(t.stack_limit, t.stack_base - t.stack_limit, functools.partial(_stack_bytes, frozen))
        # frames on another kernel stack (the break-in's DPC/interrupt stack): their return
        # slots too, so dps @rsp shows the sites k prints
        for nxt in t.frames[1:]:
            if nxt.child_sp - 8 >= KERNEL_SPACE and not t.stack_limit <= nxt.child_sp - 8 < t.stack_base:
                self.mem.load(nxt.child_sp - 8, struct.pack("<Q", nxt.site))

    # ----------------------------------------------------------- processes

    def process(
        self,
        address: int | None,
        pid: int,
        parent: int,
        image: str,
        session: int | None,
        peb: int,
        dirbase: int,
        table: int,
        handles: int,
    ) -> Process:
        addr = self.block(_PROCESS_TAG, 0xA40, at=address) if address is not None else self.block(_PROCESS_TAG, 0xA40)
        token = self.block("Toke", 0x498, paged=True) | (self.rng.randrange(1, 15))
        return Process(addr, pid, parent, image, session, peb, dirbase, table, token, handles)

    def lay_process(self, p: Process, links: tuple[int, int]) -> None:
        put(
            self.mem,
            "_EPROCESS",
            p.address,
            {
                "Pcb.Header.Type": 3,
                "Pcb.Header.Size": 0xA4 & 0xFF,
                "Pcb.DirectoryTableBase": p.dirbase,
                "UniqueProcessId": p.pid,
                "ActiveProcessLinks.Flink": links[0],
                "ActiveProcessLinks.Blink": links[1],
                "Token": p.token,
                "InheritedFromUniqueProcessId": p.parent,
                "Peb": p.peb,
                "ObjectTable": p.object_table,
                "ImageFileName": p.image[:14],
                "ActiveThreads": len(p.threads),
            },
        )
        head = p.address + 0x5E0
        entries = [t.address + 0x4E8 for t in p.threads]
        _link(self.mem, head, entries)
        kentries = [t.address + 0x2F8 for t in p.threads]
        _link(self.mem, p.address + 0x30, kentries)
        for t in p.threads:
            self.lay_thread(t, p)


def build(seed: int = 0, processors: int = 4) -> World:
    """The default world for ``seed`` with ``processors`` processors (1 to 64)."""
    b = _Builder(seed, processors)
    kernel, user = b.modules()
    procs: list[Process] = []
    by_pid: dict[int, Process] = {}
    for addr, pid, parent, image, session, peb, dirbase, table, handles in cat.CANNED_PROCESSES:
        b.used_ids.add(pid)
        p = b.process(addr, pid, parent, image, session, peb, dirbase, table, handles)
        procs.append(p)
        by_pid.setdefault(pid, p)
    images = {p.image: p for p in procs}
    for image, parent_image, session in cat.EXTRA_PROCESSES:
        parent_proc = images.get(parent_image) or procs[0]
        pid = b.fresh_id(0x400, 0x2800)
        high, low = b.rng.randrange(0x10, 0xFF), b.rng.randrange(0x10, 0xFF)
        peb = 0 if image == "Memory Compression" else high << 32 | low << 24
        dirbase = (b.rng.randrange(0x1000, 0x1FFFF) << 12) | 2
        table = b.block("Obtb", 0x80, header=0, paged=True)
        p = b.process(None, pid, parent_proc.pid, image, session, peb, dirbase, table, b.rng.randrange(40, 900))
        procs.append(p)
        images.setdefault(image, p)
    # notmyfault64.exe stays last: the processes a session starts go at the list's tail
    procs.sort(key=lambda p: p.image == "notmyfault64.exe")
    idle = Process(
        cat.NT_DATA["KiInitialProcess"][0],
        0,
        0,
        "Idle",
        None,
        0,
        0x1AD002,
        procs[0].object_table,
        procs[0].token,
        procs[0].handle_count,
    )
    # threads: processor idle threads, System's workers, everyone else's waits
    cpus: list[Processor] = []
    for i in range(processors):
        prcb, idle_thread = (
            cat.PROCESSORS[i]
            if i < len(cat.PROCESSORS)
            else (0xFFFFA7808E400180 + 0xC0000 * (i - 4), 0xFFFFA7808E40B2C0 + 0xC0000 * (i - 4))
        )
        stack = "break_in" if i == 0 else "frozen_idle"
        t = b.thread(idle, stack, address=idle_thread, tid=0, cpu=i)
        if i == 0:
            sites = b.chain(cat.STACKS["break_in"])
            t.frames = [Frame(sp, site) for sp, site in zip(cat.BREAK_IN_SPS, sites, strict=True)]
            t.registers = dict(cat.BREAK_IN_REGISTERS)
            t.stack_base, t.stack_limit, t.stack_init = 0xFFFFF80066C1B000, 0xFFFFF80066C15000, 0xFFFFF80066C1AC90
        t.win32_start = t.start = cat.NT_ROUTINES["KiIdleLoop"][0]
        t.priority = t.base_priority = 0
        cpus.append(Processor(i, prcb - 0x180, prcb, idle_thread, idle_thread))
    system = by_pid[4]
    for _ in range(8):
        b.thread(system, "system_worker")
    client = images["notmyfault64.exe"]
    for p in procs:
        if p is system or p.image in ("Registry", "Memory Compression"):
            if p is not system:
                b.thread(p, "system_worker")
            continue
        if p is client:
            b.thread(p, "ioctl_wait", address=cat.CLIENT_THREAD)
            b.thread(p, "user_wait_multiple")
            continue
        for k in range(b.rng.randrange(2, 7)):
            b.thread(p, ("user_wait_single", "user_io_completion", "user_wait_multiple", "user_delay")[k % 4])
    # lay the objects into memory, linked
    head = cat.NT_DATA["PsActiveProcessHead"][0]
    nodes = [p.address + 0x448 for p in procs]
    _link(b.mem, head, nodes)
    for i, proc in enumerate(procs):
        b.lay_process(proc, (([*nodes, head])[i + 1], ([head, *nodes])[i]))
    b.lay_process(idle, (0, 0))
    for cpu in cpus:
        put(b.mem, "_KPCR", cpu.pcr, {"Self": cpu.pcr, "CurrentPrcb": cpu.prcb, "Irql": 0})
        put(
            b.mem,
            "_KPCR",
            cpu.pcr,
            {
                "Prcb.CurrentThread": cpu.current_thread,
                "Prcb.IdleThread": cpu.idle_thread,
                "Prcb.Number": cpu.index,
                "Prcb.MHz": 0xE74,
            },
        )
        b.mem.load(cat.NT_DATA["KiProcessorBlock"][0] + 8 * cpu.index, struct.pack("<Q", cpu.prcb))
    b.mem.load(cat.NT_DATA["KeNumberProcessors"][0], struct.pack("<I", processors))
    b.mem.load(cat.NT_DATA["PsInitialSystemProcess"][0], struct.pack("<Q", system.address))
    b.mem.load(cat.NT_DATA["KdDebuggerEnabled"][0], b"\x01")
    b.mem.load(cat.NT_DATA["NtBuildLabEx"][0], b"19041.1.amd64fre.vb_release.191206-1406\0")
    drivers, devices, irps = drv.lay(b, kernel, procs, client)
    drv.lay_module_list(b, kernel)
    arrival = loading.prepare(b, kernel, cat.NT_ROUTINES["IopInvalidDeviceRequest"][0], b.site("nt!IoCreateDevice"))
    for names in activity.CALL_CHAINS:  # the calls the running world's events make
        b.chain(list(names))
    for key, fixed in activity.FIXED_CODE.items():
        b.fixed.setdefault(key, {}).update(fixed)
    b.code(kernel, user)
    pool = sorted(b.pool, key=lambda blk: blk.address)
    world = World(seed, b.mem, kernel, user, cat.UNLOADED, procs, idle, cpus, drivers, devices, irps, pool)
    world.arriving = [arrival]  # sampledrv.sys, not loaded at connect
    defer_fillers(world)  # a pool page's other blocks appear on its first read
    return world
