"""Command strings inside one command: the text kd runs later or on the command's behalf.

A breakpoint's command string (``bp x "k; g"``), an event's (``sx -c``), the prompt's
(``.pcmd -s``), an alias's value, and ``dx``'s ``ExecuteCommand("...")`` each hold commands
kd would run. These functions find those strings, check each one as a command list one
level down (through :meth:`~kdmcp.command.walker.Walker.nested`; ``deferred`` when it runs
later than this line, so it cannot make the line resume), and say what the defining
command itself is.

Pure: stdlib only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kdmcp.command.lexing import Escapes, c_unescape, string_end, tokens
from kdmcp.command.tables import (
    _ALIAS_PARSE_RE,
    _BP_SUSPICIOUS_RE,
    _CODE_LOAD,
    _CONTROL_CHAR_RE,
    _DX_ASSIGN_RE,
    _DX_BREAKPOINT_RE,
    _DX_CONTROL_RE,
    _DX_EXECUTE_CALL_RE,
    _DX_EXECUTE_RE,
    _DX_FILESYSTEM_RE,
    _DX_SCRIPTS_RE,
    _DX_SETTINGS_RE,
    _DX_SIDE_EFFECT_RE,
    _DX_STRING_PLACEHOLDER,
    _DX_SUSPICIOUS_LITERAL_RE,
    _DX_TARGET_CALL_RE,
    _EXECUTION,
    _FILE_WRITE,
    _HOST_FILE_READ,
    _MEMORY_WRITE,
    _OUTPUT_CONTROL,
    _READ,
    _SETTINGS_CHANGE,
    _SINGLE_WORD_RE,
    _UNKNOWN,
    DX_FUNCTIONS,
    DX_METHODS,
)

if TYPE_CHECKING:
    from kdmcp.command.walker import Walker

# "dx [-g|-gc #][-c #][-n|-v]-r[#] Expression" (dx, Display Debugger Object Model Expression).
_DX_OPTION_RE = re.compile(r"(?:-r[0-9]*|-g|-gc\s+[0-9]+|-c\s+[0-9]+|-nv|-n|-v|-h|-\?|-id\s+[0-9a-fA-F`,]+)(?=\s|$)")
# "[ ... "string" ... ]": a member named by a string ("Modules[\"win32u.dll\"]" names a key).
_DX_INDEX_RE = re.compile(r"\[(?P<index>\s*[^\]]*__kdmcp_str(?P<i>\d+)__[^\]]*)\]")
# "name(" -- a call (after a '.' a method call); "(T*)x" casts and "(a + b)" groups have no name.
_DX_CALL_RE = re.compile(r"(?P<dot>\.\s*)?(?P<name>@?\$?[A-Za-z_]\w*)\s*\(", re.ASCII)

__all__ = [
    "alias_command",
    "alias_name_refusal",
    "alias_value",
    "breakpoint_strings",
    "command_string_escapes",
    "dx",
    "strings_and_words",
]


def command_string_escapes(w: Walker) -> Escapes:
    """Command strings (``bp x "j 1 '.echo \\"a\\"'"``) are documented to take ``\\"``; never "none"."""
    return "quote" if w.lex.escapes == "none" else w.lex.escapes


def breakpoint_strings(w: Walker, piece: str, args: str) -> None:
    """``bp[ID] [opts] [Addr [Passes]] ["CommandString"]`` (also bu/bm/ba, bs/bsc)."""
    w.add(piece, _EXECUTION, "sets or changes a breakpoint (its command string is checked on its own)")
    words = tokens(args, command_string_escapes(w))
    if words is None:
        w.add(piece, _UNKNOWN, "a quoted string never closes")
        return
    previous = ""
    for is_string, text in words:
        if is_string:
            if previous.lower() == "/w":
                dx(w, piece, text)  # "/w" conditions are dx expressions
            else:
                w.nested(text, deferred=True)  # runs when the breakpoint hits
        elif _BP_SUSPICIOUS_RE.match(text):
            w.add(piece, _UNKNOWN, f"unquoted '{text}' after a breakpoint could be read as a command")
        previous = "" if is_string else text


