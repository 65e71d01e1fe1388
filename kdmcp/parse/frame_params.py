"""A ``kp``/``kP`` frame's parameter list, split out of its function name.

``kp`` prints the parameters inside the symbol, after the function and before the offset:
``TheCrasher!main(int argc = 0n1, char ** argv = 0x032053f0)+0x1b``; ``kP`` the same over several
lines (re-joined by ``frames.frames_from_lines``). The frame keeps ``function="main"`` and
``params=("int argc = 0n1", "char ** argv = 0x032053f0")``.
"""

from __future__ import annotations


def _closing_group(text: str) -> int:
    """Where the parenthesised group that ends ``text`` opens (-1: none). Quoted strings are
    skipped: a ``char *`` parameter prints its string ("... = 0x047ea9a0 \"C:\\App (x86)\"")."""
    depth = 0
    quoted = False
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top_level(text: str) -> tuple[str, ...]:
    """``int argc = 0n1, class std::vector<a,b> * v = 0x0 { size=0 }`` -> the two parameters:
    commas inside ``<>``, ``()``, ``{}`` or quotes do not split."""
    items: list[str] = []
    depth = 0
    quoted = False
    start = 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return tuple(item for item in items if item)


def split_params(function: str) -> tuple[str, tuple[str, ...] | None]:
    """``kp``/``kP`` print a frame's parameters after its function, inside the symbol:
    ``TheCrasher!main(int argc = 0n1, char ** argv = 0x032053f0)+0x1b`` (kpn in
    cmachalo's TheCrasher test data) and ``(void)`` for none (``invoke_main(void)+0x34``,
    opencv's issue log). The trailing group is a parameter list when it is ``void`` or holds a
    `` = `` (a C++ name such as ``operator()`` ends in a group too, an empty one); -> (the
    function, its parameters; ``()`` for ``void``, ``None`` when none were printed)."""
    if not function.endswith(")"):
        return function, None
    at = _closing_group(function)
    inner = function[at + 1 : -1].strip() if at > 0 else ""
    if inner == "void":
        return function[:at], ()
    if " = " not in inner:
        return function, None
    return function[:at], _split_top_level(inner)
