"""World commands: disassembly (``u``, ``ub``, ``uf``) of the bytes in the world's memory.

The instructions are decoded by iced-x86 (:func:`~kdmcp.sim.world.code.decode`) from what
``world.space()`` holds at the time, so a byte written with ``eb`` is what the next ``u``
decodes, and ``db``/``dq``/``u`` at one address show the same bytes. Symbol labels come from
the world's symbol table: ``nt!DbgBreakPointWithStatus:`` where an instruction starts a
symbol, ``nt!Foo+0x12:`` at the start of a listing that is not on one (corpus disasm/01).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kdmcp.sim.world.cmd_memory import access_error, parse_range
from kdmcp.sim.world.code import Decoded, decode, fmt_addr
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.registry import command

__all__: list[str] = []

_MASK = (1 << 64) - 1
_DEFAULT = 8  # u, ub: eight instructions (the u page: "the default is eight instructions")
_LONGEST = 15  # the longest x64 instruction


@dataclass
class _DisasmState:
    """Where a range-less ``u`` continues: just past the last instruction the last ``u`` showed."""

    next_u: int | None = None


def _state(world: World) -> _DisasmState:
    return world.state_of(_DisasmState)


@dataclass(frozen=True)
class _Line:
    address: int
    decoded: Decoded | None  # None: unreadable memory or no instruction there
    byte: int | None = None  # the byte shown for an undecodable one ("ff              ???")


def _one(world: World, addr: int) -> _Line:
    cells = world.space().cells(addr, _LONGEST)
    data = bytearray()
    for b in cells:
        if b is None:
            break
        data.append(b)
    if not data:
        return _Line(addr, None)
    got = decode(bytes(data), addr, world.name)
    if got is not None and got.branch_target is not None and world.symbols.module_at(got.branch_target) is None:
        # a target in no module is the bare address ("je      ffff9d01`69ff0032"), not
        # "name (address)" with the address twice
        bare = fmt_addr(got.branch_target)
        got = replace(got, text=got.text.replace(f"{bare} ({bare})", bare))
    return _Line(addr, got, data[0] if got is None else None)


def _size(line: _Line) -> int:
    return len(line.decoded.data) if line.decoded is not None else 1


def _text(line: _Line) -> str:
    """corpus disasm/01: ``fffff802`40d322f9 488b4810        mov     rcx,qword ptr [rax+10h]``."""
    if line.decoded is None:
        # published u at unmapped memory: "ffffffff`fdc124b0 ??              ???"
        shown = "??" if line.byte is None else f"{line.byte:02x}"
        return f"{fmt_addr(line.address)} {shown:<15} ???"
    # the bytes padded to 16 columns, or one blank after a longer run (corpus disasm/03)
    return f"{fmt_addr(line.address)} {line.decoded.data.hex():<15} {line.decoded.text}"


def _label(world: World, addr: int, first: bool) -> str | None:
    """``nt!Foo:`` where a symbol starts; at the listing's first line ``nt!Foo+0x12:`` too."""
    mod, sym, off = world.symbols.nearest(addr)
    if mod is None:
        return None
    if sym is not None and off == 0:
        return f"{mod.name}!{sym.name}:"
    return f"{world.name(addr)}:" if first else None


def _listing(world: World, lines: list[_Line], labels: set[int] | None = None) -> str:
    out: list[str] = []
    for i, line in enumerate(lines):
        label = _label(world, line.address, i == 0)
        if label is None and labels is not None and line.address in labels:
            label = f"{world.name(line.address)}:"
        if label is not None:
            out.append(label)
        out.append(_text(line))
    return "".join(s + "\n" for s in out)


def _forward(world: World, start: int, count: int | None, end: int | None) -> list[_Line]:
    """Instructions from ``start``: ``count`` of them, or those starting at or before ``end``;
    an unreadable address ends the listing (kd stops there with a memory access error)."""
    lines: list[_Line] = []
    addr = start
    while (count is None or len(lines) < count) and (end is None or addr <= end):
        line = _one(world, addr)
        lines.append(line)
        if line.decoded is None and line.byte is None:
            break
        addr = (addr + _size(line)) & _MASK
        if count is None and end is None:
            break
    return lines


def _finish(world: World, name: str, args: str, lines: list[_Line], labels: set[int] | None = None) -> str:
    text = _listing(world, lines, labels)
    if lines and lines[-1].decoded is None and lines[-1].byte is None:
        text += access_error(world, name, args)
    return text


