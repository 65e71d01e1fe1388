"""World commands only a user-mode target answers: threads (``~``), the process (``|``), the PEB and
TEBs, the last event (``.exr -1``, ``.ecxr``, ``.lastevent``), heaps, and cdb's ``k``, ``r``, ``lm``.

Each reads the user world (:mod:`~kdmcp.sim.world.user`): the model for what cdb summarises
(threads, modules, heaps, the event), the process's memory where cdb reads memory (``!peb`` and
``!teb`` walk the PEB, the loader lists and the process parameters as laid by ntdll's layouts), so
``~``'s ids are ``!teb``'s ClientId and ``lm``'s ranges hold every ``k`` frame.

``k``, ``r``, ``lm``, ``!peb``, ``!teb`` and ``.lastevent`` have kernel forms too: when another
module registered one, the entry is shared -- a user world is answered here, any other world by the
kernel's handler (the command table holds one entry a name).
"""

from __future__ import annotations

import re
import time

from kdmcp.sim.world import user_catalog as cat
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.layouts import offset_of
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Thread
from kdmcp.sim.world.registry import command
from kdmcp.sim.world.regtext import pc_location, register_block
from kdmcp.sim.world.user import UserState, user_state
from kdmcp.sim.world.user_address import address_text
from kdmcp.sim.world.user_program import EXIT_CODE
from kdmcp.sim.world.user_text import stack_text, thread_row

__all__ = ["current_index"]


_CODE_NAMES = {0x80000003: "Break instruction exception", 0xC0000005: "Access violation"}
_ACCESS = {0: "read from", 1: "write to", 8: "execute"}
_DEBUGGER_TIME = "Mon Mar  4 10:15:42.118 2024 (UTC + 0:00)"  # the session's time (version, .lastevent)


def _state(world: World) -> UserState | None:
    return user_state(world)


def _threads(world: World) -> list[Thread]:
    return world.processes[0].threads


def current_index(world: World) -> int:
    """The current thread's number (cdb's prompt: ``0:002>``)."""
    current = world.current_thread().address
    return next((i for i, t in enumerate(_threads(world)) if t.address == current), 0)


def _illegal(text: str) -> str:
    # ntsd's error(BADTHREAD): "Illegal thread" + " error in '%s'"
    return f"       ^ Illegal thread error in '{text}'\n"


# ------------------------------------------------------------------------------------ ~


_THREAD_RE = re.compile(r"(?P<sel>\*|\.|#|\d+|~\[(?P<tid>[^\]]*)\])?\s*(?P<rest>.*)$", re.DOTALL)


@command("~", modes=("user",), summary="threads: list, select (~Ns), per-thread stacks (~*k)")
def _tilde(world: World, name: str, args: str) -> str | None:
    state = _state(world)
    if state is None:
        return None
    m = _THREAD_RE.match(args.strip())
    if m is None:
        return None
    sel, rest = m.group("sel"), m.group("rest").strip()
    threads = _threads(world)
    current = world.current_thread().address
    picked = _select(world, sel, m.group("tid"))
    if picked is None:
        return _illegal(f"~{args}")
    if sel is None and not rest:  # "~": the list (corpus process_thread/06)
        return "".join(thread_row(world, i, t, current, state.event.thread) for i, t in enumerate(threads))
    if rest.lower() == "s" and sel not in (None, "*"):
        index = picked[0]
        world.context_thread = threads[index].address
        world.context_process = None
        # cdb shows where the new current thread is: its symbol line and instruction
        return pc_location(world, world.registers(threads[index]))
    if rest == "":  # "~*", "~1", "~.", "~~[tid]": the row, its start address and priority
        out = ""
        for i in picked:
            t = threads[i]
            out += thread_row(world, i, t, current, state.event.thread)
            out += f"      Start: {world.name(t.win32_start)} ({fmt_addr(t.win32_start)})\n"
            out += "      Priority: 0  Priority class: 32  Affinity: 3\n"
        return out
    km = re.fullmatch(r"k(?P<opts>[a-zA-Z]*)(?:\s+(?P<count>\S+))?", rest)
    if km is not None:  # "~*k", "~1kb": each thread's row after a blank line, then its stack
        out = ""
        for i in picked:
            out += "\n" + thread_row(world, i, threads[i], current, state.event.thread)
            out += _stack(world, threads[i], km.group("opts"), km.group("count"))
        return out
    return None


