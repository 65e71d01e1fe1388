"""Command policy: classify what a kd/cdb command line would do, then allow it or not.

A kernel debugger attached to a guest is root on that guest, and kd/cdb can also act on
the *debugger host*: run programs (``.shell``, ``!!``), load code (``.load``, scripts),
write files (``.dump``, ``.logopen``) and end or destroy things (``q``, ``.reboot``).
Substring deny-lists are bypassed by case, whitespace, nesting, quoting and aliases, so
this module reads the line the way kd reads it and classifies every command kd would
run, including those inside ``.block``/``.if``/loop bodies, ``j`` branches, breakpoint
and event command strings, alias values and ``dx`` calls to ``ExecuteCommand``.

It fails closed:

- whatever it does not understand is ``unknown``, which only the ``full`` profile allows;
- where kd's reading is uncertain (backslash escapes in quotes, a ``}`` inside quotes in
  a block), the line is classified under every reading and all findings count;
- text kd would skip (the rest of a line after a ``*`` comment, what follows ``j``'s
  second branch) is checked anyway;
- a ``;`` ends a command even inside quotes, except for the commands documented to take
  quoted strings (``.echo``, ``.printf``, ``bp "..."``, ``sx* -c "..."``, ``aS "..."``).

The reading itself is :mod:`~kdmcp.command.syntax` (structure, into :mod:`~kdmcp.command.nodes`) and
:mod:`~kdmcp.command.walker` (one finding per command); this module reads each line under
every lexing, expands same-line aliases, and turns findings into a verdict and a run effect.

Limits, by design of a stateless check: aliases, ``.expr`` and other settings made by
earlier calls are not known here, so every alias expansion is ``unknown`` (unless defined
earlier in the same line in a form kd is documented to expand), and alias definitions
are allowed only when their value is a single word.

Pure: no I/O; stdlib and pydantic only.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import ConfigDict

from kdmcp.command.allowlist import config_entries
from kdmcp.command.classes import PROFILE_ALLOWS, SEVERITY, CommandClass, Profile, RunEffect, strongest
from kdmcp.command.grammar import Entry
from kdmcp.command.lexing import KD_LEXING, Lexing, lexings_for, match_close
from kdmcp.command.tables import (
    _ALIAS_LINE_START_RE,
    _ALIAS_USE_RE,
    _AUTO_ALIAS_RE,
    _CONTROL_CHAR_RE,
    _CPP_ASSIGN_RE,
    _CPP_SUBEXPR_RE,
    _FIXED_ALIAS_RE,
    _LINE_BREAK_RE,
    DEFAULT_NETWORK_ROOTS,
)
from kdmcp.command.walker import Finding, Walker
from kdmcp.validation import LazyModel

__all__ = [
    "DEFAULT_NETWORK_ROOTS",
    "PROFILE_ALLOWS",
    "CommandClass",
    "Finding",
    "Profile",
    "RunEffect",
    "Verdict",
    "check",
    "classify",
    "launch_flags",
    "run_effect",
]

_UNKNOWN = CommandClass.UNKNOWN
_MEMORY_WRITE = CommandClass.MEMORY_WRITE
_HOST_EXEC = CommandClass.HOST_EXEC
_MAX_ALIAS_VARIANTS = 4  # alias values we substitute into one line (and 2 levels of that)
_MAX_LINE = 16384  # characters; kd's own command lines are far shorter
_SHOWN_PIECE = 160  # characters of a piece quoted in a verdict message
# A line none of the line-wide checks can fire on: printable ASCII and tabs (no control or
# non-ASCII character, no line break) without '"' or a backslash (so every reading of quotes
# and escapes is the same one, KD_LEXING), '$' (no alias of any kind: ${x}, $u0,
# $CurrentDumpFile) or '@' (no @@c++( ) sub-expression). Everything else about the line --
# ';' lists, blocks, .if, j, .foreach, bp strings, selectors, extensions -- is still read by
# the walker, exactly as on the full path.
_PLAIN_LINE_RE = re.compile(r"[\t !#%-?A-\[\]-~]*")


class Verdict(LazyModel):
    """The answer of :func:`check`: allowed or not, and why, in the caller's terms."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Profile
    allowed: bool
    findings: list[Finding]
    denied_class: CommandClass | None = None
    denied_piece: str | None = None
    message: str


