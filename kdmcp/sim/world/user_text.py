"""cdb's user-mode text for the world's threads: registers, the pc's instruction, stacks, ``~`` rows.

Shared by the user commands (:mod:`~kdmcp.sim.world.cmd_user`) and the events the user world
reports (:func:`~kdmcp.sim.world.user.fault`), so ``r``, ``.ecxr``, ``~Ns`` and an exception's
banner print one thread's state the same way.
"""

from __future__ import annotations

from iced_x86 import Decoder, MemorySizeExt, Mnemonic, OpKind, Register

from kdmcp.sim.world.code import decode, fmt_addr
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Thread

__all__ = ["flags_text", "instruction_line", "location", "register_block", "source_of", "stack_text", "thread_row"]

# (bit, set, clear) in the order r prints them: of df if sf zf af pf cf
_FLAGS = ((11, "ov", "nv"), (10, "dn", "up"), (9, "ei", "di"), (7, "ng", "pl"), (6, "zr", "nz"), (4, "ac", "na"),
          (2, "pe", "po"), (0, "cy", "nc"))  # fmt: skip
_ROWS = (("rax", "rbx", "rcx"), ("rdx", "rsi", "rdi"), ("rip", "rsp", "rbp"), ("r8", "r9", "r10"),
         ("r11", "r12", "r13"), ("r14", "r15"))  # fmt: skip
_SEGMENTS = ("cs", "ss", "ds", "es", "fs", "gs")
_STACK_BASES = {Register.RSP, Register.RBP, Register.ESP, Register.EBP}


def flags_text(efl: int) -> str:
    """``iopl=0         nv up ei pl zr na pe nc`` (iopl in a 10-column field)."""
    return f"iopl={(efl >> 12) & 3:<10}" + " ".join(on if efl >> bit & 1 else off for bit, on, off in _FLAGS)


def register_block(regs: dict[str, int]) -> str:
    """The x64 block of ``r`` in user mode: three registers a line, `` r8=`` right-aligned, the
    flags line, the segment line with ``efl`` (the canned r; corpus families/exceptions/09)."""
    block = "".join(" ".join(f"{n:>3}={regs.get(n, 0):016x}" for n in row) + "\n" for row in _ROWS)
    block += flags_text(regs.get("efl", 0)) + "\n"
    block += "  ".join(f"{s}={regs.get(s, 0):04x}" for s in _SEGMENTS) + f"             efl={regs.get('efl', 0):08x}\n"
    return block


def instruction_line(world: World, regs: dict[str, int]) -> str:
    """The pc's line as ``r`` ends it: ``u``'s line, and for a memory operand the effective
    address and what it holds, from column 54 (one blank after a longer line)::

        00007ff7`91d81014 45891b          mov     dword ptr [r11],r11d ds:00000000`00000000=????????
    """
    pc = regs.get("rip", 0)
    space = world.space()
    data = bytes(b or 0 for b in space.cells(pc, 16))
    if space.read(pc, 1) is None:
        return f"{fmt_addr(pc)} ??              ???\n"
    d = decode(data, pc, world.name)
    if d is None:
        return f"{fmt_addr(pc)} {data[:1].hex():<15} ???\n"
    line = f"{fmt_addr(pc)} {d.data.hex():<15} {d.text}"
    note = _annotation(world, data, regs)
    return (f"{line:<53} {note}" if note else line) + "\n"


def _annotation(world: World, data: bytes, regs: dict[str, int]) -> str:
    """``ds:00000000`00000000=????????``: a memory operand's address and its bytes (``?`` where
    unreadable); none for ``lea`` (no access) or a rip-relative operand (u names it already)."""
    instr = Decoder(64, data, ip=regs.get("rip", 0)).decode()
    if instr.mnemonic == Mnemonic.LEA:
        return ""
    for op in range(instr.op_count):
        if instr.op_kind(op) != OpKind.MEMORY or instr.is_ip_rel_memory_operand:
            continue
        size = int(MemorySizeExt.size(instr.memory_size))
        if size not in (1, 2, 4, 8):
            return ""
        base, index = instr.memory_base, instr.memory_index
        ea = instr.memory_displacement
        if base != Register.NONE:
            ea += _reg(regs, base)
        if index != Register.NONE:
            ea += _reg(regs, index) * instr.memory_index_scale
        ea &= (1 << 64) - 1
        seg = "ss" if base in _STACK_BASES else "ds"
        raw = world.space().read(ea, size)
        value = "??" * size if raw is None else f"{int.from_bytes(raw, 'little'):0{size * 2}x}"
        return f"{seg}:{fmt_addr(ea)}={value}"
    return ""


