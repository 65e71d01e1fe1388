"""``!error`` and ``!gle``: decode a Win32 / NTSTATUS / HRESULT value.

::

    Error code: (Win32) 0x2 (2) - The system cannot find the file specified.
    Error code: (NTSTATUS) 0x2 - STATUS_WAIT_2
    LastErrorValue: (Win32) 0 (0) - The operation completed successfully.
    LastStatusValue: (NTSTATUS) 0xc0000034 - Object Name not found.
"""

from __future__ import annotations

import re

from kdmcp.parse._text import split_lines
from kdmcp.parse.models import ErrorCodeRecord

# The value is hex with 0x, or a bare 0 (!gle prints "(Win32) 0 (0)" for no error).
_ERROR_CODE_RE = re.compile(
    r"^\s*(?P<label>Error code|LastErrorValue|LastStatusValue): \((?P<facility>[^)]+)\) "
    r"(?P<code>0x[0-9a-fA-F]+|\d+)(?: \((?P<dec>-?\d+)\))?(?: - (?P<msg>.*))?$"
)


def parse_error_code(command: str, raw: str) -> ErrorCodeRecord | None:
    """An ``ErrorCodeRecord``; ``None`` if no ``Error code:`` / ``LastErrorValue:`` line is
    present. ``!gle``'s ``LastStatusValue`` goes to ``last_status``."""
    fields: dict[str, object] = {}
    for line in split_lines(raw):
        m = _ERROR_CODE_RE.match(line)
        if m is None:
            continue
        text = m.group("code").lower()
        is_hex = text.startswith("0x")
        value = int(text, 16) if is_hex else int(text)
        if m.group("label") == "LastStatusValue":
            fields["last_status"] = hex(value)
            fields["last_status_message"] = m.group("msg")
        elif "code" not in fields:
            fields["code"] = text if is_hex else hex(value)  # hex keeps its printed digits
            fields["decimal"] = int(m.group("dec")) if m.group("dec") else value
            fields["facility"] = m.group("facility")
            fields["message"] = m.group("msg")
    if not fields:
        return None
    return ErrorCodeRecord.model_validate({"command": command, "raw": raw, **fields})
