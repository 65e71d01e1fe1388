"""World commands: ``dt``, kd's type display, over the layouts the builder laid the objects out by.

``dt nt!_EPROCESS`` lists a layout; ``dt nt!_EPROCESS ADDR`` reads each field from the world's
memory, so ``dt nt!_EPROCESS ADDR UniqueProcessId`` shows the Cid ``!process 0 0`` prints and
``dt nt!_LIST_ENTRY nt!PsActiveProcessHead`` the first process's ``ActiveProcessLinks``. Chosen
fields (``Pcb.DirectoryTableBase``, ``Ldr.``), ``-r[N]`` recursion and ``dt nt!*PROCESS*`` type
listings take kd's forms. Value spelling (shared with ``dx`` in :mod:`.cmd_dx`) follows the
published instance dumps: families/types_symbols/01, 17, 18, 25, 26 and corpus memory/06.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from kdmcp.sim.world.layouts import Field, Layout, layout, layouts, offset_of
from kdmcp.sim.world.machine import ExprError, World
from kdmcp.sim.world.memory import AddressSpace
from kdmcp.sim.world.registry import command

__all__ = ["bits_of", "pointer_text", "read_int", "read_text", "split_args", "value_text"]

_ARRAY_RE = re.compile(r"\[(?P<count>\d+)\] (?P<elem>.+)$")
_SIGNED = {"Char": 1, "Int2B": 2, "Int4B": 4, "Int8B": 8}
_UNSIGNED = {"UChar": 1, "Uint2B": 2, "Uint4B": 4, "Uint8B": 8, "Wchar": 2}
_STRING_ELEMS = {"UChar": 1, "Char": 1, "Wchar": 2}
# the module the layouts live in, as dt names it on a header line (the kernel's lm name)
_KERNEL = "nt"
# dt -r without a depth: published -r dumps stop two levels below the top (types_symbols/01)
_DEFAULT_DEPTH = 2


# ------------------------------------------------------------------ reading and spelling values


def split_args(text: str) -> list[str]:
    """Blank-separated words, a parenthesised expression whole (``(idtr + (0xa0*0x10))``,
    corpus memory/06)."""
    words: list[str] = []
    depth, current = 0, ""
    for ch in text:
        if ch in " \t" and depth == 0:
            if current:
                words.append(current)
            current = ""
            continue
        depth += (ch == "(") - (ch == ")")
        current += ch
    if current:
        words.append(current)
    return words


def read_int(space: AddressSpace, addr: int, size: int, signed: bool = False) -> int | None:
    data = space.read(addr, size)
    if data is None:
        return None
    return int.from_bytes(data, "little", signed=signed)


def bits_of(space: AddressSpace, addr: int, pos: int, width: int) -> int | None:
    """A bit field's value: read the bytes it spans (whole bytes from ``addr``)."""
    span = (pos + width + 7) // 8
    raw = read_int(space, addr, span)
    return None if raw is None else (raw >> pos) & ((1 << width) - 1)


def read_text(space: AddressSpace, addr: int, size: int, wide: bool) -> str | None:
    """The NUL-terminated string at ``addr`` within ``size`` bytes (``None``: unreadable)."""
    data = space.read(addr, size)
    if data is None:
        return None
    text = data.decode("utf-16-le", errors="replace") if wide else data.decode("latin-1")
    return text.split("\0", 1)[0]


def pointer_text(value: int) -> str:
    """dt's 64-bit pointer: all sixteen digits, backtick in the middle (``0x00000000`00000004``)."""
    return f"0x{value >> 32:08x}`{value & 0xFFFFFFFF:08x}"


def _quad(value: int) -> str:
    """A 64-bit integer as dt prints it: ``0``, ``0x1ad002``, and past 32 bits both halves in
    full around a backtick, as an address: ``0x51568e00`0010e700`` (memory/06)."""
    if value == 0:
        return "0"
    if value >> 32:
        return pointer_text(value)
    return f"0x{value:x}"


def _char(value: int, signed: bool) -> str:
    """``0x1 ''`` (UChar, types_symbols/25), ``1 ''`` (Char): the number, then the character."""
    shown = chr(value & 0xFF) if 0x20 <= (value & 0xFF) < 0x7F else ""
    number = str(value) if signed else ("0" if value == 0 else f"0x{value:x}")
    return f"{number} '{shown}'"


