"""World commands: processes, threads and their stacks (``!process``, ``!thread``, ``.process``,
``.thread``, ``k`` and its letters).

They share one stack renderer because kd prints one stack the same way wherever it appears:
``k`` numbers its rows, ``!thread`` does not, ``kb``/``kv``/``!thread`` add the four "Args to
Child" (read from the thread's stack memory, ``Child-SP+8`` on, as kd reads the home slots),
``kv``/``!thread``/``!process 7`` mark a trap entry's frame with ``(TrapFrame @ …)``. A frame's
RetAddr is the next frame's site, so ``k``, ``dps @rsp`` and ``ub`` at a return address agree.

Everything is read from the world: ``~1s`` (which sets ``world.cpu``) changes what ``k``,
``!thread`` and ``!process -1`` describe; ``.thread`` (``world.context_thread``) moves ``k``, ``r``
and the process context but, as its documentation says, not ``!thread``'s default.
"""

from __future__ import annotations

import random

from kdmcp.sim.world.build import _NOT_CALLS
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.layouts import offset_of
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.memory import AddressSpace
from kdmcp.sim.world.model import Process, Thread
from kdmcp.sim.world.registry import command

__all__ = ["STACK_BANNER", "process_block", "process_header", "q", "stack_lines", "thread_block", "thread_header"]

# the clock tick (15.625 ms) and the tick count at the break-in: 9691 ticks is the canned
# idle thread's "Ticks: 9691 (0:00:02:31.421)"
TICK_MS = 15.625
TICK_COUNT = 9691
# corpus stack/03 and the canned kv: the trap frame sits 0x70 above the trap entry's Child-SP
_TRAP_FRAME_OFFSET = 0x70
# !thread's DeviceMap: the canned idle thread's, and one for the interactive session
_DEVICE_MAPS = {None: 0xFFFFB28D4B836A10, 0: 0xFFFFB28D4B836A10, 1: 0xFFFFB28D4E1F0C60}
_ARGS_HEAD = ": Args to Child                                                           : "
STACK_BANNER = "  *** Stack trace for last set context - .thread/.cxr resets it\n"  # corpus stack/03, 09


def q(value: int) -> str:
    """A pointer as !process/!thread print it: 16 digits, no backtick."""
    return f"{value & 0xFFFFFFFFFFFFFFFF:016x}"


def _clock(ms: float) -> str:
    """``00:02:27.156``: !thread's UserTime/KernelTime, !process's ElapsedTime."""
    ms = int(ms)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _ticks_time(ticks: int) -> str:
    """``0:00:02:31.421``: Ticks' elapsed time, days first (corpus threads/06)."""
    ms = int(ticks * TICK_MS)
    return f"{ms // 86_400_000}:{_clock(ms % 86_400_000)}"


# ------------------------------------------------------------------------- stacks


def _args(space: AddressSpace, sp: int) -> list[int]:
    """The four home slots above the return address: kd's "Args to Child".

    A stack page the world does not hold reads as zeros here, so the rows stay parseable (kd
    would have no stack to walk there): the world maps each thread's kernel stack, but not yet
    processor 0's interrupt stack (the break-in frames 00-06) nor the user-mode stacks."""
    out = []
    for i in range(4):
        value = space.u64(sp + 8 + 8 * i)
        out.append(0 if value is None else value)
    return out


def _routine(world: World, site: int) -> str:
    _, sym, _ = world.symbols.nearest(site)
    return sym.name if sym is not None else ""


def stack_lines(
    world: World,
    thread: Thread,
    *,
    numbers: bool = True,
    args: bool = False,
    trap: bool = False,
    names_only: bool = False,
    limit: int | None = None,
    indent: str = "",
) -> list[str]:
    """The stack's header and rows, each ending ``\\n`` (corpus stack/03, stack/04; canned k/kb/kv)."""
    space = world.space(world.owner(thread))
    frames = thread.frames[: limit if limit is not None else len(thread.frames)]
    lead = " # " if numbers else ""
    if names_only:  # kc: "00 nt!KiSwapContext+0x76"
        lines = [f"{indent}{lead}Call Site\n"]
        lines += [f"{indent}{i:02x} {world.name(f.site)}\n" for i, f in enumerate(frames)]
        return lines
    head = f"{indent}{lead}Child-SP          RetAddr               {_ARGS_HEAD if args else ''}Call Site\n"
    lines = [head]
    for i, frame in enumerate(frames):
        ret = thread.frames[i + 1].site if i + 1 < len(thread.frames) else 0
        row = f"{fmt_addr(frame.child_sp)} {fmt_addr(ret)}     "
        if args:
            row += ": " + " ".join(fmt_addr(a) for a in _args(space, frame.child_sp)) + " : "
        row += world.name(frame.site)
        if trap and _routine(world, frame.site) in _NOT_CALLS:
            row += f" (TrapFrame @ {fmt_addr(frame.child_sp + _TRAP_FRAME_OFFSET)})"
        lines.append(f"{indent}{f'{i:02x} ' if numbers else ''}{row}\n")
    return lines


