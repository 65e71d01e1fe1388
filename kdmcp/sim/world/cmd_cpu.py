"""World commands: the processors and the register context (``r``, ``!running``, ``!pcr``,
``!irql``, ``!idt``, ``!stacks``, ``!locks``, and what ``~Ns`` prints).

The registers are the current thread's (``world.current_thread()``: the processor's thread, or
the ``.thread`` context); the instruction under ``rip`` is decoded from the world's memory, so
``r``, ``u @rip`` and ``db @rip`` show the same bytes. The processor tables read
``world.processors``: a processor whose current thread is not its idle thread is busy.
"""

from __future__ import annotations

import re

from kdmcp.sim.world import regtext
from kdmcp.sim.world.cmd_process import q, stack_lines
from kdmcp.sim.world.layouts import offset_of
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Processor, Thread
from kdmcp.sim.world.registry import command
from kdmcp.sim.world.regtext import pc_location

__all__ = ["processor_switch_text", "register_block"]

_BAD_REGISTER = "       ^ Bad register error in 'r {}'\n"


def register_block(world: World, thread: Thread) -> str:
    """x64 ``r``: three registers a line, the flags, the segments, then the instruction (registers/07)."""
    regs = world.registers(thread)
    return regtext.register_block(regs) + pc_location(world, regs)


def processor_switch_text(world: World, cpu: int) -> str:
    """What kd prints after ``~1s``: where that processor's thread is (``nt!KiFreezeTargetExecution+0x1b9:``)."""
    thread = world.thread(world.processors[cpu].current_thread)
    assert thread is not None
    return pc_location(world, world.registers(thread))


_ASSIGN_RE = re.compile(r"^@?(?P<name>\$?\w+)\s*=\s*(?P<value>.+)$")


@command("r", summary="registers")
def _r(world: World, name: str, args: str) -> str | None:
    # rM / rX / rF (register masks the world does not keep) and rdmsr arrive as "m 0x04",
    # "x", "dmsr 176": the dispatcher lower-cases the letters that ran on from r
    if args.split(" ", maxsplit=1)[0].lower() in ("m", "x", "f", "l", "q", "dmsr"):
        return None
    thread = world.current_thread()
    note = "Last set context:\n" if world.context_thread is not None else ""  # registers/05
    if not args:
        return note + register_block(world, thread)
    m = _ASSIGN_RE.match(args)
    if m is not None:  # "r rax=5": no output
        reg = m.group("name").lower()
        if reg.startswith("$"):
            return None  # r $t0=...: the debugger's own pseudo-registers
        if reg not in world.registers(thread) and reg not in ("efl",):
            return _BAD_REGISTER.format(args)
        world.registers_written[(thread.address, reg)] = world.evaluate(m.group("value"))
        return ""
    out = []
    for word in re.split(r"[\s,]+", args.strip()):
        reg = word.lstrip("@").lower()
        value = world.register(reg)
        if value is None:
            return _BAD_REGISTER.format(args)
        width = 4 if reg in regtext.SEGMENTS else 8 if reg == "efl" or reg.startswith("e") else 16
        width = 2 if reg in ("al", "cl") else 4 if reg in ("ax", "cx") else width
        out.append(f"{reg}={value:0{width}x}")
    return " ".join(out) + "\n"


# ------------------------------------------------------------------- processors


def _busy(p: Processor) -> bool:
    return p.current_thread != p.idle_thread


def _mask(procs: list[Processor]) -> str:
    return f"({sum(1 << p.index for p in procs):016x})"


@command("!running", summary="what each processor runs")
def _running(world: World, name: str, args: str) -> str | None:
    opts = args.replace("-", "").replace(" ", "")
    if set(opts) - {"i", "t"}:
        return None
    idle = [p for p in world.processors if not _busy(p)]
    # the canned !running / !running -i, modelled on kernel_objects/07 with the x64 mask lines
    out = [
        "\n",
        f"System Processors:  {_mask(world.processors)}\n",
        f"  Idle Processors:  {_mask(idle)}\n",
    ]
    if len(idle) == len(world.processors):
        out.append("All processors idle.\n")
    shown = [p for p in world.processors if "i" in opts or _busy(p)]
    if shown:
        out += ["\n", "       Prcbs             Current         (pri) Next            (pri) Idle\n"]
        for p in shown:
            t = world.thread(p.current_thread)
            pri = t.priority if t is not None else 0
            out.append(
                f"  {p.index:<4} {p.prcb:016x}  {p.current_thread:016x} ({pri:2d})"
                f"                       {p.idle_thread:016x}  ................\n"
            )
            if "t" in opts and t is not None:  # -t: each processor's stack (kernel_objects/07)
                out += ["\n", *stack_lines(world, t, numbers=False), "\n"]
    out.append("\n")
    return "".join(out)