def _unicode(space: AddressSpace, addr: int, wide: bool = True) -> str | None:
    length = read_int(space, addr, 2)
    buffer = read_int(space, addr + 8, 8)
    if length is None or buffer is None:
        return None
    if buffer == 0 or length == 0:
        return ""
    return read_text(space, buffer, length, wide)


def _list_summary(space: AddressSpace, addr: int) -> str | None:
    """``[ 0xffffe70f`28b0e488 - 0xfffff800`6321e0f0 ]``: a LIST_ENTRY's two links."""
    flink, blink = read_int(space, addr, 8), read_int(space, addr + 8, 8)
    if flink is None or blink is None:
        return None
    return f"[ {pointer_text(flink)} - {pointer_text(blink)} ]"


def _symbol(world: World, addr: int) -> str:
    """A function pointer's target as dt names it: ``nt!IopDeleteDevice+0`` with a ``+0`` on an
    exact symbol, ``+fffff8032fea9100`` where none covers it (types_symbols/26)."""
    name = world.name(addr)
    if "!" not in name and "+" not in name:
        return f"+{addr:x}"
    return name if "+" in name else name + "+0"


def value_text(world: World, space: AddressSpace, addr: int, fld: Field) -> str:
    """What dt prints after ``Name : `` for ``fld`` of a structure whose field sits at ``addr``."""
    bits = fld.bits
    typ = fld.type
    if bits is not None:
        value = bits_of(space, addr, *bits)
        if value is None:
            return "??"
        pos, width = bits
        del pos
        shown = f"0y{value:0{width}b}"
        # a wide field adds its value: "0y01110 (0xe)", "0y00000 (0)"; "0y000" alone (memory/06)
        if width > 4:
            shown += f" ({'0' if value == 0 else hex(value)})"
        return shown
    if typ.startswith("Ptr64"):
        return _pointer_value(world, space, addr, typ[len("Ptr64") :])
    if m := _ARRAY_RE.match(typ):
        count, elem = int(m.group("count")), m.group("elem")
        if elem in _STRING_ELEMS:
            text = read_text(space, addr, count * _STRING_ELEMS[elem], wide=elem == "Wchar")
            # ImageFileName : [15]  "System" (the old canned dt; types_symbols/16 with -y)
            return f'[{count}]  "{text}"' if text is not None else f"[{count}] ??"
        return f"[{count}] " + value_text(world, space, addr, Field(0, fld.name, elem))
    if typ in _SIGNED:
        number = read_int(space, addr, _SIGNED[typ], signed=True)
        if number is None:
            return "??"
        return _char(number, signed=True) if typ == "Char" else f"0n{number}"
    if typ in _UNSIGNED:
        number = read_int(space, addr, _UNSIGNED[typ])
        if number is None:
            return "??"
        return _char(number, signed=False) if typ == "UChar" else _quad(number)
    if typ == "_LIST_ENTRY":
        summary = _list_summary(space, addr)
        return f"_LIST_ENTRY {summary}" if summary else "_LIST_ENTRY"
    if typ in ("_UNICODE_STRING", "_STRING"):
        text = _unicode(space, addr, wide=typ == "_UNICODE_STRING")
        return f'{typ} "{text}"' if text is not None else typ
    if typ in ("_LARGE_INTEGER", "_ULARGE_INTEGER"):
        number = read_int(space, addr, 8)
        # "_LARGE_INTEGER 0xffffe86d`079b8000", "_ULARGE_INTEGER 0x0" (types_symbols/01)
        return f"{typ} " + ("0x0" if not number else _quad(number))
    return typ


