"""``.printf``: kd's formatted output, and the line it leaves open.

".printf "Format", Args" -- "The .printf token does not automatically add a newline"
(.printf, Microsoft's debugger reference): ``.printf "abc"`` leaves ``abc`` with no line end,
and kd's prompt follows on the same line (``abc0: kd> ``), the glued prompt a reader of kd's
console must expect. The conversions are the documented ones the simulator can fill from an
expression's value: ``%p`` (a pointer, 16 hex digits on x64: a published session's
``.printf "p = %p\\n", @@c++(p)`` printed ``p = 000000021a8ffc80``), ``%N`` (the same), ``%x``,
``%X``, ``%d``, ``%u``, ``%I64x``/``%I64X``/``%I64d``/``%I64u``, ``%c`` and ``%%``; the escapes
``\\n``, ``\\t``, ``\\"`` and ``\\\\``. ``%ma``/``%mu``/``%msu``/``%y`` (strings and symbols read
from the target) are not modelled: they print as typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["PrintfError", "printf"]

_COMMAND_RE = re.compile(r"\.printf(?:\s+/o[dwe])*\s*\"(?P<format>(?:[^\"\\]|\\.)*)\"\s*(?:,(?P<args>.*))?",
                         re.IGNORECASE | re.DOTALL)
_SPEC_RE = re.compile(r"%(?P<flags>[-+ 0#]*)(?P<width>\d*)(?P<size>I64|I32|l|ll|h)?(?P<conv>[pNxXduc%]|m[as]|msu|y)")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


class PrintfError(Exception):
    """The line is no ``.printf`` kd would accept: its syntax error."""


def printf(command: str, evaluate: Callable[[str], int]) -> str:
    """What ``.printf`` prints for ``command``; ``evaluate`` gives each argument's value (an
    expression it cannot read raises, as kd's "Couldn't resolve error at" does)."""
    m = _COMMAND_RE.fullmatch(command.strip())
    if m is None:
        raise PrintfError(command)
    text = re.sub(r"\\(.)", lambda e: _ESCAPES.get(e.group(1), "\\" + e.group(1)), m.group("format"))
    args = [a.strip() for a in _split_args(m.group("args") or "")]
    out: list[str] = []
    pos = 0
    for spec in _SPEC_RE.finditer(text):
        out.append(text[pos:spec.start()])
        pos = spec.end()
        conv = spec.group("conv")
        if conv == "%":
            out.append("%")
            continue
        if conv.startswith("m") or conv == "y" or not args:
            out.append(spec.group(0))
            continue
        value = evaluate(args.pop(0))
        out.append(_convert(conv, spec, value))
    out.append(text[pos:])
    return "".join(out)


def _convert(conv: str, spec: re.Match[str], value: int) -> str:
    wide = spec.group("size") in ("I64", "ll")
    value &= (1 << 64) - 1 if wide or conv in "pN" else 0xFFFFFFFF
    width = spec.group("width")
    pad = "0" if "0" in spec.group("flags") else " "
    if conv in "pN":
        return f"{value:016x}"
    if conv in "xX":
        text = f"{value:x}" if conv == "x" else f"{value:X}"
    elif conv == "c":
        return chr(value & 0xFF)
    elif conv == "d":
        bits = 64 if wide else 32
        text = str(value - (1 << bits) if value >> (bits - 1) else value)
    else:
        text = str(value)
    return text.rjust(int(width), pad) if width else text


def _split_args(text: str) -> list[str]:
    """The comma-separated arguments, commas inside parentheses kept (``poi(a,b)`` is one)."""
    args, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:i])
            start = i + 1
    if text.strip():
        args.append(text[start:])
    return args
