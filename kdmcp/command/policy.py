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

Limits, by design of a stateless check: aliases, ``.expr`` and other settings made by
earlier calls are not known here, so every alias expansion is ``unknown`` (unless defined
earlier in the same line in a form kd is documented to expand), and alias definitions
are allowed only when their value is a single word.

Pure: no I/O; stdlib and pydantic only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "PROFILE_ALLOWS",
    "CommandClass",
    "Finding",
    "Profile",
    "Verdict",
    "check",
    "classify",
    "launch_flags",
]


class CommandClass(str, Enum):
    """What a command can do; ``unknown`` means this module does not understand it."""

    READ = "read"
    MEMORY_WRITE = "memory_write"
    EXECUTION = "execution"
    HOST_EXEC = "host_exec"
    CODE_LOAD = "code_load"
    FILE_WRITE = "file_write"
    TARGET_DESTRUCTIVE = "target_destructive"
    SESSION_ENDING = "session_ending"
    UNKNOWN = "unknown"


_READ = CommandClass.READ
_MEMORY_WRITE = CommandClass.MEMORY_WRITE
_EXECUTION = CommandClass.EXECUTION
_HOST_EXEC = CommandClass.HOST_EXEC
_CODE_LOAD = CommandClass.CODE_LOAD
_FILE_WRITE = CommandClass.FILE_WRITE
_TARGET_DESTRUCTIVE = CommandClass.TARGET_DESTRUCTIVE
_SESSION_ENDING = CommandClass.SESSION_ENDING
_UNKNOWN = CommandClass.UNKNOWN

Profile = Literal["read_only", "standard", "full"]

# What each profile lets through. "standard" is for hands-on debugging of the guest: it
# may write guest memory, run and even crash the guest, but never touch the host
# (programs, code, files) nor end the session.
PROFILE_ALLOWS: dict[Profile, frozenset[CommandClass]] = {
    "read_only": frozenset({_READ}),
    "standard": frozenset({_READ, _MEMORY_WRITE, _EXECUTION, _TARGET_DESTRUCTIVE}),
    "full": frozenset(CommandClass),
}

# Most dangerous first: when several findings are denied, the verdict names the worst.
_SEVERITY: tuple[CommandClass, ...] = (
    _HOST_EXEC,
    _CODE_LOAD,
    _FILE_WRITE,
    _TARGET_DESTRUCTIVE,
    _SESSION_ENDING,
    _UNKNOWN,
    _MEMORY_WRITE,
    _EXECUTION,
    _READ,
)

_MAX_DEPTH = 12  # nesting of blocks / command strings before we give up (-> unknown)
_MAX_EXPANSIONS = 16  # ".foreach /s" tokens we substitute and re-check
_MAX_ALIAS_VARIANTS = 4  # alias values we substitute into one line (and 2 levels of that)
_MAX_NESTED = 2000  # bodies and command strings followed per line and reading (then: unknown)
_MAX_LINE = 16384  # characters; kd's own command lines are far shorter
_HEAD_WINDOW = 256  # characters looked at to recognise a command's name behind selectors
_SHOWN_PIECE = 160  # characters of a piece quoted in a verdict message


class Finding(BaseModel):
    """One command kd would run (or text it would read as one), and its class."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    piece: str
    command_class: CommandClass
    reason: str


class Verdict(BaseModel):
    """The answer of :func:`check`: allowed or not, and why, in the caller's terms."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Profile
    allowed: bool
    findings: list[Finding]
    denied_class: CommandClass | None = None
    denied_piece: str | None = None
    message: str


# --------------------------------------------------------------------------- public API


def classify(command: str) -> list[Finding]:
    """Every command ``command`` would make kd run, each with its class (in text order).

    Never raises and never returns an empty list: an empty line is ``unknown`` because
    kd repeats the previous command (``p``, ``t``, ``d*``...) when given one.
    """
    if not command.strip():
        return [Finding(piece=command, command_class=_UNKNOWN, reason="an empty line makes kd repeat the last command")]
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
        line_findings = _classify_line(line, 0)
        if not line_findings:  # only separators: kd may treat it like an empty line
            line_findings = [Finding(piece=line, command_class=_UNKNOWN, reason="a line with no command in it")]
        findings.extend(line_findings)
    return list(dict.fromkeys(findings))


def check(command: str, profile: Profile) -> Verdict:
    """Whether ``profile`` allows ``command``: every finding's class must be allowed."""
    if profile not in PROFILE_ALLOWS:
        raise ValueError(f"unknown policy profile {profile!r}; expected one of {sorted(PROFILE_ALLOWS)}")
    allowed_classes = PROFILE_ALLOWS[profile]
    findings = classify(command)
    denied = [f for f in findings if f.command_class not in allowed_classes]
    if not denied:
        classes = sorted({f.command_class.value for f in findings})
        return Verdict(
            profile=profile,
            allowed=True,
            findings=findings,
            message=f"allowed by profile '{profile}' ({', '.join(classes)})",
        )
    worst = min(denied, key=lambda f: _SEVERITY.index(f.command_class))
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


# --------------------------------------------------------------------------- patterns

_FLAGS = re.IGNORECASE | re.ASCII

# Line breaks: the console hands kd each line as its own command line.
_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
# Control characters other than tab (tab is whitespace to kd).
_CONTROL_CHAR_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

# Control-flow tokens (".block {", ".if (c) {", ".foreach (v {c}) {"): bodies are blocks.
_CONTROL_RE = re.compile(r"\.(?P<kw>block|catch|if|elsif|else|foreach|for|while|do)(?!\w)", _FLAGS)
_ELSIF_RE = re.compile(r"\.elsif(?!\w)", _FLAGS)
_ELSE_RE = re.compile(r"\.else(?!\w)", _FLAGS)
# ".foreach" options: "/pS 2", "/ps 4" (skip counts), "/s" (tokens of a string), "/f" (of a file).
_FOREACH_OPTION_RE = re.compile(r"/(?:pS|ps)\s+[^\s(]+|/(?P<flag>[sf])(?!\w)", _FLAGS)
# "j Expression 'Command1' ; 'Command2'": kd gives j the rest of the line.
_J_RE = re.compile(r"j(?![A-Za-z_])", _FLAGS)
# Commands whose argument is a ';'-separated path list, so they take the rest of the line:
# ".sympath[+] [Path [; ...]]".
_PATH_COMMAND_RE = re.compile(r"\.(?P<name>sympath|srcpath|lsrcpath|exepath|extpath)\+?(?!\w)", _FLAGS)
# A path-list element that cannot also be read as a command ("c:\sym", "\\share", "srv*...").
_PATH_LIKE_RE = re.compile(r"(?:[A-Za-z]:[\\/]|\\\\|(?:srv|symsrv|cache)\*|https?://)[^;]*$", _FLAGS)
# "as Name EquivalentLine": the value is the rest of the line, ';' included (docs of as/aS).
# "aS" (exact case) takes a phrase instead: quoted, or up to the next ';'.
_ALIAS_SET_RE = re.compile(r"a[sS](?=\s|$)", re.IGNORECASE)
# "as [/switch ...] Name [value]" once the command name is known.
_ALIAS_PARSE_RE = re.compile(r"a[sS]\s+(?P<switches>(?:/\S+\s+)*)(?P<name>[^\s/]\S*)(?:\s+(?P<value>.*))?", re.S)
# A line starting exactly with as/aS/ad/al is not alias-expanded as a whole (kd checks
# this so a line can define an alias and use it in a later { } block).
_ALIAS_LINE_START_RE = re.compile(r"a[sSdl](?=\s|$)")

