"""The grammar of one allowlist entry: what a known command's options and arguments may be.

An :class:`Entry` names a command (a letter command's name pattern, a ``.meta`` command or an
``!extension``), the kd documentation page it relies on, the options kd documents for it that
are known to be harmless, and the *shape* every other argument word must have: an expression
(address, range, count, symbol pattern), an object-manager name, a local path, free text.
:func:`refusal` reads a command's argument text against an entry and says what does not fit;
the table itself is :mod:`~kdmcp.command.known`, the lookup :mod:`~kdmcp.command.allowlist`.

Why shapes and not just names: a known command with an unknown option or argument is the
class the attacks keep finding (``!chkimg -mmw LogFile``, ``!analyze /xmf``, a path in NT
namespace spelling). Everything not listed is refused; an entry lists what it allows.

Pure: stdlib only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from kdmcp.command.classes import RunEffect
from kdmcp.command.lexing import tokens

__all__ = ["DOCS", "NT_PATH_RE", "Entry", "Shape", "path_refusal", "refusal"]

DOCS = "https://learn.microsoft.com/windows-hardware/drivers/debuggercmds/"


class Shape(str, Enum):
    """What a positional argument word (or an option's value) may be."""

    EXPR = "expression"  # an address, range, count, register, symbol or pattern: no path, no string
    OBJECT = "object name"  # an expression, or an object-manager name (\Driver\x): a target name
    STRING = "expression or string"  # an expression, or a "quoted string" (search patterns, command strings)
    PATH = "local path"  # a drive path on the debugger host (c:\x), or under a network root
    TEXT = "text"  # anything (.echo, ?, $$): kd does not act on it
    NONE = "nothing"  # the command takes no argument


# A word in an expression: MASM/C++ operators, registers, symbols (mod!sym, wildcards), numbers
# (0x, 0n, `), ranges (L?100), brackets. No backslash (escapes, paths), no quote, no brace.
_EXPR_WORD_RE = re.compile(r"[\w@$!.:`'+\-*/%&|^~<>=?,()\[\]#]+", re.ASCII)
# An object-manager name as extensions take it: \Driver\mydrv, \Device\HarddiskVolume1, \REGISTRY\...
_OBJECT_WORD_RE = re.compile(r"\\[\w\\.$@{}\-]*", re.ASCII)
# A word that is an option: '-' or '/' then a letter ("-v", "/f"); "-1" and "/2" are numbers.
_OPTION_WORD_RE = re.compile(r"[-/][A-Za-z?]")
# A local path: a drive letter, then a backslash or slash; no NT namespace, no device, no stream.
_DRIVE_PATH_RE = re.compile(r"[A-Za-z]:[\\/][^\s;*\"'<>|?]*", re.ASCII)
# Prefixes that reach outside the drive namespace: NT object paths (\??\, \Device\, GLOBALROOT),
# the Win32 device/long-path prefixes (\\?\, \\.\), alternate data streams and device names.
NT_PATH_RE = re.compile(r"\\\?\?\\|\\\\[?.]\\|//[?.]/|[\\/]device[\\/]|globalroot|[\\/]\?\?[\\/]|::\$|:\$data",
                         re.IGNORECASE)


@dataclass(frozen=True)
class Entry:
    """One known command: its name, its documentation page, its harmless options, its arguments' shape.

    ``names``: for letter commands, regular expressions over the whole command word (kd glues
    suffixes: ``kbn``, ``lmvm``, ``dps``); for meta commands and extensions, the exact names
    (``.reload``, ``!analyze``). ``options``: regular expressions, each matched against a whole
    option word spelled with ``-`` or ``/`` as given (extensions accept both spellings: EngExtCpp
    parses ``/`` like ``-``); a trailing ``=`` means the option takes the next word as its value
    (a :data:`value` shape). ``args``: the shape of every other word. ``doc``: the page under
    :data:`DOCS` this entry relies on.
    """

    names: tuple[str, ...]
    doc: str
    options: tuple[str, ...] = ()
    args: Shape = Shape.EXPR
    value: Shape = Shape.EXPR
    keywords: tuple[str, ...] = ()  # words allowed besides the shape (!sym noisy, .cache flushall)
    both_spellings: bool = False  # extensions: "-x" and "/x" are the same option
    effect: RunEffect = RunEffect.IMMEDIATE  # what the command does to the target (engine and simulator)
    steps: bool = False  # a step or trace: kd prints the registers and the new location

    @property
    def url(self) -> str:
        return DOCS + self.doc

    def option_forms(self) -> tuple[str, ...]:
        """Every option as listed in the docs table: both spellings for extensions."""
        forms: list[str] = []
        for option in self.options:
            forms.append(option)
            if self.both_spellings and option[:1] in "-/":
                forms.append({"-": "/", "/": "-"}[option[0]] + option[1:])
        return tuple(forms)


@lru_cache(maxsize=1024)
def _compiled(entry: Entry) -> tuple[tuple[re.Pattern[str], bool], ...]:
    """The entry's options as patterns, each with whether it takes the next word as its value."""
    out = []
    for option in entry.option_forms():
        takes_value = option.endswith("=")
        out.append((re.compile(option.rstrip("=")), takes_value))
    return tuple(out)


def refusal(entry: Entry, args: str, roots: tuple[str, ...]) -> str | None:
    """Why ``args`` (the text after the command's name) does not fit ``entry``; None when it fits."""
    if entry.args is Shape.TEXT:
        return None
    words = tokens(args, "quote")
    if words is None:
        return "a quoted string never closes"
    options = _compiled(entry)
    expect_value = False
    for is_string, word in words:
        if expect_value:
            expect_value = False
            problem = _word_refusal(entry.value, is_string, word, roots)
            if problem is not None:
                return f"option value '{word}': {problem}"
            continue
        if not is_string and _OPTION_WORD_RE.match(word):
            match = next((takes for pattern, takes in options if pattern.fullmatch(word)), None)
            if match is None:
                return f"the option '{word}' is not one kd-mcp knows to be harmless here"
            expect_value = match
            continue
        if not is_string and word in entry.keywords:
            continue
        problem = _word_refusal(entry.args, is_string, word, roots)
        if problem is not None:
            return f"'{word}': {problem}"
    return None


def _word_refusal(shape: Shape, is_string: bool, word: str, roots: tuple[str, ...]) -> str | None:
    if shape is Shape.TEXT:
        return None
    if shape is Shape.NONE:
        return "this command takes no such argument"
    if is_string:
        return None if shape is Shape.STRING else "a quoted string is not an argument this command takes"
    if shape is Shape.PATH:
        return path_refusal(word, roots)
    if _EXPR_WORD_RE.fullmatch(word):
        return None
    if shape is Shape.OBJECT and _OBJECT_WORD_RE.fullmatch(word):
        return None
    if shape is Shape.STRING and '"' not in word and "\\" not in word:
        return None
    return f"not {shape.value}"


def path_refusal(word: str, roots: tuple[str, ...]) -> str | None:
    """Why ``word`` is not a local drive path or a path under a network root (None: it is)."""
    from kdmcp.command.tables import under_allowed_root  # here: tables builds its run effects from the table

    if NT_PATH_RE.search(word):
        return "an NT-namespace or device path (\\??\\, \\Device\\, GLOBALROOT, \\\\?\\) can reach the network"
    if _DRIVE_PATH_RE.fullmatch(word):
        return None
    if under_allowed_root(word, roots):
        return None
    return "not a local drive path (c:\\...) or under a configured network root"