def _cpu_arg(world: World, args: str) -> Processor | None:
    if not args.strip():
        return world.processor
    n = world.evaluate(args.strip())
    return world.processors[n] if n < len(world.processors) else None


def _gdt_tss(p: Processor) -> tuple[int, int]:
    """GdtBase and TssBase (x64 !pcr prints them as NtTib.ExceptionList and NtTib.StackBase):
    processor 0's from the canned !pcr, the others' beside their PCR (families/kernel_state/09)."""
    if p.index == 0:
        return 0xFFFFF80066C07FB0, 0xFFFFF80066C06000
    return p.pcr + 0x10FB0, p.pcr + 0xF000


@command("!pcr", summary="a processor's control region")
def _pcr(world: World, name: str, args: str) -> str | None:
    p = _cpu_arg(world, args)
    if p is None:
        return None
    gdt, tss = _gdt_tss(p)
    irql = world.space().u8(p.pcr + offset_of("nt!_KPCR", "Irql")[0]) or 0
    rows = [
        ("NtTib.ExceptionList", gdt),
        ("    NtTib.StackBase", tss),
        ("   NtTib.StackLimit", 0),
        (" NtTib.SubSystemTib", p.pcr),
        ("      NtTib.Version", p.prcb & 0xFFFFFFFF),
        ("  NtTib.UserPointer", p.pcr + 0x870),
        ("      NtTib.SelfTib", 0),
    ]
    # canned !pcr (corpus misc/10, families/kernel_state/09): tab-indented, labels right-aligned
    out = [f"KPCR for Processor {p.index} at {p.pcr:016x}:\n", "    Major 1 Minor 1\n"]
    out += [f"\t{label}: {value:016x}\n" for label, value in rows]
    out.append("\n")
    more = [("SelfPcr", 0), ("Prcb", p.prcb), ("Irql", irql)]
    more += [(k, 0) for k in ("IRR", "IDR", "InterruptMode", "IDT", "GDT", "TSS")]
    out += [f"\t{label:>19}: {value:016x}\n" for label, value in more]
    out.append("\n")
    threads = [("CurrentThread", p.current_thread), ("NextThread", 0), ("IdleThread", p.idle_thread)]
    out += [f"\t{label:>19}: {value:016x}\n" for label, value in threads]
    out += ["\n", "\t          DpcQueue: \n"]
    return "".join(out)


# x64 IRQL names as !irql spells them (kernel_objects/15, 16; families/kernel_state/08)
_IRQL_NAMES = {
    0: "LOW_LEVEL",
    1: "APC_LEVEL",
    2: "DISPATCH_LEVEL",
    13: "CLOCK_LEVEL",
    14: "IPI_LEVEL",
    15: "HIGH_LEVEL",
}


def saved_irql(world: World, p: Processor) -> int:
    """The IRQL the debugger saved at the break-in: the interrupt the processor was stopped in
    (the clock interrupt for the processor that broke in, the freeze IPI for the others), else
    the one the world gives the processor."""
    thread = world.thread(p.current_thread)
    names = {world.name(f.site).split("+")[0] for f in thread.frames} if thread is not None else set()
    if "nt!HalpTimerClockInterrupt" in names:
        return 13
    if "nt!KiIpiInterruptNoLockNoEtw" in names:
        return 14
    return p.irql


@command("!irql", summary="a processor's saved IRQL")
def _irql(world: World, name: str, args: str) -> str | None:
    p = _cpu_arg(world, args)
    if p is None:
        return None
    level = saved_irql(world, p)
    return f"Debugger saved IRQL for processor {p.index:#x} -- {level} ({_IRQL_NAMES.get(level, 'UNKNOWN')})\n"


