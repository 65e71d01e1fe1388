"""Masking the text the engine hands out, without the regex pass where nothing can match.

:func:`kdmcp.secret.redact` masks every secret value (in any letter case) and every
``key=`` / ``password=`` / ``token=`` assignment. Its case-insensitive regexes cost ~80 µs on
the 540 characters of an ``r`` -- more than the rest of the engine's work on a small command.
Text that contains no secret value and none of those three words before an ``=`` cannot
change, so :func:`redact_output` returns it as it is and asks ``redact`` only otherwise.

The pre-check is exact, not a heuristic. Every character that the secret patterns
(``IGNORECASE | ASCII``) or the assignment pattern (``IGNORECASE``) match to a character of a
needle case-folds (``str.casefold``, which folds each character on its own) to that needle
character, so any match in the text is a substring of ``text.casefold()`` once the needle is
folded too; the tests check every code point against the patterns.
"""

from __future__ import annotations

from collections.abc import Sequence

from kdmcp.secret import Secret, redact

__all__ = ["redact_output"]

# The words kdmcp.secret's assignment backstop masks the value of (its _ASSIGNMENT_RE).
ASSIGNMENT_WORDS = ("key=", "password=", "token=")


def redact_output(text: str, secrets: Sequence[Secret] = ()) -> str:
    """``redact(text, secrets)``, returning ``text`` untouched when no mask can apply."""
    if not text:
        return text
    folded = text.casefold()
    if "=" in text and any(word in folded for word in ASSIGNMENT_WORDS):
        return redact(text, secrets)
    for secret in secrets:
        value = secret.reveal()
        if value and value.casefold() in folded:
            return redact(text, secrets)
    return text