# ------------------------------------------------------------------------ threads


def _is_idle(world: World, t: Thread) -> bool:
    return t.process == world.idle_process.address


def _state(t: Thread) -> str:
    if t.state == "WAIT":
        # corpus process_thread/01: "WAIT: (UserRequest) UserMode Non-Alertable"
        return f"WAIT: ({t.wait_reason}) {t.wait_mode} Non-Alertable"
    return f"{t.state} on processor {t.cpu if t.cpu is not None else 0}"


def thread_header(t: Thread, world: World, *, short: bool = False) -> str:
    """``THREAD … Cid 1e90.2f20  Teb: … Win32Thread: … WAIT: (…)`` (corpus process_thread/01).

    ``short``: the state word alone, as ``!process ADDR 4`` lists threads (process_thread/02)."""
    state = t.state if short and t.state == "WAIT" else _state(t)
    pid = world.owner(t).pid
    return f"THREAD {q(t.address)}  Cid {pid:04x}.{t.tid:04x}  Teb: {q(t.teb)} Win32Thread: {q(0)} {state}\n"


def _win32_start(world: World, addr: int) -> str:
    name = world.name(addr)
    # corpus threads/04: "ntdll!TppWorkerThread (0x00007ffd14ab2850)"; process_thread/01: bare
    return f"0x{addr:016x}" if name == fmt_addr(addr) else f"{name} (0x{addr:016x})"


def thread_block(world: World, t: Thread, *, indent: str = "", args: bool = True) -> str:
    """!thread's block (canned !thread, corpus threads/06 and process_thread/01), a blank line after."""
    owner = world.owner(t)
    idle = _is_idle(world, t)
    system = world.processes[0]
    kernel_stack = world.space(owner).u64(t.address + offset_of("nt!_ETHREAD", "Tcb.KernelStack")[0])
    current = kernel_stack if kernel_stack is not None else t.frames[0].child_sp
    if idle:  # an idle thread never waited: TickCount 0, Ticks since boot (canned !thread)
        start_tick, ticks = 0, TICK_COUNT
    elif t.state == "RUNNING":
        start_tick, ticks = TICK_COUNT, 0
    else:
        start_tick, ticks = TICK_COUNT - min(t.wait_ticks, TICK_COUNT), min(t.wait_ticks, TICK_COUNT)
    ticks_text = f"Ticks: {ticks} ({_ticks_time(ticks)})" if ticks else "Ticks: 0"
    ideal = t.cpu if idle and t.cpu is not None else (t.tid >> 2) % len(world.processors)
    attached = (
        f"{q(system.address)}       Image:         {system.image}" if idle else "N/A            Image:         N/A"
    )
    if idle:  # canned !thread / corpus threads/06: two blanks, no PriorityDecrement
        priority = f"Priority {t.priority}  BasePriority {t.base_priority}  IoPriority 0  PagePriority 5"
    else:  # corpus process_thread/01
        priority = (
            f"Priority {t.priority} BasePriority {t.base_priority} PriorityDecrement 0 IoPriority 2 PagePriority 5"
        )
    body = [
        thread_header(t, world),
        "Not impersonating\n",
        f"DeviceMap                 {q(_DEVICE_MAPS.get(owner.session, _DEVICE_MAPS[1]))}\n",
        f"Owning Process            {q(owner.address)}       Image:         {owner.image}\n",
        f"Attached Process          {attached}\n",
        f"Wait Start TickCount      {start_tick:<15d}{ticks_text}\n",
        f"Context Switch Count      {t.context_switches:<15d}IdealProcessor: {ideal}             \n",
        f"UserTime                  {_clock(t.user_ms)}\n",
        f"KernelTime                {_clock(t.kernel_ms)}\n",
        f"Win32 Start Address {_win32_start(world, t.win32_start)}\n",
        f"Stack Init {t.stack_init:016x} Current {current:016x}\n",
        f"Base {t.stack_base:016x} Limit {t.stack_limit:016x} Call 0000000000000000\n",
        f"{priority}\n",
        *stack_lines(world, t, numbers=False, args=args, trap=True),
    ]
    return "".join(indent + line if line.strip() else line for line in body) + "\n"


def _mismatch(kind: str, addr: int) -> str:
    return f"TYPE mismatch for {kind} object at {addr:016x}\n"


def _number(world: World, text: str) -> int:
    return world.evaluate(text)


