"""Looking a command up on the allowlist (:mod:`~kdmcp.command.known`): on it, or why not.

:func:`refusal` takes one command as the reader found it (no top-level ``;``) and says why it is
not on the table -- an unknown command or extension, an option not listed for it, an argument
of the wrong shape -- or None. :mod:`~kdmcp.command.leaf_rules` calls it for every command kd
would run and turns a refusal into an ``unknown`` finding; path lists (``.sympath a;b``) are
checked element by element (:func:`path_list_refusal`). :func:`effect_names` gives the run
effects' command names to :mod:`~kdmcp.command.tables`, so the engine and the simulator read
"does the target run" from the same entries.

Pure: stdlib only.
"""

from __future__ import annotations

import re
from functools import lru_cache

from kdmcp.command.classes import RunEffect
from kdmcp.command.grammar import Entry, Shape, path_refusal
from kdmcp.command.grammar import refusal as _args_refusal
from kdmcp.command.known import EXTENSIONS, LETTERS, METAS, SYMBOLS, TABLE

__all__ = ["config_entries", "effect_names", "entry_for", "extra_entry", "path_list_refusal", "refusal", "table_counts"]

_DOT_RE = re.compile(r"\.(?P<name>[A-Za-z_][A-Za-z0-9_]*[+-]?)", re.ASCII)
_BANG_RE = re.compile(r"!(?:(?P<module>[A-Za-z_]\w*)\.)?(?P<name>[A-Za-z_]\w*)(?![\w.])", re.ASCII)
# Extension DLLs that ship with the debugger: "!ext.analyze", "!kdexts.process".
EXTENSION_MODULES: frozenset[str] = frozenset(
    {"nt", "kdexts", "kext", "ext", "exts", "uext", "ntsdexts", "wow64exts", "dbghelp", "ndiskd", "wdfkd", "fltkd",
     "storagekd", "rcdrkd", "acpikd", "usbkd", "hidkd", "wmitrace"}
)  # fmt: skip

_METAS: dict[str, Entry] = {name[1:].lower(): e for e in METAS for name in e.names}
_EXTENSIONS: dict[str, Entry] = {name[1:].lower(): e for e in EXTENSIONS for name in e.names}


def _letter_pattern(entry: Entry) -> re.Pattern[str]:
    """A letter command's name ends where no name letter follows ("pa(x)", "dd@rsp"); "#" takes its pattern glued."""
    end = "" if entry.names == ("#",) else "(?![A-Za-z_])"
    return re.compile(rf"(?:{'|'.join(entry.names)}){end}", re.IGNORECASE | re.ASCII)


_LETTERS: dict[str, tuple[tuple[re.Pattern[str], Entry], ...]] = {}
for _entry in LETTERS:
    _first = _entry.names[0][0].lower()
    _LETTERS[_first] = (*_LETTERS.get(_first, ()), (_letter_pattern(_entry), _entry))


def refusal(piece: str, roots: tuple[str, ...]) -> str | None:
    """Why the command ``piece`` is not on the allowlist, or None when it is (name, options, arguments)."""
    found = entry_for(piece.strip())
    if isinstance(found, str):
        return found
    entry, args = found
    return _args_refusal(entry, args, roots)


def entry_for(piece: str) -> tuple[Entry, str] | str:
    """The entry ``piece`` names and its argument text, or why no entry names it."""
    first = piece[:1]
    if first in ("~", "|"):
        return SYMBOLS[4], ""  # selectors: the command after the prefix is looked up on its own
    if first == "!":
        return _extension(piece)
    if first == ".":
        m = _DOT_RE.match(piece)
        entry = _METAS.get(m.group("name").lower()) if m is not None else None
        if m is None or entry is None:
            return f"'{piece.split(maxsplit=1)[0] if piece.split() else piece}' is not a command on kd-mcp's allowlist"
        return entry, piece[m.end() :]
    for symbol, entry in (("??", SYMBOLS[1]), ("?", SYMBOLS[0]), ("$$", SYMBOLS[2]), ("*", SYMBOLS[3])):
        if piece.startswith(symbol) and not (symbol == "$$" and re.match(r"\$\$[\s>a]*<", piece)):
            return entry, piece[len(symbol) :]
    for pattern, entry in _LETTERS.get(first.lower(), ()):
        m = pattern.match(piece)
        if m is not None:
            return entry, piece[m.end() :]
    word = piece.split(maxsplit=1)[0] if piece.split() else piece
    return f"'{word}' is not a command on kd-mcp's allowlist"