# --------------------------------------------------------------------------- public API


def classify(
    command: str, roots: tuple[str, ...] = DEFAULT_NETWORK_ROOTS, allowed: tuple[str, ...] = ()
) -> list[Finding]:
    """Every command ``command`` would make kd run, each with its class and effect (in text order).

    Never raises and never returns an empty list: an empty line is ``unknown`` because
    kd repeats the previous command (``p``, ``t``, ``d*``...) when given one. ``roots``:
    the network locations paths may name (symbol and source servers); ``allowed``: the config's
    ``allow_commands`` (:func:`~kdmcp.command.allowlist.config_entries`).
    """
    return list(_classify_cached(command, tuple(roots), config_entries(tuple(allowed))))


def run_effect(command: str) -> RunEffect:
    """What ``command`` does to the target, as the engine must treat it (the strongest of any reading)."""
    return strongest(f.effect for f in _classify_cached(command, DEFAULT_NETWORK_ROOTS, ()))


@lru_cache(maxsize=2048)
def _classify_cached(command: str, roots: tuple[str, ...], extra: tuple[Entry, ...]) -> tuple[Finding, ...]:
    """The findings of one line; cached because the engine and the policy both ask, and agents repeat lines."""
    if len(command) <= _MAX_LINE and _PLAIN_LINE_RE.fullmatch(command) and command.strip():
        return _classify_plain(command, roots, extra)
    return _classify_full(command, roots, extra)


def _classify_plain(line: str, roots: tuple[str, ...], extra: tuple[Entry, ...]) -> tuple[Finding, ...]:
    """:func:`_classify_full` on a line :data:`_PLAIN_LINE_RE` accepts, without the checks that cannot fire.

    On such a line there is one line, one lexing (:func:`lexings_for` gives ``KD_LEXING``),
    and the control-character, non-ASCII, C++ sub-expression and alias scans find nothing,
    so the findings are the walker's alone. ``tests/command/test_policy.py`` checks that both
    paths agree on every line.
    """
    parser = Walker(KD_LEXING, roots=roots, extra=extra)
    parser.parse_list(line, 0)
    if parser.alias_values:  # a definition: later blocks may use it bare ("aS x g; .block { x }")
        return _classify_full(line, roots, extra)
    return tuple(dict.fromkeys(_or_no_command(line, parser.findings)))


def _or_no_command(line: str, findings: list[Finding]) -> list[Finding]:
    """``findings``, or the finding of a line that holds only separators (kd may treat it like an empty line)."""
    return findings or [Finding(piece=line, command_class=_UNKNOWN, reason="a line with no command in it")]


def _classify_full(command: str, roots: tuple[str, ...], extra: tuple[Entry, ...]) -> tuple[Finding, ...]:
    """Every reading of every line in ``command``, with the line-wide checks."""
    if not command.strip():
        reason = "an empty line makes kd repeat the last command"
        return (Finding(piece=command, command_class=_UNKNOWN, reason=reason),)
    findings: list[Finding] = []
    lines = _LINE_BREAK_RE.split(command)
    if len(lines) > 1:
        findings.append(
            Finding(
                piece=command,
                command_class=_UNKNOWN,
                reason="contains a line break: kd would read it as several command lines",
            )
        )
    for line in lines:
        if len(line) > _MAX_LINE:
            findings.append(Finding(piece=line[:_SHOWN_PIECE], command_class=_UNKNOWN, reason="too long to check"))
            continue
        if not line.strip():
            if len(lines) > 1:
                findings.append(
                    Finding(piece=line, command_class=_UNKNOWN, reason="an empty line makes kd repeat the last command")
                )
            continue
        findings.extend(_or_no_command(line, _classify_line(line, 0, roots, extra)))
    return tuple(dict.fromkeys(findings))