@command("u", modes=("kernel", "user"), summary="unassemble")
def _u(world: World, name: str, args: str) -> str | None:
    state = _state(world)
    start, count, end = parse_range(world, args)
    if start is None:
        start = state.next_u if state.next_u is not None else world.registers().get("rip", 0)
    if count is None and end is None:
        count = _DEFAULT
    lines = _forward(world, start, count, end)
    if lines:
        state.next_u = (lines[-1].address + _size(lines[-1])) & _MASK
    return _finish(world, name, args, lines)


def _chain(world: World, start: int, stop: int) -> list[_Line] | None:
    """Decode from ``start``; the instructions if they end exactly at ``stop``, else ``None``."""
    lines: list[_Line] = []
    addr = start
    while addr < stop:
        line = _one(world, addr)
        if line.decoded is None and line.byte is None:
            return None
        lines.append(line)
        addr += _size(line)
    return lines if addr == stop else None


def _backward(world: World, stop: int, count: int) -> list[_Line]:
    """``count`` instructions that end exactly at ``stop``.

    A routine's start is a sure instruction boundary, so the chain is decoded forward from the
    start of the symbol before ``stop`` (and of the ones before it, as far as ``count`` needs);
    with no symbol near, from every start offset in reach, keeping the longest chain that lands
    exactly on ``stop`` (a wrong start re-synchronises within a few instructions)."""
    mod, _sym, off = world.symbols.nearest((stop - 1) & _MASK)
    anchor = stop - 1 - off if mod is not None else None
    while anchor is not None and stop - anchor <= 0x4000:
        got = _chain(world, anchor, stop)
        if got is not None and len(got) >= count:
            return got[-count:]
        if anchor <= (mod.base if mod is not None else 0):
            break
        mod, _sym, off = world.symbols.nearest(anchor - 1)
        if mod is None:
            break
        anchor = anchor - 1 - off
    best: list[_Line] = []
    for back in range(count * _LONGEST, 0, -1):
        got = _chain(world, stop - back, stop)
        if got is not None and len(got) > len(best):
            best = got
            if len(best) >= count:
                break
    return best[-count:]


@command("ub", modes=("kernel", "user"), summary="unassemble backward")
def _ub(world: World, name: str, args: str) -> str | None:
    start, count, _end = parse_range(world, args)
    stop = start if start is not None else world.registers().get("rip", 0)
    lines = _backward(world, stop, count if count is not None else _DEFAULT)
    if not lines:
        return _finish(world, name, args, [_Line(stop, None)])
    return _listing(world, lines)


@command("uf", modes=("kernel", "user"), summary="unassemble function")
def _uf(world: World, name: str, args: str) -> str | None:
    """The routine's basic blocks, in address order, found by following its branches from its
    entry (corpus disasm/04): each block that a branch enters starts with its label line
    (``nt!Foo+0x12:``); the routine's symbol size bounds the walk. An address outside any
    symbol is walked from itself."""
    words = args.split()
    flags = {w[1:] for w in words if w.startswith("/")}
    start, _, _ = parse_range(world, " ".join(w for w in words if not w.startswith("/")))
    if start is None:
        return None
    _mod, sym, off = world.symbols.nearest(start)
    if sym is not None and off < sym.size:
        # an address inside a routine: uf shows the whole routine, walked from its entry
        low, high = sym.address, sym.address + sym.size
        start = low
    else:
        low, high = start, start + 0x1000
    seen: dict[int, _Line] = {}
    labels: set[int] = {start}
    todo = [start]
    while todo:
        addr = todo.pop()
        while low <= addr < high and addr not in seen:
            line = _one(world, addr)
            seen[addr] = line
            d = line.decoded
            if d is None:
                break
            if d.branch_target is not None and not d.is_call and low <= d.branch_target < high:
                labels.add(d.branch_target)
                todo.append(d.branch_target)
            if d.is_return or d.is_jump:
                break
            addr += len(d.data)
    lines = [seen[a] for a in sorted(seen)]
    if "c" in flags:
        return _calls(world, start, lines)
    return _finish(world, name, args, lines, labels)


def _calls(world: World, entry: int, lines: list[_Line]) -> str:
    """uf /c: the routine, then each call's site and target (published ``uf /c /o KiExecuteDpc``:
    ``nt!KiExecuteDpc (fffff806`3d19ed00)`` / ``  nt!KiExecuteDpc+0x37 (fffff806`3d19ed37):`` /
    ``    call to nt!memset (fffff806`3d1f1040)``)."""
    out = [world.describe(entry)]
    for line in lines:
        d = line.decoded
        if d is not None and d.is_call:
            out += [f"  {world.describe(line.address)}:", f"    call to {d.text[8:].strip()}"]
    return "".join(s + "\n" for s in out)
