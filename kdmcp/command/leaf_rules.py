"""The rules for one command (a leaf of the reader's tree): its class, and the command strings in it.

Each function decides the class of one command kd would run -- by its first character
(``~``/``|`` selectors, ``!`` extensions, ``.`` meta-commands, ``$``, ``*``, ``?``) and
then by name -- and hands the command strings it carries to
:mod:`~kdmcp.command.command_strings`. They take the :class:`~kdmcp.command.walker.Walker`
whose findings they add to, so the walk (:mod:`~kdmcp.command.walker`) stays one idea and
the leaf rules another. Where kd's reading is uncertain every reading is checked (fail closed).

Pure: stdlib only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kdmcp.command.allowlist import extra_entry
from kdmcp.command.allowlist import refusal as allowlist_refusal
from kdmcp.command.classes import PROFILE_ALLOWS
from kdmcp.command.command_strings import alias_command, alias_value, breakpoint_strings, dx, strings_and_words
from kdmcp.command.grammar import refusal as args_refusal
from kdmcp.command.lexing import PROCESS_PREFIX_RE as _PROCESS_PREFIX_RE
from kdmcp.command.lexing import THREAD_EXECUTE_RE as _THREAD_EXECUTE_RE
from kdmcp.command.lexing import THREAD_PREFIX_RE as _THREAD_PREFIX_RE
from kdmcp.command.lexing import match_close, skip_ws
from kdmcp.command.syntax import J_RE, read_list
from kdmcp.command.tables import (
    _ALIAS_OTHER_RE,
    _ALIAS_SET_RE,
    _BANG_RE,
    _BANG_READ,
    _BANG_WRITE,
    _BREAKPOINT_EDIT_RE,
    _BREAKPOINT_RE,
    _CODE_LOAD,
    _CPP_ASSIGN_RE,
    _DOT_COMMANDS,
    _DOT_RE,
    _DX_RE,
    _EXECUTION,
    _FILE_WRITE,
    _FIXED_ALIAS_REGISTER_RE,
    _HOST_EXEC,
    _HOST_FILE_READ,
    _KNOWN_EXTENSION_MODULES,
    _LD_RE,
    _LSE_RE,
    _LSF_RE,
    _MEMORY_WRITE,
    _NETWORK_PATH,
    _OUTPUT_CONTROL,
    _READ,
    _REGISTER_ASSIGN_RE,
    _REGISTER_RE,
    _REGISTER_TARGET_RE,
    _SCRIPT_RE,
    _SETTINGS_CHANGE,
    _STEP_RE,
    _SX_RE,
    _TEMP_REGISTER_RE,
    _UNKNOWN,
    _Z_RE,
    LETTER_RULES_BY_FIRST,
    PRINT_ONLY_RE,
)

if TYPE_CHECKING:
    from kdmcp.command.walker import Walker

__all__ = ["single_command"]

_STANDARD = PROFILE_ALLOWS["standard"]
# Meta-commands that show a debugger option bare and set it with an argument (or as ".x+"/".x-"):
# how later output reads (radix, Unicode, DML, disassembly, source lines, time stamps), which
# symbols load and how (.symopt, .netsyms), how the target is stepped or cached.
_SETTING_DOTS = frozenset({
    "force_radix_output", "enable_long_status", "enable_unicode", "kframes", "prefer_dml", "echotimestamps",
    "asm", "symopt", "lines", "netsyms", "ignore_missing_pages", "inline", "echocpunum", "locale", "step_filter",
    "childdbg", "bpsync", "cache", "typeopt", "hideinjectedcode", "record_branches", "show_read_failures",
    "show_sym_failures",
})  # fmt: skip
# An extension option in either spelling: EngExtCpp-based extensions parse "/x" like "-x".
_BANG_OPTION_RE = re.compile(r"(?:^|\s)[-/](?P<name>[A-Za-z]\w*)")


def single_command(w: Walker, piece: str) -> None:
    """Classify one command (no top-level ``;`` in it), then look it up on the allowlist.

    A command whose findings are all of classes ``standard`` may allow must also be on the
    allowlist (:mod:`~kdmcp.command.known`) with every option and argument it has; anything
    else is ``unknown`` (denied outside ``full``). A command already denied by its class keeps
    that class alone, so the verdict names it.
    """
    if not piece:
        return
    extra = extra_entry(piece, w.extra) if w.extra else None
    if extra is not None:
        w.add(piece, _READ, "a command the config adds to the allowlist (allow_commands)")
        problem = args_refusal(extra[0], extra[1], w.roots)
        if problem is not None:
            w.add(piece, _UNKNOWN, problem)
        return
    before = len(w.findings)
    _classify(w, piece)
    if all(f.command_class in _STANDARD for f in w.findings[before:]):
        problem = allowlist_refusal(piece, w.roots)
        if problem is not None:
            w.add(piece, _UNKNOWN, problem)


def _classify(w: Walker, piece: str) -> None:
    if not PRINT_ONLY_RE.match(piece):
        w.network_words(piece, piece)
    first = piece[0]
    if first in "~|":
        selector(w, piece)
    elif first == "!":
        bang(w, piece)
    elif first == ".":
        dot(w, piece)
    elif first == "$":
        if piece.startswith("${"):
            w.add(piece, _UNKNOWN, "an alias expansion: what it pastes in is not known here")
        elif _SCRIPT_RE.match(piece):
            w.add(piece, _CODE_LOAD, "runs a script file (its commands are not seen here)")
        elif piece.startswith("$$"):
            w.add(piece, _READ, "comment (it ends at the next ';')")
        else:
            w.add(piece, _UNKNOWN, "not a command kd-mcp knows")
    elif first == "*":
        w.add(piece, _READ, "comment (kd ignores the rest of the line; it is checked anyway)")
    elif first == "?":
        if piece.startswith("??") and _CPP_ASSIGN_RE.search(piece[2:]):
            w.add(piece, _MEMORY_WRITE, "a C++ expression with an assignment")
        else:
            w.add(piece, _READ, "evaluates an expression")
    elif first.isascii() and (first.isalpha() or first == "#"):
        letter(w, piece)
    else:
        w.add(piece, _UNKNOWN, "not a command kd-mcp knows")


def selector(w: Walker, piece: str) -> None:
    """``~*e cmd``, ``~3 kb``, ``~2f``, ``|1s``, ``||0 ...``."""
    thread = piece.startswith("~")
    m = (_THREAD_PREFIX_RE if thread else _PROCESS_PREFIX_RE).match(piece)
    rest = piece[m.end() :].strip() if m is not None else piece
    what = "thread or processor" if thread else "process or system"
    if not rest:
        w.add(piece, _READ, f"lists or shows the current {what}")
    elif rest.lower() == "s":
        w.add(piece, _READ, f"switches the current {what}")
    elif thread and rest.lower() in ("f", "u", "n", "m"):
        w.add(piece, _EXECUTION, "freezes, thaws, suspends or resumes a thread")
    elif _THREAD_EXECUTE_RE.match(rest):
        inner = rest[1:].strip()
        if inner:
            w.nested(inner)
        else:
            w.add(piece, _UNKNOWN, "~e without a command")
    else:
        w.add(piece, _READ, f"a {what} prefix (the command after it is checked on its own)")
        if rest[:1].lower() == "e":
            w.nested(rest[1:])  # "~0 eb..." might also be read as "~0 e b..."
        w.nested(rest)


def dot(w: Walker, piece: str) -> None:
    """Dot commands: by name, with a few whose options or command strings matter."""
    m = _DOT_RE.match(piece)
    if m is None:
        w.add(piece, _UNKNOWN, "not a command kd-mcp knows")
        return
    name = m.group("name").lower()
    args = piece[m.end() :].strip()
    base_name = name if name in _DOT_COMMANDS else name.rstrip("+-")
    if base_name in ("sympath", "srcpath", "lsrcpath", "exepath", "extpath"):
        w.walk(read_list(piece, w.lex, None, w.depth))
    elif base_name == "expr" and re.search(r"/s\b", args, re.IGNORECASE):
        w.add(piece, _SETTINGS_CHANGE, "changes the expression evaluator, which changes how later lines read")
    elif base_name == "expr":
        if "c++" in args.lower():
            w.add(piece, _MEMORY_WRITE, "switches to the C++ evaluator, whose expressions can assign")
        else:
            w.add(piece, _READ, "shows or sets the expression evaluator")
    elif base_name == "settings":
        verb = args.split()[0].lower() if args else "list"
        if verb in ("list", "help"):
            w.add(piece, _READ, "lists debugger settings")
        elif verb == "save":
            w.add(piece, _FILE_WRITE, "writes a settings file on the debugger host")
        elif verb == "load":
            w.add(piece, _HOST_FILE_READ, "reads a settings file from the debugger host")
            w.add(piece, _SETTINGS_CHANGE, "loads debugger settings (they can change what gets loaded)")
        elif verb in ("set", "clear"):
            w.add(piece, _SETTINGS_CHANGE, "changes debugger settings (they can change what gets loaded)")
        else:
            w.add(piece, _UNKNOWN, "a .settings verb kd-mcp does not know")
    elif base_name in ("outmask", "ofilter", "prompt_allow") and args and args.lower() not in ("/a", "/d"):
        # The documentation says ".outmask Expression" adds bits; any form but "/a" (all on)
        # and "/d" (the default) is denied all the same, in case a kd version sets them.
        w.add(piece, _OUTPUT_CONTROL, "changes which output kd prints (it can hide what the engine reads)")
    elif base_name in ("outmask", "ofilter", "prompt_allow"):
        w.add(piece, _READ, f".{name} (shows the setting or turns all output on)")
    elif base_name == "readmem":
        w.add(piece, _HOST_FILE_READ, "reads a file from the debugger host")
        w.add(piece, _MEMORY_WRITE, "writes the file's bytes into target memory")
    elif base_name == "dml_start":
        if args:
            w.add(piece, _HOST_FILE_READ, "shows a DML file from the debugger host")
        else:
            w.add(piece, _READ, "shows DML commands")
    elif base_name in ("srcfix", "lsrcfix"):
        w.add(piece, _NETWORK_PATH, "a source server: the host fetches files and runs the PDB's commands")
    elif base_name == "pcmd" and re.match(r"[-/]s", args, re.IGNORECASE):
        # The command runs at every prompt -- right after this line, so its run effect counts.
        w.add(piece, _SETTINGS_CHANGE, "sets a command kd runs at every prompt, after every later command too")
        strings_and_words(w, piece, args, command_flags=("-s", "/s"))
    elif base_name == "pcmd":
        w.add(piece, _READ, "shows or clears the command run at every prompt")
    elif base_name == "cxr" and re.search(r"/w\b", args, re.IGNORECASE):
        w.add(piece, _MEMORY_WRITE, "writes the context record to target memory")
    elif base_name == "process" and re.search(r"(?:^|\s)[-/]i\b", args, re.IGNORECASE):
        w.add(piece, _EXECUTION, "switches process invasively (the target runs to get there)")
    elif base_name in _SETTING_DOTS and (args or name.endswith(("+", "-"))):
        w.add(piece, _SETTINGS_CHANGE, f"changes a debugger option (.{name}): later output or symbols read differently")
    elif base_name == "extmatch" and re.search(r"(?:^|\s)[-/]e", args, re.IGNORECASE):
        w.add(piece, _CODE_LOAD, "resolves (and loads) an extension DLL by name (/e ExtDLL)")
    elif base_name == "browse":
        w.add(piece, _READ, "runs a command with DML output (checked on its own)")
        w.nested(args)
    elif base_name in _DOT_COMMANDS:
        command_class, reason = _DOT_COMMANDS[base_name]
        w.add(piece, command_class, reason)
    else:
        w.add(piece, _UNKNOWN, f"'.{name}' is not a command kd-mcp knows")


def bang(w: Walker, piece: str) -> None:
    """``!!`` (host program) and extension commands ``!name`` / ``!module.name``."""
    if piece.startswith("!!"):
        w.add(piece, _HOST_EXEC, "runs a program on the debugger host")
        return
    m = _BANG_RE.match(piece)
    if m is None:
        w.add(piece, _UNKNOWN, "not an extension command kd-mcp knows")
        return
    module = (m.group("module") or "").lower()
    name = m.group("name").lower()
    args = piece[m.end() :]
    options = {o.group("name").lower() for o in _BANG_OPTION_RE.finditer(args)}
    if module and module not in _KNOWN_EXTENSION_MODULES:
        w.add(piece, _CODE_LOAD, f"loads the extension DLL '{module}' by name")
    elif name == "load":
        w.add(piece, _CODE_LOAD, "loads an extension DLL")
    elif name.startswith("for_each_"):
        w.add(piece, _READ, f"!{name} (runs a command for each item; checked on its own)")
        if "@#" in args:
            w.add(piece, _UNKNOWN, "pastes target-controlled text (@#...) into the command it runs")
        strings_and_words(w, piece, args, command_flags=None)
    elif name == "analyze" and options & {"load", "c"}:
        w.add(piece, _HOST_FILE_READ, "loads a failure-analysis file from the debugger host")
    elif name == "analyze" and "xmf" in options:
        w.add(piece, _FILE_WRITE, "writes the analysis to a file on the debugger host")
    elif name == "chkimg" and "mmw" in options:
        w.add(piece, _FILE_WRITE, "writes a log file on the debugger host (-mmw LogFile)")
    elif name == "chkimg" and "p" in options:
        w.add(piece, _HOST_FILE_READ, "reads image files from a path on the debugger host (-p SearchPath)")
    elif name == "chkimg" and "f" in options:
        w.add(piece, _MEMORY_WRITE, "fixes (rewrites) image memory in the target")
    elif name == "address" and "c" in {o.split(":")[0] for o in _option_words(args)}:
        w.add(piece, _UNKNOWN, "runs a command for each region (-c:\"...\"), with target-controlled text")
    elif name == "gflag" and args.strip():
        w.add(piece, _MEMORY_WRITE, "sets global flags in the target")
    elif name == "homedir" and args.strip():
        w.add(piece, _SETTINGS_CHANGE, "changes the debugger's home directory (where symbols and settings go)")
    elif name in _BANG_WRITE:
        w.add(piece, _MEMORY_WRITE, "writes physical memory, an I/O port or PCI space")
    elif name in _BANG_READ:
        w.add(piece, _READ, f"!{name} (reads target state)")
    else:
        w.add(piece, _UNKNOWN, f"'!{name}' is not an extension command kd-mcp knows")


# First letters of the commands with handlers of their own below (bp/bu/bm/ba/bs/bsc, sx*, dx,
# r*, as/aS/ad/al, z, p*/t*, j, lse/lsf/ld): any other piece goes straight to the rule table.
_HANDLED_FIRST = frozenset("bsdrazptjl")


def _option_words(args: str) -> list[str]:
    """The option words of an extension's arguments, lower case, without their '-' or '/'."""
    return [word[1:].lower() for word in args.split() if word[:1] in "-/" and word[1:2].isalpha()]