def _pointer_value(world: World, space: AddressSpace, addr: int, target: str) -> str:
    value = read_int(space, addr, 8)
    if value is None:
        return "????"
    if value == 0:
        return "(null) "  # with its trailing blank, as kd prints it (types_symbols/01)
    ptr = pointer_text(value)
    if target.startswith("  "):
        # a function pointer: "0xfffff803`2fea9100     unsigned char  +fffff8032fea9100"
        return f"{ptr}{target.rstrip()}  {_symbol(world, value)}"
    target = target.strip()
    if target in ("Wchar", "Char", "UChar"):
        text = read_text(space, value, 512, wide=target == "Wchar")
        return f'{ptr}  "{text}"' if text is not None else f"{ptr}  ????"
    if target.startswith("Ptr64"):
        inner = _pointer_value(world, space, value, target[len("Ptr64") :])
        return f"{ptr}  -> {inner}"  # "0x77758500  -> 0x00470000 Void" (types_symbols/01)
    if target == "_LIST_ENTRY":
        summary = _list_summary(space, value)
        return f"{ptr} _LIST_ENTRY {summary}" if summary else f"{ptr} _LIST_ENTRY"
    return f"{ptr} {target}"


# ------------------------------------------------------------------------------- the command


@dataclass
class _Request:
    type_name: str
    address: int | None = None
    fields: list[str] = field(default_factory=list)  # as typed: "Pcb.DirectoryTableBase", "Ldr."
    depth: int = 0  # -r[N]


def _listing_name(world: World) -> str:
    """dt nt!* names types by the kernel's symbol file: ``ntkrnlmp!_KPCR`` (types_symbols/13)."""
    kernel = next((m for m in world.modules if m.name == "nt"), None)
    return kernel.image.rsplit(".", 1)[0] if kernel else "nt"


@command("dt", modes=("kernel",), summary="display a type's layout or an instance of it")
def _dt(world: World, name: str, args: str) -> str | None:
    del name
    words = split_args(args)
    req: _Request | None = None
    pending: list[str] = []
    link = ""
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word.startswith("-") and len(word) > 1 and not word[1].isdigit():
            if word.startswith("-r"):
                req_depth = int(word[2:]) if word[2:].isdigit() else _DEFAULT_DEPTH
                pending.append(f"-r{req_depth}")
            elif word == "-l" and i < len(words):
                link, i = words[i], i + 1
            elif word in ("-y", "-yoi", "-s", "-c", "-ca", "-v", "-a"):
                return None  # name searches, options that change the layout: not modelled
            continue
        if req is None:
            req = _Request(word)
            continue
        pending.append(word)
    if req is None:
        return None
    if "*" in req.type_name or "?" in req.type_name:
        return _wildcard(world, req.type_name)
    lay = layout(req.type_name)
    typed_module = req.type_name.split("!", 1)[0].lower() if "!" in req.type_name else ""
    if lay is None or typed_module not in ("", "nt", "ntkrnlmp", "ntdll"):
        # kd: "Symbol nt!_FOO not found." (echoing the name as typed)
        return f"Symbol {req.type_name} not found.\n"
    for word in pending:
        if word.startswith("-r"):
            req.depth = int(word[2:])
        elif lay.field(word.rstrip(".").split(".", 1)[0]) is not None:
            req.fields.append(word)
        else:
            try:
                req.address = world.evaluate(word)
            except ExprError:
                # neither an address nor one of the type's fields (kd names no culprit)
                return "Cannot find specified field members.\n"
    out: list[str] = []
    # kd names the type on a line of its own when the name typed was not the module's own, with
    # chosen fields too: "dt _KPCR" -> "ntdll!_KPCR" (memory/07), "dt _KPROCESS @$proc
    # DirectoryTableBase" -> "ntdll!_KPROCESS" (a kd transcript), "dt nt!_KIDTENTRY64" none (/02)
    if typed_module != _KERNEL:
        out.append(f"{_KERNEL}!{lay.name}")
    if req.address is None:
        if req.fields:
            return "\n".join(out + _layout_fields(lay, req)) + "\n"
        out += _layout_lines(lay, 1, req.depth)
        return "\n".join(out) + "\n"
    space = world.space()
    if not space.readable(req.address):
        # kd: "Memory read error 000000000000007b" (sixteen digits, no backtick)
        return f"Memory read error {req.address:016x}\n"
    if link:
        return _walk(world, space, lay, req, link)
    if req.fields:
        chosen = _chosen_lines(world, space, lay, req.address, req.fields)
        if chosen is None:
            return "Cannot find specified field members.\n"
        return "\n".join(out + chosen) + "\n"
    if lay.name in ("_UNICODE_STRING", "_STRING"):
        # the string itself under the type's name: ' ""C:\Windows\system32\cmd.exe" "' (memory/09)
        out.append(f' "{_unicode(space, req.address, wide=lay.name == "_UNICODE_STRING") or ""}"')
    out += _instance_lines(world, space, lay, req.address, 1, req.depth, 16)
    return "\n".join(out) + "\n"


