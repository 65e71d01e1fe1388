"""The nodes of the reader's tree: what one command line is made of, as kd reads it.

:mod:`~kdmcp.command.syntax` builds them; the policy's walker classifies them and the
simulator's interpreter runs them. Frozen dataclasses: a tree, once read, is only looked at.

Pure: stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "AliasLine",
    "Block",
    "Command",
    "DoLoop",
    "ForEach",
    "ForLoop",
    "IfChain",
    "JCommand",
    "Malformed",
    "Node",
    "PathCommand",
    "ThreadEach",
    "WhileLoop",
]


@dataclass(frozen=True)
class Command:
    """One command: the text kd hands to one command handler (``start``/``end`` in the line, if known)."""

    text: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class AliasLine:
    """``as Name value``: ``value`` runs to the end of the line; the reader goes on after the next ``;`` too."""

    text: str  # the command up to the next ';'
    source: str  # the rest of the line from "as"
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Block:
    """``{ ... }`` (``keyword`` "block", "catch" or "" for a bare block)."""

    keyword: str
    body: tuple[Node, ...]
    text: str
    body_start: int | None = None  # offsets of the text between the braces, if known
    body_end: int | None = None


@dataclass(frozen=True)
class IfChain:
    """``.if (c) { } [.elsif (c) { }]... [.else { }]``."""

    branches: tuple[tuple[str, Block], ...]
    otherwise: Block | None
    text: str


@dataclass(frozen=True)
class WhileLoop:
    condition: str
    body: Block
    text: str


@dataclass(frozen=True)
class DoLoop:
    body: Block
    condition: str
    text: str


@dataclass(frozen=True)
class ForLoop:
    """``.for (InitialCommand ; Condition ; IncrementCommands) { Commands }``."""

    init: tuple[Node, ...]
    condition: str
    step: tuple[Node, ...]
    body: Block
    text: str


@dataclass(frozen=True)
class ForEach:
    """``.foreach [opts] ( Var { InCommands } | Var "InString" ) { OutCommands }``.

    The body is kept as text too: kd pastes each token into it before reading it.
    """

    source: Literal["commands", "string", "file"]
    var: str
    commands: tuple[Node, ...]  # the InCommands (source "commands")
    string: str  # the InString or the file name, unescaped
    initial_skip: str
    skip: str
    body: Block
    body_text: str
    text: str


@dataclass(frozen=True)
class JCommand:
    """``j Expression 'Command1' ; 'Command2'``: the rest of the line.

    ``segments`` are the branch texts as written (quotes kept), None when a quote never
    closes; ``rest`` is the text after the condition.
    """

    condition: str
    condition_closed: bool
    segments: tuple[str, ...] | None
    rest: str
    text: str


@dataclass(frozen=True)
class ThreadEach:
    """``~Thread e CommandString``: the command string is the rest of the line."""

    selector: str
    commands: str
    text: str


@dataclass(frozen=True)
class PathCommand:
    """``.sympath a;b;c`` (and ``srcpath``, ``lsrcpath``, ``exepath``, ``extpath``): the rest of the line."""

    name: str
    head: str  # ".sympath+ a", up to the first ';'
    elements: tuple[str, ...]  # every ';'-separated element after the first, as written
    text: str


@dataclass(frozen=True)
class Malformed:
    """Text the reader could not read as kd would (a brace that never closes, a bad ``.if``...)."""

    text: str
    reason: str


Node = (
    Command | AliasLine | Block | IfChain | WhileLoop | DoLoop | ForLoop | ForEach | JCommand | ThreadEach
    | PathCommand | Malformed
)
