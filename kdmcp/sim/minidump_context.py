"""A real minidump's register contexts behind the simulated ``cdb -z``: ``r``, ``~Ns``, ``.ecxr``, ``k``.

A minidump keeps each thread's CONTEXT (``MINIDUMP_THREAD.ThreadContext``) and, when it was
written for an exception, the faulting context too (``MINIDUMP_EXCEPTION_STREAM.ThreadContext``);
the ``minidump`` package (PyPI, MIT) parses both layouts (x86 ``WOW64_CONTEXT``, x64 ``CONTEXT``).
This module prints them the way cdb does and walks a stack from them:

- ``r`` / ``~Ns`` / ``.ecxr``: the register block, the ``module+0xoff:`` line and the instruction at
  the program counter, decoded from the dump's bytes by ``iced-x86`` (the project's disassembler;
  no hand-written decoder), ``??              ???`` where the dump holds no bytes there;
- ``.ecxr`` replaces the thread's registers with the exception's "until the thread changes":
  ``r`` and ``k`` then read the exception context (cdb's "register context" scope);
- ``k`` / ``kn`` / ``kb``: no symbols and no images, so no unwind data: an x86 frame-pointer walk
  (the ``ebp`` chain) inside the thread's stack memory, else a scan of the stack for return
  addresses into the dump's modules (what cdb's unwinder would find in the images' unwind data
  the dump lacks), under cdb's own warning ``WARNING: Stack unwind information not available.
  Following frames may be wrong.``; at most 64 frames, ending at memory the dump does not hold;
  ``~*k`` / ``~Nk`` print each thread's ``~`` line, then its stack.

The effective-address annotation cdb adds to a memory operand (``ds:002b:00000000=????????``) is
printed for ``ds``/``ss``/``es`` operands of 1, 2, 4 or 8 bytes; ``fs``/``gs`` operands (whose base is
the TEB) get none. Branch targets are named ``module+0xoff (address)`` as cdb names them.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from iced_x86 import (
    Decoder,
    Formatter,
    FormatterSyntax,
    Instruction,
    MemorySizeExt,
    MemorySizeOptions,
    Mnemonic,
    OpKind,
    Register,
    RegisterExt,
)
from minidump.streams.ContextStream import CONTEXT, WOW64_CONTEXT

from kdmcp.sim.minidump_target import MemoryView, MinidumpTarget

__all__ = ["Context", "DumpContexts", "StackFrame", "read_context"]

_X86_NAMES = ("eax", "ebx", "ecx", "edx", "esi", "edi", "eip", "esp", "ebp")
_X64_NAMES = (
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rip", "rsp", "rbp",
    "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
)  # fmt: skip
_SEGMENTS = ("cs", "ss", "ds", "es", "fs", "gs")
# EFlags bits as ``r`` spells them, set / clear, in cdb's order (OF DF IF SF ZF AF PF CF)
_FLAGS = ((11, "ov", "nv"), (10, "dn", "up"), (9, "ei", "di"), (7, "ng", "pl"), (6, "zr", "nz"),
          (4, "ac", "na"), (2, "pe", "po"), (0, "cy", "nc"))  # fmt: skip
MAX_FRAMES = 64
_X64_ARGS_HEAD = ": Args to Child" + " " * 59 + ": Call Site\n"
# "WARNING: Stack unwind information not available. Following frames may be wrong." -- cdb's line
# before the first frame it unwound without unwind data (Microsoft's pheap-buggy walkthrough, kb)
UNWIND_WARNING = "WARNING: Stack unwind information not available. Following frames may be wrong.\n"
# ... and before a frame whose instruction pointer is in no module (the same k layout, 0x866561a9)
NO_MODULE_WARNING = "WARNING: Frame IP not in any known module. Following frames may be wrong.\n"
# ".ecxr" on a dump written without an exception: cdb 10's two lines, as published with an x86
# minidump's triage ("Minidump doesn't have an exception context" / "... HRESULT 0x80004002")
NO_EXCEPTION_CONTEXT = (
    "Minidump doesn't have an exception context\nUnable to get exception context, HRESULT 0x80004002\n"
)


@dataclass(frozen=True)
class Context:
    """One CONTEXT record: the general registers by cdb's names, the segments and EFlags."""

    x64: bool
    regs: dict[str, int]

    @property
    def ip(self) -> int:
        return self.regs["rip" if self.x64 else "eip"]

    @property
    def sp(self) -> int:
        return self.regs["rsp" if self.x64 else "esp"]

    @property
    def fp(self) -> int:
        return self.regs["rbp" if self.x64 else "ebp"]

    def value(self, name: str) -> int | None:
        """A register by the name ``r`` takes (``eax`` on x64 is ``rax``'s low half)."""
        name = name.lower()
        if name in self.regs:
            return self.regs[name]
        if self.x64 and name in _X86_NAMES:
            return self.regs["r" + name[1:]] & 0xFFFFFFFF
        return None


