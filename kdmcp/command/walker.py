"""The policy's walk over the reader's tree: one finding for every command kd would run.

:class:`Walker` follows the tree :mod:`~kdmcp.command.syntax` reads -- ``;`` lists, ``{ }``
bodies, ``.if``/``.while``/``.for``/``.foreach``, ``j`` branches, ``~e`` strings, path lists
-- within a depth and a nesting budget, and keeps what the walk learns about the line (alias
definitions, block offsets) for the policy. Each leaf goes to the rules for one command
(:mod:`~kdmcp.command.leaf_rules`), and the command strings inside it (breakpoints', events',
aliases', ``dx``'s) to :mod:`~kdmcp.command.command_strings`, which come back here through
:meth:`Walker.nested`. Where kd's reading is uncertain it checks every reading (fail closed);
text kd would skip is checked anyway.

Pure: stdlib and pydantic only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import ConfigDict

from kdmcp.command.allowlist import path_list_refusal
from kdmcp.command.classes import PROFILE_ALLOWS, CommandClass, RunEffect
from kdmcp.command.command_strings import alias_command
from kdmcp.command.grammar import NT_PATH_RE, Entry
from kdmcp.command.leaf_rules import single_command
from kdmcp.command.lexing import Lexing
from kdmcp.command.nodes import (
    AliasLine,
    Block,
    Command,
    DoLoop,
    ForEach,
    ForLoop,
    IfChain,
    JCommand,
    Node,
    PathCommand,
    ThreadEach,
    WhileLoop,
)
from kdmcp.command.syntax import MAX_DEPTH, read_list
from kdmcp.command.tables import (
    _ALIAS_PARSE_RE,
    _ALIAS_SET_RE,
    _CODE_LOAD,
    _DOT_COMMANDS,
    _HOST_FILE_READ,
    _NETWORK_PATH,
    _PATH_LIKE_RE,
    _READ,
    _UNKNOWN,
    DEFAULT_NETWORK_ROOTS,
    NETWORK_WORD_RE,
    leaf_effect,
    under_allowed_root,
)
from kdmcp.validation import LazyModel

_STANDARD = PROFILE_ALLOWS["standard"]

__all__ = ["MAX_EXPANSIONS", "MAX_NESTED", "Finding", "Walker"]

MAX_EXPANSIONS = 16  # ".foreach /s" tokens we substitute and re-check
MAX_NESTED = 2000  # bodies and command strings followed per line and reading (then: unknown)
_MAX_EXPANSIONS = MAX_EXPANSIONS


class Finding(LazyModel):
    """One command kd would run (or text it would read as one), its class and its run effect."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    piece: str
    command_class: CommandClass
    reason: str
    effect: RunEffect = RunEffect.IMMEDIATE


