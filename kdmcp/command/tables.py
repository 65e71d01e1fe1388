"""The command tables and patterns the policy classifies by: one list per kind of command.

Letter commands, dot commands and extension commands with their classes and reasons; the
patterns that recognise a command's name; what counts as a path and which paths are on
the network; and each command's run effect. The reader (:mod:`~kdmcp.command.syntax`)
finds the commands; these tables say what each one is.

Pure: stdlib only.
"""

from __future__ import annotations

import re

from kdmcp.command.allowlist import effect_names
from kdmcp.command.classes import CommandClass, RunEffect
from kdmcp.command.lexing import strip_selectors

_READ = CommandClass.READ
_MEMORY_WRITE = CommandClass.MEMORY_WRITE
_EXECUTION = CommandClass.EXECUTION
_HOST_EXEC = CommandClass.HOST_EXEC
_CODE_LOAD = CommandClass.CODE_LOAD
_FILE_WRITE = CommandClass.FILE_WRITE
_HOST_FILE_READ = CommandClass.HOST_FILE_READ
_NETWORK_PATH = CommandClass.NETWORK_PATH
_SETTINGS_CHANGE = CommandClass.SETTINGS_CHANGE
_OUTPUT_CONTROL = CommandClass.OUTPUT_CONTROL
_TARGET_DESTRUCTIVE = CommandClass.TARGET_DESTRUCTIVE
_SESSION_ENDING = CommandClass.SESSION_ENDING
_UNKNOWN = CommandClass.UNKNOWN

_FLAGS = re.IGNORECASE | re.ASCII

# Line breaks: the console hands kd each line as its own command line.
_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
# Control characters other than tab (tab is whitespace to kd).
_CONTROL_CHAR_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

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
_DX_SETTINGS_RE = re.compile(r"\bSettings\b", re.IGNORECASE)
_DX_SCRIPTS_RE = re.compile(r"\b(?:Scripts|scriptContents|Contents)\b", re.IGNORECASE)
_DX_SIDE_EFFECT_RE = re.compile(
    r"\.\s*(?!CreateDisassembler\b|ExecuteCommand\b)(?:Kill|Detach|Terminate|Restart|Reboot|Crash|Break|Go|Step\w*|SetPosition|SeekTo"
    r"|Remove\w*|Delete\w*|Write\w*|Create\w*|Load\w*|Unload\w*|Launch\w*|Attach\w*|Exec\w*)\s*\(",
    re.IGNORECASE,
)
_DX_BREAKPOINT_RE = re.compile(r"\.\s*SetBreakpoint\w*\s*\(", re.IGNORECASE)
_DX_TARGET_CALL_RE = re.compile(r"\w!\w+\s*\(", re.ASCII)
# What dx may call under read_only and standard: LINQ queries over data-model collections, string
# helpers, the list-entry walker and the disassembler ("dx" docs, "Using LINQ With the debugger
# objects"), plus ExecuteCommand and SetBreakpoint*, whose own rules judge them. Lower case.
DX_METHODS: frozenset[str] = frozenset(
    {
        "where", "select", "selectmany", "first", "firstordefault", "last", "lastordefault", "single",
        "singleordefault", "count", "any", "all", "orderby", "orderbydescending", "thenby", "thenbydescending",
        "groupby", "take", "skip", "takewhile", "skipwhile", "distinct", "reverse", "flatten", "aggregate", "sum",
        "min", "max", "average", "concat", "contains", "elementat", "zip", "join", "todisplaystring", "tostring",
        "startswith", "endswith", "indexof", "lastindexof", "substring", "tolower", "toupper", "padleft", "padright",
        "fromlistentry", "createdisassembler", "disassembleblocks", "disassemblefunction", "disassembleinstructions",
        "executecommand", "setbreakpoint", "setbreakpointatoffset", "calls", "memory",
    }
)  # fmt: skip
DX_FUNCTIONS: frozenset[str] = frozenset({"sizeof"})
_DX_SUSPICIOUS_LITERAL_RE = re.compile(r"control|executecommand|filesystem|script|contents", re.IGNORECASE)

