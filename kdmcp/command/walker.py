"""The policy's walk over the reader's tree: one finding for every command kd would run.

This module is one class, :class:`Walker`, and is longer than most because the leaf rules
(letter, dot and extension commands, breakpoints, aliases, ``dx``) belong together: each
decides the class of one command and which command strings inside it kd would also run.
Where kd's reading is uncertain it checks every reading (fail closed); text kd would skip
is checked anyway.

Pure: stdlib and pydantic only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from kdmcp.command.classes import CommandClass, RunEffect
from kdmcp.command.lexing import PROCESS_PREFIX_RE as _PROCESS_PREFIX_RE
from kdmcp.command.lexing import THREAD_EXECUTE_RE as _THREAD_EXECUTE_RE
from kdmcp.command.lexing import THREAD_PREFIX_RE as _THREAD_PREFIX_RE
from kdmcp.command.lexing import Escapes, Lexing, c_unescape, match_close, skip_ws, string_end, tokens
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
from kdmcp.command.syntax import J_RE, MAX_DEPTH, read_list
from kdmcp.command.tables import (
    _ALIAS_OTHER_RE,
    _ALIAS_PARSE_RE,
    _ALIAS_SET_RE,
    _BANG_RE,
    _BANG_READ,
    _BANG_WRITE,
    _BP_SUSPICIOUS_RE,
    _BREAKPOINT_EDIT_RE,
    _BREAKPOINT_RE,
    _CODE_LOAD,
    _CONTROL_CHAR_RE,
    _CPP_ASSIGN_RE,
    _DOT_COMMANDS,
    _DOT_RE,
    _DX_ASSIGN_RE,
    _DX_BREAKPOINT_RE,
    _DX_CONTROL_RE,
    _DX_EXECUTE_CALL_RE,
    _DX_EXECUTE_RE,
    _DX_FILESYSTEM_RE,
    _DX_RE,
    _DX_SCRIPTS_RE,
    _DX_SETTINGS_RE,
    _DX_SIDE_EFFECT_RE,
    _DX_STRING_PLACEHOLDER,
    _DX_SUSPICIOUS_LITERAL_RE,
    _DX_TARGET_CALL_RE,
    _EXECUTION,
    _FILE_WRITE,
    _FIXED_ALIAS_REGISTER_RE,
    _HOST_EXEC,
    _HOST_FILE_READ,
    _KNOWN_EXTENSION_MODULES,
    _LD_RE,
    _LETTER_RULES,
    _LSE_RE,
    _LSF_RE,
    _MEMORY_WRITE,
    _NETWORK_PATH,
    _OUTPUT_CONTROL,
    _PATH_LIKE_RE,
    _READ,
    _REGISTER_ASSIGN_RE,
    _REGISTER_RE,
    _REGISTER_TARGET_RE,
    _SCRIPT_RE,
    _SETTINGS_CHANGE,
    _SINGLE_WORD_RE,
    _STEP_RE,
    _SX_RE,
    _TEMP_REGISTER_RE,
    _UNKNOWN,
    _Z_RE,
    DEFAULT_NETWORK_ROOTS,
    NETWORK_WORD_RE,
    PRINT_ONLY_RE,
    leaf_effect,
    under_allowed_root,
)

__all__ = ["MAX_EXPANSIONS", "MAX_NESTED", "Finding", "Walker"]

MAX_EXPANSIONS = 16  # ".foreach /s" tokens we substitute and re-check
MAX_NESTED = 2000  # bodies and command strings followed per line and reading (then: unknown)
_MAX_EXPANSIONS = MAX_EXPANSIONS


class Finding(BaseModel):
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
        sub = Walker(self.lex, self.depth + 1, self.roots, self.budget, deferred=True)
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
            self.piece(node.text)
            self.note_alias_definition(node.text, node.end)
        elif isinstance(node, AliasLine):
            # "as" takes the rest of the line as its value; what follows is checked too.
            self.alias_command(node.text, node.source)
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
        self.add(node.text, command_class, reason)
        head_args = node.head.strip()[len(node.name) + 1 :].lstrip("+").strip()
        for element in (head_args, *node.elements):
            if element.strip():
                self.path_element(node.head, node.name, element.strip())
        for raw in node.elements:
            element = raw.strip()
            if element and not _PATH_LIKE_RE.match(element):
                self.nested(element)

    def network_words(self, piece: str, text: str) -> None:
        """Every word of ``text`` that names a network location outside the allowed roots."""
        for m in NETWORK_WORD_RE.finditer(text):
            path = m.group("path")
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

    # ----------------------------------------------------------------- single commands

    def piece(self, piece: str) -> None:
        """Classify one command (no top-level ``;`` in it)."""
        if not piece:
            return
        if not PRINT_ONLY_RE.match(piece):
            self.network_words(piece, piece)
        first = piece[0]
        if first in "~|":
            self.selector(piece)
        elif first == "!":
            self.bang(piece)
        elif first == ".":
            self.dot(piece)
        elif first == "$":
            if piece.startswith("${"):
                self.add(piece, _UNKNOWN, "an alias expansion: what it pastes in is not known here")
            elif _SCRIPT_RE.match(piece):
                self.add(piece, _CODE_LOAD, "runs a script file (its commands are not seen here)")
            elif piece.startswith("$$"):
                self.add(piece, _READ, "comment (it ends at the next ';')")
            else:
                self.add(piece, _UNKNOWN, "not a command kd-mcp knows")
        elif first == "*":
            self.add(piece, _READ, "comment (kd ignores the rest of the line; it is checked anyway)")
        elif first == "?":
            if piece.startswith("??") and _CPP_ASSIGN_RE.search(piece[2:]):
                self.add(piece, _MEMORY_WRITE, "a C++ expression with an assignment")
            else:
                self.add(piece, _READ, "evaluates an expression")
        elif first.isascii() and (first.isalpha() or first == "#"):
            self.letter(piece)
        else:
            self.add(piece, _UNKNOWN, "not a command kd-mcp knows")

    def selector(self, piece: str) -> None:
        """``~*e cmd``, ``~3 kb``, ``~2f``, ``|1s``, ``||0 ...``."""
        thread = piece.startswith("~")
        m = (_THREAD_PREFIX_RE if thread else _PROCESS_PREFIX_RE).match(piece)
        rest = piece[m.end() :].strip() if m is not None else piece
        what = "thread or processor" if thread else "process or system"
        if not rest:
            self.add(piece, _READ, f"lists or shows the current {what}")
        elif rest.lower() == "s":
            self.add(piece, _READ, f"switches the current {what}")
        elif thread and rest.lower() in ("f", "u", "n", "m"):
            self.add(piece, _EXECUTION, "freezes, thaws, suspends or resumes a thread")
        elif _THREAD_EXECUTE_RE.match(rest):
            inner = rest[1:].strip()
            if inner:
                self.nested(inner)
            else:
                self.add(piece, _UNKNOWN, "~e without a command")
        else:
            self.add(piece, _READ, f"a {what} prefix (the command after it is checked on its own)")
            if rest[:1].lower() == "e":
                self.nested(rest[1:])  # "~0 eb..." might also be read as "~0 e b..."
            self.nested(rest)

    def dot(self, piece: str) -> None:
        """Dot commands: by name, with a few whose options or command strings matter."""
        m = _DOT_RE.match(piece)
        if m is None:
            self.add(piece, _UNKNOWN, "not a command kd-mcp knows")
            return
        name = m.group("name").lower()
        args = piece[m.end() :].strip()
        base_name = name if name in _DOT_COMMANDS else name.rstrip("+-")
        if base_name in ("sympath", "srcpath", "lsrcpath", "exepath", "extpath"):
            self.walk(read_list(piece, self.lex, None, self.depth))
        elif base_name == "expr" and re.search(r"/s\b", args, re.IGNORECASE):
            self.add(piece, _SETTINGS_CHANGE, "changes the expression evaluator, which changes how later lines read")
        elif base_name == "expr":
            if "c++" in args.lower():
                self.add(piece, _MEMORY_WRITE, "switches to the C++ evaluator, whose expressions can assign")
            else:
                self.add(piece, _READ, "shows or sets the expression evaluator")
        elif base_name == "settings":
            verb = args.split()[0].lower() if args else "list"
            if verb in ("list", "help"):
                self.add(piece, _READ, "lists debugger settings")
            elif verb == "save":
                self.add(piece, _FILE_WRITE, "writes a settings file on the debugger host")
            elif verb == "load":
                self.add(piece, _HOST_FILE_READ, "reads a settings file from the debugger host")
                self.add(piece, _SETTINGS_CHANGE, "loads debugger settings (they can change what gets loaded)")
            elif verb in ("set", "clear"):
                self.add(piece, _SETTINGS_CHANGE, "changes debugger settings (they can change what gets loaded)")
            else:
                self.add(piece, _UNKNOWN, "a .settings verb kd-mcp does not know")
        elif base_name in ("outmask", "ofilter", "prompt_allow") and args and args.lower() not in ("/a", "/d"):
            # The documentation says ".outmask Expression" adds bits; any form but "/a" (all on)
            # and "/d" (the default) is denied all the same, in case a kd version sets them.
            self.add(piece, _OUTPUT_CONTROL, "changes which output kd prints (it can hide what the engine reads)")
        elif base_name in ("outmask", "ofilter", "prompt_allow"):
            self.add(piece, _READ, f".{name} (shows the setting or turns all output on)")
        elif base_name == "readmem":
            self.add(piece, _HOST_FILE_READ, "reads a file from the debugger host")
            self.add(piece, _MEMORY_WRITE, "writes the file's bytes into target memory")
        elif base_name == "dml_start":
            if args:
                self.add(piece, _HOST_FILE_READ, "shows a DML file from the debugger host")
            else:
                self.add(piece, _READ, "shows DML commands")
        elif base_name in ("srcfix", "lsrcfix"):
            self.add(piece, _NETWORK_PATH, "a source server: the host fetches files and runs the PDB's commands")
        elif base_name == "pcmd":
            self.add(piece, _READ, "sets the command run at every prompt (checked on its own)")
            self.strings_and_words(piece, args, command_flags=("-s",), deferred=True)
        elif base_name == "cxr" and re.search(r"/w\b", args, re.IGNORECASE):
            self.add(piece, _MEMORY_WRITE, "writes the context record to target memory")
        elif base_name == "process" and re.search(r"/i\b", args, re.IGNORECASE):
            self.add(piece, _EXECUTION, "switches process invasively (the target runs to get there)")
        elif base_name == "browse":
            self.add(piece, _READ, "runs a command with DML output (checked on its own)")
            self.nested(args)
        elif base_name in _DOT_COMMANDS:
            command_class, reason = _DOT_COMMANDS[base_name]
            self.add(piece, command_class, reason)
        else:
            self.add(piece, _UNKNOWN, f"'.{name}' is not a command kd-mcp knows")

    def bang(self, piece: str) -> None:
        """``!!`` (host program) and extension commands ``!name`` / ``!module.name``."""
        if piece.startswith("!!"):
            self.add(piece, _HOST_EXEC, "runs a program on the debugger host")
            return
        m = _BANG_RE.match(piece)
        if m is None:
            self.add(piece, _UNKNOWN, "not an extension command kd-mcp knows")
            return
        module = (m.group("module") or "").lower()
        name = m.group("name").lower()
        args = piece[m.end() :]
        if module and module not in _KNOWN_EXTENSION_MODULES:
            self.add(piece, _CODE_LOAD, f"loads the extension DLL '{module}' by name")
        elif name == "load":
            self.add(piece, _CODE_LOAD, "loads an extension DLL")
        elif name.startswith("for_each_"):
            self.add(piece, _READ, f"!{name} (runs a command for each item; checked on its own)")
            if "@#" in args:
                self.add(piece, _UNKNOWN, "pastes target-controlled text (@#...) into the command it runs")
            self.strings_and_words(piece, args, command_flags=None)
        elif name == "analyze" and re.search(r"-load\b", args, re.IGNORECASE):
            self.add(piece, _HOST_FILE_READ, "loads a failure-analysis file from the debugger host")
        elif name == "analyze" and re.search(r"-xmf\b", args, re.IGNORECASE):
            self.add(piece, _FILE_WRITE, "writes the analysis to a file on the debugger host")
        elif name == "chkimg" and re.search(r"(?:^|\s)-f\b", args):
            self.add(piece, _MEMORY_WRITE, "fixes (rewrites) image memory in the target")
        elif name in _BANG_WRITE:
            self.add(piece, _MEMORY_WRITE, "writes physical memory, an I/O port or PCI space")
        elif name in _BANG_READ:
            self.add(piece, _READ, f"!{name} (reads target state)")
        else:
            self.add(piece, _UNKNOWN, f"'!{name}' is not an extension command kd-mcp knows")

    def letter(self, piece: str) -> None:
        """Commands whose name is letters: ``k``, ``dd``, ``bp``, ``r``, ``dx``..."""
        m = _BREAKPOINT_RE.match(piece) or _BREAKPOINT_EDIT_RE.match(piece)
        if m is not None:
            self.breakpoint(piece, piece[m.end() :])
            return
        m = _SX_RE.match(piece)
        if m is not None:
            if m.group("op"):
                self.add(piece, _EXECUTION, "changes when exceptions and events stop the target")
            else:
                self.add(piece, _READ, "lists exception and event settings")
            self.strings_and_words(piece, piece[m.end() :], command_flags=("-c", "-c2"), deferred=True)
            return
        m = _DX_RE.match(piece)
        if m is not None:
            self.dx(piece, piece[m.end() :])
            return
        m = _REGISTER_RE.match(piece)
        if m is not None:
            self.register(piece, piece[m.end() :])
            return
        if _ALIAS_SET_RE.match(piece):
            self.alias_command(piece, piece)
            return
        if _ALIAS_OTHER_RE.match(piece):
            self.add(piece, _READ, "lists or deletes aliases")
            return
        m = _Z_RE.match(piece)
        if m is not None:
            self.z_command(piece, piece[m.end() :])
            return
        m = _STEP_RE.match(piece)
        if m is not None:
            self.add(piece, _EXECUTION, "steps or traces the target (a command string after it is checked on its own)")
            self.strings_and_words(piece, piece[m.end() :], command_flags=())
            return
        if J_RE.match(piece):
            self.walk(read_list(piece, self.lex, None, self.depth))
            return
        if _LSE_RE.match(piece):
            self.add(piece, _HOST_EXEC, "starts a source editor on the debugger host")
            return
        if _LSF_RE.match(piece):
            self.add(piece, _HOST_FILE_READ, "loads a source file from the debugger host")
            return
        if _LD_RE.match(piece) and re.search(r"/f\b", piece, re.IGNORECASE):
            self.add(piece, _HOST_FILE_READ, "loads symbols from a named file on the debugger host")
            return
        for pattern, command_class, reason in _LETTER_RULES:
            if pattern.match(piece):
                self.add(piece, command_class, reason)
                return
        self.add(piece, _UNKNOWN, "not a command kd-mcp knows")

    def _command_string_escapes(self) -> Escapes:
        """Command strings (``bp x "j 1 '.echo \\"a\\"'"``) are documented to take ``\\"``; never "none"."""
        return "quote" if self.lex.escapes == "none" else self.lex.escapes

    def breakpoint(self, piece: str, args: str) -> None:
        """``bp[ID] [opts] [Addr [Passes]] ["CommandString"]`` (also bu/bm/ba, bs/bsc)."""
        self.add(piece, _EXECUTION, "sets or changes a breakpoint (its command string is checked on its own)")
        words = tokens(args, self._command_string_escapes())
        if words is None:
            self.add(piece, _UNKNOWN, "a quoted string never closes")
            return
        previous = ""
        for is_string, text in words:
            if is_string:
                if previous.lower() == "/w":
                    self.dx(piece, text)  # "/w" conditions are dx expressions
                else:
                    self.nested(text, deferred=True)  # runs when the breakpoint hits
            elif _BP_SUSPICIOUS_RE.match(text):
                self.add(piece, _UNKNOWN, f"unquoted '{text}' after a breakpoint could be read as a command")
            previous = "" if is_string else text

    def strings_and_words(
        self, piece: str, args: str, command_flags: tuple[str, ...] | None, *, deferred: bool = False
    ) -> None:
        """Check the command strings in ``args``: every quoted string, plus the word after a command flag.

        ``command_flags=None``: the whole unquoted argument text is a command (``!for_each_module k``).
        ``deferred``: the strings run later (an event's or the prompt's command), not now.
        """
        words = tokens(args, self._command_string_escapes())
        if words is None:
            self.add(piece, _UNKNOWN, "a quoted string never closes")
            return
        if command_flags is None:
            strings = [text for is_string, text in words if is_string]
            joined = " ".join(
                text[3:] if text.lower().startswith("-c:") else text
                for is_string, text in words
                if not is_string and not re.match(r"-(?!c:)\w+:", text, re.IGNORECASE)
            )
            for text in strings:
                self.nested(text, deferred=deferred)
            if not strings and joined.strip():
                self.nested(joined, deferred=deferred)
            return
        flags = {f.lower() for f in command_flags}
        expect_command = False
        for is_string, text in words:
            if is_string or expect_command:
                self.nested(text, deferred=deferred)
                expect_command = False
                continue
            lowered = text.lower()
            glued = next((f for f in sorted(flags, key=len, reverse=True) if lowered.startswith(f)), None)
            if lowered in flags:
                expect_command = True
            elif glued is not None and not lowered[len(glued) :].isdigit():
                self.nested(text[len(glued) :], deferred=deferred)  # "-c.shell" (flag and command glued)

    def register(self, piece: str, args: str) -> None:
        """``r`` displays registers; ``r reg=value`` writes them (``$t0``: debugger temporaries)."""
        assignments = list(_REGISTER_ASSIGN_RE.finditer(args))
        if not assignments:
            self.add(piece, _READ, "displays registers")
            return
        for m in assignments:
            target_match = _REGISTER_TARGET_RE.search(args[: m.start()])
            target = target_match.group("target") if target_match else ""
            if _FIXED_ALIAS_REGISTER_RE.fullmatch(target):
                self.alias_value(piece, target.lstrip("@").replace(".", ""), args[m.end() :].strip().strip('"'))
            elif _TEMP_REGISTER_RE.fullmatch(target):
                self.add(piece, _READ, "sets a debugger temporary register ($t0-$t19)")
            else:
                self.add(piece, _MEMORY_WRITE, f"writes the register or pseudo-register '{target or '?'}'")

    def z_command(self, piece: str, args: str) -> None:
        """``Commands ; z( Expression )`` repeats the commands before it; anything after it is checked."""
        self.add(piece, _READ, "repeats the preceding commands while a condition holds")
        i = skip_ws(args, 0)
        if i < len(args) and args[i] == "(":
            end = match_close(args, i, self.lex)
            if end is None:
                self.add(piece, _UNKNOWN, "z with a condition that never closes")
                return
            rest = args[end:].strip()
            if rest:
                self.nested(rest)

    def alias_command(self, piece: str, source: str) -> None:
        """``as``/``aS`` (``source`` is the rest of the line for ``as``, the piece for ``aS``)."""
        m = _ALIAS_PARSE_RE.match(source)
        if m is None:
            self.add(piece, _UNKNOWN, "an alias definition kd-mcp cannot read")
            return
        switches = [s.lower() for s in m.group("switches").split()]
        name = m.group("name")
        value = m.group("value") or ""
        if source.startswith("aS") and value.strip().startswith('"'):
            stripped = value.strip()
            end = string_end(stripped, 0, self.lex.escapes)
            value = stripped[1 : end - 1] if end is not None else stripped[1:]
        elif source.startswith("aS"):
            value = value.split(";")[0]
        unknown_switches = [s for s in switches if s not in ("/x", "/c", "/e", "/f", "/ma", "/mu", "/msa", "/msu")]
        if unknown_switches:
            self.add(piece, _UNKNOWN, f"an alias switch kd-mcp does not know: {unknown_switches[0]}")
        elif "/c" in switches:
            self.add(piece, _UNKNOWN, "the alias will hold command output, which any later use could run")
            self.nested(value)  # "/c": the command runs now, its output becomes the value
        elif "/x" in switches:
            self.alias_values.setdefault(name, []).append("0")
            self.add(piece, _READ, "defines an alias to a number")
        elif switches:
            if "/f" in switches:
                self.add(piece, _HOST_FILE_READ, "reads a file on the debugger host into the alias")
            self.add(
                piece, _UNKNOWN, "the alias takes text from memory, the environment or a file; any use could run it"
            )
        else:
            self.alias_value(piece, name, value.strip())

    def alias_value(self, piece: str, name: str, value: str) -> None:
        """An alias is pasted in wherever its name appears later: allow only single words."""
        self.alias_values.setdefault(name, []).append(value)
        if _SINGLE_WORD_RE.fullmatch(value):
            for f in self.collect(value) if value else []:
                if f.command_class not in (_READ, _UNKNOWN):
                    self.add(piece, f.command_class, f"defines an alias that runs '{value}', which {f.reason}")
            self.add(piece, _READ, "defines an alias to a single word")
            return
        self.add(piece, _UNKNOWN, "defines an alias to more than one word, which can change any later command")
        self.nested(value, deferred=True)  # the value runs where the alias is used, not here

    def dx(self, piece: str, expression: str) -> None:
        """``dx``: reads, unless it assigns or calls into the debugger (``ExecuteCommand``...)."""
        masked: list[str] = []
        literals: list[str] = []
        i, n, start = 0, len(expression), 0
        while i < n:
            if expression[i] == '"':
                end = string_end(expression, i, "any")
                if end is None:
                    self.add(piece, _UNKNOWN, "a dx string literal never closes")
                    return
                masked.append(expression[start:i] + _DX_STRING_PLACEHOLDER.format(len(literals)))
                literals.append(expression[i + 1 : end - 1])
                i = start = end
                continue
            i += 1
        masked.append(expression[start:])
        code = "".join(masked)
        before = len(self.findings)
        if _DX_ASSIGN_RE.search(code):
            self.add(piece, _MEMORY_WRITE, "assigns (dx can write target memory and registers)")
        executed: set[int] = set()
        for call in _DX_EXECUTE_CALL_RE.finditer(code):
            index = int(call.group("index"))
            executed.add(index)
            for text in dict.fromkeys((c_unescape(literals[index]), literals[index])):
                if _CONTROL_CHAR_RE.search(text) or "\n" in text or "\r" in text or not text.isascii():
                    self.add(piece, _UNKNOWN, "ExecuteCommand with control or non-ASCII characters")
                else:
                    self.nested(text)
        if len(_DX_EXECUTE_RE.findall(code)) != len(executed):
            self.add(piece, _UNKNOWN, "ExecuteCommand with something other than one string literal")
        for control in _DX_CONTROL_RE.finditer(code):
            member = (control.group("member") or "").lower()
            if member == "executecommand" or member.startswith("setbreakpoint"):
                continue
            self.add(piece, _UNKNOWN, "uses Debugger.Utility.Control, which can run debugger commands")
        if re.search(r"\[\s*[^\]]*__kdmcp_str\d+__", code):
            self.add(piece, _UNKNOWN, "names a member with a string (Utility[\"Contr\" + \"ol\"] reaches any member)")
        if "\\" in code:
            self.add(piece, _UNKNOWN, "an escape outside a string literal can spell any member's name")
        if _DX_BREAKPOINT_RE.search(code):
            self.add(piece, _EXECUTION, "sets a breakpoint")
        if _DX_FILESYSTEM_RE.search(code):
            self.add(piece, _FILE_WRITE, "uses Debugger.Utility.FileSystem, which can write host files")
            self.add(piece, _HOST_FILE_READ, "uses Debugger.Utility.FileSystem, which can read host files")
        if _DX_SETTINGS_RE.search(code) and (_DX_ASSIGN_RE.search(code) or "(" in code):
            self.add(piece, _SETTINGS_CHANGE, "changes Debugger.Settings (the same power as .settings set)")
        if _DX_SCRIPTS_RE.search(code):
            self.add(piece, _UNKNOWN, "calls into a loaded script, which can do anything")
        if _DX_SIDE_EFFECT_RE.search(code):
            self.add(piece, _UNKNOWN, "calls a data-model method that may act on the target or host")
        if _DX_TARGET_CALL_RE.search(code):
            self.add(piece, _UNKNOWN, "calls a function in the target")
        for index, literal in enumerate(literals):
            if index not in executed and _DX_SUSPICIOUS_LITERAL_RE.search(literal):
                self.add(piece, _UNKNOWN, "a string naming a debugger-control member (could be used to reach it)")
        if len(self.findings) == before or all(f.command_class is _READ for f in self.findings[before:]):
            self.add(piece, _READ, "evaluates a data-model expression")
        elif all(f.piece != piece.strip() for f in self.findings[before:]):
            self.add(piece, _READ, "dx (the commands it runs are checked on their own)")


