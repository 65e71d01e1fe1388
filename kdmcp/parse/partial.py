"""The tolerance rule of every listing reader (issue 29).

A listing row that does not fully match its reader's pattern is not dropped: the reader keeps
it as a row with what it could read (the leading columns a looser pattern still finds), marks
it ``partial``, and keeps the line whole in ``raw_line``. A text column the reader did not reach is
``""`` rather than a guess; a column that is ``None`` when not printed stays ``None``. Which line
is "row-like" is each reader's own test (its row's first column at the line's start: an
address, a frame number, a breakpoint id), so headers, notes and complaints are never rows.

Readers: stack frames (``frames``), ``lm`` (``modules``), ``bl`` (``breakpoints``), ``~`` and
``|`` (``threads``, ``processes``), ``!pool``, ``!heap`` blocks, kernel ``!handle`` rows.
"""

from __future__ import annotations

from typing import Any


def partial_row(line: str, **read: Any) -> dict[str, Any]:
    """A row read only in part: ``read`` (the columns found), ``partial`` and the whole line in ``raw_line``."""
    return {**read, "partial": True, "raw_line": line.rstrip()}
