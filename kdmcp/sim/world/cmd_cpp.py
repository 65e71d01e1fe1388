"""``??``: the C++ expression evaluator's answers for the forms agents use on a kernel target.

kd prints a C++ expression's type, then its value (published sessions, quoted at each form):

- ``sizeof(Type)``: ``kd> ?? sizeof(nt!_OBJECT_HEADER)`` / ``unsigned int64 0x38``; ``0: kd> ??
  sizeof(nt!_eprocess)`` / ``unsigned int64 0xa40`` -- the size from the type layouts dt prints;
- a cast and members: ``kd> ?? ((nt!_EPROCESS*)0xffff9e02f4e11080)->Protection.Level`` /
  ``unsigned char 0x00 ''`` -- the member read from memory at the layouts' offsets, printed by its
  type: ``unsigned char 0x00 ''`` (with the character when printable), ``unsigned short``,
  ``unsigned long``, ``unsigned int64`` in hex; signed ones in decimal (``long 0n5``); pointers
  ``void * 0x00000000`00000004`` / ``struct _EPROCESS * 0xffffe70f`28b0e080`` (64-bit values
  above 32 bits with kd's backtick);
- a register or a number: ``?? @rip`` / ``unsigned int64 0xfffff800`62a05c20``.

Reconstructed (no published sample at hand): the signed forms, an embedded structure or an
array member (``struct _LIST_ENTRY``, ``unsigned char [15]  "System"``), a pointer to a
structure printed without the member expansion kd adds below it, and the errors (an unknown
type or member is kd's ``Couldn't resolve error at '…'``, memory that is not there
``Memory access error at '…'``). C++ numbers are decimal unless ``0x``-prefixed.
"""

from __future__ import annotations

import re

from kdmcp.sim.world.cmd_types import read_int, read_text
from kdmcp.sim.world.layouts import Field, layout, offset_of, type_size
from kdmcp.sim.world.machine import ExprError, World
from kdmcp.sim.world.registry import command

_SIZEOF_RE = re.compile(r"sizeof\s*\(\s*(?P<type>[\w!]+)\s*(?P<ptr>\*?)\s*\)", re.IGNORECASE)
_MEMBER_RE = re.compile(
    r"\(\s*\(\s*(?P<type>[\w!]+)\s*\*\s*\)\s*(?P<expr>[^()]+?)\s*\)\s*->\s*(?P<path>\w+(?:\s*\.\s*\w+)*)"
)
_C_SIZES = {"char": 1, "short": 2, "int": 4, "long": 4, "int64": 8, "__int64": 8, "void": 1}
# dt's base type -> the C++ evaluator's name, and whether it prints as signed decimal
_CPP_TYPES = {
    "UChar": ("unsigned char", False), "Char": ("char", True), "Uint2B": ("unsigned short", False),
    "Int2B": ("short", True), "Wchar": ("wchar_t", False), "Uint4B": ("unsigned long", False),
    "Int4B": ("long", True), "Uint8B": ("unsigned int64", False), "Int8B": ("int64", True),
}  # fmt: skip


def _hex(value: int) -> str:
    """``0x38``; above 32 bits ``0xfffff800`62a05c20`` (kd's 64-bit form)."""
    return f"0x{value >> 32:08x}`{value & 0xFFFFFFFF:08x}" if value >> 32 else f"{value:#x}"


def _pointer(value: int) -> str:
    return f"0x{value >> 32:08x}`{value & 0xFFFFFFFF:08x}"


def _number(world: World, text: str) -> int:
    text = text.strip()
    if re.fullmatch(r"\d+", text):
        return int(text)  # C++: a number without 0x is decimal
    return world.evaluate(text)


@command("??", modes=("kernel", "user"), summary="evaluate a C++ expression (sizeof, casts, members)")
def _cpp(world: World, name: str, args: str) -> str | None:
    del name
    text = args.strip()
    if not text:
        return None
    if m := _SIZEOF_RE.fullmatch(text):
        return _sizeof(m.group("type"), bool(m.group("ptr")), text)
    if m := _MEMBER_RE.fullmatch(text):
        return _member(world, m.group("type"), m.group("expr"), re.sub(r"\s+", "", m.group("path")), text)
    value = _number(world, text)  # @rip, $t0, a symbol, a number
    return f"unsigned int64 {_hex(value & (1 << 64) - 1)}\n"


def _sizeof(type_name: str, pointer: bool, text: str) -> str:
    if pointer:
        return "unsigned int64 0x8\n"
    base = type_name.rsplit("!", 1)[-1]
    size = _C_SIZES.get(base.lower()) if "!" not in type_name else None
    if size is None:
        lay = layout(type_name)
        if lay is None:
            raise ExprError(text[text.index("(") + 1 :])
        size = lay.size
    return f"unsigned int64 {size:#x}\n"


def _member(world: World, type_name: str, expr: str, path: str, text: str) -> str:
    if layout(type_name) is None:
        raise ExprError(text[text.index(type_name) :])
    base = _number(world, expr)
    try:
        offset, fld = offset_of(type_name, path)
    except KeyError:
        raise ExprError(text[text.index("->") :]) from None
    addr = base + offset
    space = world.space()
    if space.read(addr, type_size(fld.type) or 1) is None:
        return f"Memory access error at '{text[text.index(')->') + 1 :]}'\n"
    return _value(world, addr, fld)


def _value(world: World, addr: int, fld: Field) -> str:
    space = world.space()
    kind = fld.type
    if kind.startswith("Ptr64"):
        target = kind[len("Ptr64") :].strip()
        value = read_int(space, addr, 8) or 0
        shown = "void" if target == "Void" else f"struct {target}" if target.startswith("_") else target
        return f"{shown} * {_pointer(value)}\n"
    if kind in _CPP_TYPES:
        name, signed = _CPP_TYPES[kind]
        size = type_size(kind) or 1
        value = read_int(space, addr, size, signed) or 0
        if kind == "UChar":
            char = chr(value) if 0x20 <= value < 0x7F else ""
            return f"unsigned char {value:#04x} '{char}'\n"
        return f"{name} 0n{value}\n" if signed else f"{name} {_hex(value)}\n"
    if fld.bits is not None:
        pos, width = fld.bits
        raw = read_int(space, addr, 4) or 0
        return f"unsigned long {(raw >> pos) & ((1 << width) - 1):#x}\n"
    if m := re.fullmatch(r"\[(\d+)\] UChar", kind):
        shown = read_text(space, addr, int(m.group(1)), False) or ""
        return f"unsigned char [{m.group(1)}]  \"{shown}\"\n"
    return f"struct {kind}\n"
