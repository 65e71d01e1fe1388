"""World commands that set breakpoints and step: ``bp``/``bu``/``ba``, ``bl``/``bc``/``bd``/``be``,
``p``/``t``/``pt``/``gu``.

Breakpoints live in ``world.breakpoints``; the running world (:mod:`.activity`) stops on them.
A step moves the current thread: its ``rip``, its ``rsp`` and its frames (``t`` into a call
pushes a frame, a ``ret`` pops one), decoding the instruction at ``rip`` from the world's
memory with the same disassembler ``u`` uses, so ``u @rip`` after a step shows what ran next.
Every change is saved first (:func:`.activity.save_thread`) and undone when the target runs.
"""

from __future__ import annotations

import re
import struct

from kdmcp.sim.world import regtext
from kdmcp.sim.world.activity import RunBreakpoint, save_thread
from kdmcp.sim.world.code import Decoded, decode, fmt_addr
from kdmcp.sim.world.machine import Breakpoint, World
from kdmcp.sim.world.model import Frame, Thread
from kdmcp.sim.world.registry import command
from kdmcp.sim.world.regtext import pc_location
from kdmcp.sim.world.symbols import ExprError

__all__ = ["bl_row", "register_block"]

_KERNEL = 0xFFFF800000000000
_QUOTED_RE = re.compile(r'\s*"(?P<cmd>.*)"\s*$', re.DOTALL)
_CONDITION_RE = re.compile(r'(?<!\S)/w\s+"(?P<cond>(?:[^"\\]|\\.)*)"', re.IGNORECASE)
_ACCESS = ("e", "r", "w", "i")
_ID_RE = re.compile(r"\d{1,4}")
_NAME_RE = re.compile(r"[!`+]|^[A-Za-z_@$]")


# ------------------------------------------------------------------ breakpoints


def _split_options(args: str) -> tuple[dict[str, str], list[str], str]:
    """(``/1``, ``/p X``, ``/w "condition"`` options, the other words, the quoted command)."""
    cmd = ""
    opts: dict[str, str] = {}
    if c := _CONDITION_RE.search(args):  # bp /w "@rcx == 0n123" myapp!func (before the command)
        opts["/w"] = c.group("cond").replace('\\"', '"')
        args = args[: c.start()] + args[c.end() :]
    m = _QUOTED_RE.search(args)
    if m is not None and args.count('"') >= 2:
        cmd, args = m.group("cmd"), args[: m.start()]
    words = args.split()
    rest: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.lower() in ("/p", "/t") and i + 1 < len(words):
            opts[w.lower()] = words[i + 1]
            i += 2
            continue
        if w.startswith("/") and len(w) > 1:
            opts[w.lower()] = ""
            i += 1
            continue
        rest.append(w)
        i += 1
    return opts, rest, cmd


def _next_id(world: World) -> int:
    used = {bp.id for bp in world.breakpoints}
    return next(i for i in range(len(used) + 1) if i not in used)


def _number(world: World, text: str) -> int:
    return world.evaluate(text)


@command("bp", "bu", summary="set a breakpoint (bu: unresolved until its module loads)")
def _bp(world: World, name: str, args: str) -> str | None:
    opts, words, cmd = _split_options(args)
    if not words:
        words = [f"{world.registers().get('rip', 0):x}"]  # bp alone: at the current instruction
    wanted: int | None = None
    if len(words) > 1 and _ID_RE.fullmatch(words[0]) and _NAME_RE.search(words[1]):
        # "bp[ID] Address": the id runs into the command ("bp0 securekernel!IumInvokeSecureService")
        wanted, words = int(words[0]), words[1:]
    expr = words[0]
    passes = _number(world, words[1]) if len(words) > 1 else 1
    process = _number(world, opts["/p"]) if "/p" in opts else 0
    out = ""
    try:
        address: int | None = world.evaluate(expr)
    except ExprError:
        if "!" not in expr:
            raise
        address = None  # a module not loaded (or no such symbol yet): deferred
        if name == "bp":
            # kd's note for bp on a name it cannot resolve (bu sets the same, silently)
            out = f"Bp expression '{expr}' could not be resolved, adding deferred bp\n"
    if wanted is not None:
        world.breakpoints[:] = [bp for bp in world.breakpoints if bp.id != wanted]  # kd replaces it
    for bp in world.breakpoints:
        if bp.kind != "ba" and (
            (address is not None and bp.address == address) or (address is None and bp.expression == expr)
        ):
            # kd reuses the breakpoint already at that address
            bp.expression, bp.pass_count, bp.command, bp.enabled = expr, passes, cmd, True
            bp.condition = opts.get("/w", "")
            if isinstance(bp, RunBreakpoint):
                bp.passed = 0
            return out + f"breakpoint {bp.id} redefined\n"
    world.breakpoints.append(
        RunBreakpoint(
            _next_id(world) if wanted is None else wanted,
            name,
            expr,
            address,
            pass_count=max(passes, 1),
            command=cmd,
            one_shot="/1" in opts,
            process=process,
            condition=opts.get("/w", ""),
        )
    )
    world.breakpoints.sort(key=lambda b: b.id)
    return out


