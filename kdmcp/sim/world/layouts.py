"""Type layouts: what ``dt`` prints for a structure and where the builder puts each field.

One table (``data/types_x64.txt``, in dt's own vocabulary) serves both: the builder writes an
``_EPROCESS``'s ``UniqueProcessId`` at the offset ``dt nt!_EPROCESS`` lists, so ``dt nt!_EPROCESS
ADDR UniqueProcessId`` and ``dq ADDR+440 L1`` read the value ``!process 0 0`` printed (issue: "
``!process 0 0``'s addresses and Cids equal what ``dt nt!_EPROCESS ADDR UniqueProcessId`` reads").
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from functools import cache
from importlib import resources

from kdmcp.sim.world.memory import Memory

__all__ = ["Field", "Layout", "layout", "layouts", "offset_of", "put", "type_size"]

_HEAD_RE = re.compile(r"(?P<module>\w+)!(?P<name>_\w+) 0x(?P<size>[0-9a-f]+)$")
_FIELD_RE = re.compile(r"0x(?P<off>[0-9a-f]+) (?P<name>\w+) : (?P<type>.*)$")
_BITS_RE = re.compile(r"Pos (?P<pos>\d+), (?P<width>\d+) Bits?$")
_ARRAY_RE = re.compile(r"\[(?P<count>\d+)\] (?P<elem>.+)$")
# dt's names for the base types, and their sizes in bytes (x64)
_BASE_SIZES = {
    "UChar": 1,
    "Char": 1,
    "Uint2B": 2,
    "Int2B": 2,
    "Wchar": 2,
    "Uint4B": 4,
    "Int4B": 4,
    "Uint8B": 8,
    "Int8B": 8,
    "_QUAD": 8,
    "_EX_PUSH_LOCK": 8,
    "_EX_RUNDOWN_REF": 8,
    "_RTL_AVL_TREE": 8,
    "_SE_AUDIT_PROCESS_CREATION_INFO": 8,
}


@dataclass(frozen=True)
class Field:
    """One ``+0xOFF Name : Type`` line of a layout."""

    offset: int
    name: str
    type: str

    @property
    def bits(self) -> tuple[int, int] | None:
        """``(position, width)`` of a bit field (``Pos 0, 4 Bits``), else ``None``."""
        m = _BITS_RE.match(self.type)
        return (int(m.group("pos")), int(m.group("width"))) if m else None


@dataclass(frozen=True)
class Layout:
    """A structure: its module-qualified name, size and fields in dt's order."""

    module: str
    name: str
    size: int
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field | None:
        return _field_index(self).get(name.lower())


_FILES = ("types_x64.txt", "types_user_x64.txt")


@cache
def _field_index(lay: Layout) -> dict[str, Field]:
    """Fields by lower-cased name; the first one wins where a union repeats an offset's name."""
    index: dict[str, Field] = {}
    for f in lay.fields:
        index.setdefault(f.name.lower(), f)
    return index


@cache
def layouts() -> dict[str, Layout]:
    """Every layout by its lower-cased ``_NAME`` (dt is case-insensitive: ``dt NT!_PEB``): the
    kernel's (``types_x64.txt``) and user mode's (``types_user_x64.txt``: ``_PEB``, ``_TEB``,
    the loader's lists), one table, each type in one file."""
    data = resources.files("kdmcp.sim.world").joinpath("data")
    text = "\n".join(data.joinpath(name).read_text("utf-8") for name in _FILES)
    found: dict[str, Layout] = {}
    head: re.Match[str] | None = None
    fields: list[Field] = []

    def close() -> None:
        if head is not None:
            found.setdefault(  # a type both files name stays the kernel's
                head.group("name").lower(),
                Layout(head.group("module"), head.group("name"), int(head.group("size"), 16), tuple(fields)),
            )

    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if m := _HEAD_RE.match(line):
            close()
            head, fields = m, []
        elif (f := _FIELD_RE.match(line)) is not None:
            fields.append(Field(int(f.group("off"), 16), f.group("name"), f.group("type").rstrip()))
    close()
    return found


def layout(name: str) -> Layout | None:
    """``nt!_EPROCESS``, ``_EPROCESS`` or ``NT!_eprocess``: the layout, or ``None``."""
    return layouts().get(name.rsplit("!", maxsplit=1)[-1].lower())


def type_size(type_text: str) -> int | None:
    """Bytes a field of this dt type takes (``Ptr64 …`` 8, ``[15] UChar`` 15, a struct its size)."""
    if type_text.startswith("Ptr64"):
        return 8
    if m := _ARRAY_RE.match(type_text):
        elem = type_size(m.group("elem"))
        return None if elem is None else elem * int(m.group("count"))
    if type_text in _BASE_SIZES:
        return _BASE_SIZES[type_text]
    found = layout(type_text)
    return found.size if found else None


@cache
def offset_of(type_name: str, path: str) -> tuple[int, Field]:
    """``("_EPROCESS", "Pcb.DirectoryTableBase")`` → its offset from the start, and the field."""
    current = layout(type_name)
    total = 0
    parts = path.split(".")
    for i, part in enumerate(parts):
        if current is None:
            raise KeyError(f"{type_name}.{path}")
        fld = current.field(part)
        if fld is None:
            raise KeyError(f"{type_name}.{path}")
        total += fld.offset
        if i == len(parts) - 1:
            return total, fld
        current = layout(fld.type)
    raise KeyError(path)


_PACK = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}


def put(mem: Memory, type_name: str, addr: int, values: dict[str, int | bytes | str]) -> None:
    """Write field values into a structure at ``addr`` (ints by the field's size, bytes as-is,
    a ``str`` into a ``[N] UChar`` array NUL-padded)."""
    for path, value in values.items():
        off, fld = offset_of(type_name, path)
        size = type_size(fld.type) or 8
        if isinstance(value, str):
            data = value.encode("latin-1")[:size].ljust(size, b"\0")
        elif isinstance(value, bytes):
            data = value
        else:
            data = struct.pack(_PACK[size], value & ((1 << (8 * size)) - 1))
        mem.load(addr + off, data)