def read_context(data: bytes, location: tuple[int, int], x64: bool) -> Context:
    """The CONTEXT at ``(rva, size)`` of the dump's bytes, parsed by the ``minidump`` package."""
    rva, size = location
    raw = (CONTEXT if x64 else WOW64_CONTEXT).parse(io.BytesIO(data[rva : rva + size]))
    names = _X64_NAMES if x64 else _X86_NAMES
    regs = {name: int(getattr(raw, name.capitalize())) for name in names}
    regs.update({seg: int(getattr(raw, "Seg" + seg.capitalize())) & 0xFFFF for seg in _SEGMENTS})
    regs["efl"] = int(raw.EFlags) & 0xFFFFFFFF
    return Context(x64, regs)


@dataclass(frozen=True)
class StackFrame:
    """One frame of a walk: its frame/stack pointer, return address, instruction pointer, args."""

    child: int
    ret: int
    ip: int
    args: tuple[int | None, ...]


class DumpContexts:
    """The registers and stacks of a dump's threads, and the commands that print them."""

    def __init__(self, target: MinidumpTarget) -> None:
        self.t = target
        self.memory = MemoryView(target)

    # ------------------------------------------------------------------ contexts

    def where(self, address: int) -> str:
        """``module+0xoff`` (no symbols, the offset unpadded as ``r`` and ``k`` print it); ``""``
        for an address in no module."""
        for m in self.t.modules:
            if m.base <= address < m.end:
                return f"{m.name}+0x{address - m.base:x}"
        return ""

    def thread_context(self, index: int) -> Context:
        return read_context(self.t.data, self.t.threads[index].context, self.t.x64)

    def exception_context(self) -> Context | None:
        if self.t.exception_context is None:
            return None
        return read_context(self.t.data, self.t.exception_context, self.t.x64)

    def current(self, thread: int) -> Context:
        """The context ``r`` and ``k`` read: the exception's after ``.ecxr`` on this thread."""
        if self.t.ecxr_thread == thread and (exc := self.exception_context()) is not None:
            return exc
        return self.thread_context(thread)

    def register_values(self, thread: int) -> dict[str, int]:
        """The current context's registers by name, for ``dd esp``; none in a dump without threads."""
        return self.current(thread).regs if thread < len(self.t.threads) else {}

    # ------------------------------------------------------------------ commands

    def answer(self, command: str, thread: int) -> tuple[str, int] | None:
        """What cdb prints for ``command`` and the thread current after it; ``None``: not ours."""
        text = command.strip()
        low = text.lower()
        if thread >= len(self.t.threads):
            return None  # a dump without threads has no context: cdb's answers are not modelled
        if low == "r":
            return self.registers(self.current(thread)), thread
        if m := re.fullmatch(r"r\s+@?(\w+)", low):
            value = self.current(thread).value(m.group(1))
            if value is None:
                return f"       ^ Bad register error in '{text}'\n", thread
            width = 16 if self.t.x64 and not m.group(1).startswith("e") else 8
            if m.group(1) in _SEGMENTS:
                width = 4
            return f"{m.group(1)}={value:0{width}x}\n", thread
        if m := re.fullmatch(r"~(\d+)s", low):
            index = int(m.group(1))
            if index >= len(self.t.threads):
                # ntsd's error(BADTHREAD): "Illegal thread" + " error in '%s'"
                return f"       ^ Illegal thread error in '{text}'\n", thread
            self.t.ecxr_thread = None  # a thread switch leaves the exception context
            return self.registers(self.thread_context(index)), index
        if low == ".ecxr":
            exc = self.exception_context()
            if exc is None:
                return NO_EXCEPTION_CONTEXT, thread
            self.t.ecxr_thread = thread
            return self.registers(exc), thread
        if low in ("k", "kn", "kb"):
            return self.stack(self.current(thread), self.t.threads[thread].stack, args=low == "kb"), thread
        if m := re.fullmatch(r"~(\*|\d+)\s*(k[nb]?)", low):
            # "~*k" / "~1k": each thread's header line as "~" prints it after a blank line, then its
            # stack (corpus stack/10: "~* kb" in a dump); the current thread is not changed
            picked = range(len(self.t.threads)) if m.group(1) == "*" else [int(m.group(1))]
            if any(i >= len(self.t.threads) for i in picked):
                return f"       ^ Illegal thread error in '{text}'\n", thread
            rows = self.t.thread_list(thread).splitlines(keepends=True)
            blocks = [
                "\n" + rows[i] + self.stack(self.current(i), self.t.threads[i].stack, args=m.group(2) == "kb")
                for i in picked
            ]
            return "".join(blocks), thread
        return None

    # ------------------------------------------------------------------ r

    def registers(self, ctx: Context) -> str:
        """``r``'s block for ``ctx``, then the symbol line and the instruction at the pc.

        x86, as cdb prints a WoW64 thread (corpus registers/01, exceptions_errors/16)::

            eax=... ebx=... ecx=... edx=... esi=... edi=...
            eip=... esp=... ebp=... iopl=0         nv up ei pl zr na pe nc
            cs=0023  ss=002b  ds=002b  es=002b  fs=0053  gs=002b             efl=00000246

        x64, three registers a line, `` r8=`` with a blank (corpus families/exceptions/09, .ecxr).
        """
        r = ctx.regs
        seg = "  ".join(f"{s}={r[s]:04x}" for s in _SEGMENTS) + f"             efl={r['efl']:08x}\n"
        efl = r["efl"]
        flags = f"iopl={(efl >> 12) & 3:<10}" + " ".join(on if efl >> bit & 1 else off for bit, on, off in _FLAGS)
        if ctx.x64:
            rows = [_X64_NAMES[i : i + 3] for i in range(0, 9, 3)]
            rows += [("r8", "r9", "r10"), ("r11", "r12", "r13"), ("r14", "r15")]
            block = "".join(" ".join(f"{n:>3}={r[n]:016x}" for n in row) + "\n" for row in rows)
            block += flags + "\n" + seg
        else:
            block = " ".join(f"{n}={r[n]:08x}" for n in _X86_NAMES[:6]) + "\n"
            block += " ".join(f"{n}={r[n]:08x}" for n in _X86_NAMES[6:]) + " " + flags + "\n" + seg
        where = self.where(ctx.ip)
        return block + (f"{where}:\n" if where else "") + self.instruction(ctx) + "\n"

    def instruction(self, ctx: Context) -> str:
        """The line ``u`` would print at the pc: ``0090a6cd 8b00            mov     eax,dword ptr [eax]``."""
        return instruction_line(self, ctx)

    # ------------------------------------------------------------------ k

    def walk(self, ctx: Context, stack: tuple[int, int]) -> tuple[list[StackFrame], bool]:
        """The frames from ``ctx`` inside the stack memory ``stack`` and whether they came from a
        scan (``False``: the x86 ``ebp`` chain)."""
        low, high = stack
        if not ctx.x64 and low <= ctx.fp < high:
            return self._ebp_chain(ctx, high), False
        return self._scan(ctx, max(ctx.sp, low), high), True

    def _ptr(self, address: int) -> int | None:
        size = 8 if self.t.x64 else 4
        raw = [self.memory.byte(address + i) for i in range(size)]
        if any(b is None for b in raw):
            return None
        return int.from_bytes(bytes(b for b in raw if b is not None), "little")

    def _args(self, at: int, count: int) -> tuple[int | None, ...]:
        step = 8 if self.t.x64 else 4
        return tuple(self._ptr(at + i * step) for i in range(count))

    def _ebp_chain(self, ctx: Context, high: int) -> list[StackFrame]:
        """x86 without symbols: each frame's ``ebp`` points at the caller's saved ``ebp``, the
        return address above it, the arguments above that (cdb's "ChildEBP RetAddr" columns)."""
        frames: list[StackFrame] = []
        ebp, ip = ctx.fp, ctx.ip
        while len(frames) < MAX_FRAMES:
            saved, ret = self._ptr(ebp), self._ptr(ebp + 4)
            frames.append(StackFrame(ebp, ret or 0, ip, self._args(ebp + 8, 3)))
            if saved is None or not ret or not ebp < saved < high:
                break
            ebp, ip = saved, ret
        return frames

    def _scan(self, ctx: Context, start: int, high: int) -> list[StackFrame]:
        """Each stack slot, from the stack pointer up, that holds an address inside a module and
        (where the dump holds the caller's code) just after a call: a return address. x64 names a
        frame by its stack pointer, x86 by where its ``ebp`` would be saved (below the slot)."""
        step = 8 if self.t.x64 else 4
        count = 4 if self.t.x64 else 3

        def frame(slot: int, child: int, ret: int, ip: int) -> StackFrame:
            return StackFrame(child if self.t.x64 else slot - 4, ret, ip, self._args(slot + step, count))

        frames: list[StackFrame] = []
        child, ip = ctx.sp, ctx.ip
        slot = start
        while slot + step <= high and len(frames) < MAX_FRAMES - 1:
            value = self._ptr(slot)
            if value is None:
                break
            # an image's first page is its headers, never code: a pointer there is no return address
            if any(m.base + 0x1000 <= value < m.end for m in self.t.modules) and self._after_call(value):
                frames.append(frame(slot, child, value, ip))
                child, ip = slot + step, value
            slot += step
        frames.append(frame(slot, child, 0, ip))  # the last frame returns nowhere, as cdb ends a stack
        return frames

    def _after_call(self, address: int) -> bool:
        return follows_call(self.memory, address, self.t.x64)

    def stack(self, ctx: Context, stack: tuple[int, int], args: bool) -> str:
        """``k``/``kn``/``kb``, in cdb 10.0.2xxxx's layout (four blanks after RetAddr)::

             # ChildEBP RetAddr
            00 006ffecc 00401335     WS2_32!recv
            WARNING: Stack unwind information not available. Following frames may be wrong.
            01 006ffef0 004013d4     service+0x1335

        (an x86 ``k`` published with OSED-Toolkit's service.exe walkthrough; x64 as the simulator's
        canned cdb scenario prints it, `` # Child-SP          RetAddr               Call Site``).
        """
        frames, _scanned = self.walk(ctx, stack)
        x64 = self.t.x64
        if x64:
            head = " # Child-SP          RetAddr               " + (_X64_ARGS_HEAD if args else "Call Site\n")
        else:
            head = " # ChildEBP RetAddr      " + ("Args to Child              \n" if args else "\n")
        lines = [head, UNWIND_WARNING]
        warned_ip = False
        for n, f in enumerate(frames):
            site = self.where(f.ip)
            if not site:
                site = f"0x{f.ip:x}"
                if not warned_ip:
                    lines.append(NO_MODULE_WARNING)
                    warned_ip = True
            row = f"{n:02x} {self.t.addr(f.child)} {self.t.addr(f.ret)}     "
            if args:
                cells = " ".join(self._cell(a) for a in f.args)
                row += f": {cells} : " if x64 else f"{cells} "
            lines.append(row + site + "\n")
        return "".join(lines)

    def _cell(self, value: int | None) -> str:
        # an argument slot past the stack memory the dump holds: dbghelp's walker leaves a frame's
        # Params it cannot read at zero (an assumption: no published sample shows the case)
        return self.t.addr(value or 0)