def check(
    command: str, profile: Profile, roots: tuple[str, ...] = DEFAULT_NETWORK_ROOTS, allowed: tuple[str, ...] = ()
) -> Verdict:
    """Whether ``profile`` allows ``command``: every finding's class must be allowed (``allowed``: the
    config's ``allow_commands``)."""
    if profile not in PROFILE_ALLOWS:
        raise ValueError(f"unknown policy profile {profile!r}; expected one of {sorted(PROFILE_ALLOWS)}")
    allowed_classes = PROFILE_ALLOWS[profile]
    findings = classify(command, roots, allowed)
    denied = [f for f in findings if f.command_class not in allowed_classes]
    if not denied:
        classes = sorted({f.command_class.value for f in findings})
        return Verdict(
            profile=profile,
            allowed=True,
            findings=findings,
            message=f"allowed by profile '{profile}' ({', '.join(classes)})",
        )
    worst = min(denied, key=lambda f: SEVERITY.index(f.command_class))
    message = f"denied by profile '{profile}': '{_shown(worst.piece)}' is {worst.command_class.value} ({worst.reason})"
    if len(denied) > 1:
        message += f"; {len(denied) - 1} more denied finding(s)"
    return Verdict(
        profile=profile,
        allowed=False,
        findings=findings,
        denied_class=worst.command_class,
        denied_piece=worst.piece,
        message=message,
    )


def launch_flags(profile: Profile) -> list[str]:
    """Debugger command-line flags that enforce the profile inside kd/cdb as well.

    Defence in depth: ``-noshell`` makes kd refuse ``.shell`` (and ``!!``) even if a
    command ever slipped past :func:`check`.
    """
    if profile not in PROFILE_ALLOWS:
        raise ValueError(f"unknown policy profile {profile!r}; expected one of {sorted(PROFILE_ALLOWS)}")
    return [] if _HOST_EXEC in PROFILE_ALLOWS[profile] else ["-noshell"]


def _shown(piece: str) -> str:
    """A piece as quoted in a message: control characters escaped, long text cut."""
    text = piece.encode("unicode_escape").decode("ascii") if not piece.isprintable() else piece
    return text if len(text) <= _SHOWN_PIECE else text[: _SHOWN_PIECE - 3] + "..."


# --------------------------------------------------------------------------- lines


def _classify_line(line: str, depth: int, roots: tuple[str, ...], extra: tuple[Entry, ...]) -> list[Finding]:
    """Findings for one command line: each lexing's parse, plus line-wide checks."""
    findings: list[Finding] = []
    control = _CONTROL_CHAR_RE.search(line)
    if control is not None:
        findings.append(
            Finding(piece=line, command_class=_UNKNOWN, reason=f"contains the control character {control.group()!r}")
        )
    if not line.isascii():
        odd = next(ch for ch in line if not ch.isascii())
        findings.append(
            Finding(
                piece=line,
                command_class=_UNKNOWN,
                reason=f"contains the non-ASCII character U+{ord(odd):04X} (lookalike characters can hide a command)",
            )
        )
    for sub in _CPP_SUBEXPR_RE.finditer(line):
        open_index = sub.end() - 1
        end = match_close(line, open_index, Lexing("none", braces_see_quotes=False))
        inner = line[open_index + 1 : end - 1 if end is not None else len(line)]
        if _CPP_ASSIGN_RE.search(inner):
            findings.append(
                Finding(
                    piece=line[sub.start() : end or len(line)],
                    command_class=_MEMORY_WRITE,
                    reason="a C++ sub-expression with an assignment",
                )
            )
    parsers: list[Walker] = []
    for lex in lexings_for(line):
        parser = Walker(lex, roots=roots, extra=extra)
        parser.parse_list(line, 0)
        parsers.append(parser)
    findings.extend(_fixed_aliases(line))
    uses = [m for m in _alias_uses(line, parsers) if not _is_defined_test(m)]
    unresolved = [m for m in uses if not _resolvable(line, m, depth, parsers)]
    if uses and not unresolved:
        # kd pastes the values in before it runs the block: classify what it will run.
        for expanded in _expansions(line, uses, parsers):
            findings.extend(_classify_line(expanded, depth + 1, roots, extra))
        return findings
    for parser in parsers:
        findings.extend(parser.findings)
    findings.extend(
        Finding(
            piece=m.group(), command_class=_UNKNOWN, reason="an alias expansion: what it pastes in is not known here"
        )
        for m in unresolved
    )
    return findings


