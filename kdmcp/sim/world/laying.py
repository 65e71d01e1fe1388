"""How the builder's objects sit in memory: linked rings, kernel stacks, image headers.

Kept apart from :mod:`~kdmcp.sim.world.build` (which decides *what* the world holds) because
these are the byte-level conventions Windows uses and every builder shares -- the kernel world's
and the user world's: a ``LIST_ENTRY`` ring through a head, a return address where the callee's
frame ends, the DOS/PE header at an image base. :class:`Builder` is what the kernel world's
builder hands the modules that lay parts of the machine for it (:mod:`~kdmcp.sim.world.drivers`,
:mod:`~kdmcp.sim.world.loading`), so they need not import the builder that imports them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Protocol

from kdmcp.sim.world.memory import Memory
from kdmcp.sim.world.model import Module, Thread

__all__ = ["Builder", "link", "pe_header", "stack_bytes"]


class Builder(Protocol):
    """The kernel builder as its parts use it: the memory being laid, the routines and the calls
    and fixed bytes the assembler will lay, a site by name, a pool block for an object."""

    mem: Memory
    routines: dict[str, tuple[int, int]]  # qualified name -> (address, size)
    calls: dict[str, dict[int, int]]  # routine -> return offset -> callee
    fixed: dict[str, dict[int, bytes]]  # routine -> offset -> bytes

    def site(self, text: str) -> int: ...

    def block(self, tag: str, body_size: int, *, at: int | None = None, header: int = ..., paged: bool = False) -> int:
        """The body's address of a new pool block (a plain buffer with ``header=0``)."""


def link(mem: Memory, head: int, entries: list[int]) -> None:
    """A doubly linked LIST_ENTRY ring: head → entries… → head."""
    ring = [head, *entries]
    for i, node in enumerate(ring):
        mem.load(node, struct.pack("<QQ", ring[(i + 1) % len(ring)], ring[i - 1]))


def stack_bytes(t: Thread) -> bytes:
    """The kernel stack: each return address where the callee's frame ends (x64: the caller's
    ``rsp - 8`` at the call), so ``dps @rsp`` and ``k`` agree."""
    size = t.stack_base - t.stack_limit
    data = bytearray(size)
    for nxt in t.frames[1:]:
        slot = nxt.child_sp - 8 - t.stack_limit
        if 0 <= slot <= size - 8:
            data[slot : slot + 8] = struct.pack("<Q", nxt.site)
    return bytes(data)


def pe_header(mod: Module) -> Callable[[], bytes]:
    def make() -> bytes:
        # the DOS stub every PE image starts with ("MZ", e_lfanew at 0x3c, "This program cannot…")
        dos = bytearray(0x400)
        dos[0:2] = b"MZ"
        dos[2:0x10] = bytes.fromhex("90000300000004000000ffff0000")
        dos[0x18] = 0x40
        dos[0x3C:0x40] = struct.pack("<I", 0xF8)
        dos[0x4E : 0x4E + 39] = b"This program cannot be run in DOS mode."
        dos[0xF8:0xFC] = b"PE\0\0"
        dos[0xFC:0xFE] = struct.pack("<H", 0x8664)
        dos[0x100:0x104] = struct.pack("<I", mod.timestamp)
        return bytes(dos)

    return make
