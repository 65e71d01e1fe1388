"""The structure of a kd command line: commands, blocks, conditionals, loops, ``j``, path lists.

One reading of one line under one :class:`~kdmcp.command.lexing.Lexing`, as a tree. The
policy walks the tree under every reading and classifies each command; the engine asks
the policy's findings for the run effect; the simulator walks the tree under kd's
documented reading and runs it. Nothing here decides what a command *does*.

The grammar rules it relies on, as the debugger documentation states them:

- ``;`` separates commands ("Command Tokens: ; (Command Separator)"), except inside the
  quoted arguments of the commands that take them (``.echo``, ``.printf``, ``bp "..."``,
  ``sx* -c "..."``, ``aS "..."``, ``p "..."``) -- see :mod:`~kdmcp.command.lexing`.
- ``{ }`` is a block ("The braces ... create a block of statements"); ``.block``,
  ``.if``/``.elsif``/``.else``, ``.for``, ``.foreach``, ``.while``, ``.do``, ``.catch``
  take blocks.
- ``j Expression ['Command1' | Command1] ; ['Command2' | Command2]``: "the j command must be
  the last command on the line" -- it takes the rest of the line.
- ``.sympath``-style commands take a ``;``-separated path list: the rest of the line.
- ``~Thread e CommandString``: "CommandString includes the rest of the input line".
- ``as Name EquivalentLine``: the value is the rest of the line.

Pure: stdlib only.
"""

from __future__ import annotations

import re
from typing import Literal

from kdmcp.command.lexing import (
    THREAD_EXECUTE_RE,
    THREAD_PREFIX_RE,
    Lexing,
    match_close,
    skip_ws,
    split_outside,
    string_end,
    strip_selectors,
    unescape,
)
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
from kdmcp.command.tables import _ALIAS_SET_RE  # "as" takes the rest of the line (docs of as/aS)

__all__ = ["J_RE", "MAX_DEPTH", "command_texts", "read_list"]

MAX_DEPTH = 12  # nesting of blocks before the reader gives up on a body (-> Malformed)
_HEAD_WINDOW = 256  # characters looked at to recognise a command's name behind selectors
_FLAGS = re.IGNORECASE | re.ASCII

# Control-flow tokens (".block {", ".if (c) {", ".foreach (v {c}) {"): bodies are blocks.
_CONTROL_RE = re.compile(r"\.(?P<kw>block|catch|if|elsif|else|foreach|for|while|do)(?!\w)", _FLAGS)
_ELSIF_RE = re.compile(r"\.elsif(?!\w)", _FLAGS)
_ELSE_RE = re.compile(r"\.else(?!\w)", _FLAGS)
# ".foreach" options: "/pS 2", "/ps 4" (skip counts), "/s" (tokens of a string), "/f" (of a file).
_FOREACH_OPTION_RE = re.compile(r"/(?P<skip>pS|ps)\s+(?P<count>[^\s(]+)|/(?P<flag>[sf])(?!\w)", re.ASCII)
# "j Expression 'Command1' ; 'Command2'": kd gives j the rest of the line.
J_RE = re.compile(r"j(?![A-Za-z_])", _FLAGS)
# Commands whose argument is a ';'-separated path list, so they take the rest of the line:
# ".sympath[+] [Path [; ...]]".
_PATH_COMMAND_RE = re.compile(r"\.(?P<name>sympath|srcpath|lsrcpath|exepath|extpath)\+?(?!\w)", _FLAGS)
# Commands documented to take "quoted" arguments in which ';' does not end the command.
_QUOTE_AWARE_RE = re.compile(
    r"(?:\.echo|\.printf|\.pcmd|\.shell|b[pumas]\d*|bsc|sx[-ednir]?|as|!for_each_\w+"
    r"|p(?:a|c|ct|h|t|r)?|t(?:a|b|c|ct|h|t|r)?)(?!\w)",
    _FLAGS,
)
_ECHO_RE = re.compile(r"\.echo(?!\w)", _FLAGS)
_UNCLOSED = "a quoted string never closes"
_PRINTF_RE = re.compile(r"\.printf(?!\w)", _FLAGS)