# Alias uses kd pastes text in for: "${name}", "${/v:name}", "${/f:name}", "${/n:name}";
# "${/d:name}" is only 1 or 0 (defined or not).
_ALIAS_USE_RE = re.compile(r"\$\{(?P<opt>/[A-Za-z]:)?(?P<name>[^}]*)\}?")
# Fixed-name aliases "$u0".."$u9", pasted in wherever they appear ("$.u0" is how they are set).
_FIXED_ALIAS_RE = re.compile(r"(?<!\.)\$u[0-9]", re.IGNORECASE)
# Automatic aliases holding host-chosen text (dump file names).
_AUTO_ALIAS_RE = re.compile(r"\$CurrentDump\w*", re.IGNORECASE)
# "@@c++( ... )" / "@@( ... )": a C++ sub-expression, where '=' assigns.
_CPP_SUBEXPR_RE = re.compile(r"@@(?:c\+\+)?\(", re.IGNORECASE)
# C++ assignment operators ('=' that is not part of ==, !=, <=, >=; ++, --, op=).
_CPP_ASSIGN_RE = re.compile(r"(?<![=!<>])=(?!=)|\+\+|--|(?:[-+*/%&|^]|<<|>>)=")
# The same for dx, where "=>" is a lambda arrow, not an assignment.
_DX_ASSIGN_RE = re.compile(r"(?<![=!<>])=(?![=>])|\+\+|--|(?:[-+*/%&|^]|<<|>>)=")

# Selector prefixes: "~", "~*", "~.", "~#", "~3", "~~[1a4]", "~[@$t0]" (thread/processor)...
_THREAD_PREFIX_RE = re.compile(r"~(?:\*|\.|#|\d+|~?\[[^\]]*\])?", re.ASCII)
# ... and "|", "||", "|*", "|1", "||0", "|~[1a4]" (process / system).
_PROCESS_PREFIX_RE = re.compile(r"\|\|?(?:\*|\.|#|\d+|~?\[[^\]]*\])?", re.ASCII)
# "~*e CommandString": run CommandString once per thread.
_THREAD_EXECUTE_RE = re.compile(r"e(?![A-Za-z_])", _FLAGS)

# Commands documented to take "quoted" arguments in which ';' does not end the command.
_QUOTE_AWARE_RE = re.compile(
    r"(?:\.echo|\.printf|\.pcmd|\.shell|b[pumas]\d*|bsc|sx[-ednir]?|as|!for_each_\w+"
    r"|p(?:a|c|ct|h|t|r)?|t(?:a|b|c|ct|h|t|r)?)(?!\w)",
    _FLAGS,
)

# ".name", ".name+" (".sympath+", ".f+", ".symopt-").
_DOT_RE = re.compile(r"\.(?P<name>[A-Za-z_][A-Za-z0-9_]*[+-]?)", re.ASCII)
# "!name" or "!module.name" (module = extension DLL, loaded by name on first use).
_BANG_RE = re.compile(r"!(?:(?P<module>[A-Za-z_]\w*)\.)?(?P<name>[A-Za-z_]\w*)(?![\w.])", re.ASCII)
# "$<", "$><", "$$<", "$$><", "$$>a<" (scripts); anything else after "$$" is a comment.
_SCRIPT_RE = re.compile(r"\$\$?[\s>a]*<", _FLAGS)

# Text in an unquoted breakpoint argument that kd could take as the start of a command.
_BP_SUSPICIOUS_RE = re.compile(r"[.!~|*{}';]|\$\$|\$[<>]")

# dx: string literals, and what in a data-model expression can act rather than read.
_DX_STRING_PLACEHOLDER = "__kdmcp_str{}__"
_DX_EXECUTE_RE = re.compile(r"ExecuteCommand", re.IGNORECASE)
_DX_EXECUTE_CALL_RE = re.compile(r"ExecuteCommand\s*\(\s*__kdmcp_str(?P<index>\d+)__\s*\)", re.IGNORECASE)
_DX_CONTROL_RE = re.compile(r"\bControl\b(?:\s*\.\s*(?P<member>\w+))?", re.IGNORECASE)
_DX_FILESYSTEM_RE = re.compile(r"\bFileSystem\b", re.IGNORECASE)
_DX_SCRIPTS_RE = re.compile(r"\b(?:Scripts|scriptContents|Contents)\b", re.IGNORECASE)
_DX_SIDE_EFFECT_RE = re.compile(
    r"\.\s*(?!CreateDisassembler\b|ExecuteCommand\b)(?:Kill|Detach|Terminate|Restart|Reboot|Crash|Break|Go|Step\w*|SetPosition|SeekTo"
    r"|Remove\w*|Delete\w*|Write\w*|Create\w*|Load\w*|Unload\w*|Launch\w*|Attach\w*|Exec\w*)\s*\(",
    re.IGNORECASE,
)
_DX_BREAKPOINT_RE = re.compile(r"\.\s*SetBreakpoint\w*\s*\(", re.IGNORECASE)
_DX_TARGET_CALL_RE = re.compile(r"\w!\w+\s*\(", re.ASCII)
_DX_SUSPICIOUS_LITERAL_RE = re.compile(r"control|executecommand|filesystem|script|contents", re.IGNORECASE)

# "r eax=1", "r $t0 = 5", "r $.u0 = text": the target in front of an assignment.
_REGISTER_TARGET_RE = re.compile(r"(?P<target>[@$.\w]+)(?::\w+)?\s*$", re.ASCII)
_TEMP_REGISTER_RE = re.compile(r"@?\$t\d+", _FLAGS)
_FIXED_ALIAS_REGISTER_RE = re.compile(r"@?\$\.u\d", _FLAGS)
_REGISTER_ASSIGN_RE = re.compile(r"(?<![=!<>])=(?!=)")
_SINGLE_WORD_RE = re.compile(r"\w*", re.ASCII)


def _head(pattern: str) -> re.Pattern[str]:
    """A command name at the start of a piece, not followed by more name letters."""
    return re.compile(rf"(?:{pattern})(?![A-Za-z_])", _FLAGS)


# Letter commands with handlers of their own.
_BREAKPOINT_RE = _head(r"(?:b[pum]|ba)(?:\d+|\[[^\]]*\])?")  # bp, bu, bm, ba, with an optional ID
_BREAKPOINT_EDIT_RE = _head(r"bsc?")  # bs ID "cmd", bsc ID cond "cmd"
_SX_RE = _head(r"sx(?P<op>[-ednir])?")  # sx (list), sxe/sxd/sxn/sxi/sxr/sx- (set)
_DX_RE = _head(r"dx")
_REGISTER_RE = _head(r"r[mxflq]?")  # r, rM, rX, rF, rL, rQ
_ALIAS_OTHER_RE = _head(r"a[dl]")  # ad (delete), al (list)
_Z_RE = _head(r"z")
# p/t and variants: 'p [r] [= StartAddress] [Count] ["Command"]' runs Command after the step.
_STEP_RE = _head(r"p(?:a|c|ct|h|t|r)?|t(?:a|b|c|ct|h|t|r)?")

# Letter commands classified by name alone. Order matters only where names overlap.
_LETTER_RULES: tuple[tuple[re.Pattern[str], CommandClass, str], ...] = (
    (_head(r"k[a-z]*"), _READ, "displays a stack"),
    (_head(r"d(?:[abcdfpqsuwtvgl]|y[bd]|[dpq]s|[dpq][apu])?"), _READ, "displays memory or types"),
    (_head(r"e(?:[abdfpquw]|z[au])?"), _MEMORY_WRITE, "writes target memory"),
    (_head(r"fp?"), _MEMORY_WRITE, "fills target memory"),
    (_head(r"m"), _MEMORY_WRITE, "copies over target memory"),
    (_head(r"a"), _MEMORY_WRITE, "assembles instructions into target memory"),
    (_head(r"o[bdw]?"), _MEMORY_WRITE, "writes an I/O port (which can reset or hang the machine)"),
    (_head(r"i[bdw]?"), _MEMORY_WRITE, "reads an I/O port, which can change device state"),
    (_head(r"wrmsr"), _MEMORY_WRITE, "writes a model-specific register"),
    (_head(r"rdmsr"), _READ, "reads a model-specific register"),
    (_head(r"q[qd]?"), _SESSION_ENDING, "quits the debugger"),
    (_head(r"g[chnu]?"), _EXECUTION, "resumes the target"),
    (_head(r"wt"), _EXECUTION, "runs the target while tracing calls"),
    (_head(r"b[cde]"), _EXECUTION, "clears, disables or enables breakpoints"),
    (_head(r"br"), _EXECUTION, "renumbers breakpoints"),
    (_head(r"bl"), _READ, "lists breakpoints"),
    (_head(r"s[qos]?"), _READ, "searches memory or sets a display option"),
    (_head(r"u[bf]?"), _READ, "disassembles"),
    (_head(r"lm[a-z0-9]*"), _READ, "lists modules"),
    (_head(r"l[nd]"), _READ, "looks up or loads symbols"),
    (_head(r"ls[acefp]?"), _READ, "shows source lines (read from the debugger host)"),
    (re.compile(r"l[+-]", re.ASCII), _READ, "sets a source option"),
    (_head(r"x"), _READ, "examines symbols"),
    (_head(r"n"), _READ, "sets the number base"),
    (_head(r"c"), _READ, "compares memory"),
    (_head(r"vertarget|version|vercommand"), _READ, "shows version information"),
    (re.compile(r"#"), _READ, "searches disassembly"),
)

