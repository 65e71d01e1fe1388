"""How kd reads quotes, braces and escapes in a command line: the lexical layer of the reader.

Where kd's documented reading leaves a choice open (backslash escapes inside quotes, a ``}``
inside quotes in a block, a ``"`` in the middle of an argument), the policy reads a line
under *every* choice and counts all findings (fail closed), while the engine and the
simulator read it the documented way (:data:`KD_LEXING`).

The quote rule kd documents for ``.echo`` ("If you enclose String in quotation marks, it can
include semicolons, but not additional quotation marks. If you do not enclose String in
quotation marks, it can include quotation marks in any location except the first
character, but it cannot include semicolons" -- .echo (Echo Comment)) is the documented
reading for every command that takes quoted arguments: a ``"`` protects a ``;`` only when
it opens an argument word; ``.echo x"; .load y; "`` is three commands.

Pure: stdlib only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

__all__ = [
    "KD_LEXING",
    "LEXINGS",
    "PROCESS_PREFIX_RE",
    "THREAD_EXECUTE_RE",
    "THREAD_PREFIX_RE",
    "Escapes",
    "Lexing",
    "QuoteMode",
    "Selected",
    "Selector",
    "c_unescape",
    "lexings_for",
    "match_close",
    "read_selectors",
    "skip_ws",
    "split_outside",
    "string_end",
    "strip_selectors",
    "tokens",
    "unescape",
]

_FLAGS = re.IGNORECASE | re.ASCII

# Selector prefixes, as the debugger documentation lists them. "Thread Syntax": "~." (the
# current thread), "~#" (the one that caused the current exception or debug event), "~*" (all
# threads), "~Number" (by index), "~~[TID]" (by thread ID: "you cannot add a space between the
# second tilde and the opening bracket"), "~[Expression]" (by the ID an expression resolves to);
# in kernel mode "the tilde (~) refers to a processor" ("~s (Change Current Processor)": "~1s").
# Blanks may stand between "~" and the selector ("~ * e ..."): read it that way too (fail closed).
THREAD_PREFIX_RE = re.compile(r"~(?:[ \t]*(?P<id>\*|\.|#|\d+|~?\[[^\]]*\]))?", re.ASCII)
# ... and "Process Syntax": "|.", "|#", "|*", "|Number", "|~[PID]", "|[Expression]"; "System
# Syntax": "||.", "||#", "||*", "||ddd" (and "||[Expression]" for a processor, "Multiprocessor Syntax").
PROCESS_PREFIX_RE = re.compile(r"(?P<bars>\|\|?)(?P<id>\*|\.|#|\d+|~?\[[^\]]*\])?", re.ASCII)
# "~Thread e CommandString" ("~e (Thread-Specific Command)"): "CommandString includes the rest of
# the input line. All of the text that follows the letter "e" is interpreted as part of this string."
THREAD_EXECUTE_RE = re.compile(r"e(?![A-Za-z_])", _FLAGS)


Escapes = Literal["any", "quote", "none"]
_ESCAPE_MODES: tuple[Escapes, ...] = ("any", "quote", "none")
# "anywhere": any '"' in an argument of a quote-taking command opens a string; "documented":
# only a '"' that opens an argument word does (and for .echo, only as the first character).
QuoteMode = Literal["anywhere", "documented"]
_QUOTE_MODES: tuple[QuoteMode, ...] = ("anywhere", "documented")



@dataclass(frozen=True)
class Lexing:
    """One way kd might read quotes and braces; every line is classified under each.

    ``escapes``: inside ``"..."`` a backslash escapes any character, only ``\\"``, or
    nothing. ``braces_see_quotes``: whether a ``}`` inside quotes leaves a block open.
    ``quotes``: which '"' can protect a ``;`` (see :data:`QuoteMode`).
    """

    escapes: Escapes
    braces_see_quotes: bool
    quotes: QuoteMode = "anywhere"


# Every undocumented escape rule is read with quotes protecting anywhere; the documented
# quote rule goes with the documented escape ('\"' in command strings, as bp documents).
LEXINGS: tuple[Lexing, ...] = tuple(Lexing(e, b, "anywhere") for e in _ESCAPE_MODES for b in (True, False)) + tuple(
    Lexing("quote", b, "documented") for b in (True, False)
)
# The reading kd documents: '\"' inside a quoted command string, braces skip quoted text.
KD_LEXING = Lexing("quote", braces_see_quotes=True, quotes="documented")


def lexings_for(line: str) -> tuple[Lexing, ...]:
    """The readings that can differ on ``line``: without a '"' or a backslash most coincide."""
    has_quote, has_backslash = '"' in line, "\\" in line
    if not has_quote and not has_backslash:
        return (KD_LEXING,)
    if not has_quote:  # braces and quote modes only matter around '"'
        return tuple(Lexing(e, True, "anywhere") for e in _ESCAPE_MODES)
    if not has_backslash:  # escapes only matter around a backslash
        return tuple(Lexing("quote", b, q) for b in (True, False) for q in _QUOTE_MODES)
    return LEXINGS


def string_end(text: str, start: int, escapes: Escapes, quote: str = '"') -> int | None:
    """Index just past the string opened at ``text[start]``; None if it never closes."""
    i, n = start + 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and (escapes == "any" or (escapes == "quote" and text[i + 1] == quote)):
            i += 2
            continue
        if ch == quote:
            return i + 1
        i += 1
    return None


def unescape(body: str, escapes: Escapes) -> str:
    """A quoted string's text as the command that receives it sees it."""
    if escapes == "none":
        return body
    if escapes == "quote":
        return body.replace('\\"', '"')
    return re.sub(r"\\(.)", r"\1", body, flags=re.S)


