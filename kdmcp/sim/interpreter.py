"""The simulated debugger's reading of a command line: the one reader's tree, run as kd runs it.

The tree comes from :mod:`kdmcp.command.syntax` under kd's documented reading, the same
reader the policy classifies with and the engine asks for the run effect, so the
simulator's answer to ``.block { g }``, ``j 1 'g';'r'``, ``.if``, ``.foreach`` or ``.echo``
quoting is the one the engine expects.

Running is a generator that yields after every command. When a command lets the target
run, the debugger keeps the generator and resumes it at the next stop: "On the command line,
a semicolon terminates the g command, and any additional commands listed after the
semicolon are executed immediately after the g command has completed" (g (Go)).

Conditions are MASM expressions (numbers in the default radix 16, ``0x``/``0n``/``0t``/``0y``
prefixes, the temporary registers ``$t0``-``$t19``, comparison, arithmetic and logic); what
the simulator cannot evaluate is kd's error "Couldn't resolve error at '...'", which ends
the line, as an evaluation error does in kd.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Protocol

from kdmcp.command.classes import RunEffect
from kdmcp.command.lexing import KD_LEXING
from kdmcp.command.nodes import (
    AliasLine,
    Block,
    Command,
    DoLoop,
    ForEach,
    ForLoop,
    IfChain,
    JCommand,
    Malformed,
    Node,
    PathCommand,
    ThreadEach,
    WhileLoop,
)
from kdmcp.command.syntax import read_list
from kdmcp.command.tables import leaf_effect

__all__ = ["MAX_LOOP", "EvalError", "Host", "Interpreter", "LineEnded", "evaluate", "masm_number"]

MAX_LOOP = 100_000  # iterations of one loop before the simulator stops it (kd would go on)


class EvalError(Exception):
    """An expression the simulator cannot evaluate; the text is where it failed."""


class LineEnded(Exception):
    """A command printed kd's error: the rest of the line (outside a ``.catch``) does not run."""


class Host(Protocol):
    """What the interpreter needs of the debugger it runs in."""

    kernel: bool
    thread: int
    temps: dict[int, int]
    command_failed: bool  # the last command printed kd's error for it

    def execute(self, command: str) -> None: ...
    def out(self, text: str) -> None: ...
    def interrupted(self) -> bool: ...
    def thread_ids(self) -> list[int]: ...
    def capture(self, run: Callable[[], None]) -> str: ...