def read_list(text: str, lex: Lexing, base: int | None = 0, depth: int = 0) -> tuple[Node, ...]:
    """The nodes of ``text`` read as a ``;``-separated command list (``base``: its offset in the line)."""
    return _Reader(lex, depth).read(text, base)


class _Reader:
    def __init__(self, lex: Lexing, depth: int) -> None:
        self.lex = lex
        self.depth = depth

    def read(self, text: str, base: int | None) -> tuple[Node, ...]:
        nodes: list[Node] = []
        i, n = 0, len(text)
        while True:
            while i < n and (text[i].isspace() or text[i] == ";"):
                i += 1
            if i >= n:
                return tuple(nodes)
            i = self.command(text, i, base, nodes)

    def sub(self, text: str, base: int | None) -> tuple[Node, ...]:
        """A body one level down; too deep is one Malformed node."""
        if self.depth + 1 > MAX_DEPTH:
            return (Malformed(text, "nested too deeply to follow"),)
        return _Reader(self.lex, self.depth + 1).read(text, base)

    # ----------------------------------------------------------------- one command

    def command(self, text: str, i: int, base: int | None, out: list[Node]) -> int:
        """Read the command at ``text[i]`` into ``out``; return where the next one may start."""
        n = len(text)
        control = _CONTROL_RE.match(text, i)
        if control is not None:
            kw = control.group("kw").lower()
            node, end = self.control(kw, text, i, control.end(), base)
            if node is None or end is None:
                why = "no .if before it" if kw in ("elsif", "else") else "its parts could not be read"
                out.append(Malformed(text[i:], f"malformed .{kw} ({why})"))
                return n
            out.append(node)
            return end
        if text[i] == "{":  # a bare block: kd treats every { } as one
            block, end = self.block_at(text, i, base, "")
            if block is None or end is None:
                out.append(Malformed(text[i:], "a '{' that never closes"))
                return n
            out.append(block)
            return end
        if J_RE.match(text, i):
            out.append(self.j_command(text[i:]))
            return n
        path = _PATH_COMMAND_RE.match(text, i)
        if path is not None:
            rest = text[i:]
            parts = rest.split(";")
            out.append(PathCommand(path.group("name").lower(), parts[0], tuple(parts[1:]), rest))
            return n
        each = self.thread_each(text, i)
        if each is not None:
            out.append(each)
            return n
        end, problem = self.command_end(text, i)
        piece = text[i:end].strip()
        if problem is not None:
            out.append(Malformed(text[i:end], problem))
        start = None if base is None else base + i
        stop = None if base is None else base + end
        if _ALIAS_SET_RE.match(piece) and not piece.startswith("aS"):
            out.append(AliasLine(piece, text[i:], start, stop))
        elif piece:
            out.append(Command(piece, start, stop))
        return end

    def thread_each(self, text: str, i: int) -> ThreadEach | None:
        """``~*e r; k`` (only the ``~`` thread form: ``|`` has no ``e``)."""
        m = THREAD_PREFIX_RE.match(text, i)
        if m is None:
            return None
        j = skip_ws(text, m.end())
        if THREAD_EXECUTE_RE.match(text, j) is None:
            return None
        return ThreadEach(text[i : m.end()], text[j + 1 :], text[i:])

    def command_end(self, text: str, i: int) -> tuple[int, str | None]:
        """Where the command at ``text[i]`` ends: the next ``;`` outside the quotes that protect one."""
        if text.find('"', i) < 0:  # no string can open: the next ';' ends it
            stop = text.find(";", i)
            return (len(text) if stop < 0 else stop), None
        head = strip_selectors(text[i : i + _HEAD_WINDOW])
        quote_aware = _QUOTE_AWARE_RE.match(head) is not None
        echo_arg: int | None = None
        # ".printf [/D] [Option] "FormatString" [, Argument , ...]": only the format string is quoted.
        printf = quote_aware and self.lex.quotes == "documented" and _PRINTF_RE.match(head) is not None
        strings = 0
        if quote_aware and self.lex.quotes == "documented":
            echo = _ECHO_RE.search(text, i, min(len(text), i + _HEAD_WINDOW))
            if echo is not None and _ECHO_RE.match(head):
                echo_arg = skip_ws(text, echo.end())
        j, n = i, len(text)
        while j < n:
            ch = text[j]
            if ch == ";":
                return j, None
            if ch == '"' and quote_aware and not (printf and strings) and self.opens_string(text, i, j, echo_arg):
                strings += 1
                end = string_end(text, j, self.lex.escapes)
                if end is None:
                    stop = text.find(";", i)
                    return (n if stop < 0 else stop), _UNCLOSED
                j = end
                continue
            j += 1
        return n, None

    def opens_string(self, text: str, start: int, j: int, echo_arg: int | None) -> bool:
        """Whether the '"' at ``text[j]`` opens a string under this reading."""
        if self.lex.quotes == "anywhere":
            return True
        if echo_arg is not None:  # .echo: "in any location except the first character"
            return j == echo_arg
        return j == start or text[j - 1].isspace() or text[j - 1] == ","

    # ----------------------------------------------------------------- control flow

    def block_at(self, text: str, i: int, base: int | None, keyword: str) -> tuple[Block | None, int | None]:
        """The ``{ }`` body at ``text[i]`` and the index past it (None, None if there is none)."""
        if i >= len(text) or text[i] != "{":
            return None, None
        end = match_close(text, i, self.lex)
        if end is None:
            return None, None
        inner_base = None if base is None else base + i + 1
        body = self.sub(text[i + 1 : end - 1], inner_base)
        body_end = None if base is None else base + end - 1
        return Block(keyword, body, text[i:end], inner_base, body_end), end

    def paren_at(self, text: str, i: int) -> tuple[str | None, int | None]:
        """The condition inside the ``( )`` at ``text[i]`` and the index past it."""
        if i >= len(text) or text[i] != "(":
            return None, None
        end = match_close(text, i, self.lex)
        if end is None:
            return None, None
        return text[i + 1 : end - 1], end

    def paren_then_block(self, text: str, pos: int, base: int | None) -> tuple[str, Block, int] | None:
        """``(condition) { body }`` at ``text[pos]`` (``.while``, ``.if``, ``.elsif``)."""
        condition, after = self.paren_at(text, pos)
        if condition is None or after is None:
            return None
        block, end = self.block_at(text, skip_ws(text, after), base, "")
        if block is None or end is None:
            return None
        return condition, block, end

    def control(self, kw: str, text: str, start: int, pos: int, base: int | None) -> tuple[Node | None, int | None]:
        pos = skip_ws(text, pos)
        if kw in ("block", "catch"):
            block, end = self.block_at(text, pos, base, kw)
            if block is None or end is None:
                return None, None
            return Block(kw, block.body, text[start:end], block.body_start, block.body_end), end
        if kw == "while":
            parts = self.paren_then_block(text, pos, base)
            if parts is None:
                return None, None
            return WhileLoop(parts[0], parts[1], text[start : parts[2]]), parts[2]
        if kw == "do":
            block, after = self.block_at(text, pos, base, "")
            if block is None or after is None:
                return None, None
            condition, end = self.paren_at(text, skip_ws(text, after))
            if condition is None or end is None:
                return None, None
            return DoLoop(block, condition, text[start:end]), end
        if kw == "if":
            return self.if_chain(text, start, pos, base)
        if kw == "for":
            return self.for_loop(text, start, pos, base)
        if kw == "foreach":
            return self.foreach(text, start, pos, base)
        return None, None  # a lone .elsif / .else

    def if_chain(self, text: str, start: int, pos: int, base: int | None) -> tuple[Node | None, int | None]:
        first = self.paren_then_block(text, pos, base)
        if first is None:
            return None, None
        branches = [(first[0], first[1])]
        end = first[2]
        otherwise: Block | None = None
        while True:
            nxt = skip_ws(text, end)
            elsif = _ELSIF_RE.match(text, nxt)
            if elsif is not None:
                more = self.paren_then_block(text, skip_ws(text, elsif.end()), base)
                if more is None:
                    return None, None
                branches.append((more[0], more[1]))
                end = more[2]
                continue
            other = _ELSE_RE.match(text, nxt)
            if other is not None:
                otherwise, after = self.block_at(text, skip_ws(text, other.end()), base, "")
                if otherwise is None or after is None:
                    return None, None
                end = after
            break
        return IfChain(tuple(branches), otherwise, text[start:end]), end

    def for_loop(self, text: str, start: int, pos: int, base: int | None) -> tuple[Node | None, int | None]:
        if pos >= len(text) or text[pos] != "(":
            return None, None
        after = match_close(text, pos, self.lex)
        if after is None:
            return None, None
        parts = split_outside(text[pos + 1 : after - 1], self.lex, braces=True)
        if parts is None or len(parts) != 3:
            return None, None
        init, condition, step = (p.strip() for p in parts)
        init_nodes = self.sub(init[1:-1] if init.startswith("{") and init.endswith("}") else init, None)
        step_nodes = self.sub(step[1:-1] if step.startswith("{") and step.endswith("}") else step, None)
        block, end = self.block_at(text, skip_ws(text, after), base, "")
        if block is None or end is None:
            return None, None
        return ForLoop(init_nodes, condition, step_nodes, block, text[start:end]), end

    def foreach(self, text: str, start: int, pos: int, base: int | None) -> tuple[Node | None, int | None]:
        source: Literal["commands", "string", "file"] = "commands"
        initial_skip = skip = ""
        while True:
            option = _FOREACH_OPTION_RE.match(text, pos)
            if option is None:
                break
            flag = option.group("flag") or ""
            if option.group("skip") == "pS":
                initial_skip = option.group("count")
            elif option.group("skip") == "ps":
                skip = option.group("count")
            elif flag == "f":
                source = "file"
            elif flag == "s" and source != "file":
                source = "string"
            pos = skip_ws(text, option.end())
        if pos >= len(text) or text[pos] != "(":
            return None, None
        after = match_close(text, pos, self.lex)
        if after is None:
            return None, None
        inner = text[pos + 1 : after - 1].strip()
        var_match = re.match(r"[^\s{}\"()]+", inner)
        if var_match is None:
            return None, None
        src = inner[var_match.end() :].strip()
        commands: tuple[Node, ...] = ()
        string = ""
        if source == "commands":
            if not src.startswith("{") or match_close(src, 0, self.lex) != len(src):
                return None, None
            commands = self.sub(src[1:-1], None)
        else:
            if not src.startswith('"') or string_end(src, 0, self.lex.escapes) != len(src):
                return None, None
            string = unescape(src[1:-1], self.lex.escapes)
        body_start = skip_ws(text, after)
        block, end = self.block_at(text, body_start, base, "")
        if block is None or end is None:
            return None, None
        return ForEach(source, var_match.group(), commands, string, initial_skip, skip, block,
                       text[body_start + 1 : end - 1], text[start:end]), end

    def j_command(self, text: str) -> JCommand:
        i = skip_ws(text, 1)
        closed = True
        if i < len(text) and text[i] == "(":
            end = match_close(text, i, self.lex)
            if end is None:
                return JCommand(text[i:], False, None, text[i:], text)
            condition = text[i + 1 : end - 1]
            i = end
        else:
            # Unparenthesized, the expression runs to the first quoted command when one comes
            # before any ';' ("j @$t0 == 0 'r' ; 'k'"), else it is one word ("j 1 r ; k").
            cond_start = i
            quote, semi = text.find("'", i), text.find(";", i)
            if quote >= 0 and (semi < 0 or quote < semi):
                i = quote
            else:
                while i < len(text) and not text[i].isspace() and text[i] not in "';":
                    i += 1
            condition = text[cond_start:i].strip()
        rest = text[i:]
        segments = split_outside(rest, self.lex, quotes="'\"")
        return JCommand(condition, closed, None if segments is None else tuple(segments), rest, text)


def command_texts(line: str, lex: Lexing) -> list[str]:
    """The top-level commands of ``line`` as text, in order: what kd runs one after the other.

    A block, conditional, loop, ``j``, ``~e`` or path list is one command (its whole text).
    """
    texts: list[str] = []
    for node in read_list(line, lex):
        if isinstance(node, Malformed) and node.reason == _UNCLOSED:
            continue  # the command itself follows as a Command node
        text = node.text.strip()
        if text:
            texts.append(text)
    return texts

