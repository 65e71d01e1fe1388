"""``!error``: decode a Win32 / NTSTATUS / HRESULT value.

::

    Error code: (Win32) 0x2 (2) - The system cannot find the file specified.
    Error code: (NTSTATUS) 0x2 - STATUS_WAIT_2
"""

from __future__ import annotations

import re

from kdmcp.parse._text import split_lines
from kdmcp.parse.models import ErrorCodeRecord

_ERROR_CODE_RE = re.compile(
    r"^\s*Error code: \((?P<facility>[^)]+)\) (?P<code>0x[0-9a-fA-F]+)(?: \((?P<dec>-?\d+)\))?(?: - (?P<msg>.*))?$"
)


def parse_error_code(command: str, raw: str) -> ErrorCodeRecord | None:
    """An ``ErrorCodeRecord``; ``None`` if no ``Error code:`` line is present."""
    for line in split_lines(raw):
        m = _ERROR_CODE_RE.match(line)
        if m is not None:
            return ErrorCodeRecord(
                command=command,
                raw=raw,
                code=m.group("code").lower(),
                decimal=int(m.group("dec")) if m.group("dec") else int(m.group("code"), 16),
                facility=m.group("facility"),
                message=m.group("msg"),
            )
    return None