def _walk(world: World, space: AddressSpace, lay: Layout, req: _Request, link: str) -> str:
    """``dt nt!_EPROCESS -l ActiveProcessLinks.Flink ImageFileName ADDR``: each structure on the
    list from ADDR on, headed ``Link at ADDR`` and a rule, its list entry shown first
    (a Windows 11 kd transcript of exactly this command); the walk ends where it began."""
    try:
        link_off, _ = offset_of(lay.name, link)
        entry_path = link.rsplit(".", 1)[0] if "." in link else link
        entry_off, entry = offset_of(lay.name, entry_path)
    except KeyError:
        return "Cannot find specified field members.\n"
    start = req.address or 0
    out: list[str] = []
    here, seen = start, set[int]()
    while here not in seen and len(seen) < 4096 and space.readable(here):
        seen.add(here)
        out += [f"{link} at {pointer_text(here)}", "-" * 45]
        if req.fields:
            width = max(len(f) for f in req.fields)
            head = _list_summary(space, here + entry_off) or ""
            lines = _chosen_lines(world, space, lay, here, req.fields) or []
            if entry.name.lower() not in {f.rstrip(".").split(".", 1)[0].lower() for f in req.fields}:
                row = _line(1, entry, " " + head, width)
                lines = sorted([*lines, row], key=lambda line: int(line.split()[0][1:], 16))
            out += lines
        else:
            out += _instance_lines(world, space, lay, here, 1, req.depth, 16)
        out.append("")
        nxt = read_int(space, here + link_off, 8)
        if not nxt:
            break
        here = nxt - entry_off
    return "\n".join(out) + "\n"


def _wildcard(world: World, pattern: str) -> str:
    """``dt nt!*PROCESS*``: each matching type, indented ten blanks (types_symbols/13)."""
    mask = pattern.rsplit("!", 1)[-1].lower()
    names = [lay.name for lay in layouts().values() if fnmatch.fnmatchcase(lay.name.lower(), mask)]
    if not names:
        return f"Symbol {pattern} not found.\n"
    module = _listing_name(world)
    return "".join(f"          {module}!{n}\n" for n in names)


def _type_text(fld: Field) -> str:
    # a function pointer keeps the blank dt prints after its return type ("Ptr64     long ")
    return fld.type + " " if "Ptr64  " in fld.type else fld.type


def _line(level: int, fld: Field, text: str, width: int = 16) -> str:
    """``   +0x440 UniqueProcessId  : Ptr64 Void``: three blanks more a level down."""
    return f"{'   ' * level}+0x{fld.offset:03x} {fld.name:<{width}} : {text}"


def _embedded(fld: Field) -> Layout | None:
    if fld.bits is not None or fld.type.startswith("Ptr64") or _ARRAY_RE.match(fld.type):
        return None
    return layout(fld.type)


def _layout_lines(lay: Layout, level: int, depth: int) -> list[str]:
    lines: list[str] = []
    for fld in lay.fields:
        lines.append(_line(level, fld, _type_text(fld)))
        sub = _embedded(fld)
        if sub is not None and depth > 0:
            lines += _layout_lines(sub, level + 1, depth - 1)
    return lines


def _layout_fields(lay: Layout, req: _Request) -> list[str]:
    """``dt nt!_EPROCESS UniqueProcessId Pcb.DirectoryTableBase Token.``: the named fields with
    their types, a path or a trailing ``.`` going down into a structure as an instance's does."""
    width = max(len(f) for f in req.fields)
    lines: list[str] = []
    for fld in lay.fields:
        for path in (p for p in req.fields if p.rstrip(".").split(".", 1)[0].lower() == fld.name.lower()):
            lines += _layout_path(fld, path, 1, width)
    return lines