@dataclass
class Walker:
    """Classifies one line under one :class:`Lexing`, collecting findings."""

    lex: Lexing
    depth: int = 0
    # Roots on the network that paths may name (symbol and source servers the team trusts).
    roots: tuple[str, ...] = DEFAULT_NETWORK_ROOTS
    # Commands the config adds to the allowlist (allow_commands), vouched reads.
    extra: tuple[Entry, ...] = ()
    # Nested bodies/strings still allowed (shared with sub-walkers), so nesting
    # ".foreach /s" loops cannot make the check itself explode.
    budget: list[int] = field(default_factory=lambda: [MAX_NESTED])
    findings: list[Finding] = field(default_factory=list)
    # Inside a command string that runs later (a breakpoint's), not as part of this line.
    deferred: bool = False
    # Alias values defined anywhere in the line (name -> values), for same-line expansion.
    alias_values: dict[str, list[str]] = field(default_factory=dict)
    # Definitions and { } bodies at known offsets of the line: (name, end) and (start, end).
    alias_defs_at: list[tuple[str, int]] = field(default_factory=list)
    blocks: list[tuple[int, int]] = field(default_factory=list)

    def add(self, piece: str, command_class: CommandClass, reason: str) -> None:
        effect = RunEffect.IMMEDIATE if self.deferred else leaf_effect(piece)
        self.findings.append(Finding(piece=piece.strip(), command_class=command_class, reason=reason, effect=effect))

    def collect(self, text: str) -> list[Finding]:
        """Findings for ``text`` as a command list, without keeping them."""
        sub = Walker(self.lex, self.depth + 1, self.roots, self.extra, self.budget, deferred=True)
        sub.parse_list(text, None)
        return sub.findings

    # ----------------------------------------------------------------- lists

    def nested(self, text: str, base: int | None = None, *, deferred: bool = False) -> None:
        """Classify ``text`` as a command list one level down (a body or a command string).

        ``deferred``: the text runs later, not as part of this line (a breakpoint's or an
        event's command string, an alias value), so it cannot make this line resume.
        """
        if self.depth >= MAX_DEPTH or self.budget[0] <= 0:
            self.add(text, _UNKNOWN, "nested too deeply or too often to follow")
            return
        self.budget[0] -= 1
        self.depth += 1
        was_deferred = self.deferred
        self.deferred = self.deferred or deferred
        try:
            self.walk(read_list(text, self.lex, base, self.depth))
        finally:
            self.depth -= 1
            self.deferred = was_deferred

    def parse_list(self, text: str, base: int | None) -> None:
        """Classify each command of a ``;``-separated list (``base``: offset in the line, if known)."""
        self.walk(read_list(text, self.lex, base, self.depth))

    def body(self, block: Block) -> None:
        """A ``{ }`` body the reader already read: one level down, within the budget."""
        if block.body_start is not None and block.body_end is not None:
            self.blocks.append((block.body_start, block.body_end))
        if self.depth >= MAX_DEPTH or self.budget[0] <= 0:
            self.add(block.text, _UNKNOWN, "nested too deeply or too often to follow")
            return
        self.budget[0] -= 1
        self.depth += 1
        try:
            self.walk(block.body)
        finally:
            self.depth -= 1

    def walk(self, nodes: tuple[Node, ...]) -> None:
        for node in nodes:
            self.node(node)

    def node(self, node: Node) -> None:
        """Classify one node of the reader's tree."""
        if isinstance(node, Command):
            single_command(self, node.text)
            self.note_alias_definition(node.text, node.end)
        elif isinstance(node, AliasLine):
            # "as" takes the rest of the line as its value; what follows is checked too.
            alias_command(self, node.text, node.source)
            self.note_alias_definition(node.text, node.end)
        elif isinstance(node, Block):
            self.body(node)
            if node.keyword:
                self.add(node.text, _READ, f".{node.keyword} (control flow; its parts are checked on their own)")
        elif isinstance(node, IfChain):
            for condition, block in node.branches:
                self.condition(condition)
                self.body(block)
            if node.otherwise is not None:
                self.body(node.otherwise)
            self.add(node.text, _READ, ".if (control flow; its parts are checked on their own)")
        elif isinstance(node, WhileLoop):
            self.condition(node.condition)
            self.body(node.body)
            self.add(node.text, _READ, ".while (control flow; its parts are checked on their own)")
        elif isinstance(node, DoLoop):
            self.body(node.body)
            self.condition(node.condition)
            self.add(node.text, _READ, ".do (control flow; its parts are checked on their own)")
        elif isinstance(node, ForLoop):
            self.walk_nested(node.init)
            self.condition(node.condition)
            self.walk_nested(node.step)
            self.body(node.body)
            self.add(node.text, _READ, ".for (control flow; its parts are checked on their own)")
        elif isinstance(node, ForEach):
            self.foreach(node)
        elif isinstance(node, JCommand):
            self.j_command(node)
        elif isinstance(node, ThreadEach):
            self.thread_each(node)
        elif isinstance(node, PathCommand):
            self.path_command(node)
        else:
            self.add(node.text, _UNKNOWN, node.reason)

    def walk_nested(self, nodes: tuple[Node, ...]) -> None:
        """Nodes one level down that have no block of their own (``.for``'s init and step)."""
        if self.budget[0] <= 0:
            self.add(" ".join(type(n).__name__ for n in nodes), _UNKNOWN, "nested too often to follow")
            return
        self.budget[0] -= 1
        self.depth += 1
        try:
            self.walk(nodes)
        finally:
            self.depth -= 1

    def note_alias_definition(self, piece: str, end: int | None) -> None:
        """Where an alias definition ends in the line (for same-line expansion in later blocks)."""
        if end is not None and _ALIAS_SET_RE.match(piece):
            name = _ALIAS_PARSE_RE.match(piece)
            if name is not None:
                self.alias_defs_at.append((name.group("name"), end))

    # ----------------------------------------------------------------- control flow

    def condition(self, expression: str) -> None:
        """A condition is only evaluated, unless kd could end it early and read the rest as commands."""
        if re.search(r"[;{}]", expression):
            self.add(expression, _UNKNOWN, "a condition containing ';' or braces: kd might split it into commands")
            for part in expression.split(";")[1:]:
                self.nested(part.replace("{", " ").replace("}", " "))

    def foreach(self, node: ForEach) -> None:
        """``.foreach``: the input commands run now; each token is pasted into the body."""
        if node.source == "commands":
            self.walk_nested(node.commands)
        elif node.source == "file":
            self.add(node.text, _HOST_FILE_READ, "reads the tokens of a file on the debugger host")
            self.network_words(node.text, node.string)
        self.body(node.body)
        var_re = re.compile(rf"\$\{{{re.escape(node.var)}\}}|(?<!\w){re.escape(node.var)}(?!\w)")
        if var_re.search(node.body_text) is not None:
            words = node.string.split()
            if node.source == "string" and len(words) <= _MAX_EXPANSIONS:
                for token in words:
                    self.nested(var_re.sub(lambda _m: token, node.body_text))  # noqa: B023 (used at once)
            else:
                origin = {"commands": "command output", "file": "a file on the debugger host"}.get(
                    node.source, "a long string"
                )
                self.add(
                    node.body.text,
                    _UNKNOWN,
                    f"the loop variable '{node.var}' carries text from {origin}, which kd pastes into the loop body",
                )
        self.add(node.text, _READ, ".foreach (control flow; its parts are checked on their own)")

    def j_command(self, node: JCommand) -> None:
        """``j Expression 'Command1' ; 'Command2'`` (kd gives j the rest of the line)."""
        self.add(node.text, _READ, "j (runs one of two command strings, each checked on its own)")
        if not node.condition_closed:
            self.add(node.text, _UNKNOWN, "j with a condition that never closes")
            return
        self.condition(node.condition)
        if node.segments is None:
            self.add(node.text, _UNKNOWN, "j with a quote that never closes")
            self.nested(node.rest.replace("'", " "))
            return
        for segment in node.segments:
            body = segment.strip()
            if len(body) >= 2 and body[0] == body[-1] == "'" and "'" not in body[1:-1]:
                self.nested(body[1:-1])
            elif "'" in body:
                self.add(body, _UNKNOWN, "j branch with mixed quoting")
                self.nested(body.replace("'", " "))
            elif body:
                self.nested(body)

    def thread_each(self, node: ThreadEach) -> None:
        """``~*e CommandString``: the rest of the line, run once per thread."""
        if not node.commands.strip():
            self.add(node.text, _UNKNOWN, "~e without a command")
            return
        self.add(node.text, _READ, "~e (runs a command string per thread; checked on its own)")
        self.nested(node.commands)

    def path_command(self, node: PathCommand) -> None:
        """``.sympath a;b;c``: kd takes the rest of the line as a path list; every element is checked."""
        command_class, reason = _DOT_COMMANDS[node.name]
        before = len(self.findings)
        self.add(node.text, command_class, reason)
        head_args = node.head.strip()[len(node.name) + 1 :].lstrip("+").strip()
        for element in (head_args, *node.elements):
            if element.strip():
                self.path_element(node.head, node.name, element.strip())
        for raw in node.elements:
            element = raw.strip()
            if element and not _PATH_LIKE_RE.match(element):
                self.nested(element)
        if all(f.command_class in _STANDARD for f in self.findings[before:]):
            # On the allowlist only as local drive paths, srv*/cache* over them, and network roots
            # (an element that is no path at all was checked above as the command it could be).
            for element in (head_args, *(e for e in node.elements if _PATH_LIKE_RE.match(e.strip()))):
                problem = path_list_refusal(element.strip(), self.roots) if element.strip() else None
                if problem is not None:
                    nt = NT_PATH_RE.search(element) is not None
                    self.add(node.text, _NETWORK_PATH if nt else _UNKNOWN, f"not on kd-mcp's allowlist: {problem}")

    def network_words(self, piece: str, text: str) -> None:
        """Every word of ``text`` that names a network location outside the allowed roots."""
        if "/" not in text and "\\" not in text and ":" not in text:
            return  # every form NETWORK_WORD_RE knows has two slashes or a scheme's ':'
        for m in NETWORK_WORD_RE.finditer(text):
            path = m.group("path")
            if path in ("//", "\\\\"):
                continue  # no host after the slashes: a "// comment", not a location
            if not under_allowed_root(path, self.roots):
                self.add(piece, _NETWORK_PATH, f"names the network location '{path}' (the host connects there)")

    def path_element(self, piece: str, name: str, element: str) -> None:
        """One element of a ``.sympath``-style list: ``srv*cache*url``, ``symsrv*dll*...``, ``cache*dir``, a path."""
        parts = [p.strip() for p in element.split("*")]
        kind = parts[0].lower()
        if kind == "symsrv" and len(parts) > 1 and parts[1].lower() != "symsrv.dll":
            self.add(piece, _CODE_LOAD, f"'symsrv*{parts[1]}*...' makes dbghelp load the DLL '{parts[1]}'")
        if kind == "srv" and name in ("srcpath", "lsrcpath"):
            self.add(piece, _NETWORK_PATH, "a source server: the host fetches files and runs the PDB's commands")
        implicit_server = kind == "srv" and not any(NETWORK_WORD_RE.match(p) for p in parts[1:])
        # "srv*" alone (or with a local cache) means the Microsoft symbol server.
        if implicit_server and name == "sympath" and not under_allowed_root(DEFAULT_NETWORK_ROOTS[0], self.roots):
            self.add(piece, _NETWORK_PATH, "'srv*' fetches symbols from the Microsoft symbol server")
        for part in parts:
            self.network_words(piece, part)