# Dot commands classified by name alone (lower case; handlers exist for a few others).
_DOT_COMMANDS: dict[str, tuple[CommandClass, str]] = {
    # the debugger host
    "shell": (_HOST_EXEC, "runs a program on the debugger host"),
    "create": (_HOST_EXEC, "starts a process on the debugger host"),
    "createdir": (_HOST_EXEC, "sets where .create starts processes on the debugger host"),
    "attach": (_HOST_EXEC, "attaches to a process on the debugger host"),
    "hh": (_HOST_EXEC, "starts the help viewer on the debugger host"),
    "open": (_HOST_EXEC, "opens a file on the debugger host (may start an editor)"),
    "server": (_HOST_EXEC, "opens a debugging server others can connect to"),
    "remote": (_HOST_EXEC, "starts remote.exe on the debugger host"),
    "dbgdbg": (_HOST_EXEC, "starts a debugger on the debugger host"),
    "netuse": (_HOST_EXEC, "connects the debugger host to a network share"),
    # code
    "load": (_CODE_LOAD, "loads an extension DLL"),
    "loadby": (_CODE_LOAD, "loads an extension DLL"),
    "setdll": (_CODE_LOAD, "sets the extension DLL loaded on next use"),
    "extpath": (_CODE_LOAD, "changes where extension DLLs are loaded from"),
    "kdfiles": (_CODE_LOAD, "makes the target load driver files sent from the debugger host"),
    "cordll": (_CODE_LOAD, "loads the CLR debugging DLL"),
    "scriptload": (_CODE_LOAD, "loads and runs a script"),
    "scriptrun": (_CODE_LOAD, "loads and runs a script"),
    "scriptunload": (_CODE_LOAD, "runs a script's uninitialize code"),
    "scriptdebug": (_CODE_LOAD, "debugs a script"),
    "nvload": (_CODE_LOAD, "loads a NatVis file"),
    "ocommand": (_CODE_LOAD, "lets the target's debug output run debugger commands"),
    "opendump": (_UNKNOWN, "opens a dump file from the debugger host"),
    # files
    "dump": (_FILE_WRITE, "writes a dump file on the debugger host"),
    "dumpcab": (_FILE_WRITE, "writes a CAB file on the debugger host"),
    "writemem": (_FILE_WRITE, "writes memory to a file on the debugger host"),
    "logopen": (_FILE_WRITE, "opens a log file on the debugger host"),
    "logappend": (_FILE_WRITE, "appends to a log file on the debugger host"),
    "write_cmd_hist": (_FILE_WRITE, "writes the command history to a file"),
    "send_file": (_FILE_WRITE, "writes a file on the target"),
    # the target as a whole
    "reboot": (_TARGET_DESTRUCTIVE, "reboots the target"),
    "crash": (_TARGET_DESTRUCTIVE, "bug-checks (crashes) the target"),
    "kill": (_TARGET_DESTRUCTIVE, "kills a target process"),
    "restart": (_TARGET_DESTRUCTIVE, "restarts the target"),
    "closehandle": (_TARGET_DESTRUCTIVE, "closes a handle in the target"),
    # the session
    "detach": (_SESSION_ENDING, "detaches from the target"),
    "abandon": (_SESSION_ENDING, "abandons the target"),
    "remote_exit": (_SESSION_ENDING, "exits the debugging client"),
    "endpsrv": (_SESSION_ENDING, "ends the process server"),
    # target memory and registers
    "readmem": (_MEMORY_WRITE, "reads a file from the debugger host into target memory"),
    "dvalloc": (_MEMORY_WRITE, "allocates target memory"),
    "dvfree": (_MEMORY_WRITE, "frees target memory"),
    "pop": (_MEMORY_WRITE, "restores saved registers"),
    # execution
    "call": (_EXECUTION, "calls a function in the target"),
    "pagein": (_EXECUTION, "pages memory in (the target runs)"),
    "step_filter": (_EXECUTION, "changes what stepping skips"),
    "breakin": (_EXECUTION, "breaks into the kernel debugger"),
    "wake": (_EXECUTION, "wakes a sleeping process"),
    "apply_dbp": (_EXECUTION, "applies data breakpoints to a register context"),
    "bpsync": (_EXECUTION, "changes how breakpoints synchronize threads"),
    # reads and display settings
    "echo": (_READ, "prints text"),
    "printf": (_READ, "prints formatted text and memory"),
    "frame": (_READ, "selects or shows a frame"),
    "f+": (_READ, "selects the next frame"),
    "f-": (_READ, "selects the previous frame"),
    "trap": (_READ, "sets the register context from a trap frame"),
    "cxr": (_READ, "sets the register context from a context record"),
    "exr": (_READ, "displays an exception record"),
    "ecxr": (_READ, "shows the exception context"),
    "exptr": (_READ, "displays exception pointers"),
    "lastevent": (_READ, "shows the last event"),
    "reload": (_READ, "reloads symbols (may download them from a symbol server)"),
    "sympath": (_READ, "changes the symbol path (symbols may then be fetched from the network)"),
    "symfix": (_READ, "sets the symbol path to the Microsoft symbol server (fetched from the network)"),
    "srcpath": (_READ, "changes the source path (files may then be fetched from the network)"),
    "srcfix": (_READ, "sets the source path to a source server (fetched from the network)"),
    "lsrcpath": (_READ, "changes the local source path"),
    "lsrcfix": (_READ, "sets the local source path to a source server"),
    "exepath": (_READ, "changes the executable image path"),
    "symopt": (_READ, "changes symbol options"),
    "effmach": (_READ, "sets the effective machine"),
    "formats": (_READ, "shows a number in several formats"),
    "cls": (_READ, "clears the screen"),
    "chain": (_READ, "lists loaded extensions"),
    "extmatch": (_READ, "lists extension commands"),
    "logclose": (_READ, "closes the log file"),
    "logfile": (_READ, "shows the log file status"),
    "time": (_READ, "shows times"),
    "process": (_READ, "sets the process context"),
    "thread": (_READ, "sets the thread context"),
    "context": (_READ, "sets the user-mode address context"),
    "tss": (_READ, "sets the register context from a task state segment"),
    "fnent": (_READ, "displays function entry data"),
    "fnret": (_READ, "displays a function's return value"),
    "enable_unicode": (_READ, "sets a display option"),
    "enable_long_status": (_READ, "sets a display option"),
    "force_radix_output": (_READ, "sets a display option"),
    "typeopt": (_READ, "sets a display option"),
    "asm": (_READ, "sets a disassembly option"),
    "lines": (_READ, "sets a source-line option"),
    "outmask": (_READ, "sets the output mask"),
    "ofilter": (_READ, "sets the output filter"),
    "locale": (_READ, "sets the locale"),
    "noversion": (_READ, "hides version information"),
    "prompt_allow": (_READ, "sets what the prompt shows"),
    "hideinjectedcode": (_READ, "sets a display option"),
    "show_read_failures": (_READ, "sets a display option"),
    "show_sym_failures": (_READ, "sets a display option"),
    "echotime": (_READ, "prints the time"),
    "echocpunum": (_READ, "sets a display option"),
    "kframes": (_READ, "sets the default stack length"),
    "help": (_READ, "lists dot commands"),
    "bpcmds": (_READ, "lists breakpoint commands"),
    "sxcmds": (_READ, "lists event settings"),
    "bugcheck": (_READ, "displays bug check data"),
    "clients": (_READ, "lists debugging clients"),
    "servers": (_READ, "lists debugging servers"),
    "endsrv": (_READ, "ends a debugging server"),
    "scriptlist": (_READ, "lists loaded scripts"),
    "scriptproviders": (_READ, "lists script providers"),
    "nvlist": (_READ, "lists NatVis files"),
    "nvunload": (_READ, "unloads a NatVis file"),
    "nvunloadall": (_READ, "unloads NatVis files"),
    "unload": (_READ, "unloads an extension DLL"),
    "unloadall": (_READ, "unloads extension DLLs"),
    "tlist": (_READ, "lists processes on the debugger host"),
    "ttime": (_READ, "shows thread times"),
    "jdinfo": (_READ, "shows JIT debugging information"),
    "eventlog": (_READ, "shows recent events"),
    "dumpdebug": (_READ, "shows dump file streams"),
    "dml_start": (_READ, "shows DML commands"),
    "dml_flow": (_READ, "shows code flow"),
    "prefer_dml": (_READ, "sets a display option"),
    "wtitle": (_READ, "sets the window title"),
    "beep": (_READ, "beeps"),
    "sleep": (_READ, "pauses the debugger"),
    "push": (_READ, "saves registers"),
    "quit_lock": (_READ, "locks the debugger against quitting"),
    "record_branches": (_READ, "sets a branch-recording option"),
    "secure": (_READ, "turns on secure mode"),
    "noshell": (_READ, "turns off .shell"),
    "cache": (_READ, "sets the memory cache"),
    "childdbg": (_READ, "sets child-process debugging"),
    "ignore_missing_pages": (_READ, "sets a dump option"),
    "kdtargetmac": (_READ, "shows the target MAC address"),
    "srcnoisy": (_READ, "sets a source option"),
    "netsyms": (_READ, "sets network symbol loading"),
    "break": (_READ, "leaves a loop"),
    "continue": (_READ, "continues a loop"),
    "leave": (_READ, "leaves a .catch block"),
}