@command("ba", summary="set a processor (data) breakpoint")
def _ba(world: World, name: str, args: str) -> str | None:
    del name
    opts, words, cmd = _split_options(args)
    if words and len(words[0]) == 2 and words[0][1] in "1248":
        # "ba r4 addr": access and size written together, as the ba docs' examples write them
        words = [words[0][0], words[0][1], *words[1:]]
    if len(words) < 3 or words[0].lower() not in _ACCESS or words[1] not in ("1", "2", "4", "8"):
        return None
    access, size = words[0].lower(), int(words[1])
    address = world.evaluate(words[2])
    passes = _number(world, words[3]) if len(words) > 3 else 1
    if access != "e" and address % size:
        # Processor breakpoints: "the address must be aligned to the size" (kd refuses others)
        return "Data breakpoint must be aligned\n"
    world.breakpoints.append(
        RunBreakpoint(
            _next_id(world),
            "ba",
            words[2],
            address,
            pass_count=max(passes, 1),
            command=cmd,
            one_shot="/1" in opts,
            access=access,
            size=size,
            process=_number(world, opts["/p"]) if "/p" in opts else 0,
        )
    )
    world.breakpoints.sort(key=lambda b: b.id)
    return ""


def bl_row(world: World, bp: Breakpoint) -> str:
    """One ``bl`` row, kernel layout (no process:thread column):

    ``     0 e Disable Clear  fffff800`62c3a1e0     0001 (0001) nt!NtCreateFile`` (corpus misc/07);
    disabled: ``d Enable Clear`` (families/breakpoints/03 shows ``d``); a ``ba`` row: the address,
    then access and size, ``fffff803`11112222 w 4 0001 (0001) nt!KiFoo`` (families/breakpoints/06,
    kernel form without ``0:****``); deferred: ``u`` where the address goes and the expression in
    parentheses (``Disable Clear u                      0001 (0001) (foo!bar)``, the current
    WinDbg form the project's bl parser documents).
    """
    state = "e" if bp.enabled else "d"
    link = "Disable Clear" if bp.enabled else "Enable Clear"
    passed = bp.passed if isinstance(bp, RunBreakpoint) else 0
    counts = f"{max(bp.pass_count - passed, 1):04x} ({bp.pass_count:04x})"
    tail = f' "{bp.command}"' if bp.command else ""
    head = f"{bp.id:6d} {state} {link}"
    if bp.address is None:
        return f"{head} u                      {counts} ({bp.expression}){tail}\n"
    symbol = world.name(bp.address) if world.symbols.module_at(bp.address) is not None else ""
    if bp.kind == "ba":
        return f"{head}  {fmt_addr(bp.address)} {bp.access} {bp.size} {counts} {symbol}{tail}\n"
    return f"{head}  {fmt_addr(bp.address)}     {counts} {symbol}{tail}\n"


@command("bl", summary="list breakpoints")
def _bl(world: World, name: str, args: str) -> str | None:
    del name, args
    return "".join(bl_row(world, bp) for bp in world.breakpoints)


def _selected(world: World, args: str) -> list[Breakpoint]:
    """``*``, ``0 2``, ``1,3``, ``1-3``: the breakpoints a list names (unknown ids are ignored)."""
    text = args.strip()
    if text == "*":
        return list(world.breakpoints)
    wanted: set[int] = set()
    for part in re.split(r"[\s,]+", text):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            first = int(lo, 16)
            last = int(hi, 16) if hi else first
        except ValueError:
            raise ExprError(part) from None
        wanted.update(range(first, last + 1))
    return [bp for bp in world.breakpoints if bp.id in wanted]