# "r eax=1", "r $t0 = 5", "r $.u0 = text": the target in front of an assignment.
_REGISTER_TARGET_RE = re.compile(r"(?P<target>[@$.\w]+)(?::\w+)?\s*$", re.ASCII)
_TEMP_REGISTER_RE = re.compile(r"@?\$t\d+", _FLAGS)
_FIXED_ALIAS_REGISTER_RE = re.compile(r"@?\$\.u\d", _FLAGS)
_REGISTER_ASSIGN_RE = re.compile(r"(?<![=!<>])=(?!=)")
# One word an alias may hold: no blank, ';', quote, brace, '$' (aliases), '~'/'|' (selectors).
_SINGLE_WORD_RE = re.compile(r"[\w.:\\/!@+\-*#?,=\[\]]*", re.ASCII)


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
_LSF_RE = _head(r"lsf(?!-)")
# "lse" starts a source editor on the host (WinDiff / WINDBG_INVOKE_EDITOR).
_LSE_RE = _head(r"lse")  # "lsf Filename" loads a source file ("lsf- Filename" unloads one)
_LD_RE = _head(r"ld")  # "ld ModuleName [/f FileName]"
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


def _first_letter(pattern: re.Pattern[str]) -> str | None:
    """The character every match of ``pattern`` starts with (lower case), or None when that is not plain.

    Plain: the pattern (inside ``_head``'s ``(?:``) opens with a letter or ``#`` that is not
    optional and has no top-level alternative. Under ``IGNORECASE | ASCII`` such a letter
    matches itself in either case and nothing else. ``tests/command/test_leaf_rules.py``
    checks this against the regex parser's own reading of every rule.
    """
    source = pattern.pattern.removeprefix("(?:")
    head = source[:1]
    if not (head.isascii() and (head.isalpha() or head == "#")) or source[1:2] in ("?", "*", "{"):
        return None
    if _has_shallow_alternative(pattern.pattern):
        return None
    return head.lower()


def _has_shallow_alternative(source: str) -> bool:
    """A ``|`` outside any group, or in the first group (``_head``'s), which could start a match elsewhere."""
    depth, i = 0, 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            j = i + 1 + (source[i + 1 : i + 2] == "^")
            j += source[j : j + 1] == "]"  # a ']' right after '[' (or '[^') is a member
            close = source.find("]", j)
            i = len(source) if close < 0 else close + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth <= 1:
            return True
        i += 1
    return False