# ---------------------------------------------------------------------- the instruction line


def instruction_line(view: DumpContexts, ctx: Context) -> str:
    """The pc's line as ``r`` ends (corpus registers/05, families/exceptions/05 and 09)::

        00d44c59 8b39            mov     edi,dword ptr [ecx]  ds:002b:2b2b2b2b=????????
        fffff802`40d322f9 488b4810        mov     rcx,qword ptr [rax+10h] ds:ffffffff`00000090=????????????????

    the bytes in a 16-column field, the operands from column 8 of the text, the annotation from
    column 54 of the line (one blank after a longer one); with no bytes at the pc cdb prints
    ``??              ???``.
    """
    t = view.t
    code = bytearray()
    for i in range(15):
        b = view.memory.byte(ctx.ip + i)
        if b is None:
            break
        code.append(b)
    address = t.addr(ctx.ip)
    if not code:
        return f"{address} ??              ???"
    instr = Decoder(64 if t.x64 else 32, bytes(code), ip=ctx.ip).decode()
    if instr.is_invalid:
        return f"{address} {code[:1].hex():<15} ???"
    line = f"{address} {code[: instr.len].hex():<15} {_text(instr, view)}"
    note = _annotation(instr, ctx, view)
    return f"{line:<53} {note}" if note else line


