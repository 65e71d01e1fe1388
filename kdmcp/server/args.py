"""The argument types tools share: each says once what a value may be, for the schema and the check.

A tool's own arguments are its function's parameters (``registry.py``); these are the ones many
tools take alike.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

SessionId = Annotated[
    str | None,
    Field(max_length=64),
]
# How many items of each list a typed read returns (its counts say how many there were).
LIST_LIMIT = 200
Limit = Annotated[int, Field(ge=1, le=5000)]
Timeout = Annotated[
    float | None,
    Field(gt=0, le=3600),
]
InitialBreak = Annotated[bool, Field()]
# An address as kd reads one (a MASM expression without blanks): it becomes part of a command
# line the tool composes, so nothing in it may end that command (';'), open a string ('"') or
# add an argument (a blank: "nt!x L10000000" would widen a read).
Address = Annotated[
    str,
    Field(min_length=1, max_length=256, pattern=r'^[^\s;"]+$'),
]
