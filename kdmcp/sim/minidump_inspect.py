"""What cdb answers about a real minidump beyond its reports: expressions, symbols, ``u``, thread and
process selectors, ``dps``.

A minidump written without symbols gives cdb module ranges and no names inside them, so every
address is ``module+0xoff`` (as ``r`` and ``k`` print it, :mod:`.minidump_context`); expressions are
cdb's MASM ones (the world's evaluator, :func:`kdmcp.sim.world.symbols.evaluate`) over the
dump's registers, pseudo-registers (``$ip``, ``$csp``, ``$tid``, ``$tpid``, ``$teb``) and the
memory the dump holds. Memory the dump lacks reads as cdb prints unreadable memory: ``u`` shows
``??              ???`` a byte, ``dps`` ``????????``.
"""

from __future__ import annotations

import re

from iced_x86 import Decoder

from kdmcp.sim.minidump_context import Context, DumpContexts, _text
from kdmcp.sim.minidump_target import _DUMP_RE, MemoryView, MinidumpTarget
from kdmcp.sim.world.model import Module
from kdmcp.sim.world.symbols import ExprError, SymbolTable, evaluate
from kdmcp.sim.world.user_handles import handle_text

__all__ = ["DumpInspector"]

_U_RE = re.compile(r"u\s*(?P<addr>[^lL\s][^\s]*)?(?:\s+[lL]\s*(?P<count>\S+))?\s*$", re.IGNORECASE)
_DPS_RE = re.compile(r"dp[sd]\s+(?P<addr>\S+)(?:\s+[lL]\s*(?P<count>\S+))?\s*$", re.IGNORECASE)
_DEFAULT_U = 8  # u with no range: eight instructions (u, ub, uu (Unassemble))
_DEFAULT_DPS = 16  # dps: as many pointers as dp's 8 lines hold on x64 (16), 32 on x86