def _select(world: World, sel: str | None, tid: str | None) -> list[int] | None:
    threads = _threads(world)
    if sel in (None, "*"):
        return list(range(len(threads)))
    if sel == ".":
        return [current_index(world)]
    state = _state(world)
    if sel == "#" and state is not None:
        return [i for i, t in enumerate(threads) if t.address == state.event.thread] or None
    if tid is not None:
        try:
            want = world.evaluate(tid)
        except Exception:  # an id cdb cannot evaluate names no thread
            return None
        return [i for i, t in enumerate(threads) if t.tid == want] or None
    index = int(sel, 10) if sel.isdigit() else -1
    return [index] if 0 <= index < len(threads) else None


# ------------------------------------------------------------------------------------ k


def _stack(world: World, thread: Thread, opts: str, count: str | None) -> str:
    limit = 256
    if count:
        try:
            limit = world.evaluate(count)
        except Exception:
            limit = 256
    low = opts.lower()
    text = stack_text(world, thread, args="b" in low or "v" in low, limit=limit)
    if "L" in opts:  # kL: no source lines
        text = re.sub(r" \[[^\]]* @ \d+\] $", "", text, flags=re.MULTILINE)
    return text


@command("k", modes=("user",), summary="stack backtrace (k, kn, kb, kv, kL, k N)")
def _k(world: World, name: str, args: str) -> str | None:
    if _state(world) is None:
        return None
    m = re.fullmatch(r"(?P<opts>[nbvL]*)\s*(?P<count>\S+)?", args.strip())
    if m is None:
        return None
    return _stack(world, world.current_thread(), m.group("opts"), m.group("count"))


# ------------------------------------------------------------------------------------ r


@command("r", modes=("user",), summary="registers (r, r rax, r rax=1)")
def _r(world: World, name: str, args: str) -> str | None:
    if _state(world) is None:
        return None
    text = args.strip()
    thread = world.current_thread()
    regs = world.registers(thread)
    if not text:  # the canned r (corpus registers/01)
        return register_block(regs) + pc_location(world, regs)
    if "=" in text:
        reg, _, expr = text.partition("=")
        reg = reg.strip().lstrip("@").lower()
        if reg not in regs:
            return f"       ^ Bad register error in 'r {text}'\n"
        world.registers_written[(thread.address, reg)] = world.evaluate(expr)
        return ""
    shown = []
    for reg in (w.strip().lstrip("@").lower() for w in text.split(",")):
        value = world.register(reg)
        if value is None or reg.startswith("$"):
            return f"       ^ Bad register error in 'r {text}'\n"
        width = 4 if reg in ("cs", "ss", "ds", "es", "fs", "gs") else 8 if reg == "efl" or reg[0] == "e" else 16
        shown.append(f"{reg}={value:0{width}x}")
    return " ".join(shown) + "\n"  # "r rip, rsp": one line, as the block prints them


# ------------------------------------------------------------------------------------ | and lm


@command("|", modes=("user",), summary="the process list")
def _bar(world: World, name: str, args: str) -> str | None:
    state = _state(world)
    if state is None or args.strip():
        return None
    kind = "attach" if state.mode == "attach" else "create"
    proc = world.processes[0]
    # tab-separated (corpus families/threads/09, process_thread/08)
    return f".  0\tid: {proc.pid:x}\t{kind}\tname: {state.image}\n"


@command("lm", modes=("user",), summary="loaded modules (lm, lm m PATTERN, lm f)")
def _lm(world: World, name: str, args: str) -> str | None:
    if _state(world) is None:
        return None
    words = args.split()
    full = "f" in words
    words = [w for w in words if w != "f"]
    pattern = None
    if words[:1] == ["m"] and len(words) == 2:
        pattern = words[1]
    elif words:
        return None
    mods = sorted(world.modules, key=lambda m: m.base)
    if pattern is not None:
        rx = re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.I)
        mods = [m for m in mods if rx.fullmatch(m.name)]
    # the canned lm (corpus modules/03, families/modules/05): name in 8 columns then three
    # blanks, the symbol state in 23, the symbol file; lm f: the image path (families/modules/07)
    out = "Browse full module list\n" if pattern is not None else ""
    out += "start             end                 module name\n"
    for m in mods:
        tail = m.path if full else f"{m.symbol_status:<23}{m.pdb or ''}"
        out += f"{fmt_addr(m.base)} {fmt_addr(m.end)}   {m.name:<8}   {tail}\n"
    return out