def strings_and_words(
    w: Walker, piece: str, args: str, command_flags: tuple[str, ...] | None, *, deferred: bool = False
) -> None:
    """Check the command strings in ``args``: every quoted string, plus the word after a command flag.

    ``command_flags=None``: the whole unquoted argument text is a command (``!for_each_module k``).
    ``deferred``: the strings run later (an event's or the prompt's command), not now.
    """
    words = tokens(args, command_string_escapes(w))
    if words is None:
        w.add(piece, _UNKNOWN, "a quoted string never closes")
        return
    if command_flags is None:
        strings = [text for is_string, text in words if is_string]
        joined = " ".join(
            text[3:] if text.lower().startswith("-c:") else text
            for is_string, text in words
            if not is_string and not re.match(r"-(?!c:)\w+:", text, re.IGNORECASE)
        )
        for text in strings:
            w.nested(text, deferred=deferred)
        if not strings and joined.strip():
            w.nested(joined, deferred=deferred)
        return
    flags = {f.lower() for f in command_flags}
    expect_command = False
    for is_string, text in words:
        if is_string or expect_command:
            w.nested(text, deferred=deferred)
            expect_command = False
            continue
        lowered = text.lower()
        glued = next((f for f in sorted(flags, key=len, reverse=True) if lowered.startswith(f)), None)
        if lowered in flags:
            expect_command = True
        elif glued is not None and not lowered[len(glued) :].isdigit():
            w.nested(text[len(glued) :], deferred=deferred)  # "-c.shell" (flag and command glued)


def alias_command(w: Walker, piece: str, source: str) -> None:
    """``as``/``aS`` (``source`` is the rest of the line for ``as``, the piece for ``aS``)."""
    m = _ALIAS_PARSE_RE.match(source)
    if m is None:
        w.add(piece, _UNKNOWN, "an alias definition kd-mcp cannot read")
        return
    switches = [s.lower() for s in m.group("switches").split()]
    name = m.group("name")
    problem = alias_name_refusal(name)
    if problem is not None:
        # output_control, as .outmask: the alias can take from the engine the output it reads (its
        # ".echo <marker>" line), so no one may allow it once (kdmcp/server/asking.py); only full runs it
        w.add(piece, _OUTPUT_CONTROL, problem)
    value = m.group("value") or ""
    if source.startswith("aS") and value.strip().startswith('"'):
        stripped = value.strip()
        end = string_end(stripped, 0, w.lex.escapes)
        value = stripped[1 : end - 1] if end is not None else stripped[1:]
    elif source.startswith("aS"):
        value = value.split(";")[0]
    unknown_switches = [s for s in switches if s not in ("/x", "/c", "/e", "/f", "/ma", "/mu", "/msa", "/msu")]
    if unknown_switches:
        w.add(piece, _UNKNOWN, f"an alias switch kd-mcp does not know: {unknown_switches[0]}")
    elif "/c" in switches:
        w.add(piece, _UNKNOWN, "the alias will hold command output, which any later use could run")
        w.nested(value)  # "/c": the command runs now, its output becomes the value
    elif "/x" in switches:
        w.alias_values.setdefault(name, []).append("0")
        w.add(piece, _READ, "defines an alias to a number")
    elif switches:
        if "/f" in switches:
            w.add(piece, _HOST_FILE_READ, "reads a file on the debugger host into the alias")
        w.add(
            piece, _UNKNOWN, "the alias takes text from memory, the environment or a file; any use could run it"
        )
    else:
        alias_value(w, piece, name, value.strip())


# kd replaces a user-named alias "only if its name is separated from other characters by white
# space. The first character of its alias name must begin the line or follow a space, a
# semicolon, or a quotation mark" (Using Aliases). So an alias reaches a word of a later line --
# a command's name, an extension's, the engine's ".echo <marker>" completion line, a number the
# typed tools send -- only when its name is that whole word. A name of letters, digits and '_'
# that starts with a letter and is none of those words reaches none of them.
_ALIAS_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_HEX_WORD_RE = re.compile(r"[0-9A-Fa-f]+", re.ASCII)
# The engine's completion marker is "KDMCP" + hex + "N" + a counter (engine/machine.py).
_ENGINE_WORDS_RE = re.compile(r"kdmcp", re.IGNORECASE)
_OTHER_COMMAND_WORDS = frozenset({"j", "lse", "lsf", "a", "q", "qq", "qd", "as", "ad", "al"})