_RADIX_RE = re.compile(r"n(?![A-Za-z_])\s*\S", re.IGNORECASE)
# Letter commands that set an option when given one: "rm 8" (register mask), "ss a" (symbol
# suffix), "lsp -a 40" (source lines shown), "l+t"/"l-s" (source options).
# "rm" is lower case: "rM 4" is r with a register mask for this display only (r, Registers).
_LETTER_SETTING_RE = re.compile(r"(?:rm|(?i:ss|lsp))(?![A-Za-z_])\s*\S|l[+-]")


def letter(w: Walker, piece: str) -> None:
    """Commands whose name is letters: ``k``, ``dd``, ``bp``, ``r``, ``dx``..."""
    first = piece[0].lower()  # an ASCII letter or '#' (single_command's test)
    if _LETTER_SETTING_RE.match(piece):
        w.add(piece, _SETTINGS_CHANGE, "changes a debugger option: later output reads differently")
        return
    if first in _HANDLED_FIRST and _handled(w, piece):
        return
    if first == "n" and _RADIX_RE.match(piece):
        # "n 8", "n 0n10": the default radix changes, so every bare number a later line (the
        # typed tools' addresses, counts) sends is read in another base.
        w.add(piece, _SETTINGS_CHANGE, "changes the default number base, which changes how later lines read")
        return
    for pattern, command_class, reason in LETTER_RULES_BY_FIRST[first]:
        if pattern.match(piece):
            w.add(piece, command_class, reason)
            return
    w.add(piece, _UNKNOWN, "not a command kd-mcp knows")