def _fixed_aliases(line: str) -> list[Finding]:
    """Fixed-name (``$u0``) and automatic (``$CurrentDumpFile``) aliases: their text is not known here."""
    return [
        Finding(piece=m.group(), command_class=_UNKNOWN, reason="a fixed-name alias: its text is not known here")
        for m in _FIXED_ALIAS_RE.finditer(line)
    ] + [
        Finding(piece=m.group(), command_class=_UNKNOWN, reason="an automatic alias holding host-chosen text")
        for m in _AUTO_ALIAS_RE.finditer(line)
    ]


def _alias_uses(line: str, parsers: list[Walker]) -> list[re.Match[str]]:
    """``${name}`` uses, and bare uses inside ``{ }`` bodies of names this line defines.

    kd replaces a user-named alias "only if its name is separated from other characters by
    white space ... [it] must begin the line or follow a space, a semicolon, or a quotation
    mark" and end likewise (Using Aliases), and again "when a new block of code is entered":
    ``aS foo g; .block { foo }`` runs ``g``.
    """
    names = sorted({n for p in parsers for n in p.alias_values if n}, key=len, reverse=True)
    if not names:
        return list(_ALIAS_USE_RE.finditer(line))
    bare = "|".join(re.escape(n) for n in names)
    pattern = re.compile(
        rf"\$\{{(?P<opt>/[A-Za-z]:)?(?P<name>[^}}]*)\}}?|(?:(?<=^)|(?<=[\s;\"{{]))(?P<bare>{bare})(?=$|[\s;\"}}])"
    )
    blocks = [span for p in parsers for span in p.blocks]
    return [
        m for m in pattern.finditer(line)
        if m.group("bare") is None or any(start <= m.start() < end for start, end in blocks)
    ]


def _use_name(use: re.Match[str]) -> str:
    bare = use.groupdict().get("bare")
    return bare if bare is not None else use.group("name")


def _is_defined_test(use: re.Match[str]) -> bool:
    """``${/d:name}`` expands to 1 or 0 (whether the alias exists), never to its text."""
    return (use.group("opt") or "").lower() == "/d:" and use.group().endswith("}")


def _alias_values(name: str, parsers: list[Walker]) -> list[str]:
    return list(dict.fromkeys(v for p in parsers for v in p.alias_values.get(name, [])))


def _resolvable(line: str, use: re.Match[str], depth: int, parsers: list[Walker]) -> bool:
    """Whether kd is documented to paste, at ``use``, a value defined earlier in this line.

    kd expands aliases in a whole line before running it (unless the line starts with
    ``as``/``aS``/``ad``/``al``), and again at the start of each ``{ }`` block. So a value
    defined in this line is what ``${name}`` gets only inside a block that starts after
    the definition, in a line starting with an alias command; anywhere else it could be
    a value set by an earlier call, which this stateless check cannot know.
    """
    name = _use_name(use)
    bare = use.groupdict().get("bare") is not None
    return (
        (use.group("opt") or "").lower() in ("", "/f:")
        and (bare or use.group().endswith("}"))
        and depth < 2
        and 0 < len(_alias_values(name, parsers)) <= _MAX_ALIAS_VARIANTS
        and _ALIAS_LINE_START_RE.match(line) is not None
        and all(_defined_before_block(p, name, use.start()) for p in parsers)
    )


def _expansions(line: str, uses: list[re.Match[str]], parsers: list[Walker]) -> list[str]:
    """``line`` with every alias use replaced, once per combination of candidate values (bounded)."""
    variants = [line]
    for use in reversed(uses):  # right to left, so earlier offsets stay valid
        values = _alias_values(_use_name(use), parsers)
        variants = [v[: use.start()] + value + v[use.end() :] for v in variants for value in values]
        variants = variants[:_MAX_ALIAS_VARIANTS]
    return variants


def _defined_before_block(parser: Walker, name: str, position: int) -> bool:
    """Whether ``position`` lies in a ``{ }`` body that starts after a definition of ``name``."""
    return any(
        start <= position < end
        and any(def_name == name and def_end <= start for def_name, def_end in parser.alias_defs_at)
        for start, end in parser.blocks
    )