# ------------------------------------------------------------------------------------ !peb !teb


def _u64(world: World, addr: int) -> int:
    return world.space().u64(addr) or 0


def _field(world: World, type_name: str, base: int, path: str, size: int = 8) -> int:
    off, _ = offset_of(type_name, path)
    space = world.space()
    got = {1: space.u8, 2: space.u16, 4: space.u32, 8: space.u64}[size](base + off)
    return got or 0


def _ustr(world: World, addr: int) -> str:
    """A _UNICODE_STRING's text, or cdb's ``< Name not readable >`` where its buffer is not."""
    length = world.space().u16(addr) or 0
    buf = _u64(world, addr + 8)
    data = world.space().read(buf, length) if buf else None
    return "< Name not readable >" if data is None or not buf else data.decode("utf-16-le", "replace")


def _p(value: int) -> str:
    return f"{value:016x}"


@command("!peb", modes=("user",), summary="the process environment block")
def _peb(world: World, name: str, args: str) -> str | None:
    if _state(world) is None:
        return None
    peb = world.evaluate(args) if args.strip() else world.processes[0].peb
    if world.space().read(peb, 8) is None:
        return f"error 1 InitTypeRead( nt!_PEB at {_p(peb)})\n"

    def f(path: str, size: int = 8) -> int:
        return _field(world, "_PEB", peb, path, size)

    yes = {0: "No"}
    ldr = f("Ldr")
    # corpus process_thread/11 (x64 widths), the canned !peb
    out = f"PEB at {_p(peb)}\n"
    out += f"    InheritedAddressSpace:    {yes.get(f('InheritedAddressSpace', 1), 'Yes')}\n"
    out += f"    ReadImageFileExecOptions: {yes.get(f('ReadImageFileExecOptions', 1), 'Yes')}\n"
    out += f"    BeingDebugged:            {yes.get(f('BeingDebugged', 1), 'Yes')}\n"
    out += f"    ImageBaseAddress:         {_p(f('ImageBaseAddress'))}\n"
    out += f"    NtGlobalFlag:             {f('NtGlobalFlag', 4):x}\n"
    out += f"    NtGlobalFlag2:            {world.space().u32(peb + 0x7C4) or 0:x}\n"
    out += f"    Ldr                       {_p(ldr)}\n"
    out += f"    Ldr.Initialized:          {yes.get(_field(world, '_PEB_LDR_DATA', ldr, 'Initialized', 1), 'Yes')}\n"
    for label, off in (("InInitializationOrderModuleList", 0x30), ("InLoadOrderModuleList", 0x10),
                       ("InMemoryOrderModuleList", 0x20)):  # fmt: skip
        head = f"Ldr.{label}:"
        out += f"    {head:<37}{_p(_u64(world, ldr + off))} . {_p(_u64(world, ldr + off + 8))}\n"
    out += "                    Base TimeStamp                     Module\n"
    node, seen = _u64(world, ldr + 0x10), 0
    while node and node != ldr + 0x10 and seen < 64:
        base = _field(world, "_LDR_DATA_TABLE_ENTRY", node, "DllBase")
        stamp = _field(world, "_LDR_DATA_TABLE_ENTRY", node, "TimeDateStamp", 4)
        when = time.strftime("%b %d %H:%M:%S %Y", time.gmtime(stamp))
        path = _ustr(world, node + offset_of("_LDR_DATA_TABLE_ENTRY", "FullDllName")[0])
        out += f"{base:>24x} {stamp:08x} {when} {path}\n"
        node, seen = _u64(world, node), seen + 1
    params = f("ProcessParameters")

    def s(path: str) -> str:
        return _ustr(world, params + offset_of("_RTL_USER_PROCESS_PARAMETERS", path)[0])

    out += f"    SubSystemData:     {_p(f('SubSystemData'))}\n"
    out += f"    ProcessHeap:       {_p(f('ProcessHeap'))}\n"
    out += f"    ProcessParameters: {_p(params)}\n"
    out += f"    CurrentDirectory:  '{s('CurrentDirectory.DosPath')}'\n"
    out += f"    WindowTitle:  '{s('WindowTitle')}'\n"
    out += f"    ImageFile:    '{s('ImagePathName')}'\n"
    out += f"    CommandLine:  '{s('CommandLine')}'\n"
    out += f"    DllPath:      '{s('DllPath')}'\n"
    env = _field(world, "_RTL_USER_PROCESS_PARAMETERS", params, "Environment")
    out += f"    Environment:  {_p(env)}\n"
    for _ in range(512):
        text = _wstr(world, env)
        if not text:
            break
        out += f"        {text}\n"
        env += 2 * (len(text) + 1)
    return out