def alias_name_refusal(name: str) -> str | None:
    """Why an alias named ``name`` could change what a later line means (None: it cannot)."""
    from kdmcp.command.allowlist import EXTENSION_MODULES, entry_for
    from kdmcp.command.tables import LETTER_RULES_BY_FIRST

    reason = "an alias named '{}' would replace {} in every later line (the engine's own lines included)"
    if not _ALIAS_NAME_RE.fullmatch(name):
        return reason.format(name, "a meta-command, an extension, a selector or a token kd reads")
    if _ENGINE_WORDS_RE.match(name):
        return reason.format(name, "the engine's completion marker")
    if _HEX_WORD_RE.fullmatch(name):
        return reason.format(name, "a number")
    lowered = name.lower()
    found = entry_for(name)
    is_command = (not isinstance(found, str) and not found[1].strip()) or lowered in _OTHER_COMMAND_WORDS or any(
        rule.fullmatch(name) for rule, _c, _r in LETTER_RULES_BY_FIRST.get(lowered[0], ())
    )
    if is_command:
        return reason.format(name, "a command's name")
    if not isinstance(entry_for("!" + name), str) or lowered in EXTENSION_MODULES:
        return reason.format(name, "an extension's name")
    return None


def alias_value(w: Walker, piece: str, name: str, value: str) -> None:
    """An alias is pasted in wherever its name appears later: allow only single words."""
    w.alias_values.setdefault(name, []).append(value)
    if value[:1] in ("-", "/") and value[1:2].isalpha():
        # "aS va -mmw" then "!chkimg va log nt": the policy reads "va", kd runs "-mmw".
        w.add(piece, _UNKNOWN, f"defines an alias holding the option '{value}', which any later command could take")
        return
    if _SINGLE_WORD_RE.fullmatch(value):
        for f in w.collect(value) if value else []:
            if f.command_class not in (_READ, _UNKNOWN):
                w.add(piece, f.command_class, f"defines an alias that runs '{value}', which {f.reason}")
        w.add(piece, _READ, "defines an alias to a single word")
        return
    w.add(piece, _UNKNOWN, "defines an alias to more than one word, which can change any later command")
    w.nested(value, deferred=True)  # the value runs where the alias is used, not here


