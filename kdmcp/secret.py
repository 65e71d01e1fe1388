"""A value that never renders: the KDNET key and listener tokens.

A peer removed the key from one field of its reply while another field still echoed the
command line. Wrapping the value makes every accidental ``str()``, ``repr()``, f-string,
log call or pydantic dump show ``***``; only ``reveal()`` gives the value, and only the code
that builds the debugger's argv calls it.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable

MASK = "***"

# key=VALUE / password=VALUE in an argv echo (comma, space or quote ends the value).
_ASSIGNMENT_RE = re.compile(r"(?i)\b(key|password|token)=([^,\s\"']+)")


class Secret:
    """Holds a secret string; renders as ``***``."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return MASK

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(Secret)

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("Secret values are not picklable")


def redact(text: str, secrets: Iterable[Secret] = ()) -> str:
    """Mask every occurrence of each secret's value, then any ``key=``-style assignment."""
    for secret in secrets:
        value = secret.reveal()
        if value:
            text = text.replace(value, MASK)
    return _ASSIGNMENT_RE.sub(lambda m: f"{m.group(1)}={MASK}", text)