def _wstr(world: World, addr: int) -> str:
    chars = []
    for i in range(0, 4096, 2):
        unit = world.space().u16(addr + i)
        if not unit:
            break
        chars.append(chr(unit))
    return "".join(chars)


@command("!teb", modes=("user",), summary="a thread environment block")
def _teb(world: World, name: str, args: str) -> str | None:
    if _state(world) is None:
        return None
    teb = world.evaluate(args) if args.strip() else world.current_thread().teb
    if world.space().read(teb, 8) is None:
        return "error InitTypeRead( TEB )...\n"

    def f(path: str, size: int = 8) -> int:
        return _field(world, "_TEB", teb, path, size)

    # corpus process_thread/13, the canned !teb (x64 widths)
    rows = [
        ("ExceptionList", _p(f("NtTib.ExceptionList"))),
        ("StackBase", _p(f("NtTib.StackBase"))),
        ("StackLimit", _p(f("NtTib.StackLimit"))),
        ("SubSystemTib", _p(f("NtTib.SubSystemTib"))),
        ("FiberData", _p(f("NtTib.FiberData"))),
        ("ArbitraryUserPointer", _p(f("NtTib.ArbitraryUserPointer"))),
        ("Self", _p(f("NtTib.Self"))),
        ("EnvironmentPointer", _p(f("EnvironmentPointer"))),
        ("ClientId", f"{_p(f('ClientId.UniqueProcess'))} . {_p(f('ClientId.UniqueThread'))}"),
        ("RpcHandle", _p(f("ActiveRpcHandle"))),
        ("Tls Storage", _p(f("ThreadLocalStoragePointer"))),
        ("PEB Address", _p(f("ProcessEnvironmentBlock"))),
        ("LastErrorValue", f"{f('LastErrorValue', 4)}"),
        ("LastStatusValue", f"{world.space().u32(teb + 0x1250) or 0:x}"),
        ("Count Owned Locks", f"{f('CountOfOwnedCriticalSections', 4)}"),
        ("HardErrorMode", f"{world.space().u32(teb + 0x16B0) or 0}"),
    ]
    return f"TEB at {_p(teb)}\n" + "".join(f"    {label + ':':<22}{value}\n" for label, value in rows)


# ------------------------------------------------------------------------------------ events


@command(".exr", modes=("user",), summary="the last exception record (.exr -1)")
def _exr(world: World, name: str, args: str) -> str | None:
    state = _state(world)
    if state is None or args.strip() != "-1":
        return None
    e = state.event
    mod, sym, off = world.symbols.nearest(e.address)
    where = world.name(e.address) if off == 0 else f"{world.name(e.address - off)}+0x{off:016x}"
    # corpus exceptions_errors/01, families/exceptions/10 (x64: 16 hex digits, 16-digit offsets)
    out = f"ExceptionAddress: {_p(e.address)} ({where})\n"
    out += f"   ExceptionCode: {e.code:08x} ({_CODE_NAMES.get(e.code, 'Unknown exception')})\n"
    out += "  ExceptionFlags: 00000000\n"
    out += f"NumberParameters: {len(e.parameters)}\n"
    out += "".join(f"   Parameter[{i}]: {_p(p)}\n" for i, p in enumerate(e.parameters))
    if e.code == 0xC0000005 and len(e.parameters) >= 2 and e.parameters[0] in _ACCESS:
        out += f"Attempt to {_ACCESS[e.parameters[0]]} address {_p(e.parameters[1])}\n"
    del mod, sym
    return out


