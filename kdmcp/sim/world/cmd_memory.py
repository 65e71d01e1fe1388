"""World commands: memory display (``db dw dd dq dp dc dps dqs dds da du d``) and entry (``e*``).

Every cell shown is read from the world's address space (``world.space()``), and every ``e*``
writes there, so ``db``, ``dq`` and ``u`` at one address agree and a written byte is what the
next ``db`` and ``u`` see. A page that is not mapped reads as kd's ``??`` cells; a write to one
is kd's ``Memory access error``.

Ranges are kd's Address and Address Range Syntax: ``ADDR``, ``ADDR L count`` (``L?count``),
``ADDR ADDR2`` (both ends inclusive); with no range a display continues where the last one of
the family ended, or starts at the instruction pointer (the d* page: "If Range is omitted and
no previous display command has been used, the display begins at the current instruction
pointer").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.registry import command
from kdmcp.sim.world.symbols import ExprError

__all__ = ["access_error", "parse_range", "printable"]

_MASK = (1 << 64) - 1

# unit size, cells per row, default count (the d* page: "The default count is 128 bytes" for
# db/dw/dd/dq/dc; dps/dqs 16 pointers on x64, dds 32 dwords)
_LAYOUT: dict[str, tuple[int, int, int]] = {
    "db": (1, 16, 0x80),
    "dw": (2, 8, 0x40),
    "dd": (4, 4, 0x20),
    "dc": (4, 4, 0x20),
    "dq": (8, 2, 0x10),
    "dp": (8, 2, 0x10),
    "dps": (8, 1, 0x10),
    "dqs": (8, 1, 0x10),
    "dds": (4, 1, 0x20),
}
# da/du: 32 characters a row (published da/du rows: `0d563b30 "SymbolOperationAAAA…"` breaks
# after 0x20 characters, du after 0x40 bytes); the display stops at the first NUL
_STRING_ROW = 32
_STRING_DEFAULT = 0x100
# "the value passed after L cannot exceed 256MB ... To overwrite this limitation, use L?"
_LIMIT = 0x10000000


@dataclass
class _DisplayState:
    """Where the next range-less ``d*`` continues, and which format a bare ``d`` repeats."""

    next_address: int | None = None
    last: str = "db"


def _state(world: World) -> _DisplayState:
    return world.state_of(_DisplayState)


# ------------------------------------------------------------------ ranges

# "L 8", "L?20", "l0n16": the length part of a range; the rest before it is the address
_LENGTH_RE = re.compile(r"(?:^|\s)[Ll](\?)?\s*(?P<count>[^\s].*)$")


def parse_range(world: World, text: str) -> tuple[int | None, int | None, int | None]:
    """``(start, count, end)`` of an address range; ``None`` where the text leaves it out.

    ``count`` is in the command's units (kd: "L Size" counts "objects"), ``end`` inclusive."""
    text = text.strip()
    if not text:
        return None, None, None
    m = _LENGTH_RE.search(text)
    if m is not None:
        head = text[: m.start()].strip()
        try:
            count = world.evaluate(m.group("count"))
        except ExprError:
            if head:
                raise
            # not a length after all: an address that starts with "l" (lsass!..., "l" + hex)
        else:
            return (world.evaluate(head) if head else None), count, None
    try:
        return world.evaluate(text), None, None
    except ExprError as first:
        # "ADDR ADDR2": the first split where both sides are expressions
        for gap in re.finditer(r"\s+", text):
            left, right = text[: gap.start()], text[gap.end() :]
            try:
                start, end = world.evaluate(left), world.evaluate(right)
            except ExprError:
                continue
            return start, None, end
        raise first


def _options(args: str) -> tuple[int | None, str]:
    """``/c N`` (columns) taken off the front of the arguments."""
    columns: int | None = None
    m = re.match(r"\s*/c\s*([0-9a-fA-F]+)\s+", args)
    if m is not None:
        columns = int(m.group(1), 16)
        args = args[m.end() :]
    return columns, args


def access_error(world: World, name: str, args: str, kind: str = "Memory access") -> str:
    """kd's ``^ Memory access error in 'u rcx'``: the caret under the command line's last character.

    Published: ``0:000> u rcx`` / ``ffffffff`fdc124b0 ??              ???`` /
    ``           ^ Memory access error in 'u rcx'`` (11 blanks: the 7 of the prompt and 4);
    ``0:000> kb rsp+28`` / ``               ^ Range error in 'kb rsp+28'`` (15 blanks)."""
    line = f"{name} {args}".strip()
    prompt = len(f"{world.cpu}: kd> ")
    return " " * (prompt + len(line) - 1) + f"^ {kind} error in '{line}'\n"


def printable(b: int | None) -> str:
    """The character column: ASCII 0x20-0x7e as itself, ``?`` unreadable, ``.`` otherwise."""
    if b is None:
        return "?"
    return chr(b) if 0x20 <= b < 0x7F else "."


# ------------------------------------------------------------------ rows


def _cell(cells: list[int | None], size: int) -> str:
    if None in cells:
        text = "?" * (2 * size)
    else:
        text = f"{int.from_bytes(bytes(b for b in cells if b is not None), 'little'):0{2 * size}x}"
    # qwords as kd prints them: two halves joined by a backtick (corpus memory/10)
    return f"{text[:8]}`{text[8:]}" if size == 8 else text


