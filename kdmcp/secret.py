"""Secrets: a value that never renders, and the masking of every value the server knows.

A peer removed the key from one field of its reply while another field still echoed the
command line. Wrapping the value makes every accidental ``str()``, ``repr()``, f-string,
log call or pydantic dump show ``***``; only ``reveal()`` gives the value, and only the code
that builds the debugger's argv calls it.

Masking (``SecretSet``) is by value, wherever the value turns up, and follows four rules:

* Only declared secret fields register a value (a KDNET key that passed its format check, a
  listener token), and never one shorter than ``MIN_SECRET_CHARS``: a caller cannot make
  ordinary text, or JSON syntax, into a secret.
* Every occurrence is found in any letter case (KDNET keys are base 36: kd accepts either
  case), overlapping ones too, and the union of them is masked: masking one secret never
  leaves a remainder of another.
* Data is masked leaf by leaf (each string of a result), never as serialised JSON text, so
  no secret, however full of quotes, backslashes or regex syntax, can break a result.
* A stored byte range is masked byte by byte against the whole stored output, read with a
  secret's length of context either side: a window that starts, ends or lies inside a key
  shows none of it. The store's last bytes may be the start of a key still being printed:
  they are held back while the debugger runs and masked once it has ended.
* Text cut at a byte cap (``truncated`` output, a start's banner, a capped transcript field)
  or cut short (a timeout's ``partial_output``) may end inside a key: a tail that is the
  start of a secret is masked, at the cost of masking a few innocent last characters when
  they happen to match one.
"""

from __future__ import annotations

import hmac
import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, AnyStr

MASK = "***"

# The shortest value a declared secret field accepts: a KDNET key is four dot-separated words
# of 1-13 characters ("a.b.c.d"); listener tokens need 16. Anything shorter would mask
# ordinary text ("f" masks every hex address), so it is refused, never registered.
MIN_SECRET_CHARS = 7

# key=VALUE / password=VALUE in an argv echo (comma, space or quote ends the value): a backstop
# for secrets the server was never told about. Group 1 is the value, the part masked.
_ASSIGNMENT_RE = re.compile(r"(?i)\b(?:key|password|token)=([^,\s\"']+)")
_ASSIGNMENT_BYTES_RE = re.compile(rb"(?i)\b(?:key|password|token)=([^,\s\"']+)")
# The literals every assignment match contains, in lower case: the prefilter's test.
_ASSIGNMENT_WORDS = ("key=", "password=", "token=")
_ASSIGNMENT_WORDS_BYTES = tuple(word.encode() for word in _ASSIGNMENT_WORDS)
# How far before a byte window an assignment's ``key=`` is looked for: longer values of
# unknown secrets are masked only from where a window sees the ``key=``.
ASSIGNMENT_REACH = 64

# Fields of the served models that hold text the engine cut at a byte cap when the same
# object says ``truncated``, and fields that are cut short by nature (a timeout's output).
_CUT_WHEN_TRUNCATED = ("output", "text")
# A start's banner is read at the inline cap, and its flag is judged after masking: trust neither.
_ALWAYS_CUT = ("partial_output", "banner")
# Fields parsed from cut text: a masked tail may reappear at the end of one of their strings.
_PARSED_FROM_CUT = ("record",)


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