def match_close(text: str, start: int, lex: Lexing) -> int | None:
    """Index just past the bracket closing ``text[start]`` (``{`` or ``(``), nesting counted."""
    open_ch = text[start]
    close_ch = "}" if open_ch == "{" else ")"
    depth, i, n = 0, start, len(text)
    while i < n:
        ch = text[i]
        if ch == '"' and lex.braces_see_quotes:
            end = string_end(text, i, lex.escapes)
            if end is None:
                return None
            i = end
            continue
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def split_outside(text: str, lex: Lexing, quotes: str = '"', *, braces: bool = False) -> list[str] | None:
    """``text`` split at ``;`` outside ``quotes`` (and ``{}`` if asked); None if a quote never closes."""
    parts: list[str] = []
    depth, start, i, n = 0, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch in quotes:
            end = string_end(text, i, lex.escapes, quote=ch)
            if end is None:
                return None
            i = end
            continue
        if braces and ch == "{":
            depth += 1
        elif braces and ch == "}":
            depth = max(0, depth - 1)
        elif ch == ";" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def tokens(text: str, escapes: Escapes) -> list[tuple[bool, str]] | None:
    """Words and unescaped ``"strings"`` of an argument list (flag: is a string); None if a quote never closes."""
    out: list[tuple[bool, str]] = []
    i, n = 0, len(text)
    word_start: int | None = None
    while i < n:
        ch = text[i]
        if ch == '"':
            if word_start is not None:
                out.append((False, text[word_start:i]))
                word_start = None
            end = string_end(text, i, escapes)
            if end is None:
                return None
            out.append((True, unescape(text[i + 1 : end - 1], escapes)))
            i = end
            continue
        if ch.isspace():
            if word_start is not None:
                out.append((False, text[word_start:i]))
                word_start = None
        elif word_start is None:
            word_start = i
        i += 1
    if word_start is not None:
        out.append((False, text[word_start:]))
    return out


def skip_ws(text: str, i: int) -> int:
    """First index at or after ``i`` that is not whitespace."""
    while i < len(text) and text[i].isspace():
        i += 1
    return i


# Selector and Selected are named tuples, not dataclasses: the parser imports this module when
# it is first imported, and a frozen dataclass costs ten times a named tuple to define.
class Selector(NamedTuple):
    """One selector prefix as kd reads it: ``~3`` is ``("thread", "3")``, ``||0`` is ``("system", "0")``.

    ``kind`` is the sigil's meaning (``~`` a thread, or a processor in kernel mode; ``|`` a
    process; ``||`` a system), ``id`` what follows it (``*``, ``.``, ``#``, a number,
    ``~[1a4]``, ``[@$t0]``; empty for a bare sigil), ``text`` the prefix as written.
    """

    kind: Literal["thread", "process", "system"]
    id: str
    text: str


class Selected(NamedTuple):
    """What a line that opens with selectors runs: the prefixes, whether an ``e`` took the rest,
    and the command they apply to (left-stripped, otherwise as written).

    ``|1 ~2 kb`` is ``(|1, ~2)``, not executing, ``kb``; ``~*e r; k`` is ``(~*,)``, executing,
    ``r; k`` -- the ``e``'s command string may itself open with selectors (``~*e ~2 k``), and
    is a whole command string, so reading stops at the ``e``. No selector: ``selectors`` is
    empty and ``command`` is the text unchanged.
    """

    selectors: tuple[Selector, ...]
    executes: bool
    command: str


def read_selectors(text: str) -> Selected:
    """The selector prefixes of ``text`` up to the command they apply to (or the first ``e``)."""
    selectors: list[Selector] = []
    while True:
        m = THREAD_PREFIX_RE.match(text)
        if m is not None:
            kind: Literal["thread", "process", "system"] = "thread"
        else:
            m = PROCESS_PREFIX_RE.match(text)
            if m is None:
                return Selected(tuple(selectors), False, text)
            kind = "system" if m.group("bars") == "||" else "process"
        selectors.append(Selector(kind, m.group("id") or "", m.group()))
        rest = text[m.end() :].lstrip()
        if THREAD_EXECUTE_RE.match(rest):
            return Selected(tuple(selectors), True, rest[1:].lstrip())
        text = rest


def strip_selectors(text: str) -> str:
    """``~*e kb`` -> ``kb``, ``|1 ~2 k`` -> ``k``: the command a selector prefix applies to
    (through any ``e``: ``~*e ~2 k`` -> ``k``)."""
    while text[:1] in ("~", "|"):  # each sigil opens a prefix (a bare "~" or "|" is one)
        text = read_selectors(text).command
    return text


# C escapes in a dx string literal: "\x21", "\u0021", "\n", "\\"...
_C_ESCAPE_RE = re.compile(r"\\(?:x(?P<hex>[0-9A-Fa-f]{1,2})|u(?P<uni>[0-9A-Fa-f]{4})|(?P<char>.))", re.S)
_C_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0"}


def c_unescape(body: str) -> str:
    """A dx (C-like) string literal's text."""

    def one(m: re.Match[str]) -> str:
        code = m.group("hex") or m.group("uni")
        if code is not None:
            return chr(int(code, 16))
        return _C_SIMPLE_ESCAPES.get(m.group("char"), m.group("char"))

    return _C_ESCAPE_RE.sub(one, body)


# --------------------------------------------------------------------------- the parser