# "!name" extensions that only read (lower case). Names outside the list are unknown.
_BANG_READ: frozenset[str] = frozenset(
    {
        "acl", "address", "alpc", "analyze", "apc", "apic", "arbiter", "bcb", "blackboxbsd", "blackboxntfs",
        "blackboxpnp", "bugdump", "ca", "cchelp", "chkimg", "cpuid", "cpuinfo", "cs", "da", "db", "dc", "dd",
        "deadlock", "defwrites", "devext", "devnode", "devobj", "devstack", "dh", "dlls", "dml_proc", "dp", "dq",
        "dreg", "drvobj", "du", "dw", "error", "errlog", "exchain", "exqueue", "filecache", "filelock", "fileobj",
        "findstack", "findthreads", "gle", "handle", "heap", "help", "idt", "imgreloc", "ioapic", "ipi", "irp",
        "irpfind", "irql", "job", "lmi", "locks", "lpc", "mdl", "memusage", "mps", "obja", "object", "openmaps",
        "pci", "pcitree", "pcr", "peb", "pfn", "pool", "poolfind", "poolused", "poolval", "prcb", "process",
        "pte", "pte2va", "ptov", "qlocks", "ready", "reg", "running", "runaway", "sd", "search", "session",
        "sid", "smt", "stacks", "stl", "str", "sym", "sysinfo", "sysptes", "teb", "thread", "timer", "token",
        "tz", "tzinfo", "uniqstack", "unload", "ustr", "vad", "vadump", "verifier", "vm", "vtop", "wsle",
        "zombies", "dpcs", "mtrr",
    }
)  # fmt: skip
# "!eb", "!ed"...: physical memory / port writes.
_BANG_WRITE: frozenset[str] = frozenset(
    {"eb", "ed", "ew", "eq", "ob", "od", "ow", "ib", "id", "iw", "ecb", "ecd", "ecw"}
)
# Extension DLLs that ship with the debugger; any other "!module.x" loads a DLL by name.
_KNOWN_EXTENSION_MODULES: frozenset[str] = frozenset(
    {
        "nt", "kdexts", "kext", "ext", "exts", "uext", "ntsdexts", "wow64exts", "dbghelp", "ndiskd", "wdfkd",
        "fltkd", "storagekd", "rcdrkd", "acpikd", "usbkd", "hidkd", "wmitrace",
    }
)  # fmt: skip


# --------------------------------------------------------------------------- lexing


_Escapes = Literal["any", "quote", "none"]
_ESCAPE_MODES: tuple[_Escapes, ...] = ("any", "quote", "none")


@dataclass(frozen=True)
class _Lexing:
    """One way kd might read quotes and braces; every line is classified under each.

    ``escapes``: inside ``"..."`` a backslash escapes any character, only ``\\"``, or
    nothing. ``braces_see_quotes``: whether a ``}`` inside quotes leaves a block open.
    """

    escapes: _Escapes
    braces_see_quotes: bool


_LEXINGS: tuple[_Lexing, ...] = tuple(_Lexing(e, b) for e in _ESCAPE_MODES for b in (True, False))


def _string_end(text: str, start: int, escapes: _Escapes, quote: str = '"') -> int | None:
    """Index just past the string opened at ``text[start]``; None if it never closes."""
    i, n = start + 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and (escapes == "any" or (escapes == "quote" and text[i + 1] == quote)):
            i += 2
            continue
        if ch == quote:
            return i + 1
        i += 1
    return None


def _unescape(body: str, escapes: _Escapes) -> str:
    """A quoted string's text as the command that receives it sees it."""
    if escapes == "none":
        return body
    if escapes == "quote":
        return body.replace('\\"', '"')
    return re.sub(r"\\(.)", r"\1", body, flags=re.S)


def _match_close(text: str, start: int, lex: _Lexing) -> int | None:
    """Index just past the bracket closing ``text[start]`` (``{`` or ``(``), nesting counted."""
    open_ch = text[start]
    close_ch = "}" if open_ch == "{" else ")"
    depth, i, n = 0, start, len(text)
    while i < n:
        ch = text[i]
        if ch == '"' and lex.braces_see_quotes:
            end = _string_end(text, i, lex.escapes)
            if end is None:
                return None
            i = end
            continue
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _split_outside(text: str, lex: _Lexing, quotes: str = '"', *, braces: bool = False) -> list[str] | None:
    """``text`` split at ``;`` outside ``quotes`` (and ``{}`` if asked); None if a quote never closes."""
    parts: list[str] = []
    depth, start, i, n = 0, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch in quotes:
            end = _string_end(text, i, lex.escapes, quote=ch)
            if end is None:
                return None
            i = end
            continue
        if braces and ch == "{":
            depth += 1
        elif braces and ch == "}":
            depth = max(0, depth - 1)
        elif ch == ";" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _tokens(text: str, escapes: _Escapes) -> list[tuple[bool, str]] | None:
    """Words and unescaped ``"strings"`` of an argument list (flag: is a string); None if a quote never closes."""
    out: list[tuple[bool, str]] = []
    i, n = 0, len(text)
    word_start: int | None = None
    while i < n:
        ch = text[i]
        if ch == '"':
            if word_start is not None:
                out.append((False, text[word_start:i]))
                word_start = None
            end = _string_end(text, i, escapes)
            if end is None:
                return None
            out.append((True, _unescape(text[i + 1 : end - 1], escapes)))
            i = end
            continue
        if ch.isspace():
            if word_start is not None:
                out.append((False, text[word_start:i]))
                word_start = None
        elif word_start is None:
            word_start = i
        i += 1
    if word_start is not None:
        out.append((False, text[word_start:]))
    return out


def _skip_ws(text: str, i: int) -> int:
    """First index at or after ``i`` that is not whitespace."""
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _strip_selectors(text: str) -> str:
    """``~*e kb`` -> ``kb``, ``|1 ~2 k`` -> ``k``: the command a selector prefix applies to."""
    while True:
        m = _THREAD_PREFIX_RE.match(text) or _PROCESS_PREFIX_RE.match(text)
        if m is None:
            return text
        rest = text[m.end() :].lstrip()
        if _THREAD_EXECUTE_RE.match(rest):
            rest = rest[1:].lstrip()
        text = rest