@command("!thread", summary="a thread's state and stack")
def _thread(world: World, name: str, args: str) -> str | None:
    words = args.split()
    if words and words[0].startswith("-") and words[0] != "-1":
        return None  # -p, -t tid: forms the world does not take yet
    # ".thread ... does not change the current thread: !thread and !teb still default to it"
    # (.thread docs): with no address, or -1, the processor's thread
    current = not words or words[0] == "-1"
    addr = world.processor.current_thread if current else _number(world, words[0])
    t = world.thread(addr)
    if t is None:  # kdexts checks Tcb.Header.Type (a Windows 10 lkd transcript's two lines)
        return f"{addr:016x} is not a thread object, interpreting as stack value...\n" + _mismatch("thread", addr)
    flags = _number(world, words[1]) if len(words) > 1 else 0x6
    if not flags & 0x4:  # corpus threads/05: "!thread ADDR 2" prints the header line only
        return thread_header(t, world)
    return thread_block(world, t)


# ---------------------------------------------------------------------- processes


def _figures(world: World, p: Process) -> dict[str, int]:
    """The memory statistics of !process's flag-1 block: the world does not model them, so they
    are made from the seed and the pid -- the same on every run."""
    rng = random.Random(world.seed * 0x10001 + p.pid)
    ws = rng.randrange(300, 30_000)
    return {
        "vadroot": (p.address & ~0xFFFFF) + 0x01000000 + rng.randrange(0x1000, 0xFFFFF) * 0x10,
        "vads": rng.randrange(20, 400),
        "private": rng.randrange(100, 9000),
        "modified": rng.randrange(0, 900),
        "locked": rng.randrange(0, 8),
        "paged": rng.randrange(20_000, 900_000),
        "nonpaged": rng.randrange(3_000, 60_000),
        "ws": ws,
        "peak": ws + rng.randrange(0, 500),
        "virtual": rng.randrange(4_000, 2_101_600),
        "faults": ws + rng.randrange(0, 20_000),
        "commit": rng.randrange(200, 9000),
    }


def process_header(p: Process, indent: str = "") -> str:
    """The four lines every !process block starts with (canned !process 0 0, corpus process_thread/02)."""
    session = "none" if p.session is None else str(p.session)
    return (
        f"{indent}PROCESS {q(p.address)}\n"
        f"{indent}    SessionId: {session}  Cid: {p.pid:04x}    Peb: {p.peb:08x}  ParentCid: {p.parent:04x}\n"
        f"{indent}    DirBase: {p.dirbase:08x}  ObjectTable: {q(p.object_table)}  HandleCount: {p.handle_count:3d}.\n"
        f"{indent}    Image: {p.image}\n"
    )


def process_block(world: World, p: Process, flags: int) -> str:
    """One process as ``!process ADDR flags`` prints it, a blank line after (corpus process_thread/01)."""
    out = [process_header(p)]
    if flags & 0x1:
        f = _figures(world, p)
        user = sum(t.user_ms for t in p.threads)
        kern = sum(t.kernel_ms for t in p.threads)
        pad = "    {:<34}{}\n".format
        out += [
            f"    VadRoot {q(f['vadroot'])} Vads {f['vads']} Clone 0 Private {f['private']}. "
            f"Modified {f['modified']}. Locked {f['locked']}.\n",
            f"    DeviceMap {q(_DEVICE_MAPS.get(p.session, _DEVICE_MAPS[1]))}\n",
            pad("Token", q(p.token & ~0xF)),  # EX_FAST_REF: the low bits are a reference count
            pad("ElapsedTime", _clock(max(world.uptime_ms - p.create_ms, 0))),
            pad("UserTime", _clock(user)),
            pad("KernelTime", _clock(kern)),
            pad("QuotaPoolUsage[PagedPool]", f["paged"]),
            pad("QuotaPoolUsage[NonPagedPool]", f["nonpaged"]),
            f"    Working Set Sizes (now,min,max)  ({f['ws']}, 50, 345) ({f['ws'] * 4}KB, 200KB, 1380KB)\n",
            pad("PeakWorkingSetSize", f["peak"]),
            pad("VirtualSize", f"{f['virtual']} Mb"),
            pad("PeakVirtualSize", f"{f['virtual'] + 1} Mb"),
            pad("PageFaultCount", f["faults"]),
            pad("MemoryPriority", "BACKGROUND"),
            pad("BasePriority", 8),
            pad("CommitCharge", f["commit"]),
        ]
    out.append("\n")
    if flags & 0x6:
        for t in p.threads:
            if flags & 0x4 and flags & 0x2:  # threads with their stacks
                out.append(thread_block(world, t, indent="        ", args=False))
            else:  # one line a thread (process_thread/02 "!process ADDR 4"; process_thread/03)
                out.append("        " + thread_header(t, world, short=not flags & 0x2))
        if not (flags & 0x4 and flags & 0x2):
            out.append("\n")
    return "".join(out)