# The rules a piece starting with each character can match, in _LETTER_RULES order (a rule
# whose first character is not plain is in every list): letter() tries a handful, not 27.
_LETTER_RULE_FIRSTS = tuple(_first_letter(rule[0]) for rule in _LETTER_RULES)
LETTER_RULES_BY_FIRST: dict[str, tuple[tuple[re.Pattern[str], CommandClass, str], ...]] = {
    ch: tuple(rule for rule, first in zip(_LETTER_RULES, _LETTER_RULE_FIRSTS, strict=True) if first in (None, ch))
    for ch in "abcdefghijklmnopqrstuvwxyz#"
}

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
    "opendump": (_HOST_FILE_READ, "opens a dump file from the debugger host"),
    "cmdtree": (_HOST_FILE_READ, "reads a command tree file from the debugger host"),
    # files
    "dump": (_FILE_WRITE, "writes a dump file on the debugger host"),
    "dumpcab": (_FILE_WRITE, "writes a CAB file on the debugger host"),
    "writemem": (_FILE_WRITE, "writes memory to a file on the debugger host"),
    "copysym": (_FILE_WRITE, "copies symbol files to a directory on the debugger host"),
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
    "dvalloc": (_MEMORY_WRITE, "allocates target memory"),
    "dvfree": (_MEMORY_WRITE, "frees target memory"),
    "pop": (_MEMORY_WRITE, "restores saved registers"),
    "fiximports": (_MEMORY_WRITE, "rewrites a target module's import table"),
    # execution
    "call": (_EXECUTION, "calls a function in the target"),
    "pagein": (_EXECUTION, "pages memory in (the target runs)"),
    "step_filter": (_EXECUTION, "changes what stepping skips"),
    "breakin": (_EXECUTION, "breaks into the kernel debugger"),
    "wake": (_HOST_EXEC, "wakes a sleeping debugger process on the debugger host"),
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
    "locale": (_READ, "sets the locale"),
    "noversion": (_READ, "hides version information"),
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
    "endsrv": (_SESSION_ENDING, "ends a debugging server, a shared session's too"),
    "scriptlist": (_READ, "lists loaded scripts"),
    "scriptproviders": (_READ, "lists script providers"),
    "nvlist": (_READ, "lists NatVis files"),
    "nvunload": (_READ, "unloads a NatVis file"),
    "nvunloadall": (_READ, "unloads NatVis files"),
    "unload": (_READ, "unloads an extension DLL"),
    "unloadall": (_READ, "unloads extension DLLs"),
    "tlist": (_HOST_FILE_READ, "lists processes on the debugger host"),
    "ttime": (_READ, "shows thread times"),
    "jdinfo": (_READ, "shows JIT debugging information"),
    "eventlog": (_READ, "shows recent events"),
    "dumpdebug": (_READ, "shows dump file streams"),
    "dml_flow": (_READ, "shows code flow"),
    "prefer_dml": (_READ, "sets a display option"),
    "wtitle": (_READ, "sets the window title"),
    "beep": (_READ, "beeps"),
    "sleep": (_UNKNOWN, "pauses the debugger (kd reads no input meanwhile)"),
    "push": (_READ, "saves registers"),
    "quit_lock": (_SETTINGS_CHANGE, "locks the debugger against quitting (kd-mcp's own stop included)"),
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
        "zombies", "dpcs", "mtrr", "gflag", "vprot", "critsec", "homedir", "wdfldr", "wdfdriverinfo", "wdfdevice",
        "wdfqueue", "wdfrequest", "wdfhandle", "wdfobject", "wdfdevicequeues", "wdfiotarget", "wdflogdump",
        "netadapter", "minidriver", "protocol", "filter", "oid", "interfaces", "nbl",
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



# ---------------------------------------------------------------- host files and the network

# A word that names a network location: "\\\\host\\share", "//host/share", "\\\\?\\UNC\\...",
# "file://", "http(s)://", "ftp://" -- the host connects there (and for SMB, authenticates).
NETWORK_WORD_RE = re.compile(
    r"(?:(?<=^)|(?<=[\s*=\"'(,;<]))(?P<path>(?:[\\/]{2}|[\\/]\?\?[\\/]UNC[\\/]|(?:file|https?|ftps?|smb|webdav)\s*:)"
    r"[^\s;*\"']*"
    # NT-namespace spellings of the same: "\??\GLOBALROOT\Device\Mup\h\s", "\Device\LanmanRedirector\h\s",
    # "\GLOBAL??\UNC\h\s" -- the object manager hands them to a network redirector.
    r"|(?:[\\/](?:\?\?|GLOBAL\?\?)[\\/](?:GLOBALROOT|UNC)(?:[\\/]|$)|[\\/]GLOBALROOT(?:[\\/]|$)"
    r"|[\\/]Device[\\/](?:Mup|LanmanRedirector|WebDavRedirector|MailslotRedirector|RdpDr|vmsmb|P9Rdr|CscRedirector)"
    r"(?:[\\/]|$))[^\s;*\"']*)",
    re.IGNORECASE,
)
# Commands that only print their arguments: a network-looking word there reaches nothing.
PRINT_ONLY_RE = re.compile(r"(?:\.echo|\.printf|\$\$(?![\s>a]*<)|\*)(?![\w])", re.IGNORECASE)
# The Microsoft public symbol server: what ".symfix" sets, allowed by default.
DEFAULT_NETWORK_ROOTS: tuple[str, ...] = ("https://msdl.microsoft.com/download/symbols",)


def normalize_root(root: str) -> str:
    """A root as compared: lower case, forward slashes, no trailing slash."""
    return root.strip().replace("\\", "/").rstrip("/").lower()


