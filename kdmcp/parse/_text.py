"""Lexical helpers every family parser shares: lines, addresses, symbols, source notes.

Kept tiny and allocation-light: ``parse`` must run at tens of MB/s on large outputs, so
these are plain functions over ``str`` with module-level compiled patterns.
"""

from __future__ import annotations

import re

# A hex address as kd prints it: 8 digits, 8`8 digits (64-bit with the separator), or up
# to 16 digits plain; optionally with a 0x prefix (``Kernel base = 0xfffff801`8d283000``).
ADDRESS = r"(?:0x)?(?:[0-9a-fA-F]{8}`[0-9a-fA-F]{8}|[0-9a-fA-F]{1,16})"
ADDRESS_RE = re.compile(ADDRESS)

# "[d:\th\minkernel\ntos\ke\amd64\procstat.asm @ 122]" at the end of a frame or label.
SOURCE_TAIL_RE = re.compile(r"\[(?P<file>[^\[\]]*) @ (?P<line>\d+)\]$")

# "+0x29220" / "+1981" at the end of a symbol: the offset from the symbol.
OFFSET_TAIL_RE = re.compile(r"\+(?:0x)?(?P<offset>[0-9a-fA-F]+)$")

# A call site that is only a code address: "0x00007ff8`f16ece54", "00007ff8`f16ece54",
# "0x002d0036", and the unpadded forms kd prints for unknown code ("0x12e", "0xfa1075"
# in kb/kp/!thread, kc's "0x0").
BARE_ADDRESS_RE = re.compile(r"0x[0-9a-fA-F]{8}`[0-9a-fA-F]{8}|0x[0-9a-fA-F]{1,16}|[0-9a-fA-F]{8}`[0-9a-fA-F]{8}")

# A row of dots printed while symbols load (".reload", "Loading Kernel Symbols").
DOTS_RE = re.compile(r"^\.{2,}$")

# What an extension says when it could not read or walk something ("GetUlongFromAddress: unable
# to read from 00000000", "ffdf0000: Unable to get shared data", "Could not read ..."): the one
# vocabulary of the readers that keep such lines as warnings (threads, system, handles).
READ_FAILURE_WORDS = r"(?:[Uu]nable to|[Cc]ould not|[Cc]annot|[Ff]ailed to)\b"


def split_lines(raw: str) -> list[str]:
    """Split on ``\\n`` only and drop trailing blanks (and the ``\\r`` of CRLF) per line.

    ``str.splitlines`` would also break on form feeds and other separators that can sit
    inside memory dumps; kd ends lines with ``\\n`` (``\\r\\n`` under a console).
    Trailing blanks are dropped so that no pattern needs a lazy ``.*?\\s*$`` tail: that
    idiom is quadratic on long blank runs, and parse() must stay linear on any input.
    """
    return [line.rstrip() for line in raw.split("\n")]


def split_raw_lines(raw: str) -> list[str]:
    """Split on ``\\n``, dropping only a CR: for columns whose trailing blanks are data
    (the ascii column of ``db``)."""
    lines = raw.split("\n")
    if "\r" in raw:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def addr(text: str) -> str:
    """Normalise an address as printed into ``"0x..."``: backtick removed, lower case."""
    t = text.strip().replace("`", "").lower()
    if t.startswith("0x"):
        t = t[2:]
    return "0x" + t


def hex_token_addr(token: str) -> str:
    """``addr`` of a token made of hex digits and backticks only (what ``[0-9a-fA-F`]+``
    captures): the same string, with fewer steps - it runs for every thread and wait object
    of a ``!process 0 7``."""
    return "0x" + token.replace("`", "").lower()


def maybe_addr(text: str | None) -> str | None:
    """``addr`` for an optional value; ``None`` and non-hex stay ``None``."""
    if text is None:
        return None
    t = text.strip()
    if not t or ADDRESS_RE.fullmatch(t) is None:
        return None
    return addr(t)


def hexnum(text: str) -> str:
    """Canonical hex number: ``"0x0000010d"`` / ``"10d"`` -> ``"0x10d"``."""
    t = text.strip().replace("`", "").lower()
    if t.startswith("0x"):
        t = t[2:]
    t = t.lstrip("0")
    return "0x" + (t or "0")


def to_int(text: str | None, base: int = 10) -> int | None:
    """``int`` or ``None`` (never raises): for counts like ``HandleCount: 817.``."""
    if text is None:
        return None
    t = text.strip().rstrip(".").replace("`", "")
    if base == 16 and t.lower().startswith("0x"):
        t = t[2:]
    try:
        return int(t, base)
    except ValueError:
        return None


def split_symbol(site: str) -> tuple[str | None, str | None, str | None, str | None]:
    """Split ``module!function+0xoff`` into (module, function, offset, address).

    Handles ``ntdll! ?? ::FNODOBFM::`string'+0x29220``, ``myfault+0x1981`` (module only),
    ``0x00007ff8`f16ece54`` (bare address, returned as ``address``) and ``+0x3b`` (no module).
    """
    s = site.strip()
    if not s:
        return None, None, None, None
    if BARE_ADDRESS_RE.fullmatch(s):
        return None, None, None, addr(s)
    offset: str | None = None
    m = OFFSET_TAIL_RE.search(s)
    if m is not None:
        offset = hexnum(m.group("offset"))
        s = s[: m.start()]
    if "!" in s:
        module, _, function = s.partition("!")
        return module.strip() or None, function.strip() or None, offset, None
    return (s.strip() or None), None, offset, None


def strip_source(text: str) -> tuple[str, str | None, int | None]:
    """Remove a trailing ``[file @ line]``; return (rest, file, line)."""
    text = text.rstrip()
    if not text.endswith("]"):
        return text, None, None
    m = SOURCE_TAIL_RE.search(text)
    if m is None:
        return text, None, None
    return text[: m.start()].rstrip(), m.group("file"), int(m.group("line"))


def split_detail(line: str) -> tuple[str, str] | None:
    """(key, value) of a detail line, preferring a 2+ blank gap as the separator.

    ``Working Set Sizes (now,min,max)  (11788, 50, 345)`` -> key ``Working Set Sizes
    (now,min,max)``; ``Image: notepad.exe`` -> key ``Image``; ``DeviceMap ffffd80247fe8cf0``
    -> key ``DeviceMap``. Plain string operations: this runs on every detail line of a
    ``!process 0 7``.
    """
    s = line.strip()
    if not s:
        return None
    gap = s.find("  ")
    if gap > 0:
        return s[:gap].rstrip(":"), s[gap:].strip()
    word, sep, rest = s.partition(" ")
    if not sep or not rest.strip():
        return None
    return word.rstrip(":"), rest.strip()