def _layout_path(fld: Field, path: str, level: int, width: int) -> list[str]:
    base = path.rstrip(".")
    dots = len(path) - len(base)
    rest = base.split(".", 1)[1] if "." in base else ""
    sub = _embedded(fld) or (layout(fld.type[len("Ptr64 ") :]) if fld.type.startswith("Ptr64 _") else None)
    if sub is None or (not rest and not dots):
        return [_line(level, fld, _type_text(fld), width)]
    lines = [_line(level, fld, "", width)]
    if not rest:
        return lines + [_line(level + 1, f, _type_text(f), width) for f in sub.fields]
    for sfld in sub.fields:
        if sfld.name.lower() == rest.split(".", 1)[0].lower():
            lines += _layout_path(sfld, rest + "." * dots, level + 1, width)
    return lines


def _instance_lines(
    world: World, space: AddressSpace, lay: Layout, addr: int, level: int, depth: int, width: int
) -> list[str]:
    lines: list[str] = []
    for fld in lay.fields:
        lines.append(_line(level, fld, value_text(world, space, addr + fld.offset, fld), width))
        if depth > 0:
            lines += _children(world, space, fld, addr + fld.offset, level + 1, depth - 1, width)
    return lines


def _children(world: World, space: AddressSpace, fld: Field, at: int, level: int, depth: int, width: int) -> list[str]:
    """The fields under ``fld`` one level down: an embedded structure's, or a typed pointer's
    target's (``Ldr : 0x77758880 _PEB_LDR_DATA`` and its fields, types_symbols/01)."""
    sub = _embedded(fld)
    if sub is not None:
        return _instance_lines(world, space, sub, at, level, depth, width)
    if fld.type.startswith("Ptr64 _"):
        target = layout(fld.type[len("Ptr64 ") :])
        value = read_int(space, at, 8)
        if target is not None and value and space.readable(value):
            return _instance_lines(world, space, target, value, level, depth, width)
    return []


def _chosen_lines(world: World, space: AddressSpace, lay: Layout, addr: int, chosen: list[str]) -> list[str] | None:
    """``dt TYPE ADDR A B.C D.``: the named fields in the layout's order, the names padded to the
    longest as typed (types_symbols/25, 18); a path shows each step, ``Field.`` one level more."""
    width = max(len(c) for c in chosen)
    lines: list[str] = []
    for fld in lay.fields:
        paths = [c for c in chosen if c.rstrip(".").split(".", 1)[0].lower() == fld.name.lower()]
        if not paths:
            continue
        for path in paths:
            lines += _path_lines(world, space, fld, addr, path, 1, width)
    return lines or None


def _path_lines(
    world: World, space: AddressSpace, fld: Field, addr: int, path: str, level: int, width: int
) -> list[str]:
    at = addr + fld.offset
    base = path.rstrip(".")
    dots = len(path) - len(base)
    rest = base.split(".", 1)[1] if "." in base else ""
    if not rest and not dots:
        return [_line(level, fld, value_text(world, space, at, fld), width)]
    sub = _embedded(fld)
    target_at = at
    if sub is None and fld.type.startswith("Ptr64 _"):
        sub = layout(fld.type[len("Ptr64 ") :])
        target_at = read_int(space, at, 8) or 0
    if sub is None:
        return [_line(level, fld, value_text(world, space, at, fld), width)]
    # an expanded field shows no type on its line: "m_t1  : " (types_symbols/19), a pointer its
    # value alone ("Ldr  : 0x00191ea0", /17), a large integer its value after a blank (/18)
    if sub is not _embedded(fld):
        head = pointer_text(target_at)
    elif fld.type in ("_LARGE_INTEGER", "_ULARGE_INTEGER"):
        head = " " + value_text(world, space, at, fld).split(" ", 1)[1]
    elif fld.type == "_LIST_ENTRY":
        head = " " + (_list_summary(space, at) or "")
    else:
        head = ""
    lines = [_line(level, fld, head, width)]
    if not target_at or not space.readable(target_at):
        return lines
    if not rest:
        lines += _instance_lines(world, space, sub, target_at, level + 1, dots - 1, width)
        return lines
    for sfld in sub.fields:
        if sfld.name.lower() == rest.split(".", 1)[0].lower():
            lines += _path_lines(world, space, sfld, target_at, rest + "." * dots, level + 1, width)
    return lines