def _rows(world: World, name: str, start: int, count: int, columns: int | None) -> list[str]:
    size, per_row, _ = _LAYOUT[name]
    per_row = columns or per_row
    cells = world.space().cells(start, count * size)
    out: list[str] = []
    for first in range(0, count, per_row):
        n = min(per_row, count - first)
        addr = (start + first * size) & _MASK
        chunk = cells[first * size : (first + n) * size]
        if name == "db":
            # corpus exceptions_errors/02: "cc c3 cc cc cc cc cc cc-0f 1f 84 00 …  ................"
            hexes = ["??" if b is None else f"{b:02x}" for b in chunk]
            text = "".join((("-" if i == 8 else " ") if i else "") + h for i, h in enumerate(hexes))
            width = 3 * per_row - 1
            out.append(f"{fmt_addr(addr)}  {text:<{width}}  {''.join(printable(b) for b in chunk)}")
            continue
        values = [_cell(chunk[i * size : (i + 1) * size], size) for i in range(n)]
        if name in ("dps", "dqs", "dds"):
            # corpus memory/04: "fffff801`9210b880  fffff801`9203b470 nt!KiServiceTable"
            line = f"{fmt_addr(addr)}  {values[0]}"
            if None not in chunk:
                value = int.from_bytes(bytes(b for b in chunk if b is not None), "little")
                if world.symbols.module_at(value) is not None:
                    line += f" {world.name(value)}"
            out.append(line)
        elif name == "dc":
            # dc: the dwords, two blanks, a character per byte; a short row keeps the column
            width = 9 * per_row - 1
            out.append(f"{fmt_addr(addr)}  {' '.join(values):<{width}}  {''.join(printable(b) for b in chunk)}")
        else:
            out.append(f"{fmt_addr(addr)}  {' '.join(values)}")
    return out


def _string(world: World, name: str, start: int, limit: int) -> tuple[list[str], int]:
    """da/du rows up to the first NUL (not shown) or ``limit`` characters; and where it ended."""
    width = 1 if name == "da" else 2
    cells = world.space().cells(start, limit * width)
    chars: list[str] = []
    for i in range(limit):
        unit = [b for b in cells[i * width : (i + 1) * width] if b is not None]
        if len(unit) < width:
            chars.append("?")
            continue
        code = int.from_bytes(bytes(unit), "little")
        if code == 0:
            break
        chars.append(chr(code) if 0x20 <= code < 0x7F or (width == 2 and code >= 0xA0) else ".")
    rows = []
    for first in range(0, max(len(chars), 1), _STRING_ROW):
        text = "".join(chars[first : first + _STRING_ROW])
        # corpus memory/11: `00000000`031e92c8  "Reflective Dll Injection"`
        rows.append(f'{fmt_addr(start + first * width)}  "{text}"')
    return rows, start + (len(chars) + 1) * width


@command(
    "db",
    "dw",
    "dd",
    "dq",
    "dp",
    "dc",
    "dps",
    "dqs",
    "dds",
    "da",
    "du",
    "d",
    modes=("kernel", "user"),
    summary="display memory",
)
def _display(world: World, name: str, args: str) -> str | None:
    state = _state(world)
    if name == "d":
        name = state.last  # "d" repeats the last d* format (db when there was none)
    columns, args = _options(args)
    start, count, end = parse_range(world, args)
    if start is None:
        start = state.next_address if state.next_address is not None else world.registers().get("rip", 0)
    state.last = name
    if name in ("da", "du"):
        width = 1 if name == "da" else 2
        limit = count if count is not None else (end - start) // width + 1 if end is not None else _STRING_DEFAULT
        rows, state.next_address = _string(world, name, start, max(limit, 1))
        return "".join(r + "\n" for r in rows)
    size, _, default = _LAYOUT[name]
    if count is not None and count * size > _LIMIT and not re.search(r"[Ll]\?", args):
        return access_error(world, name, args, "Range")
    if count is None:
        count = (end - start) // size + 1 if end is not None and end >= start else default
    if count <= 0:
        return ""
    state.next_address = (start + count * size) & _MASK
    return "".join(r + "\n" for r in _rows(world, name, start, count, columns))


# ------------------------------------------------------------------ entry

_ENTER_SIZES = {"eb": 1, "ew": 2, "ed": 4, "eq": 8, "ep": 8}


@command("eb", "ew", "ed", "eq", "ep", "ea", "eu", "eza", "ezu", modes=("kernel", "user"), summary="enter values")
def _enter(world: World, name: str, args: str) -> str | None:
    addr_text, _, rest = args.strip().partition(" ")
    rest = rest.strip()
    if not addr_text or not rest:
        return None  # kd's interactive entry mode (no values given): not simulated
    addr = world.evaluate(addr_text)
    space = world.space()
    if name in _ENTER_SIZES:
        size = _ENTER_SIZES[name]
        for i, token in enumerate(rest.split()):
            value = world.evaluate(token) & ((1 << (8 * size)) - 1)
            if not space.write(addr + i * size, value.to_bytes(size, "little")):
                return access_error(world, name, args)
        return ""
    # ea/eu "text" (no NUL), eza/ezu (NUL-terminated): the e* page's string forms
    m = re.fullmatch(r'"(.*)"', rest)
    if m is None:
        return None
    text = m.group(1) + ("\0" if name.startswith("ez") else "")
    data = text.encode("latin-1", "replace") if name.endswith("a") else text.encode("utf-16-le")
    if not space.write(addr, data):
        return access_error(world, name, args)
    return ""