class Interpreter:
    """Runs the reader's tree of one line on a :class:`Host`."""

    def __init__(self, host: Host, *, max_loop: int = MAX_LOOP) -> None:
        self.host = host
        self.max_loop = max_loop

    def run_line(self, line: str) -> Iterator[None]:
        try:
            yield from self.run(read_list(line, KD_LEXING))
        except EvalError as exc:
            self.host.out(f"Couldn't resolve error at '{exc}'\n")
        except LineEnded:
            return  # "an error will terminate the entire debugger command program" (.catch)

    def run(self, nodes: tuple[Node, ...]) -> Iterator[None]:
        for node in nodes:
            yield from self.node(node)

    def node(self, node: Node) -> Iterator[None]:
        host = self.host
        if isinstance(node, (Command, PathCommand)):
            host.execute(node.text)
            if host.command_failed:
                raise LineEnded(node.text)
            yield
        elif isinstance(node, AliasLine):
            return  # kd prints nothing for "as"; aliases are not simulated
        elif isinstance(node, Block) and node.keyword == "catch":
            # "If a command within a .catch block generates an error, the error message is displayed,
            # all remaining commands within the braces are ignored, and execution resumes with the
            # first command after the closing brace" (.catch)
            try:
                yield from self.run(node.body)
            except LineEnded:
                pass
            except EvalError as exc:
                host.out(f"Couldn't resolve error at '{exc}'\n")
        elif isinstance(node, Block):
            yield from self.run(node.body)
        elif isinstance(node, IfChain):
            for condition, block in node.branches:
                if self.truth(condition):
                    yield from self.run(block.body)
                    return
            if node.otherwise is not None:
                yield from self.run(node.otherwise.body)
        elif isinstance(node, WhileLoop):
            yield from self.loop(lambda: self.truth(node.condition), node.body, ())
        elif isinstance(node, DoLoop):
            yield from self.run(node.body.body)
            yield from self.loop(lambda: self.truth(node.condition), node.body, ())
        elif isinstance(node, ForLoop):
            yield from self.run(node.init)
            yield from self.loop(lambda: self.truth(node.condition), node.body, node.step)
        elif isinstance(node, ForEach):
            yield from self.foreach(node)
        elif isinstance(node, JCommand):
            yield from self.j_command(node)
        elif isinstance(node, ThreadEach):
            yield from self.thread_each(node)
        elif isinstance(node, Malformed):
            host.out(f"       ^ Syntax error in '{node.text.strip()}'\n")

    def loop(self, holds: Callable[[], bool], body: Block, step: tuple[Node, ...]) -> Iterator[None]:
        for _ in range(self.max_loop):
            if self.host.interrupted() or not holds():
                return
            yield from self.run(body.body)
            yield from self.run(step)

    def truth(self, condition: str) -> bool:
        return evaluate(condition, self.host.temps) != 0

    def foreach(self, node: ForEach) -> Iterator[None]:
        if node.source == "string":
            words = node.string.split()
        elif node.source == "file":
            try:
                with open(node.string, encoding="utf-8", errors="replace") as f:
                    words = f.read().split()
            except OSError:
                self.host.out(f"Unable to open file '{node.string}'\n")
                return
        else:
            words = self.host.capture(lambda: _drain(self.run(node.commands))).split()
        initial = _count(node.initial_skip)
        step = _count(node.skip)
        words = words[initial:]
        if step:
            words = words[:: step + 1]
        var_re = re.compile(rf"\$\{{{re.escape(node.var)}\}}|(?<!\w){re.escape(node.var)}(?!\w)")
        for word in words:
            if self.host.interrupted():
                return
            yield from self.run(read_list(var_re.sub(lambda _m: word, node.body_text), KD_LEXING))  # noqa: B023

    def j_command(self, node: JCommand) -> Iterator[None]:
        if not node.condition_closed or node.segments is None:
            self.host.out(f"       ^ Syntax error in '{node.text.strip()}'\n")
            return
        taken = 0 if self.truth(node.condition) else 1
        text = node.segments[taken].strip() if taken < len(node.segments) else ""
        if len(text) >= 2 and text[0] == text[-1] == "'":
            text = text[1:-1]
        yield from self.run(read_list(text, KD_LEXING))

    def thread_each(self, node: ThreadEach) -> Iterator[None]:
        """``~*e``: "You cannot use the ~e qualifier together with execution commands" (~e)."""
        host = self.host
        if host.kernel:  # "You can specify threads only in user mode" (~e)
            host.out(f"       ^ Syntax error in '{node.text.strip()}'\n")
            return
        nodes = read_list(node.commands, KD_LEXING)
        selector = node.selector[1:]
        threads = host.thread_ids() if selector == "*" else [int(selector)] if selector.isdigit() else [host.thread]
        saved = host.thread
        for thread in threads:
            host.thread = thread
            for inner in nodes:
                if isinstance(inner, Command) and leaf_effect(inner.text) is not RunEffect.IMMEDIATE:
                    host.out(f"       ^ Syntax error in '{inner.text}'\n")
                    continue
                yield from self.node(inner)
        host.thread = saved


def _drain(steps: Iterator[None]) -> None:
    for _ in steps:
        pass


def _count(text: str) -> int:
    try:
        return int(text, 0) if text else 0
    except ValueError:
        return 0