_FORMATTER: list[Formatter] = []  # the one iced formatter, built on first use


def _formatter() -> Formatter:
    if not _FORMATTER:
        f = Formatter(FormatterSyntax.MASM)
        f.first_operand_char_index = 8  # "mov     eax,..." -- the mnemonic in 7 columns and a blank
        f.memory_size_options = MemorySizeOptions.ALWAYS  # cdb says "dword ptr" even where implied
        f.show_branch_size = False  # "jmp     target", never "jmp short"
        f.rip_relative_addresses = False  # the target address, named below as cdb names it
        _FORMATTER.append(f)
    return _FORMATTER[0]


def _text(instr: Instruction, view: DumpContexts) -> str:
    """iced's MASM text, branch targets and rip-relative operands named ``module+0xoff (address)``
    (corpus disasm/01: ``jmp     nt!RtlSubtreePredecessor+0x16 (fffff802`40d32306)``)."""
    f = _formatter()
    text: str = f.format(instr)
    if instr.op_count == 1 and instr.op0_kind in (OpKind.NEAR_BRANCH16, OpKind.NEAR_BRANCH32, OpKind.NEAR_BRANCH64):
        target = instr.near_branch_target
        where = view.where(target)
        named = f"{where} ({view.t.addr(target)})" if where else view.t.addr(target)
        return f"{f.format_mnemonic(instr):<7} {named}"
    if instr.is_ip_rel_memory_operand:
        target = instr.ip_rel_memory_address
        where = view.where(target)
        named = f"[{where} ({view.t.addr(target)})]" if where else f"[{view.t.addr(target)}]"
        text = re.sub(r"\[[0-9A-F]+h\]", lambda _m: named, text, count=1)
    return text