# C escapes in a dx string literal: "\x21", "\u0021", "\n", "\\"...
_C_ESCAPE_RE = re.compile(r"\\(?:x(?P<hex>[0-9A-Fa-f]{1,2})|u(?P<uni>[0-9A-Fa-f]{4})|(?P<char>.))", re.S)
_C_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0"}


def _c_unescape(body: str) -> str:
    """A dx (C-like) string literal's text."""

    def one(m: re.Match[str]) -> str:
        code = m.group("hex") or m.group("uni")
        if code is not None:
            return chr(int(code, 16))
        return _C_SIMPLE_ESCAPES.get(m.group("char"), m.group("char"))

    return _C_ESCAPE_RE.sub(one, body)


# --------------------------------------------------------------------------- the parser


@dataclass
class _Parser:
    """Classifies one line under one :class:`_Lexing`, collecting findings."""

    lex: _Lexing
    depth: int = 0
    # Nested bodies/strings still allowed (shared with sub-parsers), so nesting
    # ".foreach /s" loops cannot make the check itself explode.
    budget: list[int] = field(default_factory=lambda: [_MAX_NESTED])
    findings: list[Finding] = field(default_factory=list)
    # Alias values defined anywhere in the line (name -> values), for same-line expansion.
    alias_values: dict[str, list[str]] = field(default_factory=dict)
    # Definitions and { } bodies at known offsets of the line: (name, end) and (start, end).
    alias_defs_at: list[tuple[str, int]] = field(default_factory=list)
    blocks: list[tuple[int, int]] = field(default_factory=list)

    def add(self, piece: str, command_class: CommandClass, reason: str) -> None:
        self.findings.append(Finding(piece=piece.strip(), command_class=command_class, reason=reason))

    def collect(self, text: str) -> list[Finding]:
        """Findings for ``text`` as a command list, without keeping them."""
        sub = _Parser(self.lex, self.depth + 1, self.budget)
        sub.parse_list(text, None)
        return sub.findings

    # ----------------------------------------------------------------- lists

    def nested(self, text: str, base: int | None = None) -> None:
        """Classify ``text`` as a command list one level down (a body or a command string)."""
        if self.depth >= _MAX_DEPTH or self.budget[0] <= 0:
            self.add(text, _UNKNOWN, "nested too deeply or too often to follow")
            return
        self.budget[0] -= 1
        self.depth += 1
        try:
            self.parse_list(text, base)
        finally:
            self.depth -= 1

    def parse_list(self, text: str, base: int | None) -> None:
        """Classify each command of a ``;``-separated list (``base``: offset in the line, if known)."""
        i, n = 0, len(text)
        while True:
            while i < n and (text[i].isspace() or text[i] == ";"):
                i += 1
            if i >= n:
                return
            i = self.parse_command(text, i, base)

    def parse_command(self, text: str, i: int, base: int | None) -> int:
        """Classify the command starting at ``text[i]``; return where the next one may start."""
        n = len(text)
        control = _CONTROL_RE.match(text, i)
        if control is not None:
            return self.control(control.group("kw").lower(), text, i, control.end(), base)
        if text[i] == "{":  # a bare block: kd treats every { } as one
            end = self.block_at(text, i, base)
            if end is None:
                self.add(text[i:], _UNKNOWN, "a '{' that never closes")
                return n
            return end
        if _J_RE.match(text, i):
            self.j_command(text[i:])
            return n
        path = _PATH_COMMAND_RE.match(text, i)
        if path is not None:
            self.path_command(text[i:], path.group("name").lower())
            return n
        end = self.command_end(text, i)
        piece = text[i:end].strip()
        if _ALIAS_SET_RE.match(piece) and not piece.startswith("aS"):
            # "as" takes the rest of the line as its value; what follows is checked too.
            self.alias_command(piece, text[i:])
        else:
            self.piece(piece)
        if base is not None and _ALIAS_SET_RE.match(piece):
            name = _ALIAS_PARSE_RE.match(piece)
            if name is not None:
                self.alias_defs_at.append((name.group("name"), base + end))
        return end

    def command_end(self, text: str, i: int) -> int:
        """Where the command at ``text[i]`` ends: the next ``;`` (outside quotes, for commands that take them)."""
        quote_aware = _QUOTE_AWARE_RE.match(_strip_selectors(text[i : i + _HEAD_WINDOW])) is not None
        j, n = i, len(text)
        while j < n:
            ch = text[j]
            if ch == ";":
                return j
            if ch == '"' and quote_aware:
                end = _string_end(text, j, self.lex.escapes)
                if end is None:
                    stop = text.find(";", i)
                    self.add(text[i : n if stop < 0 else stop], _UNKNOWN, "a quoted string never closes")
                    return n if stop < 0 else stop
                j = end
                continue
            j += 1
        return n

    # ----------------------------------------------------------------- control flow

    def block_at(self, text: str, i: int, base: int | None) -> int | None:
        """Classify the ``{ }`` body at ``text[i]``; return the index past it (None if there is none)."""
        if i >= len(text) or text[i] != "{":
            return None
        end = _match_close(text, i, self.lex)
        if end is None:
            return None
        inner_base = None if base is None else base + i + 1
        if base is not None:
            self.blocks.append((base + i + 1, base + end - 1))
        self.nested(text[i + 1 : end - 1], inner_base)
        return end

    def paren_at(self, text: str, i: int) -> int | None:
        """Index past the ``( )`` at ``text[i]`` (its condition checked); None if there is none."""
        if i >= len(text) or text[i] != "(":
            return None
        end = _match_close(text, i, self.lex)
        if end is not None:
            self.condition(text[i + 1 : end - 1])
        return end

    def paren_then_block(self, text: str, pos: int, base: int | None) -> int | None:
        """``(condition) { body }`` at ``text[pos]`` (``.while``, ``.if``, ``.elsif``): both
        checked; the index past the body, None if either part is missing."""
        after = self.paren_at(text, pos)
        return None if after is None else self.block_at(text, _skip_ws(text, after), base)

    def condition(self, expression: str) -> None:
        """A condition is only evaluated, unless kd could end it early and read the rest as commands."""
        if re.search(r"[;{}]", expression):
            self.add(expression, _UNKNOWN, "a condition containing ';' or braces: kd might split it into commands")
            for part in expression.split(";")[1:]:
                self.nested(part.replace("{", " ").replace("}", " "))

    def control(self, kw: str, text: str, start: int, pos: int, base: int | None) -> int:
        """``.block``, ``.if``/``.elsif``/``.else``, ``.for``, ``.foreach``, ``.while``, ``.do``, ``.catch``."""
        pos = _skip_ws(text, pos)
        end: int | None = None
        if kw in ("block", "catch"):
            end = self.block_at(text, pos, base)
        elif kw == "while":
            end = self.paren_then_block(text, pos, base)
        elif kw == "do":
            after = self.block_at(text, pos, base)
            end = None if after is None else self.paren_at(text, _skip_ws(text, after))
        elif kw == "if":
            end = self.if_chain(text, pos, base)
        elif kw == "for":
            end = self.for_loop(text, pos, base)
        elif kw == "foreach":
            end = self.foreach(text, pos, base)
        if end is None:
            why = "no .if before it" if kw in ("elsif", "else") else "its parts could not be read"
            self.add(text[start:], _UNKNOWN, f"malformed .{kw} ({why})")
            return len(text)
        self.add(text[start:end], _READ, f".{kw} (control flow; its parts are checked on their own)")
        return end

    def if_chain(self, text: str, pos: int, base: int | None) -> int | None:
        """``.if (c) { } [.elsif (c) { }]... [.else { }]``."""
        end = self.paren_then_block(text, pos, base)
        while end is not None:
            nxt = _skip_ws(text, end)
            elsif = _ELSIF_RE.match(text, nxt)
            if elsif is not None:
                end = self.paren_then_block(text, _skip_ws(text, elsif.end()), base)
                continue
            otherwise = _ELSE_RE.match(text, nxt)
            if otherwise is not None:
                end = self.block_at(text, _skip_ws(text, otherwise.end()), base)
            break
        return end

    def for_loop(self, text: str, pos: int, base: int | None) -> int | None:
        """``.for (InitialCommand ; Condition ; IncrementCommands) { Commands }``."""
        if pos >= len(text) or text[pos] != "(":
            return None
        after = _match_close(text, pos, self.lex)
        if after is None:
            return None
        parts = _split_outside(text[pos + 1 : after - 1], self.lex, braces=True)
        if parts is None or len(parts) != 3:
            return None
        for index, part in enumerate(parts):
            body = part.strip()
            if index == 1:
                self.condition(body)
                continue
            if body.startswith("{") and body.endswith("}"):
                body = body[1:-1]
            self.nested(body)
        return self.block_at(text, _skip_ws(text, after), base)

    def foreach(self, text: str, pos: int, base: int | None) -> int | None:
        """``.foreach [opts] ( Var { InCommands } | Var "InString" ) { OutCommands }``."""
        source = "commands"
        while True:
            option = _FOREACH_OPTION_RE.match(text, pos)
            if option is None:
                break
            flag = (option.group("flag") or "").lower()
            if flag == "f":
                source = "file"
            elif flag == "s" and source != "file":
                source = "string"
            pos = _skip_ws(text, option.end())
        if pos >= len(text) or text[pos] != "(":
            return None
        after = _match_close(text, pos, self.lex)
        if after is None:
            return None
        inner = text[pos + 1 : after - 1].strip()
        var_match = re.match(r"[^\s{}\"()]+", inner)
        if var_match is None:
            return None
        var = var_match.group()
        src = inner[var_match.end() :].strip()
        tokens: list[str] = []
        if source == "commands":
            if not src.startswith("{") or _match_close(src, 0, self.lex) != len(src):
                return None
            self.nested(src[1:-1])
        else:
            if not src.startswith('"') or _string_end(src, 0, self.lex.escapes) != len(src):
                return None
            tokens = _unescape(src[1:-1], self.lex.escapes).split()
        body_start = _skip_ws(text, after)
        end = self.block_at(text, body_start, base)
        if end is None:
            return None
        out = text[body_start + 1 : end - 1]
        var_re = re.compile(rf"\$\{{{re.escape(var)}\}}|(?<!\w){re.escape(var)}(?!\w)")
        if var_re.search(out) is None:
            return end
        if source == "string" and len(tokens) <= _MAX_EXPANSIONS:
            for token in tokens:
                self.nested(var_re.sub(lambda _m: token, out))  # noqa: B023 (used at once)
        else:
            origin = {"commands": "command output", "file": "a file on the debugger host"}.get(source, "a long string")
            self.add(
                text[body_start:end],
                _UNKNOWN,
                f"the loop variable '{var}' carries text from {origin}, which kd pastes into the loop body",
            )
        return end

    def j_command(self, text: str) -> None:
        """``j Expression 'Command1' ; 'Command2'`` (kd gives j the rest of the line)."""
        self.add(text, _READ, "j (runs one of two command strings, each checked on its own)")
        i = _skip_ws(text, 1)
        if i < len(text) and text[i] == "(":
            end = _match_close(text, i, self.lex)
            if end is None:
                self.add(text, _UNKNOWN, "j with a condition that never closes")
                return
            self.condition(text[i + 1 : end - 1])
            i = end
        else:
            while i < len(text) and not text[i].isspace() and text[i] not in "';":
                i += 1
        segments = _split_outside(text[i:], self.lex, quotes="'\"")
        if segments is None:
            self.add(text, _UNKNOWN, "j with a quote that never closes")
            self.nested(text[i:].replace("'", " "))
            return
        for segment in segments:
            body = segment.strip()
            if len(body) >= 2 and body[0] == body[-1] == "'" and "'" not in body[1:-1]:
                self.nested(body[1:-1])
            elif "'" in body:
                self.add(body, _UNKNOWN, "j branch with mixed quoting")
                self.nested(body.replace("'", " "))
            elif body:
                self.nested(body)

    def path_command(self, text: str, name: str) -> None:
        """``.sympath a;b;c``: kd takes the rest of the line as a path list; non-paths are checked as commands."""
        parts = text.split(";")
        command_class, reason = _DOT_COMMANDS[name]
        self.add(parts[0], command_class, reason)
        for part in parts[1:]:
            element = part.strip()
            if element and not _PATH_LIKE_RE.match(element):
                self.nested(element)

    # ----------------------------------------------------------------- single commands

    def piece(self, piece: str) -> None:
        """Classify one command (no top-level ``;`` in it)."""
        if not piece:
            return
        first = piece[0]
        if first in "~|":
            self.selector(piece)
        elif first == "!":
            self.bang(piece)
        elif first == ".":
            self.dot(piece)
        elif first == "$":
            if piece.startswith("${"):
                self.add(piece, _UNKNOWN, "an alias expansion: what it pastes in is not known here")
            elif _SCRIPT_RE.match(piece):
                self.add(piece, _CODE_LOAD, "runs a script file (its commands are not seen here)")
            elif piece.startswith("$$"):
                self.add(piece, _READ, "comment (it ends at the next ';')")
            else:
                self.add(piece, _UNKNOWN, "not a command kd-mcp knows")
        elif first == "*":
            self.add(piece, _READ, "comment (kd ignores the rest of the line; it is checked anyway)")
        elif first == "?":
            if piece.startswith("??") and _CPP_ASSIGN_RE.search(piece[2:]):
                self.add(piece, _MEMORY_WRITE, "a C++ expression with an assignment")
            else:
                self.add(piece, _READ, "evaluates an expression")
        elif first.isascii() and (first.isalpha() or first == "#"):
            self.letter(piece)
        else:
            self.add(piece, _UNKNOWN, "not a command kd-mcp knows")

    def selector(self, piece: str) -> None:
        """``~*e cmd``, ``~3 kb``, ``~2f``, ``|1s``, ``||0 ...``."""
        thread = piece.startswith("~")
        m = (_THREAD_PREFIX_RE if thread else _PROCESS_PREFIX_RE).match(piece)
        rest = piece[m.end() :].strip() if m is not None else piece
        what = "thread or processor" if thread else "process or system"
        if not rest:
            self.add(piece, _READ, f"lists or shows the current {what}")
        elif rest.lower() == "s":
            self.add(piece, _READ, f"switches the current {what}")
        elif thread and rest.lower() in ("f", "u", "n", "m"):
            self.add(piece, _EXECUTION, "freezes, thaws, suspends or resumes a thread")
        elif _THREAD_EXECUTE_RE.match(rest):
            inner = rest[1:].strip()
            if inner:
                self.nested(inner)
            else:
                self.add(piece, _UNKNOWN, "~e without a command")
        else:
            if rest[:1].lower() == "e":
                self.nested(rest[1:])  # "~0 eb..." might also be read as "~0 e b..."
            self.nested(rest)

    def dot(self, piece: str) -> None:
        """Dot commands: by name, with a few whose options or command strings matter."""
        m = _DOT_RE.match(piece)
        if m is None:
            self.add(piece, _UNKNOWN, "not a command kd-mcp knows")
            return
        name = m.group("name").lower()
        args = piece[m.end() :].strip()
        base_name = name if name in _DOT_COMMANDS else name.rstrip("+-")
        if base_name in ("sympath", "srcpath", "lsrcpath", "exepath", "extpath"):
            self.path_command(piece, base_name)
        elif base_name == "expr":
            if "c++" in args.lower():
                self.add(piece, _MEMORY_WRITE, "switches to the C++ evaluator, whose expressions can assign")
            else:
                self.add(piece, _READ, "shows or sets the expression evaluator")
        elif base_name == "settings":
            verb = args.split()[0].lower() if args else "list"
            if verb in ("list", "help"):
                self.add(piece, _READ, "lists debugger settings")
            elif verb == "save":
                self.add(piece, _FILE_WRITE, "writes a settings file on the debugger host")
            else:
                self.add(piece, _UNKNOWN, "changes or loads debugger settings (they can change what gets loaded)")
        elif base_name == "pcmd":
            self.add(piece, _READ, "sets the command run at every prompt (checked on its own)")
            self.strings_and_words(piece, args, command_flags=("-s",))
        elif base_name == "cxr" and re.search(r"/w\b", args, re.IGNORECASE):
            self.add(piece, _MEMORY_WRITE, "writes the context record to target memory")
        elif base_name == "process" and re.search(r"/i\b", args, re.IGNORECASE):
            self.add(piece, _EXECUTION, "switches process invasively (the target runs to get there)")
        elif base_name == "browse":
            self.add(piece, _READ, "runs a command with DML output (checked on its own)")
            self.nested(args)
        elif base_name in _DOT_COMMANDS:
            command_class, reason = _DOT_COMMANDS[base_name]
            self.add(piece, command_class, reason)
        else:
            self.add(piece, _UNKNOWN, f"'.{name}' is not a command kd-mcp knows")

    def bang(self, piece: str) -> None:
        """``!!`` (host program) and extension commands ``!name`` / ``!module.name``."""
        if piece.startswith("!!"):
            self.add(piece, _HOST_EXEC, "runs a program on the debugger host")
            return
        m = _BANG_RE.match(piece)
        if m is None:
            self.add(piece, _UNKNOWN, "not an extension command kd-mcp knows")
            return
        module = (m.group("module") or "").lower()
        name = m.group("name").lower()
        args = piece[m.end() :]
        if module and module not in _KNOWN_EXTENSION_MODULES:
            self.add(piece, _CODE_LOAD, f"loads the extension DLL '{module}' by name")
        elif name == "load":
            self.add(piece, _CODE_LOAD, "loads an extension DLL")
        elif name.startswith("for_each_"):
            self.add(piece, _READ, f"!{name} (runs a command for each item; checked on its own)")
            if "@#" in args:
                self.add(piece, _UNKNOWN, "pastes target-controlled text (@#...) into the command it runs")
            self.strings_and_words(piece, args, command_flags=None)
        elif name == "analyze" and re.search(r"-xmf\b", args, re.IGNORECASE):
            self.add(piece, _FILE_WRITE, "writes the analysis to a file on the debugger host")
        elif name == "chkimg" and re.search(r"(?:^|\s)-f\b", args):
            self.add(piece, _MEMORY_WRITE, "fixes (rewrites) image memory in the target")
        elif name in _BANG_WRITE:
            self.add(piece, _MEMORY_WRITE, "writes physical memory, an I/O port or PCI space")
        elif name in _BANG_READ:
            self.add(piece, _READ, f"!{name} (reads target state)")
        else:
            self.add(piece, _UNKNOWN, f"'!{name}' is not an extension command kd-mcp knows")

    def letter(self, piece: str) -> None:
        """Commands whose name is letters: ``k``, ``dd``, ``bp``, ``r``, ``dx``..."""
        m = _BREAKPOINT_RE.match(piece) or _BREAKPOINT_EDIT_RE.match(piece)
        if m is not None:
            self.breakpoint(piece, piece[m.end() :])
            return
        m = _SX_RE.match(piece)
        if m is not None:
            if m.group("op"):
                self.add(piece, _EXECUTION, "changes when exceptions and events stop the target")
            else:
                self.add(piece, _READ, "lists exception and event settings")
            self.strings_and_words(piece, piece[m.end() :], command_flags=("-c", "-c2"))
            return
        m = _DX_RE.match(piece)
        if m is not None:
            self.dx(piece, piece[m.end() :])
            return
        m = _REGISTER_RE.match(piece)
        if m is not None:
            self.register(piece, piece[m.end() :])
            return
        if _ALIAS_SET_RE.match(piece):
            self.alias_command(piece, piece)
            return
        if _ALIAS_OTHER_RE.match(piece):
            self.add(piece, _READ, "lists or deletes aliases")
            return
        m = _Z_RE.match(piece)
        if m is not None:
            self.z_command(piece, piece[m.end() :])
            return
        m = _STEP_RE.match(piece)
        if m is not None:
            self.add(piece, _EXECUTION, "steps or traces the target (a command string after it is checked on its own)")
            self.strings_and_words(piece, piece[m.end() :], command_flags=())
            return
        if _J_RE.match(piece):
            self.j_command(piece)
            return
        for pattern, command_class, reason in _LETTER_RULES:
            if pattern.match(piece):
                self.add(piece, command_class, reason)
                return
        self.add(piece, _UNKNOWN, "not a command kd-mcp knows")

    def _command_string_escapes(self) -> _Escapes:
        """Command strings (``bp x "j 1 '.echo \\"a\\"'"``) are documented to take ``\\"``; never "none"."""
        return "quote" if self.lex.escapes == "none" else self.lex.escapes

    def breakpoint(self, piece: str, args: str) -> None:
        """``bp[ID] [opts] [Addr [Passes]] ["CommandString"]`` (also bu/bm/ba, bs/bsc)."""
        self.add(piece, _EXECUTION, "sets or changes a breakpoint (its command string is checked on its own)")
        tokens = _tokens(args, self._command_string_escapes())
        if tokens is None:
            self.add(piece, _UNKNOWN, "a quoted string never closes")
            return
        previous = ""
        for is_string, text in tokens:
            if is_string:
                if previous.lower() == "/w":
                    self.dx(piece, text)  # "/w" conditions are dx expressions
                else:
                    self.nested(text)
            elif _BP_SUSPICIOUS_RE.match(text):
                self.add(piece, _UNKNOWN, f"unquoted '{text}' after a breakpoint could be read as a command")
            previous = "" if is_string else text

    def strings_and_words(self, piece: str, args: str, command_flags: tuple[str, ...] | None) -> None:
        """Check the command strings in ``args``: every quoted string, plus the word after a command flag.

        ``command_flags=None``: the whole unquoted argument text is a command (``!for_each_module k``).
        """
        tokens = _tokens(args, self._command_string_escapes())
        if tokens is None:
            self.add(piece, _UNKNOWN, "a quoted string never closes")
            return
        if command_flags is None:
            strings = [text for is_string, text in tokens if is_string]
            words = " ".join(
                text[3:] if text.lower().startswith("-c:") else text
                for is_string, text in tokens
                if not is_string and not re.match(r"-(?!c:)\w+:", text, re.IGNORECASE)
            )
            for text in strings:
                self.nested(text)
            if not strings and words.strip():
                self.nested(words)
            return
        flags = {f.lower() for f in command_flags}
        expect_command = False
        for is_string, text in tokens:
            if is_string or expect_command:
                self.nested(text)
                expect_command = False
                continue
            lowered = text.lower()
            glued = next((f for f in sorted(flags, key=len, reverse=True) if lowered.startswith(f)), None)
            if lowered in flags:
                expect_command = True
            elif glued is not None and not lowered[len(glued) :].isdigit():
                self.nested(text[len(glued) :])  # "-c.shell" (flag and command glued)

    def register(self, piece: str, args: str) -> None:
        """``r`` displays registers; ``r reg=value`` writes them (``$t0``: debugger temporaries)."""
        assignments = list(_REGISTER_ASSIGN_RE.finditer(args))
        if not assignments:
            self.add(piece, _READ, "displays registers")
            return
        for m in assignments:
            target_match = _REGISTER_TARGET_RE.search(args[: m.start()])
            target = target_match.group("target") if target_match else ""
            if _FIXED_ALIAS_REGISTER_RE.fullmatch(target):
                self.alias_value(piece, target.lstrip("@").replace(".", ""), args[m.end() :].strip().strip('"'))
            elif _TEMP_REGISTER_RE.fullmatch(target):
                self.add(piece, _READ, "sets a debugger temporary register ($t0-$t19)")
            else:
                self.add(piece, _MEMORY_WRITE, f"writes the register or pseudo-register '{target or '?'}'")

    def z_command(self, piece: str, args: str) -> None:
        """``Commands ; z( Expression )`` repeats the commands before it; anything after it is checked."""
        self.add(piece, _READ, "repeats the preceding commands while a condition holds")
        i = _skip_ws(args, 0)
        if i < len(args) and args[i] == "(":
            end = _match_close(args, i, self.lex)
            if end is None:
                self.add(piece, _UNKNOWN, "z with a condition that never closes")
                return
            rest = args[end:].strip()
            if rest:
                self.nested(rest)

    def alias_command(self, piece: str, source: str) -> None:
        """``as``/``aS`` (``source`` is the rest of the line for ``as``, the piece for ``aS``)."""
        m = _ALIAS_PARSE_RE.match(source)
        if m is None:
            self.add(piece, _UNKNOWN, "an alias definition kd-mcp cannot read")
            return
        switches = [s.lower() for s in m.group("switches").split()]
        name = m.group("name")
        value = m.group("value") or ""
        if source.startswith("aS") and value.strip().startswith('"'):
            stripped = value.strip()
            end = _string_end(stripped, 0, self.lex.escapes)
            value = stripped[1 : end - 1] if end is not None else stripped[1:]
        elif source.startswith("aS"):
            value = value.split(";")[0]
        unknown_switches = [s for s in switches if s not in ("/x", "/c", "/e", "/f", "/ma", "/mu", "/msa", "/msu")]
        if unknown_switches:
            self.add(piece, _UNKNOWN, f"an alias switch kd-mcp does not know: {unknown_switches[0]}")
        elif "/c" in switches:
            self.add(piece, _UNKNOWN, "the alias will hold command output, which any later use could run")
            self.nested(value)
        elif "/x" in switches:
            self.alias_values.setdefault(name, []).append("0")
            self.add(piece, _READ, "defines an alias to a number")
        elif switches:
            self.add(
                piece, _UNKNOWN, "the alias takes text from memory, the environment or a file; any use could run it"
            )
        else:
            self.alias_value(piece, name, value.strip())

    def alias_value(self, piece: str, name: str, value: str) -> None:
        """An alias is pasted in wherever its name appears later: allow only single words."""
        self.alias_values.setdefault(name, []).append(value)
        if _SINGLE_WORD_RE.fullmatch(value):
            for f in self.collect(value) if value else []:
                if f.command_class not in (_READ, _UNKNOWN):
                    self.add(piece, f.command_class, f"defines an alias that runs '{value}', which {f.reason}")
            self.add(piece, _READ, "defines an alias to a single word")
            return
        self.add(piece, _UNKNOWN, "defines an alias to more than one word, which can change any later command")
        self.nested(value)

    def dx(self, piece: str, expression: str) -> None:
        """``dx``: reads, unless it assigns or calls into the debugger (``ExecuteCommand``...)."""
        masked: list[str] = []
        literals: list[str] = []
        i, n, start = 0, len(expression), 0
        while i < n:
            if expression[i] == '"':
                end = _string_end(expression, i, "any")
                if end is None:
                    self.add(piece, _UNKNOWN, "a dx string literal never closes")
                    return
                masked.append(expression[start:i] + _DX_STRING_PLACEHOLDER.format(len(literals)))
                literals.append(expression[i + 1 : end - 1])
                i = start = end
                continue
            i += 1
        masked.append(expression[start:])
        code = "".join(masked)
        before = len(self.findings)
        if _DX_ASSIGN_RE.search(code):
            self.add(piece, _MEMORY_WRITE, "assigns (dx can write target memory and registers)")
        executed: set[int] = set()
        for call in _DX_EXECUTE_CALL_RE.finditer(code):
            index = int(call.group("index"))
            executed.add(index)
            for text in dict.fromkeys((_c_unescape(literals[index]), literals[index])):
                if _CONTROL_CHAR_RE.search(text) or "\n" in text or "\r" in text or not text.isascii():
                    self.add(piece, _UNKNOWN, "ExecuteCommand with control or non-ASCII characters")
                else:
                    self.nested(text)
        if len(_DX_EXECUTE_RE.findall(code)) != len(executed):
            self.add(piece, _UNKNOWN, "ExecuteCommand with something other than one string literal")
        for control in _DX_CONTROL_RE.finditer(code):
            member = (control.group("member") or "").lower()
            if member == "executecommand" or member.startswith("setbreakpoint"):
                continue
            self.add(piece, _UNKNOWN, "uses Debugger.Utility.Control, which can run debugger commands")
        if _DX_BREAKPOINT_RE.search(code):
            self.add(piece, _EXECUTION, "sets a breakpoint")
        if _DX_FILESYSTEM_RE.search(code):
            self.add(piece, _FILE_WRITE, "uses Debugger.Utility.FileSystem, which can write host files")
        if _DX_SCRIPTS_RE.search(code):
            self.add(piece, _UNKNOWN, "calls into a loaded script, which can do anything")
        if _DX_SIDE_EFFECT_RE.search(code):
            self.add(piece, _UNKNOWN, "calls a data-model method that may act on the target or host")
        if _DX_TARGET_CALL_RE.search(code):
            self.add(piece, _UNKNOWN, "calls a function in the target")
        for index, literal in enumerate(literals):
            if index not in executed and _DX_SUSPICIOUS_LITERAL_RE.search(literal):
                self.add(piece, _UNKNOWN, "a string naming a debugger-control member (could be used to reach it)")
        if len(self.findings) == before or all(f.command_class is _READ for f in self.findings[before:]):
            self.add(piece, _READ, "evaluates a data-model expression")


