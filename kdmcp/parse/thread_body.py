"""The bulk reader of a kernel THREAD block's body (the lines after its THREAD header).

``!process 0 7`` prints thousands of THREAD blocks, almost all in one common layout (wait
objects, plain detail lines, a stack header, frames). This module reads that layout in a few
C-level pattern scans; any other body goes line by line through the definition in
``kdmcp.parse.kernel_thread``, and ``tests/parse/test_thread_body.py`` holds the two equal.
"""

from __future__ import annotations

import re
from typing import Any

from kdmcp.parse.frames import (
    CHILD_SP_ROW_RE,
    FAST_FRAME,
    child_sp_frame,
    fast_frame_model,
)
from kdmcp.parse.kernel_thread import (
    IRP_ENTRY_WORD_RE,
    THREAD_LINE_HANDLERS,
    add_kernel_thread_line,
    fold_kernel_thread_lines,
    irp_entry,
    stack_header,
    wait_object_of,
)


def fold_kernel_thread_body(t: dict[str, Any], body: str) -> None:
    """Fold ``body``, the lines of a THREAD block after its header up to the next block's
    header (``\\n``-separated, no ``\\r``), into ``t``.

    The common layout (wait objects, plain detail lines, a stack header, frames) is read in
    a few C-level scans by ``_read_common_body``; any other body goes line by line through
    ``add_kernel_thread_line``, which defines the reading - ``tests/parse/test_thread_body.py``
    holds the two equal.
    """
    if not _read_common_body(t, body):
        fold_kernel_thread_lines(t, body.split("\n"))


# first word ends at a space, as the line reader splits it; the rest is the line's tail.
_DETAIL_ROW_RE = re.compile(r"^ *(?![0-9a-fA-F`]+[ \n])([A-Za-z][^ \n]*)([^\n]*)\n", re.MULTILINE)
# A common-layout frame line with its line break (what ``add_kernel_thread_line`` reads as
# ``FAST_FRAME_RE`` on the stripped line).
_FAST_FRAME_BODY_LINE_RE = re.compile(r"^[ \t]*" + FAST_FRAME + r"[ \t]*\n", re.MULTILINE)
# The lines right after a THREAD header that _WAIT_OBJECT_RE reads as wait objects (one
# pattern over all of them; a line holds no line break, so its blanks are [^\S\n]), and each
# one's (address, type).
_WAIT_LINES_RE = re.compile(r"(?:[^\S\n]+[0-9a-fA-F`]{8,17}[^\S\n]+(?![0-9a-fA-F`]+\b)[A-Za-z]\w*\b[^\n]*\n)*")
_WAIT_ROW_RE = re.compile(r"[^\S\n]+([0-9a-fA-F`]{8,17})[^\S\n]+((?![0-9a-fA-F`]+\b)[A-Za-z]\w*)\b[^\n]*\n")
# Words of the column header that opens a stack ("Child-SP  RetAddr  Call Site", "# ChildEBP ...").
_STACK_HEADER_WORDS = ("Child-SP", "ChildEBP")


def _read_common_body(t: dict[str, Any], body: str) -> bool:
    """``fold_kernel_thread_body`` for the common layout; ``False``, with ``t`` untouched,
    for any other body."""
    # wait objects: the lines right after the header that read as one
    run = _WAIT_LINES_RE.match(body)  # never None: the pattern matches the empty string
    pos = run.end() if run is not None else 0
    waits = [wait_object_of(a, k) for a, k in _WAIT_ROW_RE.findall(body, 0, pos)]
    size = len(body)
    # the stack header, if any, splits details from frames
    header = -1
    for word in _STACK_HEADER_WORDS:
        at = body.find(word, pos)
        if at >= 0 and (header < 0 or at < header):
            header = at
    if header >= 0:
        header_start = body.rfind("\n", 0, header) + 1
        header_end = body.find("\n", header)
        first = body[header_start:header_end].strip().split(" ", 1)[0]
        if THREAD_LINE_HANDLERS.get(first) is not stack_header or header_start < pos:
            return False
    else:
        header_start = header_end = size
    rows = _DETAIL_ROW_RE.findall(body, pos, header_start)
    if len(rows) != body.count("\n", pos, header_start):
        return False  # a line of another kind (or a blank one) among the details
    if waits:
        t["wait_objects"].extend(waits)
    handlers = THREAD_LINE_HANDLERS
    details = t["details"]
    for word, tail in rows:
        handler = handlers.get(word)
        if handler is not None:
            handler(t, (word + tail).rstrip())
            continue
        if word[-1] == ":" and IRP_ENTRY_WORD_RE.fullmatch(word):
            irp_entry(t, (word + tail).rstrip())
            continue
        # split_detail of the line, from its first word
        rest = tail.rstrip()
        gap = rest.find("  ")
        if gap > 0:
            details[(word + rest[:gap]).rstrip(":")] = rest[gap:].lstrip()
        elif rest:
            details[word.rstrip(":")] = rest.lstrip()
    if header_end < size:
        _read_stack(t, body, header_end + 1)
    return True


def _read_stack(t: dict[str, Any], body: str, pos: int) -> None:
    """The lines of ``body`` from ``pos`` on, after a stack header: common-layout frames
    found in one scan, the lines between them read by ``add_kernel_thread_line``."""
    frames = t["frames"]
    # the usual x64 stack: every line up to the blanks at the end a Child-SP row
    stop = len(body.rstrip()) + 1
    rows = CHILD_SP_ROW_RE.findall(body, pos, stop)
    if rows and len(rows) == body.count("\n", pos, stop):
        frames.extend([child_sp_frame(row) for row in rows])
        return
    for m in _FAST_FRAME_BODY_LINE_RE.finditer(body, pos):
        start = m.start()
        if start > pos:
            _read_lines(t, body[pos:start])
        frames.append(fast_frame_model(m))
        pos = m.end()
    if pos < len(body):
        _read_lines(t, body[pos:])


def _read_lines(t: dict[str, Any], text: str) -> None:
    """Lines of a stack section that are not common-layout frames."""
    for line in text.split("\n"):
        if line and not line.isspace():
            add_kernel_thread_line(t, line.rstrip(), False)