class _Known:
    """One secret value with its search patterns; renders as ``***`` like the value itself."""

    __slots__ = ("casefolded", "folded", "folded_bytes", "folded_json", "nbytes", "pattern", "pattern_bytes")

    def __init__(self, value: str) -> None:
        raw = value.encode("utf-8")
        self.folded = value.lower()
        self.folded_bytes = raw.lower()
        self.nbytes = len(raw)
        # The prefilters' needles (``_text_spans``, ``_clean``): the value case-folded, and as it
        # reads inside a JSON string (quotes, backslashes, controls escaped), case-folded.
        self.casefolded = value.casefold()
        self.folded_json = json.dumps(value, ensure_ascii=False)[1:-1].casefold()
        # The lookahead finds overlapping occurrences too ("aXa" twice in "aXaXa").
        self.pattern = re.compile(f"(?=({re.escape(value)}))", re.IGNORECASE | re.ASCII)
        self.pattern_bytes = re.compile(b"(?=(" + re.escape(raw) + b"))", re.IGNORECASE)

    def __repr__(self) -> str:
        return f"_Known({MASK!r})"


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans joined, in order: each run becomes one ``***``."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _prefilter(text: str, known: Sequence[_Known]) -> tuple[list[_Known], bool]:
    """The secrets that may occur in ``text``, and whether a ``key=``-style assignment may.

    The patterns cost ~100 ms per MiB (the lookahead tries every position), a case-folded copy
    and a substring search ~1 ms. Exact, not a heuristic: every character a secret's pattern
    (``IGNORECASE | ASCII``) or the assignment pattern (``IGNORECASE``) matches to a needle's
    character case-folds to what that character folds to, and ``str.casefold`` folds each
    character on its own, so any match is a substring of ``text.casefold()`` once the needle is
    folded too (tests/test_secret.py checks every code point against the patterns).
    """
    folded = text.casefold()
    return [k for k in known if k.casefolded in folded], _may_assign(text, folded)


def _may_assign(text: str, folded: str) -> bool:
    """Whether ``text`` (case-folded: ``folded``) may hold a ``key=``-style assignment."""
    return "=" in text and any(word in folded for word in _ASSIGNMENT_WORDS)


def _text_spans(text: str, known: Sequence[_Known]) -> list[tuple[int, int]]:
    candidates, assignments = _prefilter(text, known)
    spans = [m.span(1) for k in candidates for m in k.pattern.finditer(text)]
    if assignments:
        spans += [m.span(1) for m in _ASSIGNMENT_RE.finditer(text)]
    return spans


def _cut_tail(text: AnyStr, folded_secrets: Sequence[AnyStr]) -> int:
    """Where a tail of ``text`` that is the start of a secret begins (``len(text)`` if none).

    ``folded_secrets`` are the secrets in lower case; the tail is compared in lower case too.
    """
    reach = max((len(value) for value in folded_secrets), default=0)
    folded = text[len(text) - min(reach, len(text)) :].lower()
    start = len(text)
    for value in folded_secrets:
        for n in range(min(len(value) - 1, len(folded)), 0, -1):
            if folded.endswith(value[:n]):
                start = min(start, len(text) - n)
                break
    return start


def _render(text: str, spans: Iterable[tuple[int, int]]) -> str:
    pieces: list[str] = []
    pos = 0
    for start, end in _merged(spans):
        pieces += [text[pos:start], MASK]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _mask_str(text: str, known: Sequence[_Known], *, cut: bool = False, tails: Sequence[str] = ()) -> str:
    spans = _text_spans(text, known)
    if cut:
        start = _cut_tail(text, [k.folded for k in known])
        if start < len(text):  # an empty tail holds nothing to mask (it rendered as a stray ***)
            spans.append((start, len(text)))
    if tails:
        trimmed = text.rstrip().lower()
        spans += [(len(trimmed) - len(tail), len(text)) for tail in tails if trimmed.endswith(tail)]
    return _render(text, spans)


def redact(text: str, secrets: Iterable[Secret] = ()) -> str:
    """Mask every occurrence of each secret's value (any case), then any ``key=``-style assignment.

    Text with nothing to mask (``_prefilter``) is returned as it is, the same object: the
    engine masks every command's output with this, and a register dump has nothing to mask.
    """
    values = [v for v in (s.reveal() for s in secrets) if v]
    folded = text.casefold()
    if not _may_assign(text, folded) and not any(v.casefold() in folded for v in values):
        return text
    return _mask_str(text, [_Known(v) for v in values])