@command(".ecxr", modes=("user",), summary="the last exception's context")
def _ecxr(world: World, name: str, args: str) -> str | None:
    state = _state(world)
    if state is None or args.strip():
        return None
    thread = world.thread(state.event.thread) or world.current_thread()
    regs = state.event.context or world.registers(thread)
    return register_block(regs) + pc_location(world, regs)


@command(".lastevent", modes=("user",), summary="the last event")
def _lastevent(world: World, name: str, args: str) -> str | None:
    state = _state(world)
    if state is None:
        return None
    e = state.event
    t = world.thread(e.thread)
    tid = t.tid if t is not None else 0
    if e.breakpoint is not None:  # a breakpoint's stop: cdb's "Last event: 1a2c.1e48: Hit breakpoint 0"
        return f"Last event: {world.processes[0].pid:x}.{tid:x}: Hit breakpoint {e.breakpoint}\n" + (
            f"  debugger time: {_DEBUGGER_TIME}\n"
        )
    pid = world.processes[0].pid
    if e.exit == "process":  # "Last event: 8ec.1ff0: Exit process 0:8ec, code c" (a cdb front end's test)
        return f"Last event: {pid:x}.{tid:x}: Exit process 0:{pid:x}, code {EXIT_CODE:x}\n" + (
            f"  debugger time: {_DEBUGGER_TIME}\n"
        )
    if e.exit == "thread":  # reconstructed on the exit-process form
        index = next((i for i, x in enumerate(_threads(world)) if x.address == e.thread), 0)
        return f"Last event: {pid:x}.{tid:x}: Exit thread {index}:{tid:x}, exit code {EXIT_CODE:x}\n" + (
            f"  debugger time: {_DEBUGGER_TIME}\n"
        )
    chance = "first chance" if e.first_chance else "!!! second chance !!!"
    what = _CODE_NAMES.get(e.code, "Unknown exception")
    # the .jdinfo documentation example (pid.tid prefix, debugger time)
    return f"Last event: {world.processes[0].pid:x}.{tid:x}: {what} - code {e.code:08x} ({chance})\n" + (
        f"  debugger time: {_DEBUGGER_TIME}\n"
    )


# ------------------------------------------------------------------------------------ !heap


@command("!heap", modes=("user",), summary="heaps: the list, -s summary")
def _heap(world: World, name: str, args: str) -> str | None:
    state = _state(world)
    if state is None:
        return None
    words = args.split()
    if not words:
        # the heap list of 10.0.1xxxx+ (a published cdb session: address right-aligned in 20
        # columns, the kind in 21)
        rows = "".join(f"{h.address:>20x}{'NT Heap':>21}\n" for h in state.heaps)
        return "        Heap Address      NT/Segment Heap\n\n" + rows
    if words != ["-s"]:
        return None
    # the canned !heap -s (families/heap/01's layout: the x64 table, 'LFH' in the Fast column)
    stars = "*" * 120 + "\n"
    rule = "-" * 85 + "\n"
    out = stars + " " * 46 + "NT HEAP STATS BELOW\n" + stars
    out += f"LFH Key                   : 0x{cat.LFH_KEY:016x}\nTermination on corruption : ENABLED\n"
    out += "          Heap     Flags   Reserv  Commit  Virt   Free  List   UCR  Virt  Lock  Fast \n"
    out += "                            (k)     (k)    (k)     (k) length      blocks cont. heap \n"
    out += rule
    for h in state.heaps:
        fast = "LFH" if h.lfh else ""
        out += f"{h.address:016x} {h.flags:08x} {h.reserve_kb:>7} {h.commit_kb:>6} {h.virtual_kb:>6} "
        out += f"{h.free_kb:>6} {h.free_list:>5} {h.ucr:>5} {h.virtual_blocks:>4} {h.lock_contention:>6}   {fast:<3}\n"
    return out + rule + "\n"


@command("!address", modes=("user",), summary="the memory region holding an address")
def _address(world: World, name: str, args: str) -> str | None:
    if _state(world) is None or not args.strip() or args.strip().startswith("-"):
        return None
    return address_text(world, world.evaluate(args))