def under_allowed_root(path: str, roots: tuple[str, ...]) -> bool:
    """Whether ``path`` lies under one of ``roots`` (whole path components, no ``..``)."""
    norm = normalize_root(path.strip().strip('"'))
    if not norm or any(part in ("..", ".") for part in norm.split("/")[2:]):
        return False
    for root in roots:
        base = normalize_root(root)
        if base and (norm == base or norm.startswith(base + "/")):
            return True
    return False


# ---------------------------------------------------------------- run effects

# From the allowlist's entries (kdmcp/command/known.py): "g (Go)": commands after a ';' "are
# executed immediately after the g command has completed"; "gu" runs until the function
# returns; p/t and their variants step or trace: "the target executes" one instruction, a call,
# or up to a branch/return, and kd reads no input until it stops again; "wt" runs while tracing.
# Arguments may be glued to the name ("pa(nt!NtCreateFile)", "ta@$ra", "pc(1)", "g=addr"): the
# name ends where no name letter follows, as kd reads a letter command's name.
_EFFECTS = effect_names()
_RESUMES_EFFECT_RE = re.compile(rf"(?:{'|'.join(_EFFECTS[RunEffect.RESUMES.value])})(?![A-Za-z_]).*",
                                re.IGNORECASE | re.DOTALL)
_STEP_EFFECT_RE = re.compile(rf"(?:{'|'.join(_EFFECTS['steps'])})(?![A-Za-z_]).*", re.IGNORECASE | re.DOTALL)
_REBOOT_EFFECT_RE = re.compile(
    rf"(?:{'|'.join(re.escape(n) for n in _EFFECTS[RunEffect.REBOOTS.value])})(?!\w).*", re.IGNORECASE | re.DOTALL
)
_QUIT_EFFECT_RE = re.compile(r"q[qd]?", re.IGNORECASE)


# What a command with a run effect can start with: a selector (stripped first), or the first
# character of q/qq/qd, .reboot/.restart, g*, wt, p*/t* (each matches only its ASCII cases).
_EFFECT_HEADS = "~|qQ.gGwWpPtT"


def is_step(piece: str) -> bool:
    """Whether one simple command is a step or trace (p, t, pt, tt, pa, ta…: selectors stripped):
    kd prints each step's registers and new location, and nothing else is the target's."""
    return bool(_STEP_EFFECT_RE.fullmatch(strip_selectors(piece.strip())))


def leaf_effect(piece: str) -> RunEffect:
    """The run effect of one simple command (selectors stripped): quit, reboot, run, or none."""
    text = piece.strip()
    if text[:1] not in _EFFECT_HEADS:  # ("" is in every string: an empty piece takes the long way)
        return RunEffect.IMMEDIATE
    text = strip_selectors(text)
    if _QUIT_EFFECT_RE.fullmatch(text):
        return RunEffect.ENDS
    if _REBOOT_EFFECT_RE.fullmatch(text):
        return RunEffect.REBOOTS
    if _RESUMES_EFFECT_RE.fullmatch(text):
        return RunEffect.RESUMES
    return RunEffect.IMMEDIATE


def reaches_across_line(piece: str) -> bool:
    """Whether one command's meaning reaches the other commands of its line: an alias command
    (``as``, ``aS``, ``ad``, ``al``: what kd pastes into a line) or ``z``, which "executes a
    command while the given condition evaluates to a nonzero value" -- the commands before it
    ("Commands ; z( Expression )", z (Execute While))."""
    text = strip_selectors(piece.strip())
    return any(p.match(text) for p in (_ALIAS_SET_RE, _ALIAS_OTHER_RE, _Z_RE))


def pastes_aliases(line: str) -> bool:
    """Whether kd would paste alias text into ``line``: ``${name}``, ``$u0``-``$u9``, ``$CurrentDumpFile``."""
    return any(p.search(line) for p in (_ALIAS_USE_RE, _FIXED_ALIAS_RE, _AUTO_ALIAS_RE))