class SecretSet:
    """The secret values one server knows, and their masking in text, data and stored bytes."""

    def __init__(self, secrets: Iterable[Secret] = ()) -> None:
        self._lock = threading.Lock()
        self._known: tuple[_Known, ...] = ()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: Secret) -> None:
        """Register a value of a declared secret field (validated by that field's rules).

        Raises ``ValueError`` (without the value) for one shorter than ``MIN_SECRET_CHARS``.
        """
        value = secret.reveal()
        if len(value) < MIN_SECRET_CHARS:
            raise ValueError(f"a secret needs at least {MIN_SECRET_CHARS} characters; a shorter one would mask "
                             "ordinary text, so it is not registered")
        with self._lock:
            if all(k.folded != value.lower() for k in self._known):
                self._known = (*self._known, _Known(value))

    @property
    def context_bytes(self) -> int:
        """How many bytes either side of a window decide how it is masked."""
        return max([ASSIGNMENT_REACH, *(k.nbytes - 1 for k in self._known)])

    def text(self, text: str) -> str:
        return _mask_str(text, self._known)

    def data(self, value: Any) -> Any:
        """JSON-shaped ``value`` with every string leaf (and key) masked; the shape is untouched.

        A field that the same object marks cut (see ``_CUT_WHEN_TRUNCATED``) has a tail that
        starts a secret masked too, and so has the end of a string parsed from it (``record``).
        """
        known = self._known
        if _clean(value, known):
            return value
        return _mask_data(value, known, ())

    def json_text(self, text: str, *, cut_length: int | None = None) -> str:
        """A JSON document masked leaf by leaf and re-serialised (plain text if it is not JSON).

        ``cut_length``: the length the writer caps strings at when it marks the document
        ``truncated``; in such a document a string of that length is masked as cut.
        """
        try:
            value = json.loads(text)
        except ValueError:
            return self.text(text)
        capped = cut_length if isinstance(value, dict) and value.get("truncated") is True else None
        return json.dumps(_mask_data(value, self._known, (), capped))

    def byte_range(
        self, read: Callable[[int, int], bytes], total: int, offset: int, end: int, *, final: bool
    ) -> tuple[str, int]:
        """Stored bytes ``[offset, end)`` as text, every byte of every secret masked; and where to read next.

        ``read(offset, length)`` reads the store, which holds ``total`` bytes. Each occurrence
        is found in ``context_bytes`` of context either side, so an occurrence the window
        only touches is still recognised; the window's share of it is masked and nothing
        outside the window is served. A store that ends in the start of a secret may be a
        key still being printed: while the debugger runs those bytes are held back (the next
        read decides them), and once it has ended (``final``) they are masked.
        """
        known = self._known
        end = max(offset, min(end, total))
        context = self.context_bytes
        lo, hi = max(0, offset - context), min(total, end + context)
        buf = read(lo, hi - lo)
        # The literal prefilter of ``_text_spans``, exact for bytes: a bytes pattern's
        # IGNORECASE is ASCII-only, as ``bytes.lower`` is.
        low = buf.lower()
        candidates = [k for k in known if k.folded_bytes in low]
        spans = [(s + lo, e + lo) for k in candidates for s, e in (m.span(1) for m in k.pattern_bytes.finditer(buf))]
        if any(word in low for word in _ASSIGNMENT_WORDS_BYTES):
            spans += [(m.start(1) + lo, m.end(1) + lo) for m in _ASSIGNMENT_BYTES_RE.finditer(buf)]
        if hi == total:
            unfinished = lo + _cut_tail(buf, [k.folded_bytes for k in known])
            if final:
                spans.append((unfinished, total))
            else:
                end = max(offset, min(end, unfinished))
        # Never split a UTF-8 sequence between two reads: stop before an incomplete one
        # (unless that would serve nothing, or the sequence is masked anyway).
        cut = offset + _complete_utf8_prefix(buf[offset - lo : end - lo])
        if offset < cut < end and not any(s <= cut < e for s, e in spans):
            end = cut
        pieces: list[str] = []
        pos = offset
        inside = [(max(s, offset), min(e, end)) for s, e in spans]
        for start, stop in _merged((s, e) for s, e in inside if s < e):
            pieces += [buf[pos - lo : start - lo].decode("utf-8", errors="replace"), MASK]
            pos = stop
        pieces.append(buf[pos - lo : end - lo].decode("utf-8", errors="replace"))
        return "".join(pieces), end