def dx(w: Walker, piece: str, expression: str) -> None:
    """``dx``: reads, unless it assigns or calls into the debugger (``ExecuteCommand``...)."""
    masked: list[str] = []
    literals: list[str] = []
    i, n, start = 0, len(expression), 0
    while i < n:
        if expression[i] == '"':
            end = string_end(expression, i, "any")
            if end is None:
                w.add(piece, _UNKNOWN, "a dx string literal never closes")
                return
            masked.append(expression[start:i] + _DX_STRING_PLACEHOLDER.format(len(literals)))
            literals.append(expression[i + 1 : end - 1])
            i = start = end
            continue
        i += 1
    masked.append(expression[start:])
    code = "".join(masked)
    before = len(w.findings)
    if _DX_ASSIGN_RE.search(code):
        w.add(piece, _MEMORY_WRITE, "assigns (dx can write target memory and registers)")
    executed: set[int] = set()
    for call in _DX_EXECUTE_CALL_RE.finditer(code):
        index = int(call.group("index"))
        executed.add(index)
        for text in dict.fromkeys((c_unescape(literals[index]), literals[index])):
            if _CONTROL_CHAR_RE.search(text) or "\n" in text or "\r" in text or not text.isascii():
                w.add(piece, _UNKNOWN, "ExecuteCommand with control or non-ASCII characters")
            else:
                w.nested(text)
    if len(_DX_EXECUTE_RE.findall(code)) != len(executed):
        w.add(piece, _UNKNOWN, "ExecuteCommand with something other than one string literal")
    for control in _DX_CONTROL_RE.finditer(code):
        member = (control.group("member") or "").lower()
        if member == "executecommand" or member.startswith("setbreakpoint"):
            continue
        w.add(piece, _UNKNOWN, "uses Debugger.Utility.Control, which can run debugger commands")
    if any(not re.fullmatch(r"[\w.\-: ]*[.\-: ][\w.\-: ]*", literals[int(i)]) or "+" in index
           for index, i in _DX_INDEX_RE.findall(code)):
        w.add(piece, _UNKNOWN, "names a member with a string (Utility[\"Contr\" + \"ol\"] reaches any member)")
    if "\\" in code:
        w.add(piece, _UNKNOWN, "an escape outside a string literal can spell any member's name")
    if _DX_BREAKPOINT_RE.search(code):
        w.add(piece, _EXECUTION, "sets a breakpoint")
    if _DX_FILESYSTEM_RE.search(code):
        w.add(piece, _FILE_WRITE, "uses Debugger.Utility.FileSystem, which can write host files")
        w.add(piece, _HOST_FILE_READ, "uses Debugger.Utility.FileSystem, which can read host files")
    if _DX_SETTINGS_RE.search(code) and (_DX_ASSIGN_RE.search(code) or "(" in code):
        w.add(piece, _SETTINGS_CHANGE, "changes Debugger.Settings (the same power as .settings set)")
    if _DX_SCRIPTS_RE.search(code):
        w.add(piece, _UNKNOWN, "calls into a loaded script, which can do anything")
    if _DX_SIDE_EFFECT_RE.search(code):
        w.add(piece, _UNKNOWN, "calls a data-model method that may act on the target or host")
    if _DX_TARGET_CALL_RE.search(code):
        w.add(piece, _UNKNOWN, "calls a function in the target")
    _dx_allowlist(w, piece, code)
    for index, literal in enumerate(literals):
        if index not in executed and _DX_SUSPICIOUS_LITERAL_RE.search(literal):
            w.add(piece, _UNKNOWN, "a string naming a debugger-control member (could be used to reach it)")
    if len(w.findings) == before or all(f.command_class is _READ for f in w.findings[before:]):
        w.add(piece, _READ, "evaluates a data-model expression")
    elif all(f.piece != piece.strip() for f in w.findings[before:]):
        w.add(piece, _READ, "dx (the commands it runs are checked on their own)")


def _dx_allowlist(w: Walker, piece: str, code: str) -> None:
    """dx on the allowlist: listed options first, and a call only to a listed method or function.

    ``code`` has its string literals masked. A call is ``name(`` where ``name`` is a method
    (after a ``.``: ``Where``, ``Count``...), a listed function, or anything else -- ``@$name(...)``
    runs a function a loaded script registered; ``...SyntheticTypes.ReadHeader("c:/x.h", ...)``
    reads a host file, however its path is spelled (the literal's text is not what decides).
    """
    rest = code.strip()
    while True:
        option = _DX_OPTION_RE.match(rest)
        if option is None:
            break
        rest = rest[option.end() :].lstrip()
    if rest[:1] in ("-", "/") and rest[1:2].isalpha():
        w.add(piece, _UNKNOWN, f"the dx option '{rest.split()[0]}' is not on kd-mcp's allowlist")
    for call in _DX_CALL_RE.finditer(rest):
        name = call.group("name")
        method = call.group("dot") is not None
        if name.startswith(("@$", "$")):
            w.add(piece, _CODE_LOAD, f"calls '{name}', a function a loaded script registered (its code runs)")
        elif name.lower() == "readheader":
            w.add(piece, _HOST_FILE_READ, "SyntheticTypes.ReadHeader reads a header file on the debugger host")
        elif (method and name.lower() not in DX_METHODS) or (not method and name.lower() not in DX_FUNCTIONS):
            w.add(piece, _UNKNOWN, f"calls '{name}', which is not on kd-mcp's allowlist of dx methods")