def _handled(w: Walker, piece: str) -> bool:
    """The letter commands with handlers of their own; False when ``piece`` is none of them."""
    m = _BREAKPOINT_RE.match(piece) or _BREAKPOINT_EDIT_RE.match(piece)
    if m is not None:
        breakpoint_strings(w, piece, piece[m.end() :])
        return True
    m = _SX_RE.match(piece)
    if m is not None:
        if m.group("op"):
            w.add(piece, _EXECUTION, "changes when exceptions and events stop the target")
        else:
            w.add(piece, _READ, "lists exception and event settings")
        strings_and_words(w, piece, piece[m.end() :], command_flags=("-c", "-c2"), deferred=True)
        return True
    m = _DX_RE.match(piece)
    if m is not None:
        dx(w, piece, piece[m.end() :])
        return True
    m = _REGISTER_RE.match(piece)
    if m is not None:
        register(w, piece, piece[m.end() :])
        return True
    if _ALIAS_SET_RE.match(piece):
        alias_command(w, piece, piece)
        return True
    if _ALIAS_OTHER_RE.match(piece):
        w.add(piece, _READ, "lists or deletes aliases")
        return True
    m = _Z_RE.match(piece)
    if m is not None:
        z_command(w, piece, piece[m.end() :])
        return True
    m = _STEP_RE.match(piece)
    if m is not None:
        w.add(piece, _EXECUTION, "steps or traces the target (a command string after it is checked on its own)")
        strings_and_words(w, piece, piece[m.end() :], command_flags=())
        return True
    if J_RE.match(piece):
        w.walk(read_list(piece, w.lex, None, w.depth))
        return True
    if _LSE_RE.match(piece):
        w.add(piece, _HOST_EXEC, "starts a source editor on the debugger host")
        return True
    if _LSF_RE.match(piece):
        w.add(piece, _HOST_FILE_READ, "loads a source file from the debugger host")
        return True
    if _LD_RE.match(piece) and re.search(r"/f\b", piece, re.IGNORECASE):
        w.add(piece, _HOST_FILE_READ, "loads symbols from a named file on the debugger host")
        return True
    return False