# --------------------------------------------------------------------------- lines


def _classify_line(line: str, depth: int) -> list[Finding]:
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
        end = _match_close(line, open_index, _Lexing("none", braces_see_quotes=False))
        inner = line[open_index + 1 : end - 1 if end is not None else len(line)]
        if _CPP_ASSIGN_RE.search(inner):
            findings.append(
                Finding(
                    piece=line[sub.start() : end or len(line)],
                    command_class=_MEMORY_WRITE,
                    reason="a C++ sub-expression with an assignment",
                )
            )
    parsers: list[_Parser] = []
    for lex in _LEXINGS:
        parser = _Parser(lex)
        parser.parse_list(line, 0)
        parsers.append(parser)
    findings.extend(_fixed_aliases(line))
    uses = [m for m in _ALIAS_USE_RE.finditer(line) if not _is_defined_test(m)]
    unresolved = [m for m in uses if not _resolvable(line, m, depth, parsers)]
    if uses and not unresolved:
        # kd pastes the values in before it runs the block: classify what it will run.
        for expanded in _expansions(line, uses, parsers):
            findings.extend(_classify_line(expanded, depth + 1))
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


def _is_defined_test(use: re.Match[str]) -> bool:
    """``${/d:name}`` expands to 1 or 0 (whether the alias exists), never to its text."""
    return (use.group("opt") or "").lower() == "/d:" and use.group().endswith("}")