# What a JSON document holds when some string in it may be cut (``_mask_data``'s cut rules).
_CUT_MARKS = ('"truncated": true', *(f'"{name}"' for name in _ALWAYS_CUT))


# ``json.dumps(value, ensure_ascii=False)``, with one encoder: ``json.dumps`` builds a new one for
# any argument but its defaults, which was most of the cost of judging a small result clean.
_JSON_TEXT = json.JSONEncoder(ensure_ascii=False)


def _clean(value: Any, known: Sequence[_Known]) -> bool:
    """Whether JSON-shaped ``value`` certainly holds nothing to mask: one C-speed serialisation
    and substring tests, where the leaf-by-leaf walk costs a few µs per string (a register dump
    has a hundred).

    Exact where it says clean: JSON escapes character by character and case folding folds
    character by character (``_prefilter``), so the case-folded document holds each secret's
    escaped, case-folded spelling wherever a string (or a key) holds the secret, and ``key=``
    likewise; a document with a field that may be cut (truncated output, a banner, partial
    output) is never called clean, as a cut tail may start a key.
    """
    try:
        document = _JSON_TEXT.encode(value)
    except (TypeError, ValueError):
        return False
    low = document.casefold()
    return not (any(k.folded_json in low for k in known) or any(word in low for word in _ASSIGNMENT_WORDS)
                or any(mark in low for mark in _CUT_MARKS))


def _mask_data(value: Any, known: Sequence[_Known], tails: Sequence[str], cut_length: int | None = None) -> Any:
    """``value`` masked leaf by leaf; ``tails`` also masked where they end a string.

    ``cut_length``: a string of exactly this length, anywhere in ``value``, was cut there and
    is treated as cut (a truncated transcript record had every field capped at one length).
    """
    if isinstance(value, str):
        return _mask_str(value, known, cut=len(value) == cut_length, tails=tails)
    if isinstance(value, (list, tuple)):
        return [_mask_data(item, known, tails, cut_length) for item in value]
    if not isinstance(value, dict):
        return value
    truncated = value.get("truncated") is True
    cut_fields = {name for name, item in value.items() if isinstance(item, str) and (
        name in _ALWAYS_CUT or (truncated and name in _CUT_WHEN_TRUNCATED))}
    # What a cut field's masked tail held, to mask where it ends a string parsed from it.
    folded = [k.folded for k in known]
    pieces = [item[_cut_tail(item, folded) :].strip().lower() for name, item in value.items() if name in cut_fields]
    pieces = [p for p in pieces if p]
    out: dict[Any, Any] = {}
    for name, item in value.items():
        shown = _mask_str(name, known) if isinstance(name, str) else name
        if name in cut_fields:
            out[shown] = _mask_str(item, known, cut=True, tails=tails)
        elif name in _PARSED_FROM_CUT and pieces:
            out[shown] = _mask_data(item, known, [*tails, *pieces], cut_length)
        else:
            out[shown] = _mask_data(item, known, tails, cut_length)
    return out


def _complete_utf8_prefix(data: bytes) -> int:
    """How many bytes of ``data`` end on a UTF-8 character boundary."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # continuation byte: keep looking for the lead
        if byte & 0x80:
            need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4
            if need > back:
                return len(data) - back
        break
    return len(data)