# ---------------------------------------------------------------- MASM expressions

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F`]+|0[nN][0-9]+|0[tT][0-7]+|0[yY][01]+|[0-9a-fA-F][0-9a-fA-F`]*(?![\w$@]))"
    r"|(?P<temp>@?\$t(?P<index>1[0-9]|[0-9])(?!\w))|(?P<word>and|or|xor|not)(?!\w)"
    r"|(?P<op>==|!=|<=|>=|<<|>>|[-+*/%&|^<>=()!~]))",
    re.IGNORECASE,
)
_BINARY: dict[str, tuple[int, Callable[[int, int], int]]] = {
    "or": (1, lambda a, b: int(bool(a) or bool(b))), "|": (2, lambda a, b: a | b),
    "xor": (3, lambda a, b: a ^ b), "^": (3, lambda a, b: a ^ b),
    "and": (4, lambda a, b: int(bool(a) and bool(b))), "&": (4, lambda a, b: a & b),
    "==": (5, lambda a, b: int(a == b)), "=": (5, lambda a, b: int(a == b)), "!=": (5, lambda a, b: int(a != b)),
    "<": (6, lambda a, b: int(a < b)), ">": (6, lambda a, b: int(a > b)),
    "<=": (6, lambda a, b: int(a <= b)), ">=": (6, lambda a, b: int(a >= b)),
    "<<": (7, lambda a, b: a << b), ">>": (7, lambda a, b: a >> b),
    "+": (8, lambda a, b: a + b), "-": (8, lambda a, b: a - b),
    "*": (9, lambda a, b: a * b), "/": (9, lambda a, b: a // b if b else 0), "%": (9, lambda a, b: a % b if b else 0),
}  # fmt: skip


def evaluate(text: str, temps: dict[int, int]) -> int:
    """A MASM expression's value (default radix 16), or :class:`EvalError` naming where it failed."""
    tokens: list[tuple[str, str]] = []
    pos, n = 0, len(text)
    while pos < n:
        if text[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            raise EvalError(text[pos:].strip())
        if m.group("num"):
            tokens.append(("num", str(masm_number(m.group("num")))))
        elif m.group("temp"):
            tokens.append(("num", str(temps.get(int(m.group("index")), 0))))
        elif m.group("word"):
            tokens.append(("op", m.group("word").lower()))
        else:
            tokens.append(("op", m.group("op")))
        pos = m.end()
    if not tokens:
        raise EvalError(text.strip() or "<empty>")
    value, rest = _expr(tokens, 0, text)
    if rest != len(tokens):
        raise EvalError(text.strip())
    return value


def masm_number(token: str) -> int:
    """A MASM number: radix 16 by default, ``0x``/``0n``/``0t``/``0y`` prefixes, a ``` ` ``` separator."""
    token = token.replace("`", "")
    prefix = token[:2].lower()
    if prefix == "0x":
        return int(token[2:], 16)
    if prefix == "0n":
        return int(token[2:], 10)
    if prefix == "0t":
        return int(token[2:], 8)
    if prefix == "0y":
        return int(token[2:], 2)
    return int(token, 16)


def _expr(tokens: list[tuple[str, str]], i: int, text: str, level: int = 1) -> tuple[int, int]:
    left, i = _unary(tokens, i, text)
    while i < len(tokens) and tokens[i][0] == "op" and tokens[i][1] in _BINARY:
        prec, fn = _BINARY[tokens[i][1]]
        if prec < level:
            break
        right, i = _expr(tokens, i + 1, text, prec + 1)
        left = fn(left, right)
    return left, i


def _unary(tokens: list[tuple[str, str]], i: int, text: str) -> tuple[int, int]:
    if i >= len(tokens):
        raise EvalError(text.strip())
    kind, value = tokens[i]
    if kind == "num":
        return int(value), i + 1
    if value == "(":
        inner, j = _expr(tokens, i + 1, text)
        if j >= len(tokens) or tokens[j][1] != ")":
            raise EvalError(text.strip())
        return inner, j + 1
    if value == "-":
        inner, j = _unary(tokens, i + 1, text)
        return -inner, j
    if value in ("!", "not"):
        inner, j = _unary(tokens, i + 1, text)
        return int(not inner), j
    if value == "~":
        inner, j = _unary(tokens, i + 1, text)
        return ~inner, j
    raise EvalError(text.strip())