def _extension(piece: str) -> tuple[Entry, str] | str:
    m = _BANG_RE.match(piece)
    if m is None or piece.startswith("!!"):
        return f"'{piece.split(maxsplit=1)[0]}' is not an extension command on kd-mcp's allowlist"
    module = (m.group("module") or "").lower()
    if module and module not in EXTENSION_MODULES:
        return f"the extension DLL '{module}' is not on kd-mcp's allowlist"
    entry = _EXTENSIONS.get(m.group("name").lower())
    if entry is None:
        return f"'!{m.group('name')}' is not an extension command on kd-mcp's allowlist"
    return entry, piece[m.end() :]


def path_list_refusal(element: str, roots: tuple[str, ...]) -> str | None:
    """Why one ``.sympath``-style element is refused: ``srv*cache*url``, ``cache*dir``, or a path."""
    parts = [p.strip() for p in element.split("*")]
    kind = parts[0].lower()
    if kind in ("srv", "cache", "symsrv") and len(parts) > 1:
        parts = parts[1:]
        if kind == "symsrv":
            parts = parts[1:]  # the DLL's name (symsrv.dll) is leaf_rules' to judge
    for part in parts:
        if part:
            problem = path_refusal(part, roots)
            if problem is not None:
                return f"'{part}': {problem}"
    return None


@lru_cache(maxsize=1)
def effect_names() -> dict[str, tuple[str, ...]]:
    """The name patterns of the letter commands with each run effect, and of the steps (``"steps"``)."""
    out: dict[str, list[str]] = {"steps": [], RunEffect.RESUMES.value: [], RunEffect.REBOOTS.value: []}
    for entry in TABLE:
        if entry.effect is RunEffect.IMMEDIATE:
            continue
        out[entry.effect.value].extend(entry.names)
        if entry.steps:
            out["steps"].extend(entry.names)
    return {key: tuple(value) for key, value in out.items()}


def table_counts() -> dict[str, int]:
    """How big the table is, as docs/security.md states it: entries, names, extensions, options."""
    return {
        "entries": len(TABLE),
        "commands": sum(len(e.names) for e in TABLE),
        "extensions": sum(len(e.names) for e in EXTENSIONS),
        "options": sum(len(e.option_forms()) for e in TABLE),
    }


# "allow_commands" in the config: a command name ("!ndiskd.netreport", ".mycmd", "mycmd"),
# then the options it may take ("-v /f"); its other arguments are expressions.
_SPEC_RE = re.compile(
    r"(?P<name>!(?:[A-Za-z_]\w*\.)?[A-Za-z_]\w*|\.[A-Za-z_]\w*|[A-Za-z_]\w*)(?P<options>(?:\s+[-/][A-Za-z?][\w?]*)*)\s*",
    re.ASCII,
)


@lru_cache(maxsize=32)
def config_entries(specs: tuple[str, ...]) -> tuple[Entry, ...]:
    """The entries a config adds (``allow_commands``): each a command the reader does not know, vouched a read.

    A spec names the command exactly as it is typed and lists its options; the command is then
    on the allowlist with those options and expression arguments, classed ``read`` (so
    ``read_only`` runs it too). A name kd-mcp already classes -- ``.shell``, ``g``, ``!analyze``
    -- cannot be re-classed here: its own entry (or its refusal) stands. Raises ValueError.
    """
    entries: list[Entry] = []
    for spec in specs:
        m = _SPEC_RE.fullmatch(spec)
        if m is None:
            raise ValueError(f"allow_commands entry {spec!r} must be a command name and its options (-x, /x)")
        name = m.group("name")
        classed = "on the allowlist already" if not isinstance(entry_for(name), str) else _class_of(name)
        if classed:
            raise ValueError(f"allow_commands entry {spec!r}: '{name}' is {classed}; its own rules apply")
        options = tuple(o[0] + re.escape(o[1:]) for o in m.group("options").split())
        entries.append(Entry((name,), "", options=options, args=Shape.EXPR, both_spellings=name.startswith("!")))
    return tuple(entries)


def _class_of(name: str) -> str:
    """The class the reader gives ``name`` of its own ("" when it is a command the reader does not know)."""
    from kdmcp.command.classes import CommandClass
    from kdmcp.command.policy import classify

    known = sorted({f.command_class.value for f in classify(name) if f.command_class is not CommandClass.UNKNOWN})
    return f"classed {', '.join(known)}" if known else ""


def extra_entry(piece: str, extra: tuple[Entry, ...]) -> tuple[Entry, str] | None:
    """The config entry ``piece`` names (exactly as listed) and its argument text, or None."""
    for entry in extra:
        name = entry.names[0]
        if piece[: len(name)].lower() == name.lower() and not piece[len(name) : len(name) + 1].strip(" \t"):
            return entry, piece[len(name) :]
    return None