def _alias_values(name: str, parsers: list[_Parser]) -> list[str]:
    return list(dict.fromkeys(v for p in parsers for v in p.alias_values.get(name, [])))


def _resolvable(line: str, use: re.Match[str], depth: int, parsers: list[_Parser]) -> bool:
    """Whether kd is documented to paste, at ``use``, a value defined earlier in this line.

    kd expands aliases in a whole line before running it (unless the line starts with
    ``as``/``aS``/``ad``/``al``), and again at the start of each ``{ }`` block. So a value
    defined in this line is what ``${name}`` gets only inside a block that starts after
    the definition, in a line starting with an alias command; anywhere else it could be
    a value set by an earlier call, which this stateless check cannot know.
    """
    name = use.group("name")
    return (
        (use.group("opt") or "").lower() in ("", "/f:")
        and use.group().endswith("}")
        and depth < 2
        and 0 < len(_alias_values(name, parsers)) <= _MAX_ALIAS_VARIANTS
        and _ALIAS_LINE_START_RE.match(line) is not None
        and all(_defined_before_block(p, name, use.start()) for p in parsers)
    )


def _expansions(line: str, uses: list[re.Match[str]], parsers: list[_Parser]) -> list[str]:
    """``line`` with every alias use replaced, once per combination of candidate values (bounded)."""
    variants = [line]
    for use in reversed(uses):  # right to left, so earlier offsets stay valid
        values = _alias_values(use.group("name"), parsers)
        variants = [v[: use.start()] + value + v[use.end() :] for v in variants for value in values]
        variants = variants[:_MAX_ALIAS_VARIANTS]
    return variants


def _defined_before_block(parser: _Parser, name: str, position: int) -> bool:
    """Whether ``position`` lies in a ``{ }`` body that starts after a definition of ``name``."""
    return any(
        start <= position < end
        and any(def_name == name and def_end <= start for def_name, def_end in parser.alias_defs_at)
        for start, end in parser.blocks
    )