def _annotation(instr: Instruction, ctx: Context, view: DumpContexts) -> str:
    """``ds:002b:00000000=????????`` (x86: segment, selector, address) or
    ``ds:fffe2b2b`2b2fffe8=????????`` (x64: no selector), the operand's value as the dump holds it."""
    if OpKind.MEMORY not in [instr.op_kind(i) for i in range(instr.op_count)] or instr.mnemonic in (
        Mnemonic.LEA,
        Mnemonic.NOP,
    ):
        return ""
    size = MemorySizeExt.size(instr.memory_size)
    segment = {Register.DS: "ds", Register.SS: "ss", Register.ES: "es", Register.CS: "cs"}.get(instr.memory_segment)
    if size not in (1, 2, 4, 8) or segment is None:
        return ""
    names = {getattr(Register, n.upper()): n for n in _X64_NAMES}
    if instr.is_ip_rel_memory_operand:
        address = instr.ip_rel_memory_address
    else:
        address = instr.memory_displacement
        for reg, scale in ((instr.memory_base, 1), (instr.memory_index, instr.memory_index_scale)):
            if reg == Register.NONE:
                continue
            name = names.get(RegisterExt.full_register(reg))
            if name is None:
                return ""
            if not ctx.x64:
                name = "e" + name[1:]
            value = ctx.regs.get(name)
            if value is None:
                return ""
            address += (value & ((1 << (8 * RegisterExt.size(reg))) - 1)) * scale
    address &= (1 << 64) - 1 if ctx.x64 else 0xFFFFFFFF
    raw = [view.memory.byte(address + i) for i in range(size)]
    shown = "?" * (2 * size)
    if all(b is not None for b in raw):
        shown = f"{int.from_bytes(bytes(b for b in raw if b is not None), 'little'):0{2 * size}x}"
    where = view.t.addr(address) if ctx.x64 else f"{ctx.regs[segment]:04x}:{address:08x}"
    return f"{segment}:{where}={shown}"


def follows_call(memory: MemoryView, address: int, x64: bool) -> bool:
    """Whether ``address`` can be a return address: a call instruction ends there, or the dump
    holds none of the bytes before it (a minidump keeps little code) so it cannot be ruled out."""
    before = [memory.byte(address - n) for n in range(7, 0, -1)]
    if all(b is None for b in before):
        return True
    for length in (2, 3, 5, 6, 7):  # call reg, call [reg+d8], call rel32, call [mem], call [rip+d32]
        code = before[7 - length :]
        if any(b is None for b in code):
            continue
        instr = Decoder(64 if x64 else 32, bytes(b for b in code if b is not None), ip=address - length).decode()
        if instr.len == length and (instr.is_call_near or instr.is_call_near_indirect):
            return True
    return False
