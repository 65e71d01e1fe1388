"""Recovering the I/O control codes an ``IRP_MJ_DEVICE_CONTROL`` routine handles, from its disassembly.

Why a walk over paths, not a pattern match: MSVC compiles ``switch (IoControlCode)`` into compare
chains, ``sub``/``je`` cascades, binary-search trees of ``ja``/``jb`` splits and bounds-checked jump
tables, mixed in one routine and in any order. Following every path from the routine's entry with
the set of codes still possible on it (``ioctl_domain``) handles them alike: a branch narrows the
set, a path left with one code has reached that code's case, and a jump table maps each code left
at its ``jmp`` through the table's entries.

x64 only: the routine gets the IRP in rdx; ``Irp->Tail.Overlay.CurrentStackLocation`` is at +0xb8
and its ``Parameters.DeviceIoControl.IoControlCode`` at +0x18 (wdm.h's IRP and IO_STACK_LOCATION).
Pure: the caller gives the parsed instructions (``u``/``uf`` records; the order of uf's blocks does
not matter) and a ``read`` callback for the jump table's dwords.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from kdmcp.parse import ioctl_domain as dom
from kdmcp.parse import ioctl_values as v
from kdmcp.parse.ioctl_operands import Imm, Mem, Reg, operands
from kdmcp.parse.models import Instruction
from kdmcp.parse.register_names import X64_ARGUMENTS, X64_STACK_POINTER, X64_VOLATILE

__all__ = ["MAX_STEPS", "Recovered", "Recovery", "Unresolved", "recover"]

Read = Callable[[int, int], Sequence[int] | None]  # (address, count) -> that many dwords, or None
MAX_STEPS = 50_000  # instructions walked over all paths: the bound on a routine's paths
_MAX_TABLE_CODES = 4096  # codes one jump table may route (its index range, bounds-checked)
# instructions that leave the flags as they were (Intel SDM vol. 2: "Flags Affected: None")
_KEEPS_FLAGS = frozenset({"mov", "movzx", "movsx", "movsxd", "lea", "push", "pop", "nop", "xchg", "not"})
How = Literal["compare", "subtract_chain", "binary_search", "jump_table"]


@dataclass(frozen=True)
class Recovered:
    code: int
    handler: int
    handler_symbol: str | None
    how: How
    confidence: Literal["high", "medium"]
    at: int  # the branch or jmp that routes it
    index: int | None = None  # its jump-table index


@dataclass(frozen=True)
class Unresolved:
    at: int
    reason: str


@dataclass
class Recovery:
    codes: list[Recovered] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    defaults: list[int] = field(default_factory=list)  # where the codes no case takes go
    tables: list[int] = field(default_factory=list)  # jump tables read
    code_loaded: bool = False  # a path loaded IoControlCode
    truncated: bool = False  # MAX_STEPS ran out


_IDENTITY = dom.Lin()


@dataclass(frozen=True)
class _Flags:
    kind: Literal["cmp", "zero", "test", "lost"]
    lin: dom.Lin = _IDENTITY
    imm: int = 0
    origin: str = "cmp"
    spilled: bool = False
    why: str = ""
    at: int = 0


_Bits = tuple[dom.Lin, int, bool]  # (lin, mask, zero): lin(code) & mask is zero (True) or not (False)


@dataclass(frozen=True)
class _Path:
    at: int
    regs: tuple[tuple[str, v.Val], ...]
    slots: tuple[tuple[str, v.Val], ...] = ()
    flags: _Flags | None = None
    codes: dom.Domain = dom.FULL
    align: tuple[_Bits, ...] = ()  # what test/jcc said of the code's bits
    exit: int | None = None  # where the last branch on the code sent this (unmatched) path
    ordered: bool = False  # an ordered split (ja/jb/jg…) on the code came before


# ---------------------------------------------------------------- the walk


class _Walk:
    def __init__(self, instructions: Sequence[Instruction], read: Read) -> None:
        self.by_addr = {int(i.address, 16): i for i in instructions}
        self.read = read
        self.out = Recovery()
        self.defaults: set[int] = set()
        self.landings: set[int] = set()
        self.found: dict[int, Recovered] = {}
        self.unresolved: dict[int, str] = {}
        self.seen: set[_Path] = set()
        self.steps = 0

    def run(self, entry: int) -> Recovery:
        # DRIVER_DISPATCH(DeviceObject, Irp): the IRP is the second integer argument
        todo = [_Path(entry, ((X64_ARGUMENTS[1], v.Irp()),))]
        while todo:
            path: _Path | None = todo.pop()
            while path is not None:
                if self.steps >= MAX_STEPS:
                    self.out.truncated = True
                    todo.clear()
                    break
                if path in self.seen:
                    break
                self.seen.add(path)
                self.steps += 1
                ins = self.by_addr.get(path.at)
                if ins is None:  # left what was disassembled
                    self._end(path)
                    break
                path, forks = self._step(path, ins)
                todo.extend(reversed(forks))
        self.out.defaults = sorted(self.landings)
        self.out.codes = [r for r in self.found.values() if r.handler not in self.defaults]
        self.out.unresolved = [Unresolved(a, why) for a, why in self.unresolved.items()]
        return self.out

    def _end(self, path: _Path) -> None:
        """A path that ran out without a case: where it left the code's branches is the default
        (past the jmp-only blocks it goes through; a case that jumps to any of them is none)."""
        if path.exit is None:
            return
        at = path.exit
        for _ in range(8):
            self.defaults.add(at)
            ins = self.by_addr.get(at)
            if ins is None or ins.mnemonic != "jmp" or ins.target is None or "[" in ins.operands:
                break
            at = int(ins.target, 16)
        self.landings.add(at)

    def _step(self, p: _Path, ins: Instruction) -> tuple[_Path | None, list[_Path]]:
        mn = ins.mnemonic.lower()
        ops = operands(ins.operands)
        at = int(ins.address, 16)
        nxt = at + len(ins.bytes) // 2
        regs, slots = dict(p.regs), dict(p.slots)
        flags: _Flags | None = None
        if mn == "jmp" or (mn.startswith("j") and ins.target is not None):
            return self._jump(p, ins, mn, ops, at, nxt)
        if mn.startswith("ret") or mn in ("int", "int3", "ud2", "hlt", "iretq"):
            self._end(p)
            return None, []
        if mn == "call":
            for r in X64_VOLATILE:
                regs.pop(r, None)
        elif mn in ("push", "pop"):
            slots.clear()  # rsp moved: the slots it addressed moved with it
            if mn == "pop" and ops and isinstance(ops[0], Reg):
                regs.pop(ops[0].family, None)
        elif len(ops) == 2:
            flags = self._binary(mn, ops[0], ops[1], regs, slots, at, ins.operands)
        elif len(ops) == 1 and isinstance(ops[0], Reg):
            old = regs.get(ops[0].family)
            if mn in ("inc", "dec") and isinstance(old, v.Code) and ops[0].width >= 32:
                new = old.lin.add(1 if mn == "inc" else -1)
                regs[ops[0].family] = v.Code(new, old.spilled)
                flags = _Flags("zero", new, origin=mn, spilled=old.spilled)
            else:
                v.clobber(regs, ops[0].family, old, f"{mn} {ins.operands}")
                if isinstance(old, (v.Code, v.Derived)):
                    flags = _Flags("lost", why=f"{mn} {ins.operands}", at=at)
        if mn in _KEEPS_FLAGS or mn.startswith(("cmov", "set")):
            flags = p.flags
        return replace(p, at=nxt, regs=v.frozen(regs), slots=v.frozen(slots), flags=flags), []

    # -------------------------------------------------------------- two-operand instructions

    def _binary(
        self,
        mn: str,
        dst: Reg | Imm | Mem,
        src: Reg | Imm | Mem,
        regs: dict[str, v.Val],
        slots: dict[str, v.Val],
        at: int,
        text: str,
    ) -> _Flags | None:
        d = v.read_operand(dst, regs, slots)
        s = v.read_operand(src, regs, slots)
        if mn in ("cmp", "test"):
            return _compare(mn, dst, src, d, s, regs, at, text)
        if isinstance(dst, Reg) and dst.family == X64_STACK_POINTER:
            slots.clear()
            return None
        new: v.Val | None = None
        flags: _Flags | None = None
        if mn in ("mov", "movsxd", "movzx", "movsx"):
            new = s
            if isinstance(s, v.Entry) and mn == "movsxd":
                new = replace(s, signed=True)
            elif isinstance(s, v.Code) and (mn in ("movzx", "movsx") or (isinstance(src, Reg) and src.width < 32)):
                new = v.Derived(f"{mn} {text}")
        elif mn == "lea" and isinstance(src, Mem):
            new = v.lea(src, regs)
        elif mn in ("add", "sub") and isinstance(d, v.Code) and isinstance(src, Imm):
            k = src.value if mn == "add" else -src.value
            new = v.Code(d.lin.add(k), d.spilled)
            flags = (
                _Flags("cmp", d.lin, src.value, origin="sub", spilled=d.spilled)
                if mn == "sub"
                else _Flags("zero", new.lin, origin="add", spilled=d.spilled)
            )
        elif mn == "add" and isinstance(d, v.Entry) and isinstance(s, v.Addr):
            new = v.Target(d, s)
        elif mn == "add" and isinstance(d, v.Addr) and isinstance(s, v.Entry):
            new = v.Target(s, d)
        elif mn == "shr" and isinstance(d, v.Code) and isinstance(src, Imm):
            lin = d.lin.shr(src.value)
            new = v.Code(lin, d.spilled) if lin is not None else v.Derived(f"{mn} {text}")
        elif mn == "xor" and dst == src:
            new = None
        elif isinstance(d, (v.Code, v.Derived)) or isinstance(s, (v.Code, v.Derived)):
            new = v.Derived(f"{mn} {text}")
            if mn in ("and", "or", "xor", "sub", "add", "bt", "shr", "sar", "shl"):
                flags = _Flags("lost", why=f"{mn} {text}", at=at)
        v.write(dst, new, regs, slots, f"{mn} {text}")
        return flags

    # -------------------------------------------------------------- branches

    def _jump(
        self, p: _Path, ins: Instruction, mn: str, ops: list[Reg | Imm | Mem], at: int, nxt: int
    ) -> tuple[_Path | None, list[_Path]]:
        if mn == "jmp":
            if ins.target is not None and "[" not in ins.operands:  # jmp myfault+0x1f20 (fffff800`60da1f20)
                return replace(p, at=int(ins.target, 16)), []
            if ops and isinstance(ops[0], Mem) and ops[0].absolute is not None:
                self._end(p)  # jmp qword ptr [mydrv!_imp_IofCallDriver (…)]: a tail call through the IAT
                return None, []
            val = v.read_operand(ops[0], dict(p.regs), dict(p.slots)) if ops else None
            if isinstance(val, v.Target):
                self._table(p, val, at)
            else:
                self.unresolved.setdefault(at, f"indirect jump (jmp {ins.operands}): not a bounds-checked table")
            return None, []
        assert ins.target is not None
        target = int(ins.target, 16)
        f = p.flags
        sides = _sides(mn, f, p) if f is not None and f.kind != "lost" else None
        if f is not None and f.kind == "lost":
            self.unresolved.setdefault(f.at, f"a branch ({mn}) on a value derived from IoControlCode ({f.why})")
        if f is not None and f.kind != "lost" and sides is None:
            self.unresolved.setdefault(at, f"a condition ({mn}) on IoControlCode this does not model")
        if sides is None:
            return replace(p, at=nxt), [replace(p, at=target)]
        assert f is not None
        paths: list[_Path] = []
        ordered = p.ordered or (f.kind == "cmp" and _SPLIT.get(mn, mn) not in ("je", "jne"))
        for addr, codes, align in ((target, *sides[0]), (nxt, *sides[1])):
            if not codes:
                continue
            one = _single(codes, align)
            if one is not None:
                self._found(one, addr, ins if addr == target else None, f, ordered, at)
                continue
            paths.append(
                replace(p, at=addr, codes=codes, align=align, exit=addr, ordered=ordered)
            )  # a jcc keeps the flags: ja, then je
        if not paths:
            return None, []
        # the fall-through first, then the taken branch: codes come out in the routine's order
        paths.sort(key=lambda q: q.at != nxt)
        return paths[0], paths[1:]

    def _found(self, code: int, handler: int, branch: Instruction | None, f: _Flags, ordered: bool, at: int) -> None:
        how: How = (
            "subtract_chain"
            if f.origin in ("sub", "add", "dec", "inc") or f.lin.bias
            else "binary_search"
            if ordered
            else "compare"
        )
        symbol = None
        if branch is not None and " (" in branch.operands:
            symbol = branch.operands.rsplit(" (", 1)[0].strip() or None
        self.found.setdefault(code, Recovered(code, handler, symbol, how, "medium" if f.spilled else "high", at))

    def _table(self, p: _Path, t: v.Target, at: int) -> None:
        """Each code left at ``jmp rcx`` through the table (and a byte table before it) to its case."""
        entry = t.entry
        codes = dom.values(p.codes, _MAX_TABLE_CODES)
        if codes is None:
            self.unresolved.setdefault(
                at, f"jump table whose index range is not bounded to {_MAX_TABLE_CODES} codes (no cmp/ja before it)"
            )
            return
        codes = [c for c in codes if _aligned(c, p.align)]
        index = {c: entry.index.apply(c) for c in codes}
        if entry.via is not None:  # MSVC's two-level table: a byte per index, the case number
            cases = self._bytes(entry.via, max(index.values(), default=-1) + 1)
            if cases is None:
                self.unresolved.setdefault(at, f"could not read the switch's index table at {entry.via:#x}")
                return
            index = {c: cases[i] for c, i in index.items()}
        n = max(index.values(), default=-1) + 1
        words = self.read(entry.table, n) if n else []
        if words is None or len(words) < n:
            self.unresolved.setdefault(at, f"could not read the jump table at {entry.table:#x} ({n} entries)")
            return
        self.out.tables.append(entry.table)
        for c in codes:
            raw = words[index[c]] & dom.MASK
            if entry.signed and raw & 0x80000000:
                raw -= 1 << 32
            handler = (t.base.value + raw) & 0xFFFFFFFFFFFFFFFF
            symbol = f"{t.base.name}+{raw:#x}" if t.base.name and raw >= 0 else None
            self.found.setdefault(c, Recovered(c, handler, symbol, "jump_table", "high", at, index[c]))

    def _bytes(self, address: int, count: int) -> list[int] | None:
        """``count`` bytes at ``address``, read as the dwords that hold them (little-endian)."""
        words = self.read(address, -(-count // 4)) if count else []
        if words is None or len(words) * 4 < count:
            return None
        return [(w >> (8 * k)) & 0xFF for w in words for k in range(4)][:count]


_SPLIT = {"jz": "je", "jnz": "jne"}


_Side = tuple[dom.Domain, tuple[_Bits, ...]]


def _sides(mn: str, f: _Flags, p: _Path) -> tuple[_Side, _Side] | None:
    """(taken, fall-through): the codes and alignment constraints each side of ``mn`` keeps."""
    jcc = _SPLIT.get(mn, mn)
    if f.kind == "test":
        if jcc not in ("je", "jne"):
            return None
        zero = (p.codes, (*p.align, (f.lin, f.imm, True)))
        other = (p.codes, (*p.align, (f.lin, f.imm, False)))
        return (zero, other) if jcc == "je" else (other, zero)
    if f.kind == "zero":
        if jcc not in ("je", "jne"):
            return None
        cond: tuple[list[tuple[int, int]], bool] | None = ([(0, 0)], jcc == "je")
    else:
        cond = dom.condition(jcc, f.imm)
    if cond is None:
        return None
    ivs, taken_inside = cond
    inside, outside = dom.cut(p.codes, dom.preimage_of(f.lin, ivs))
    taken, fall = (inside, outside) if taken_inside else (outside, inside)
    return (taken, p.align), (fall, p.align)


def _single(codes: dom.Domain, align: tuple[_Bits, ...]) -> int | None:
    few = dom.values(codes, 64)
    if few is None:
        return None
    few = [c for c in few if _aligned(c, align)]
    return few[0] if len(few) == 1 else None


def _aligned(code: int, align: tuple[_Bits, ...]) -> bool:
    return all((lin.apply(code) & mask == 0) == zero for lin, mask, zero in align)


def _compare(
    mn: str,
    dst: Reg | Imm | Mem,
    src: Reg | Imm | Mem,
    d: v.Val | None,
    s: v.Val | None,
    regs: dict[str, v.Val],
    at: int,
    text: str,
) -> _Flags | None:
    """The flags of ``cmp``/``test``: a compare of the code, or one on a value that lost track of it."""
    if isinstance(dst, Reg) and dst.width < 32:
        whole = regs.get(dst.family)
        if mn == "test" and isinstance(whole, v.Code) and not dst.high and isinstance(src, Imm):
            return _Flags("test", whole.lin, src.value & 0xFF, spilled=whole.spilled)  # test al,3
        if isinstance(whole, (v.Code, v.Derived)):
            return _Flags("lost", why=f"{mn} {text}", at=at)
    if isinstance(d, v.Code):
        if isinstance(src, Imm):
            if mn == "cmp":
                return _Flags("cmp", d.lin, src.value, spilled=d.spilled)
            return _Flags("test", d.lin, src.value, spilled=d.spilled)
        if mn == "test" and src == dst:
            return _Flags("cmp", d.lin, 0, spilled=d.spilled)  # test eax,eax: as cmp eax,0
    lost = next((x for x in (d, s) if isinstance(x, v.Derived)), None)
    if lost is not None:
        return _Flags("lost", why=f"{mn} {text} after {lost.what}", at=at)
    if isinstance(d, v.Code) or isinstance(s, v.Code):
        return _Flags("lost", why=f"{mn} {text}: against a register", at=at)
    return None


def recover(instructions: Sequence[Instruction], read: Read, entry: int | None = None) -> Recovery:
    """The codes the routine starting at ``entry`` (default: the first instruction) routes to a case."""
    if not instructions:
        return Recovery()
    start = entry if entry is not None else int(instructions[0].address, 16)
    walk = _Walk(instructions, read)
    result = walk.run(start)
    result.code_loaded = bool(walk.found) or any(
        isinstance(val, v.Code) for p in walk.seen for _, val in (*p.regs, *p.slots)
    )
    if not result.code_loaded:
        result.unresolved.append(
            Unresolved(start, "no load of IoControlCode found (x64: the IRP's [+0b8h] stack location, then its [+18h])")
        )
    return result