@command("bc", "bd", "be", summary="clear, disable, enable breakpoints")
def _bc(world: World, name: str, args: str) -> str | None:
    if not args.strip():
        return None
    for bp in _selected(world, args):
        if name == "bc":
            world.breakpoints.remove(bp)
        else:
            bp.enabled = name == "be"
    return ""  # kd prints nothing (families/breakpoints/03: bd 3, be 2, bc 3)


# ---------------------------------------------------------------------- registers


def register_block(world: World, thread: Thread | None = None) -> str:
    """kd's x64 ``r`` block (corpus registers/07), without the location lines."""
    return regtext.register_block(world.registers(thread))


def _stop_text(world: World) -> str:
    """What kd prints after a step: the registers and where the thread now is (corpus registers/07)."""
    return register_block(world) + pc_location(world, world.registers())


# -------------------------------------------------------------------------- steps


def _decode_at(world: World, address: int) -> Decoded | None:
    data = world.space().read(address, 16)
    return None if data is None else decode(data, address, world.name)


def _set(world: World, t: Thread, rip: int, rsp: int, frames: list[Frame]) -> None:
    regs = world.registers(t)
    regs.update(rip=rip, rsp=rsp)
    t.registers = regs
    for key in [k for k in world.registers_written if k[0] == t.address]:
        del world.registers_written[key]  # folded into the thread's context above
    t.frames = [Frame(rsp, rip), *frames[1:]] if frames else [Frame(rsp, rip)]


_RSP_RE = re.compile(r"(?P<op>sub|add)\s+rsp,(?P<imm>[0-9a-fA-F]+)h?$")


def _step(world: World, into: bool) -> Decoded | None:
    """Execute the instruction at ``rip``: ``into`` follows a call (``t``), else steps over it."""
    t = world.current_thread()
    save_thread(world, t)
    regs = world.registers(t)
    rip, rsp = regs.get("rip", 0), regs.get("rsp", 0)
    d = _decode_at(world, rip)
    if d is None:
        return None
    nxt = rip + len(d.data)
    frames = list(t.frames)
    mnemonic = d.text.split()[0] if d.text else ""
    if d.is_call and into and d.branch_target is not None:
        world.space(world.owner(t)).write(rsp - 8, struct.pack("<Q", nxt))
        t.frames = [Frame(rsp - 8, d.branch_target), Frame(rsp, nxt), *frames[1:]]
        regs.update(rip=d.branch_target, rsp=rsp - 8)
        t.registers = regs
        return d
    if d.is_return:
        if len(frames) > 1:
            _set(world, t, frames[1].site, frames[1].child_sp, frames[1:])
        else:
            back = world.space(world.owner(t)).u64(rsp) or 0
            _set(world, t, back, rsp + 8, [])
        return d
    if d.is_jump and d.branch_target is not None:
        _set(world, t, d.branch_target, rsp, frames)
        return d
    if m := re.fullmatch(r"jmp\s+(?P<reg>r\w+)", d.text):
        _set(world, t, regs.get(m.group("reg"), nxt), rsp, frames)
        return d
    if m := _RSP_RE.fullmatch(d.text):
        delta = int(m.group("imm"), 16)
        rsp = rsp - delta if m.group("op") == "sub" else rsp + delta
    elif mnemonic == "push":
        rsp -= 8
    elif mnemonic == "pop":
        rsp += 8
    _set(world, t, nxt, rsp, frames)
    return d


def _count(world: World, args: str) -> int | None:
    if not args.strip():
        return 1
    try:
        return max(1, min(world.evaluate(args.strip()), 0x1000))
    except ExprError:
        return None


@command("p", "t", summary="step over (p) or into (t) calls")
def _p(world: World, name: str, args: str) -> str | None:
    count = _count(world, args)
    if count is None:
        return None
    out = ""
    for _ in range(count):
        _step(world, into=name == "t")
        out += _stop_text(world)
    return out


@command("pt", summary="step to the next return")
def _pt(world: World, name: str, args: str) -> str | None:
    del name
    if args.strip():
        return None
    for _ in range(0x1000):  # a routine is far shorter than this; a runaway loop ends here
        if _step(world, into=False) is None:
            break
        d = _decode_at(world, world.registers()["rip"])
        if d is None or d.is_return:
            break
    return _stop_text(world)


@command("gu", summary="go up: run until the current routine returns")
def _gu(world: World, name: str, args: str) -> str | None:
    del name
    if args.strip():
        return None
    t = world.current_thread()
    if len(t.frames) < 2:
        return None
    save_thread(world, t)
    caller = t.frames[1]
    _set(world, t, caller.site, caller.child_sp, t.frames[1:])
    return _stop_text(world)