class DumpInspector:
    """Answers one command on a dump's current thread (``thread``), or ``None``: not one of ours."""

    def __init__(self, target: MinidumpTarget, contexts: DumpContexts, thread: int) -> None:
        self.t = target
        self.view = contexts
        self.thread = thread
        self.symbols = SymbolTable(
            [Module(m.name, m.path, m.path, m.base, m.end - m.base, 0, 0) for m in target.modules]
        )

    # ------------------------------------------------------------------ expressions

    def _context(self) -> Context | None:
        if self.thread >= len(self.t.threads):
            return None
        return self.view.current(self.thread)

    def register(self, name: str) -> int | None:
        name = name.lstrip("@").lower()
        ctx = self._context()
        regs = ctx.regs if ctx is not None else {}
        if name in regs:
            return regs[name]
        thread = self.t.threads[self.thread] if self.thread < len(self.t.threads) else None
        pseudo = {
            "$ip": ctx.ip if ctx is not None else None,
            "$csp": ctx.sp if ctx is not None else None,
            "$tid": thread.tid if thread is not None else None,
            "$tpid": self.t.pid,
            "$teb": thread.teb if thread is not None else None,
        }
        return pseudo.get(name)

    def _read(self, address: int, size: int) -> int | None:
        raw = [self.view.memory.byte(address + i) for i in range(size)]
        if any(b is None for b in raw):
            return None
        return int.from_bytes(bytes(b for b in raw if b is not None), "little")

    def evaluate(self, text: str) -> int:
        value = evaluate(text, self.symbols, self.register, self._read)
        return value if self.t.x64 else value & 0xFFFFFFFF

    def _number(self, value: int) -> str:
        """``00000000`000004a8`` on x64, ``000004a8`` on x86 (cdb pads to the target's pointer)."""
        return self.t.addr(value)

    # ------------------------------------------------------------------ commands

    def answer(self, command: str) -> str | None:
        text = command.strip()
        try:
            return self._answer(text)
        except ExprError as exc:
            return f"Couldn't resolve error at '{exc}'\n"

    def _answer(self, text: str) -> str | None:
        low = text.lower()
        if low.startswith("?") and not low.startswith("??") and text[1:].strip():
            value = self.evaluate(text[1:].strip())
            signed = value - (1 << 64) if self.t.x64 and value >> 63 else value
            if not self.t.x64 and value >> 31:
                signed = value - (1 << 32)
            # corpus misc/10: "Evaluate expression: -8781847822336 = fffff803`51148000"
            return f"Evaluate expression: {signed} = {self._number(value)}\n"
        if m := re.fullmatch(r"!handle(?:\s+(?P<args>.*))?", text, re.IGNORECASE | re.DOTALL):
            # the dump's handle data stream (kdmcp/sim/world/user_handles.py: ntsdexts' text)
            return handle_text(self.t.handles, m.group("args") or "", self.evaluate, live=False, x64=self.t.x64)
        if m := re.fullmatch(r"~\s*(\.|#|\*|\d+)", text):
            return self._threads(m.group(1), text)
        if m := re.fullmatch(r"\|\s*(\.|#|\*|0)", text):
            return self.t.process_list()
        if m := re.fullmatch(r"ln(?:\s+(?P<addr>.+))?", text, re.IGNORECASE):
            return self._ln(m.group("addr"))
        if m := re.fullmatch(r"x\s+(?P<pattern>\S+)", text, re.IGNORECASE):
            # no symbol files: cdb lists nothing for a pattern (x (Examine Symbols))
            return "" if "!" in m.group("pattern") else None
        if m := _U_RE.fullmatch(text):
            return self._u(m.group("addr"), m.group("count"))
        if m := _DPS_RE.fullmatch(text):
            return self._dps(m.group("addr"), m.group("count"))
        if m := _DUMP_RE.fullmatch(text):
            return self._display(text, m)
        return None

    def _display(self, text: str, m: re.Match[str]) -> str | None:
        """``db``/``dd``/``dq``/``dp``/``da``/``du`` at an expression the plain reader does not take
        (``@$ip``, ``@rsp+10``, ``poi(esp)``): evaluated here, displayed by :class:`MemoryView`."""
        ctx = self._context()
        view = MemoryView(self.t, ctx.regs if ctx is not None else {})
        if view.resolve(m.group("addr")) is not None:
            return None  # the plain reader answers it (debugger._from_dump's MemoryView)
        address = self.evaluate(m.group("addr"))
        return view.display(text[: m.start("addr")] + f"{address:x}" + text[m.end("addr") :])

    def _threads(self, selector: str, text: str) -> str:
        rows = self.t.thread_list(self.thread).splitlines(keepends=True)
        if selector == "*":
            return "".join(rows)
        index = {".": self.thread, "#": self.t.event_index}.get(selector)
        if index is None:
            index = int(selector)
        if not 0 <= index < len(rows):
            # ntsd's error(BADTHREAD): "Illegal thread" + " error in '%s'"
            return f"       ^ Illegal thread error in '{text}'\n"
        return rows[index]

    def _ln(self, where: str | None) -> str:
        ctx = self._context()
        address = self.evaluate(where) if where else (ctx.ip if ctx is not None else 0)
        mod = self.symbols.module_at(address)
        if mod is None:
            return ""  # no module there: nothing near it
        # the world's ln layout (kdmcp/sim/world/cmd_symbols.py), the module base where no symbol is
        return f"Browse module\nSet bu breakpoint\n\n({self.t.addr(mod.base)})   {self.view.where(address)}\n"

    def _count(self, text: str | None, default: int) -> int:
        if text is None:
            return default
        return max(1, min(self.evaluate(text), 0x1000))

    def _u(self, where: str | None, count: str | None) -> str:
        ctx = self._context()
        address = self.evaluate(where) if where else (ctx.ip if ctx is not None else 0)
        lines: list[str] = []
        label = self.view.where(address)
        if label:
            lines.append(f"{label}:")
        for _ in range(self._count(count, _DEFAULT_U)):
            code = bytearray()
            for i in range(15):
                b = self.view.memory.byte(address + i)
                if b is None:
                    break
                code.append(b)
            head = self.t.addr(address)
            if not code:
                lines.append(f"{head} ??              ???")  # an unreadable byte, one a line
                address += 1
                continue
            instr = Decoder(64 if self.t.x64 else 32, bytes(code), ip=address).decode()
            if instr.is_invalid:
                lines.append(f"{head} {code[:1].hex():<15} ???")
                address += 1
                continue
            lines.append(f"{head} {code[: instr.len].hex():<15} {_text(instr, self.view)}")
            address += instr.len
        return "".join(line + "\n" for line in lines)

    def _dps(self, where: str, count: str | None) -> str:
        """``dps``: a pointer a line, named where it falls in a module (kd's dps layout:
        ``0037f8cc  0090a6cd crashme+0xa6cd``); unreadable: ``????????``."""
        size = 8 if self.t.x64 else 4
        address = self.evaluate(where)
        out = ""
        for i in range(self._count(count, _DEFAULT_DPS if self.t.x64 else 2 * _DEFAULT_DPS)):
            at = address + i * size
            value = self._read(at, size)
            if value is None:
                cell = "????????`????????" if self.t.x64 else "????????"
                out += f"{self.t.addr(at)}  {cell}\n"
                continue
            name = self.view.where(value)
            out += f"{self.t.addr(at)}  {self.t.addr(value)}" + (f" {name}" if name else "") + "\n"
        return out