_REG_NAMES: dict[int, str] = {Register.RAX: "rax", Register.RBX: "rbx", Register.RCX: "rcx", Register.RDX: "rdx",
              Register.RSI: "rsi", Register.RDI: "rdi", Register.RSP: "rsp", Register.RBP: "rbp",
              Register.R8: "r8", Register.R9: "r9", Register.R10: "r10", Register.R11: "r11",
              Register.R12: "r12", Register.R13: "r13", Register.R14: "r14", Register.R15: "r15"}  # fmt: skip


def _reg(regs: dict[str, int], reg: int) -> int:
    return regs.get(_REG_NAMES.get(reg, ""), 0)


def location(world: World, thread: Thread, regs: dict[str, int] | None = None) -> str:
    """Where a thread is: ``ntdll!DbgBreakPoint:`` and the pc's instruction (``~Ns``, events)."""
    regs = regs if regs is not None else world.registers(thread)
    pc = regs.get("rip", 0)
    name = world.name(pc)
    head = f"{name}:\n" if name != fmt_addr(pc) else ""
    return head + instruction_line(world, regs)


def source_of(world: World, site: int) -> str:
    """`` [C:\\src\\app\\app.cpp @ 14]`` for a site in a routine with private line information."""
    from kdmcp.sim.world import user_catalog as cat

    mod, sym, off = world.symbols.nearest(site)
    if mod is None or sym is None or getattr(mod, "status", "") != "(private pdb symbols)":
        return ""
    lines = cat.SOURCE.get(sym.name)
    if lines is None:
        return ""
    path, table = lines
    line = max((ln for start, ln in table if start <= off), default=table[0][1])
    return f" [{path} @ {line}] "


def stack_text(world: World, thread: Thread, *, args: bool = False, numbers: bool = True, limit: int = 256) -> str:
    """``k`` (``kn``, ``kb``) in cdb's user-mode layout (the canned k; corpus stack/06, stack/03)::

     # Child-SP          RetAddr               Call Site
    00 00000000`00affb68 00007ffc`81ac7c0e     ntdll!DbgBreakPoint
    """
    frames = thread.frames[:limit]
    head = " # " if numbers else ""
    if args:
        out = f"{head}Child-SP          RetAddr               : Args to Child{' ' * 59}: Call Site\n"
    else:
        out = f"{head}Child-SP          RetAddr               Call Site\n"
    space = world.space()
    for i, f in enumerate(frames):
        ret = thread.frames[i + 1].site if i + 1 < len(thread.frames) else 0
        row = f"{i:02x} " if numbers else ""
        row += f"{fmt_addr(f.child_sp)} {fmt_addr(ret)}     "
        if args:
            homes = [space.u64(f.child_sp + 8 + 8 * k) for k in range(4)]
            row += ": " + " ".join(fmt_addr(v or 0) for v in homes) + " : "
        out += row + world.name(f.site) + source_of(world, f.site) + "\n"
    return out


def thread_row(world: World, index: int, thread: Thread, current: int, event: int | None) -> str:
    """One ``~`` line: ``.  2  Id: 1a2c.5d0 Suspend: 1 Teb: 00000000`002d6000 Unfrozen`` --
    ``.`` the current thread, ``#`` the last event's when it is another (corpus process_thread/06,
    families/threads/03)."""
    mark = "." if thread.address == current else "#" if thread.address == event else " "
    pid = world.owner(thread).pid
    return f"{mark}{index:>3}  Id: {pid:x}.{thread.tid:x} Suspend: 1 Teb: {fmt_addr(thread.teb)} Unfrozen\n"