_MINUS_ONE = 0xFFFFFFFFFFFFFFFF
_USER_PROBE = 0x7FFFFFFF0000  # MmUserProbeAddress: below it, !process reads a number as a Cid


@command("!process", summary="processes: all, one, or the current one")
def _process(world: World, name: str, args: str) -> str | None:
    words = args.split()
    if any(w.startswith("/") for w in words):
        return None  # /s session, /m module filters: not taken
    if not words:  # corpus process_thread/03: the current process, flags 3
        return process_block(world, world.current_process(), 0x3)
    target = _number(world, words[0])
    # kdexts: flags 3 for the current process and for the whole list; all of them for one
    flags = _number(world, words[1]) if len(words) > 1 else 0x3 if target in (0, _MINUS_ONE) else 0xF
    image = words[2] if len(words) > 2 else None
    if target == _MINUS_ONE:  # -1: the current process (canned !process -1 0)
        return process_block(world, world.current_process(), flags)
    if target == 0:
        procs = [p for p in world.processes if image is None or p.image.lower() == image.lower()]
        # the header only when no image filter is given (canned !process 0 0; process_thread/02)
        head = "**** NT ACTIVE PROCESS DUMP ****\n" if image is None else ""
        return head + "".join(process_block(world, p, flags) for p in procs)
    if target < _USER_PROBE:  # a process id: "!process 4 0" prints "Searching for Process with Cid == 4"
        proc = world.process_by_pid(target)
        found = process_block(world, proc, flags) if proc is not None else ""
        return f"Searching for Process with Cid == {target:x}\n" + found
    proc = world.process(target)
    if proc is None:  # kdexts checks Pcb.Header.Type before it prints a block
        return _mismatch("process", target)
    return process_block(world, proc, flags)


# ----------------------------------------------------------- .process / .thread


def _switch(world: World, args: str, kind: str) -> str | None:
    words = args.split()
    opts = {w.lower() for w in words if w.startswith("/")}
    rest = [w for w in words if not w.startswith("/")]
    addr = _number(world, rest[0]) if rest else 0
    if addr == 0:
        # .thread/.process (Set Register/Process Context): "If you omit this parameter or it is
        # zero, the thread context is reset to the current thread" (the process: the default one)
        if kind == "process":
            world.context_process = None
            addr = world.current_process().address
        else:
            world.context_thread = None
            addr = world.current_thread().address
        return f"Implicit {kind} is now {fmt_addr(addr)}\n"
    if kind == "process":
        proc = world.process(addr)
        if proc is None:
            return None
        world.context_process = proc.address
    else:
        thread = world.thread(addr)
        if thread is None:
            return None
        world.context_thread = thread.address
        if "/p" in opts:
            world.context_process = thread.process
    out = f"Implicit {kind} is now {fmt_addr(addr)}\n"
    if "/p" in opts:
        if kind == "thread":  # /p: the owner becomes the process context too
            out += f"Implicit process is now {fmt_addr(world.current_process().address)}\n"
        out += ".cache forcedecodeuser done\n"
        if "/r" in opts:  # .reload /user: a dot a user module
            out += "Loading User Symbols\n" + "." * len(world.user_modules) + "\n"
    return out


@command(".process", summary="set the process context")
def _dot_process(world: World, name: str, args: str) -> str | None:
    return _switch(world, args, "process")


@command(".thread", summary="set the register context")
def _dot_thread(world: World, name: str, args: str) -> str | None:
    return _switch(world, args, "thread")


# ------------------------------------------------------------------------------ k

_K_LETTERS = set("bvpnlc")


@command("k", summary="the current thread's stack")
def _k(world: World, name: str, args: str) -> str | None:
    # "kb 100" arrives as ("k", "b 100"), "kn" as ("k", "n"): letters, then a frame count
    letters, _, count = args.partition(" ")
    if letters and not set(letters.lower()) <= _K_LETTERS:
        if letters.isalnum() and all(c in "0123456789abcdefABCDEF" for c in letters) and not count:
            letters, count = "", letters  # "k 5" arrives as ("k", "5")
        else:
            return None
    if count.strip().startswith("="):
        return None
    low = letters.lower()
    limit = _number(world, count) if count.strip() else None
    t = world.current_thread()
    lines = stack_lines(
        world, t, args="b" in low or "v" in low, trap="v" in low, names_only="c" in low and "b" not in low, limit=limit
    )
    banner = STACK_BANNER if world.context_thread is not None else ""
    return banner + "".join(lines)
