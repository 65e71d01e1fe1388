"""Names and addresses: the world's symbol tables, and kd's MASM expressions over them.

``x``, ``ln``, ``u nt!KiIdleLoop``, ``bp nt!NtCreateFile``, ``dq @rsp`` and ``? nt+0x10`` all
turn text into an address the same way, so they share this reader. The syntax is kd's MASM
evaluator (MASM Numbers and Operators): numbers in radix 16 by default, ``0x``/``0n``/``0y``
prefixes and the ```` ` ```` separator; ``module!symbol[+offset]``; a module name alone is its
base; ``@reg`` or a bare register name; ``$t0``…, ``@$ip``, ``@$proc``, ``@$thread``,
``@$prcb``, ``@$pcr``, ``@$peb``, ``@$teb``; ``poi()``, ``dwo()``, ``wo()``, ``by()`` read
memory; ``+ - * / % & | ^ << >>``, comparisons and parentheses.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from kdmcp.sim.interpreter import masm_number
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.model import Module, Symbol

__all__ = ["ExprError", "SymbolTable", "evaluate"]

MASK64 = (1 << 64) - 1


class ExprError(Exception):
    """Text kd cannot evaluate; ``str()`` is the part it names in ``Couldn't resolve error at``."""


class SymbolTable:
    """Every module and symbol, searchable by name and by address."""

    def __init__(self, modules: list[Module]) -> None:
        self.modules = sorted(modules, key=lambda m: m.base)
        self._by_name: dict[str, Symbol] = {}
        self._module_of: dict[str, Module] = {}
        self._starts: list[int] = []
        self._sorted: list[tuple[Module, Symbol]] = []
        for mod in self.modules:
            self._module_of[mod.name.lower()] = mod
            for sym in mod.symbols:
                self._by_name[f"{mod.name}!{sym.name}".lower()] = sym
                self._sorted.append((mod, sym))
        self._sorted.sort(key=lambda pair: pair[1].address)
        self._starts = [s.address for _, s in self._sorted]

    def module(self, name: str) -> Module | None:
        return self._module_of.get(name.lower())

    def module_at(self, addr: int) -> Module | None:
        return next((m for m in self.modules if m.base <= addr < m.end), None)

    def lookup(self, qualified: str) -> Symbol | None:
        """``nt!KiIdleLoop`` (case-insensitive, as kd's symbol matching is by default)."""
        return self._by_name.get(qualified.lower())

    def find(self, module: str, pattern: str) -> list[tuple[Module, Symbol]]:
        """``x module!pattern``: ``*`` and ``?`` wildcards (the x command's string wildcards)."""
        rx = re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.I)
        mods = [m for m in self.modules if _wild(module, m.name)]
        return [(m, s) for m in mods for s in m.symbols if rx.fullmatch(s.name)]

    def nearest(self, addr: int) -> tuple[Module | None, Symbol | None, int]:
        """The symbol at or before ``addr`` within its module, and the offset from it."""
        mod = self.module_at(addr)
        i = bisect.bisect_right(self._starts, addr) - 1
        if mod is not None and i >= 0:
            owner, sym = self._sorted[i]
            if owner is mod:
                return mod, sym, addr - sym.address
        return mod, None, 0 if mod is None else addr - mod.base

    def neighbours(self, addr: int) -> tuple[Symbol | None, Symbol | None]:
        """``ln``'s pair: the symbol before (or at) ``addr`` and the next one in its module."""
        mod, sym, _ = self.nearest(addr)
        if mod is None:
            return None, None
        after = [s for s in mod.symbols if s.address > addr]
        return sym, min(after, key=lambda s: s.address) if after else None

    def name(self, addr: int) -> str:
        """kd's name for an address: ``nt!KiIdleLoop+0x54``, ``myfault+0x1a20``, or the number."""
        mod, sym, off = self.nearest(addr)
        if mod is None:
            return fmt_addr(addr)
        head = f"{mod.name}!{sym.name}" if sym is not None else mod.name
        return head if off == 0 else f"{head}+{off:#x}"


def _wild(pattern: str, text: str) -> bool:
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, text, re.I) is not None


@dataclass
class _Scope:
    table: SymbolTable
    register: Callable[[str], int | None]
    read: Callable[[int, int], int | None]
    temps: dict[int, int]


_TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F`]+|0[nN][0-9]+|0[tT][0-7]+|0[yY][01]+|[0-9a-fA-F]+`[0-9a-fA-F]+"
    r"|[0-9][0-9a-fA-F`]*)(?![\w!])"
    r"|(?P<sym>[A-Za-z_][\w]*![\w@?$<>:~]+|[A-Za-z_]\w*)"
    r"|(?P<reg>@\$?\w+|\$\w+)"
    r"|(?P<op><<|>>|==|!=|<=|>=|[-+*/%&|^()<>=~]))"
)
_READERS = {"poi": 8, "qwo": 8, "dwo": 4, "wo": 2, "by": 1}
_BINARY: dict[str, tuple[int, Callable[[int, int], int]]] = {
    "|": (1, lambda a, b: a | b),
    "^": (2, lambda a, b: a ^ b),
    "&": (3, lambda a, b: a & b),
    "==": (4, lambda a, b: int(a == b)),
    "=": (4, lambda a, b: int(a == b)),
    "!=": (4, lambda a, b: int(a != b)),
    "<": (5, lambda a, b: int(a < b)),
    ">": (5, lambda a, b: int(a > b)),
    "<=": (5, lambda a, b: int(a <= b)),
    ">=": (5, lambda a, b: int(a >= b)),
    "<<": (6, lambda a, b: a << b),
    ">>": (6, lambda a, b: a >> b),
    "+": (7, lambda a, b: a + b),
    "-": (7, lambda a, b: a - b),
    "*": (8, lambda a, b: a * b),
    "/": (8, lambda a, b: a // b if b else 0),
    "%": (8, lambda a, b: a % b if b else 0),
}


def evaluate(
    text: str,
    table: SymbolTable,
    register: Callable[[str], int | None],
    read: Callable[[int, int], int | None],
    temps: dict[int, int] | None = None,
) -> int:
    """The value of a MASM expression, as a 64-bit unsigned number; :class:`ExprError` if not."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text) and text[pos:].strip():
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            raise ExprError(text[pos:].strip())
        kind = m.lastgroup or "op"
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    if not tokens:
        raise ExprError(text.strip() or text)
    scope = _Scope(table, register, read, temps or {})
    value, i = _expr(tokens, 0, scope, text, 1)
    if i != len(tokens):
        raise ExprError(" ".join(v for _, v in tokens[i:]))
    return value & MASK64


def _expr(tokens: list[tuple[str, str]], i: int, scope: _Scope, text: str, level: int) -> tuple[int, int]:
    left, i = _unary(tokens, i, scope, text)
    while i < len(tokens) and tokens[i][0] == "op" and tokens[i][1] in _BINARY:
        prec, fn = _BINARY[tokens[i][1]]
        if prec < level:
            break
        right, i = _expr(tokens, i + 1, scope, text, prec + 1)
        left = fn(left, right) & MASK64
    return left, i


def _unary(tokens: list[tuple[str, str]], i: int, scope: _Scope, text: str) -> tuple[int, int]:
    if i >= len(tokens):
        raise ExprError(text.strip())
    kind, value = tokens[i]
    if kind == "num":
        return masm_number(value), i + 1
    if kind == "op" and value == "(":
        inner, j = _expr(tokens, i + 1, scope, text, 1)
        if j >= len(tokens) or tokens[j][1] != ")":
            raise ExprError(text.strip())
        return inner, j + 1
    if kind == "op" and value in "-~":
        inner, j = _unary(tokens, i + 1, scope, text)
        return (-inner if value == "-" else ~inner) & MASK64, j
    if kind == "op" and value == "+":
        return _unary(tokens, i + 1, scope, text)
    if kind == "reg":
        got = scope.register(value.lstrip("@").lower())
        if got is None:
            raise ExprError(value)
        return got, i + 1
    if kind == "sym":
        low = value.lower()
        if low in _READERS and i + 1 < len(tokens) and tokens[i + 1][1] == "(":
            addr, j = _unary(tokens, i + 1, scope, text)
            got = scope.read(addr, _READERS[low])
            if got is None:
                raise ExprError(f"{value}({fmt_addr(addr)})")
            return got, j
        return _name(value, scope), i + 1
    raise ExprError(value)


def _name(word: str, scope: _Scope) -> int:
    if "!" in word:
        sym = scope.table.lookup(word)
        if sym is None:
            raise ExprError(word)
        return sym.address
    mod = scope.table.module(word)
    if mod is not None:
        return mod.base
    reg = scope.register(word.lower())  # "rip", "rsp": kd reads a bare register name too
    if reg is not None:
        return reg
    try:
        return int(word, 16)  # "fffff800" etc. that the number pattern left to the word rule
    except ValueError:
        raise ExprError(word) from None