def register(w: Walker, piece: str, args: str) -> None:
    """``r`` displays registers; ``r reg=value`` writes them (``$t0``: debugger temporaries)."""
    assignments = list(_REGISTER_ASSIGN_RE.finditer(args))
    if not assignments:
        w.add(piece, _READ, "displays registers")
        return
    for m in assignments:
        target_match = _REGISTER_TARGET_RE.search(args[: m.start()])
        target = target_match.group("target") if target_match else ""
        if _FIXED_ALIAS_REGISTER_RE.fullmatch(target):
            alias_value(w, piece, target.lstrip("@").replace(".", ""), args[m.end() :].strip().strip('"'))
        elif _TEMP_REGISTER_RE.fullmatch(target):
            w.add(piece, _READ, "sets a debugger temporary register ($t0-$t19)")
        else:
            w.add(piece, _MEMORY_WRITE, f"writes the register or pseudo-register '{target or '?'}'")


def z_command(w: Walker, piece: str, args: str) -> None:
    """``Commands ; z( Expression )`` repeats the commands before it; anything after it is checked."""
    w.add(piece, _READ, "repeats the preceding commands while a condition holds")
    i = skip_ws(args, 0)
    if i < len(args) and args[i] == "(":
        end = match_close(args, i, w.lex)
        if end is None:
            w.add(piece, _UNKNOWN, "z with a condition that never closes")
            return
        rest = args[end:].strip()
        if rest:
            w.nested(rest)