# ----------------------------------------------------------------------- !stacks

# wait machinery !stacks looks past to name what a thread is blocked in (kernel_state/05)
_WAIT_ROUTINES = {
    "KiSwapContext",
    "KiSwapThread",
    "KiCommitThreadWait",
    "KeWaitForSingleObject",
    "KeWaitForMultipleObjects",
    "KeDelayExecutionThread",
    "KeRemoveQueueEx",
    "KeRemovePriQueue",
}
_STATE_WORDS = {"WAIT": "Blocked", "RUNNING": "RUNNING", "READY": "READY"}


def _blocker(world: World, t: Thread) -> str:
    for f in t.frames:
        _, sym, _ = world.symbols.nearest(f.site)
        if sym is None or sym.name not in _WAIT_ROUTINES:
            return world.name(f.site)
    return world.name(t.frames[0].site)


@command("!stacks", summary="every thread's state and blocker")
def _stacks(world: World, name: str, args: str) -> str | None:
    words = args.split()
    detail = world.evaluate(words[0]) if words else 0
    pattern = words[1].lower() if len(words) > 1 else None
    # the Windows 10 layout (kd !stacks 2 on 19041): a process line at column 28, rows of
    # "pid.tid  ETHREAD ticks state blocker", detail 2's further frames at column 40
    out = ["Proc.Thread  .Thread  Ticks   ThreadState Blocker\n"]
    count = 0
    for proc in [world.idle_process, *world.processes]:
        out.append(f"                            [{q(proc.address)} {proc.image}]\n")
        for t in proc.threads:
            names = [world.name(f.site) for f in t.frames]
            if pattern is not None and not any(pattern in n.lower() for n in names):
                continue
            count += 1
            ticks = 0 if t.state == "RUNNING" else t.wait_ticks
            state = _STATE_WORDS.get(t.state, t.state)
            first = names[0] if detail >= 2 else _blocker(world, t)
            out.append(f"{proc.pid:4x}.{t.tid:06x}  {q(t.address)} {ticks:07x} {state:<10} {first}\n")
            if detail >= 2:
                out += [f"{'':40}{n}\n" for n in names[1:]]
    out += ["\n", f"Threads Processed: {count}\n"]
    return "".join(out)


# The interrupt vectors whose routines the world's nt holds, by vector: the page fault, the
# clock (its ISR runs through KiInterruptDispatchNoLockNoEtw, as the break-in stack shows) and
# the IPI that froze the other processors. Vectors whose routines nt's symbols lack are left
# out rather than named after whatever symbol precedes an invented address.
_IDT_VECTORS = (
    (0x0E, "nt!KiPageFault"),
    (0xD1, "nt!KiInterruptDispatchNoLockNoEtw"),
    (0xE1, "nt!KiIpiInterruptNoLockNoEtw"),
)


def idt_base(p: Processor) -> int:
    """The IDT sits in the page below the TSS, as Windows lays the boot processor's tables."""
    return _gdt_tss(p)[1] - 0x1000


@command("!idt", summary="a processor's interrupt vectors")
def _idt(world: World, name: str, args: str) -> str | None:
    if args.strip():
        return None  # -a, a vector: not taken
    # "Dumping IDT: fffff80066c05000", a blank line, then "0e:\tfffff80062a05000 nt!KiPageFault"
    out = [f"Dumping IDT: {idt_base(world.processor):016x}\n", "\n"]
    for vector, routine in _IDT_VECTORS:
        sym = world.symbols.lookup(routine)
        if sym is not None:
            out.append(f"{vector:02x}:\t{sym.address:016x} {world.name(sym.address)}\n")
    return "".join(out)


@command("!locks", summary="held executive resources")
def _locks(world: World, name: str, args: str) -> str | None:
    if args.strip():
        return None  # -v, an address: the world holds no ERESOURCEs to show
    # kernel_objects/13, families/kernel_state/03: the header, the scan, the count; the world
    # has no ERESOURCE, so the scan finds none held
    return "**** DUMP OF ALL RESOURCE OBJECTS ****\nKD: Scanning for held locks.\n\n0 total locks\n"
