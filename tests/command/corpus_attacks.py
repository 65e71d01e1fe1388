"""The allowlist's attack corpus (issue 28): lines ``read_only`` and ``standard`` must not run as typed.

Data only; ``tests/command/test_allowlist_corpora.py`` runs it. None of these lines is in
``tests/command/corpus.py``, the denylist's corpus (a test holds that).

Each base line below is literal, one class per section, with the source that says what the
command does (a kd documentation page, or issue 28 where an outside attacker measured it).
A base is either

- a denial (:func:`_deny`): the class a profile must deny it for (``also``: other classes that
  are as right, e.g. ``unknown`` for an extension DLL that does not export the command), or
- a run effect (:func:`_runs`): a line whose target-resuming effect was hidden from the engine;
  ``standard`` must either deny it or report that effect (``run_effect``), and ``read_only``
  denies it (it runs the target).

:data:`ATTACKS` is every base in every wrapper kd runs a command from (:data:`WRAPPERS`: now,
in a block, a branch, per thread, in a loop, at a breakpoint, at an event, at every prompt),
and extension commands also behind the ``!ext.`` and ``!kdexts.`` module prefixes. The wrapper
product is generated; the base lines are written out, except one cross of two written-out lists:
each NT-namespace spelling of a network path (:data:`NT_NETWORK_SPELLINGS`) in each path-taking
command (``_NETWORK_COMMANDS``).

Longer than 500 lines because it is one list per class, each line with its source: split, the
corpus would no longer read as one table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kdmcp.command.classes import CommandClass, RunEffect

C = CommandClass

DOCS = "https://learn.microsoft.com/windows-hardware/drivers/debuggercmds/"
ISSUE = "issue 28 (outside attack set, measured against main)"


@dataclass(frozen=True)
class Base:
    """One attack as typed bare: what it must be denied for, or the run effect it hides."""

    line: str
    source: str
    denied: CommandClass | None = None
    effect: RunEffect | None = None
    also: frozenset[CommandClass] = field(default_factory=frozenset)
    dll: str = "ext"  # the extension DLL that exports a bare "!command" (its reference page's "DLL")

    @property
    def classes(self) -> frozenset[CommandClass]:
        """Every class a denial of this line may name."""
        return frozenset({self.denied}) | self.also if self.denied is not None else frozenset()


@dataclass(frozen=True)
class Attack:
    """A base line inside one wrapper (and behind one extension prefix)."""

    line: str
    base: Base
    wrapper: str
    prefix: str = ""  # "", "ext" or "kdexts": the module named before an extension command

    @property
    def denied(self) -> CommandClass | None:
        return self.base.denied

    @property
    def effect(self) -> RunEffect | None:
        return self.base.effect

    @property
    def classes(self) -> frozenset[CommandClass]:
        classes = self.base.classes
        if self.prefix and self.prefix != self.base.dll and classes:
            # a DLL that does not export the command: kd answers "No export ... found", and an
            # allowlist that does not know the pair may call it unknown or a load
            classes |= {C.UNKNOWN, C.CODE_LOAD}
        return classes


def _deny(line: str, denied: CommandClass, source: str, *also: CommandClass, dll: str = "ext") -> Base:
    return Base(line=line, source=source, denied=denied, also=frozenset(also), dll=dll)


def _runs(line: str, source: str, effect: RunEffect = RunEffect.RESUMES) -> Base:
    return Base(line=line, source=source, effect=effect)


# "!chkimg [Options] [-mmw LogFile LogOptions] [Module]"; "-f Fixes errors in the image"; LogOptions is
# letters, "for example, if LogOptions is rSewo, each line of the log file contains ..."
_CHKIMG = DOCS + "-chkimg"
_ANALYZE = DOCS + "-analyze"  # "-xmf OutputXmlFile"; "!analyze -c [-load KnownIssuesFile | -unload | -help ]"
_SYMPATH = DOCS + "-sympath--set-symbol-path-"
_SRCPATH = DOCS + "-srcpath---lsrcpath--set-source-path-"
_EXEPATH = DOCS + "-exepath--set-executable-path-"
_SYMFIX = DOCS + "-symfix--set-symbol-store-path-"
_HOMEDIR = DOCS + "-homedir"  # "sets the default directory used by the symbol server and the source server"
_EXTMATCH = DOCS + "-extmatch--display-all-matching-extensions-"  # "/e ExtDLLPattern"
_ALIAS = DOCS + "as--as--set-alias-"
# ".pcmd -s CommandString": "the command string executed every time the prompt is displayed"
_PCMD = DOCS + "-pcmd--set-prompt-command-"
# "n [Radix]": "If you omit Radix, the current default radix is displayed"
_RADIX = DOCS + "n--set-number-base-"
_IDLE = DOCS + "-idle-cmd--set-idle-command-"
_DX = DOCS + "dx--display-visualizer-variables-"
# Microsoft's SyntheticTypes script: "ReadHeader ... headerPath - the path to a basic C header file to read
# from disk" (its readme's own example: ReadHeader("e:\\examples\\test.h", "ntdll"))
_SYNTHETIC = "github.com/microsoft/WinDbg-Samples: SyntheticTypes/readme.md"
# a function a script registered is called as @$name(...)
_JS = "https://learn.microsoft.com/windows-hardware/drivers/debugger/javascript-debugger-scripting"

# ------------------------------------------------------------------ host file writes
FILE_WRITES: list[Base] = [
    # "-mmw LogFile LogOptions: Creates a log file and records the activity of !chkimg in this file"
    _deny(r"!chkimg -mmw c:\temp\chk.log rSewo nt", C.FILE_WRITE, _CHKIMG),
    _deny(r"!chkimg -d -mmw c:\temp\chk.log rSewo nt", C.FILE_WRITE, _CHKIMG),
    _deny(r"!chkimg -lo 50 -v -mmw c:\chk.log rSewo nt", C.FILE_WRITE, _CHKIMG),
    _deny(r"!chkimg -mmw c:\chk.log rSewo", C.FILE_WRITE, _CHKIMG),
    _deny(r"!chkimg -mmw c:\a.log v -mmw c:\b.log tx nt", C.FILE_WRITE, _CHKIMG),  # "up to 10 log files"
    _deny(r"!chkimg -mmw chk.log vo nt", C.FILE_WRITE, _CHKIMG),  # "relative to the current path"
    _deny(r"!CHKIMG -MMW c:\chk.log rSewo nt", C.FILE_WRITE, _CHKIMG),
    _deny(r'!chkimg -mmw "c:\temp dir\chk.log" rSewo nt', C.FILE_WRITE, _CHKIMG),
    # extension options spelled with '/': EngExtCpp's parser accepts '/' like '-' (issue 28)
    _deny(r"!chkimg /mmw c:\chk.log rSewo nt", C.FILE_WRITE, ISSUE),
    _deny(r"!analyze /xmf c:\x.xml", C.FILE_WRITE, ISSUE),
    _deny(r"!analyze -v /xmf c:\x.xml", C.FILE_WRITE, ISSUE),
    _deny(r"!analyze /v /xml /xmf c:\x.xml", C.FILE_WRITE, ISSUE),
    _deny(r"!analyze -xml -xmf c:\x.xml", C.FILE_WRITE, _ANALYZE),
    _deny(r"!analyze -f -xmf c:\x.xml", C.FILE_WRITE, _ANALYZE),
    # "saves the KMDF error log records for a specified driver to an event trace log (.etl) file"
    _deny(r"!wdfkd.wdflogsave mydrv c:\temp\mydrv", C.FILE_WRITE, DOCS + "-wdfkd-wdflogsave", C.CODE_LOAD, C.UNKNOWN),
    # "!wmitrace.logsave LoggerID Save": writes the trace buffers to a file
    _deny(r"!wmitrace.logsave 0x2 c:\temp\x.etl", C.FILE_WRITE, DOCS + "-wmitrace-logsave", C.CODE_LOAD, C.UNKNOWN),
    # "!rcdrkd.rcdrlogsave: saves the recorder logs of a driver" to a trace file on the host
    _deny("!rcdrkd.rcdrlogsave mydrv", C.FILE_WRITE, DOCS + "-rcdrkd-rcdrlogsave", C.CODE_LOAD, C.UNKNOWN),
    # "!logexts.loge [OutputDirectory]": injects Logger into the target and writes its logs there
    _deny(r"!logexts.loge c:\temp", C.FILE_WRITE, DOCS + "-logexts-loge", C.CODE_LOAD, C.UNKNOWN),
    # ".copysym [/l] Path: copies the current symbol files to the specified directory"
    _deny(r".copysym c:\temp\syms", C.FILE_WRITE, DOCS + "-copysym--copy-symbol-files-"),
    _deny(r".copysym /l c:\temp\syms", C.FILE_WRITE, DOCS + "-copysym--copy-symbol-files-"),
]

# ------------------------------------------------------------------ network paths in NT-namespace spellings
# Each names the SMB redirector (or the multiple UNC provider) without a leading "\\host":
# "\??\" and "\\?\" hand the rest to the object manager unparsed, GLOBALROOT reaches \Device,
# and \Device\Mup, \Device\LanmanRedirector and \??\UNC all end at \\h\s.
NT_NETWORK_SPELLINGS = [
    r"\??\GLOBALROOT\Device\Mup\h\s",
    r"\??\GLOBALROOT\??\UNC\h\s",
    r"\Device\LanmanRedirector\h\s",
    r"\\?\GLOBALROOT\??\UNC\h\s",
    r"\\?\UNC\h\s",
]
# Every other spelling the namespace offers, tried on .sympath only.
NT_NETWORK_MORE = [
    r"\??\GLOBALROOT\Device\LanmanRedirector\h\s",
    r"\\?\GLOBALROOT\Device\LanmanRedirector\h\s",
    r"\\.\GLOBALROOT\Device\Mup\h\s",
    r"\\.\GLOBALROOT\??\UNC\h\s",
    r"\GLOBAL??\UNC\h\s",
    r"\??\GLOBALROOT\GLOBAL??\UNC\h\s",
    r"\Device\Mup\h\s",
    r"\Device\Mup\;LanmanRedirector\h\s",
    r"\Device\WebDavRedirector\h\s",
    r"\??\globalroot\device\mup\h\s",
    r"//?/UNC/h/s",
    r"//?/GLOBALROOT/Device/Mup/h/s",
    r"\??/GLOBALROOT/Device/Mup/h/s",
]

# Where each spelling is tried: every path-taking command issue 28 names, and !homedir.
_NETWORK_COMMANDS: list[tuple[str, str]] = [
    (".sympath {p}", _SYMPATH),
    (".sympath+ {p}", _SYMPATH),
    (r".sympath c:\sym;{p}", _SYMPATH),
    (".sympath srv*{p}*https://msdl.microsoft.com/download/symbols", _SYMPATH),
    (r".sympath srv*c:\sym*{p}", _SYMPATH),
    (".sympath cache*{p};srv*https://msdl.microsoft.com/download/symbols", _SYMPATH),
    (".symfix {p}", _SYMFIX),
    (".symfix+ {p}", _SYMFIX),
    (".srcfix {p}", DOCS + "-srcfix---lsrcfix--use-source-server-"),
    (".lsrcfix {p}", DOCS + "-srcfix---lsrcfix--use-source-server-"),
    (".srcpath {p}", _SRCPATH),
    (".srcpath+ {p}", _SRCPATH),
    (".lsrcpath {p}", _SRCPATH),
    (".lsrcpath+ {p}", _SRCPATH),
    (".exepath {p}", _EXEPATH),
    (".exepath+ {p}", _EXEPATH),
    (r"!chkimg -mmw {p}\chk.log rSewo nt", _CHKIMG),
    ("!chkimg -p {p} nt", _CHKIMG),  # "-p SearchPath: Recursively searches SearchPath for the file"
    ("!homedir {p}", _HOMEDIR),
]

NETWORK_PATHS: list[Base] = [
    *(
        _deny(cmd.format(p=p), C.NETWORK_PATH, src, dll="dbghelp" if src == _HOMEDIR else "ext")
        for p in NT_NETWORK_SPELLINGS
        for cmd, src in _NETWORK_COMMANDS
    ),
    # (some of these are no path Windows resolves at all: denied either way, as unknown if so)
    *(_deny(f".sympath {p}", C.NETWORK_PATH, _SYMPATH, C.UNKNOWN) for p in NT_NETWORK_MORE),
    # the plain UNC spelling where the denylist never looked
    _deny(r"!chkimg -mmw \\h\s\chk.log rSewo nt", C.NETWORK_PATH, _CHKIMG),
    _deny(r"!chkimg -p \\h\s nt", C.NETWORK_PATH, _CHKIMG),
    _deny(r"!homedir \\h\s", C.NETWORK_PATH, _HOMEDIR, dll="dbghelp"),
    _deny(r"!analyze /xmf \\h\s\x.xml", C.NETWORK_PATH, ISSUE),
    _deny(r".extmatch /e \\h\s\evil.dll *", C.NETWORK_PATH, _EXTMATCH, C.CODE_LOAD),
    _deny(r".copysym \\h\s", C.NETWORK_PATH, DOCS + "-copysym--copy-symbol-files-", C.FILE_WRITE),
    _deny(
        r".copysym \??\GLOBALROOT\Device\Mup\h\s", C.NETWORK_PATH, DOCS + "-copysym--copy-symbol-files-", C.FILE_WRITE
    ),
    # trace format search paths of the tracing extensions
    _deny(r"!wmitrace.searchpath \\h\s", C.NETWORK_PATH, DOCS + "-wmitrace-searchpath", C.CODE_LOAD, C.UNKNOWN),
    _deny(r"!wdfkd.wdfsearchpath \\h\s", C.NETWORK_PATH, DOCS + "-wdfkd-wdfsearchpath", C.CODE_LOAD, C.UNKNOWN),
    _deny(r"!rcdrkd.rcdrsearchpath \\h\s", C.NETWORK_PATH, DOCS + "-rcdrkd-rcdrsearchpath", C.CODE_LOAD, C.UNKNOWN),
    _deny(
        'dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("\\\\\\\\h\\\\s\\\\x.h", "nt")',
        C.NETWORK_PATH,
        _SYNTHETIC,
        C.HOST_FILE_READ,
    ),
]

# ------------------------------------------------------------------ host file reads
HOST_FILE_READS: list[Base] = [
    # dx calls the SyntheticTypes script's ReadHeader: it opens and parses a file on the debugger host
    _deny('dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("c:\\\\x.h", "nt")', C.HOST_FILE_READ, _SYNTHETIC),
    _deny('dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("c:/x.h", "nt")', C.HOST_FILE_READ, _SYNTHETIC),
    _deny('dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("c:\\x.h", "nt")', C.HOST_FILE_READ, _SYNTHETIC),
    _deny(
        'dx -r1 Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("c:\\\\secret\\\\a.h", "nt")',
        C.HOST_FILE_READ,
        _SYNTHETIC,
    ),
    _deny(
        'dx @$t = Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("c:/secret/a.h", "nt")',
        C.HOST_FILE_READ,
        _SYNTHETIC,
    ),
    _deny('dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("a.h", "nt")', C.HOST_FILE_READ, _SYNTHETIC),
    # the readme's forms: the Types of the header read, and the attributes argument (braces in a dx line)
    _deny(
        'dx -r1 Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("e:\\\\examples\\\\test.h", "ntdll").Types',
        C.HOST_FILE_READ,
        _SYNTHETIC,
    ),
    _deny(
        'dx Debugger.Utility.Analysis.SyntheticTypes.ReadHeader("e:\\\\examples\\\\dbghelp.h", "ntdll", '
        'new { Macros = new { _WIN64 = "1" }})',
        C.HOST_FILE_READ,
        _SYNTHETIC,
    ),
    _deny(
        'dx Debugger . Utility . Analysis . SyntheticTypes . ReadHeader ( "c:\\\\x.h" , "nt" )',
        C.HOST_FILE_READ,
        _SYNTHETIC,
    ),
    # '/' spellings of !analyze -c -load (issue 28)
    _deny(r"!analyze -c /load c:\ki.xml", C.HOST_FILE_READ, ISSUE),
    _deny(r"!analyze /c /load c:\ki.xml", C.HOST_FILE_READ, ISSUE),
    _deny(r"!analyze /c -load c:\ki.xml", C.HOST_FILE_READ, ISSUE),
    _deny(r"!ANALYZE -C -LOAD c:\ki.xml", C.HOST_FILE_READ, _ANALYZE),
    # ".tlist: lists all processes running on the system" -- the debugger host's, not the target's;
    # "-v ... the command-line used to start the process" (kd's own holds the KDNET key)
    _deny(".tlist", C.HOST_FILE_READ, DOCS + "-tlist--list-process-ids-"),
    _deny(".tlist -v", C.HOST_FILE_READ, DOCS + "-tlist--list-process-ids-"),
    # "!wdfkd.wdftmffile TMFFile": reads a trace message format file from the host
    _deny(r"!wdfkd.wdftmffile c:\x.tmf", C.HOST_FILE_READ, DOCS + "-wdfkd-wdftmffile", C.CODE_LOAD, C.UNKNOWN),
    _deny(r"!wmitrace.tmffile c:\x.tmf", C.HOST_FILE_READ, DOCS + "-wmitrace-tmffile", C.CODE_LOAD, C.UNKNOWN),
    _deny(r"!rcdrkd.rcdrtmffile c:\x.tmf", C.HOST_FILE_READ, DOCS + "-rcdrkd-rcdrtmffile", C.CODE_LOAD, C.UNKNOWN),
]

# ------------------------------------------------------------------ code loading and script code
CODE_LOADS: list[Base] = [
    # ".extmatch /e ExtDLLPattern" ("matched against the extension DLL filename"): the outside attack
    # found it resolves a DLL by name that is not loaded yet
    _deny(".extmatch /e evil.dll *", C.CODE_LOAD, ISSUE),
    _deny(".extmatch /e evil *", C.CODE_LOAD, _EXTMATCH),
    _deny(r".extmatch /e c:\evil\evil.dll *", C.CODE_LOAD, _EXTMATCH),
    _deny(".extmatch /D /e evil.dll help", C.CODE_LOAD, _EXTMATCH),
    _deny(".EXTMATCH /e evil.dll *", C.CODE_LOAD, _EXTMATCH),
    # dx @$name(...) calls a function a loaded script registered: JavaScript runs in the debugger
    _deny("dx @$evilFn()", C.CODE_LOAD, _JS, C.UNKNOWN, C.HOST_EXEC),
    _deny("dx @$name(1, 2)", C.CODE_LOAD, _JS, C.UNKNOWN, C.HOST_EXEC),
    _deny('dx -r1 @$runIt("whoami")', C.CODE_LOAD, _JS, C.UNKNOWN, C.HOST_EXEC),
    _deny("dx @$x = @$evilFn()", C.CODE_LOAD, _JS, C.UNKNOWN, C.HOST_EXEC),
    _deny("dx @$curprocess.Threads.Select(t => @$evilFn(t))", C.CODE_LOAD, _JS, C.UNKNOWN, C.HOST_EXEC),
    _deny("dx @$scriptContents.run()", C.CODE_LOAD, _JS, C.UNKNOWN, C.HOST_EXEC),
    _deny("dx Debugger.State.Scripts.evil.Contents.run()", C.CODE_LOAD, _JS, C.UNKNOWN, C.HOST_EXEC),
    _deny("dx @$evilFn ()", C.CODE_LOAD, _JS, C.UNKNOWN, C.HOST_EXEC),
    # a namespace a script added under Debugger.Utility: its methods are script code (the readme's example)
    _deny(
        'dx -r2 Debugger.Utility.Analysis.SyntheticTypes.CreateInstance("ExampleStruct", 0x007ff8`f03620d0)',
        C.CODE_LOAD,
        _SYNTHETIC,
        C.UNKNOWN,
    ),
    # ".cordll -l: loads the CLR debugging modules" (mscordacwks from the image path)
    _deny(".cordll -l", C.CODE_LOAD, DOCS + "-cordll--control-clr-debugging-"),
    _deny(".cordll -ve -u -l", C.CODE_LOAD, DOCS + "-cordll--control-clr-debugging-"),
]

# ------------------------------------------------------------------ settings changes
SETTINGS_CHANGES: list[Base] = [
    # "n [Radix]": the default radix; bare hex the typed tools send would be read in it
    _deny("n 8", C.SETTINGS_CHANGE, ISSUE),
    _deny("n 0n10", C.SETTINGS_CHANGE, ISSUE),
    _deny("n 10", C.SETTINGS_CHANGE, _RADIX),
    _deny("n 0x8", C.SETTINGS_CHANGE, _RADIX),
    _deny("N 8", C.SETTINGS_CHANGE, _RADIX),
    _deny("n8", C.SETTINGS_CHANGE, _RADIX, C.UNKNOWN),
    # output the typed tools parse, reformatted for every later command
    _deny(
        ".force_radix_output 1",
        C.SETTINGS_CHANGE,
        DOCS + "-force-radix-output--use-radix-for-integers-",
        C.OUTPUT_CONTROL,
    ),
    _deny(
        ".enable_long_status 1",
        C.SETTINGS_CHANGE,
        DOCS + "-enable-long-status--enable-long-integer-display-",
        C.OUTPUT_CONTROL,
    ),
    _deny(".enable_unicode 1", C.SETTINGS_CHANGE, DOCS + "-enable-unicode--enable-unicode-display-", C.OUTPUT_CONTROL),
    _deny(".kframes 1", C.SETTINGS_CHANGE, DOCS + "-kframes--set-stack-length-", C.OUTPUT_CONTROL),
    _deny(".prefer_dml 1", C.SETTINGS_CHANGE, DOCS + "-prefer-dml", C.OUTPUT_CONTROL),
    _deny(".echotimestamps 1", C.SETTINGS_CHANGE, DOCS + "-echotimestamps--show-time-stamps-", C.OUTPUT_CONTROL),
    _deny(".asm no_code_bytes", C.SETTINGS_CHANGE, DOCS + "-asm--change-disassembly-options-", C.OUTPUT_CONTROL),
    _deny(".symopt- 0x40000", C.SETTINGS_CHANGE, DOCS + "-symopt--set-symbol-options-"),
    _deny(".symopt+ 0x80000000", C.SETTINGS_CHANGE, DOCS + "-symopt--set-symbol-options-"),
    _deny("l-t", C.SETTINGS_CHANGE, DOCS + "l---l---set-source-options-"),
    _deny("l+s", C.SETTINGS_CHANGE, DOCS + "l---l---set-source-options-"),
    _deny(".lines -d", C.SETTINGS_CHANGE, DOCS + "-lines--toggle-source-line-support-"),
    _deny(".netsyms yes", C.SETTINGS_CHANGE, DOCS + "-netsyms", C.NETWORK_PATH),
    _deny(".ignore_missing_pages 1", C.SETTINGS_CHANGE, DOCS + "-ignore-missing-pages--suppress-missing-page-errors-"),
    _deny(r"!homedir c:\temp\home", C.SETTINGS_CHANGE, _HOMEDIR, dll="dbghelp"),
    # ".pcmd -s CommandString": output of a command printed before every later prompt
    # register mask, symbol suffix, source lines, inline frames, CPU numbers, locale, step filter
    # 'The "m" in the command name must be a lowercase letter' (rM is r's one-off mask: a read)
    _deny("rm 0x8", C.SETTINGS_CHANGE, DOCS + "rm--register-mask-", C.OUTPUT_CONTROL),
    _deny("ss a", C.SETTINGS_CHANGE, DOCS + "ss--set-symbol-suffix-"),
    _deny("lsp -a 40", C.SETTINGS_CHANGE, DOCS + "lsp--set-number-of-source-lines-"),
    _deny(".inline 0", C.SETTINGS_CHANGE, DOCS + "-inline--toggle-inline-debugging-", C.OUTPUT_CONTROL),
    _deny(".echocpunum 1", C.SETTINGS_CHANGE, DOCS + "-echocpunum--show-cpu-number-", C.OUTPUT_CONTROL),
    _deny(".locale de-DE", C.SETTINGS_CHANGE, DOCS + "-locale--set-locale-", C.OUTPUT_CONTROL),
    _deny('.step_filter "nt!*"', C.SETTINGS_CHANGE, DOCS + "-step-filter--set-step-filter-"),
    _deny(".childdbg 1", C.SETTINGS_CHANGE, DOCS + "-childdbg--debug-child-processes-"),
    _deny(".bpsync 1", C.SETTINGS_CHANGE, DOCS + "-bpsync--synchronize-threads-at-breakpoint-"),
    _deny(".cache forcedecodeuser", C.SETTINGS_CHANGE, DOCS + "-cache--set-cache-size-"),
    # ".idle_cmd String": "a command that is executed whenever control returns from the target to the
    # debugger"; the page's own example is "r eax" ("because the debugger is already idle, this command
    # immediately executes")
    _deny(".idle_cmd r eax", C.SETTINGS_CHANGE, _IDLE, C.OUTPUT_CONTROL, C.UNKNOWN),
    _deny(r".idle_cmd !chkimg -mmw c:\chk.log rSewo nt", C.FILE_WRITE, _IDLE, C.SETTINGS_CHANGE, C.UNKNOWN),
    _deny(".pcmd -s k", C.SETTINGS_CHANGE, _PCMD, C.OUTPUT_CONTROL),
    _deny('.pcmd -s ".echo x"', C.SETTINGS_CHANGE, _PCMD, C.OUTPUT_CONTROL),
]

# ------------------------------------------------------------------ aliases that change what a word means
# "aS Name EquivalentPhrase": kd replaces Name wherever it is a word of a later command line,
# so a name that is a command word rewrites that command -- .echo is the engine's completion marker.
# kd-mcp classes such a definition output_control: like .outmask it can take from the engine the
# output it reads, so it is never put to the person (kdmcp/server/asking.py), only run under full.
ALIASES: list[Base] = [
    _deny("aS .echo r", C.SETTINGS_CHANGE, ISSUE, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS lm g", C.SETTINGS_CHANGE, ISSUE, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS k gh", C.SETTINGS_CHANGE, ISSUE, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("as k g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS r gu", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS bl g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS dx g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS x g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS lmvm g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS .reload g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS .block g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS .printf gh", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS !process g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS .ECHO r", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS /x .echo 1", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS .echo .echo", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("as .echo k", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    # words the typed tools send
    _deny("aS .lastevent g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS vertarget g", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny("aS dps gh", C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
    _deny('aS u ".pcmd -s g"', C.SETTINGS_CHANGE, _ALIAS, C.UNKNOWN, C.OUTPUT_CONTROL),
]

# ------------------------------------------------------------------ other host processes, and the debugger's own time
HOST_EFFECTS: list[Base] = [
    # ".wake PID": "causes sleep mode to end" in the user-mode debugger with that process ID, another
    # process on the machine kd runs on
    _deny(".wake 4242", C.HOST_EXEC, DOCS + "-wake--wake-debugger-", C.UNKNOWN, C.SETTINGS_CHANGE),
    # ".sleep Milliseconds: the debugger pauses" -- every later call of the session times out
    _deny(".sleep 600000", C.UNKNOWN, DOCS + "-sleep--pause-debugger-", C.SETTINGS_CHANGE),
]

# ------------------------------------------------------------------ a target modification read_only must refuse
# "-f Fixes errors in the image ... the contents of the file on the symbol store are copied over the image"
TARGET_WRITES: list[Base] = [
    _deny("!chkimg /f nt", C.MEMORY_WRITE, ISSUE),
    _deny("!chkimg -f nt", C.MEMORY_WRITE, _CHKIMG),
    _deny("!chkimg -f -v hal", C.MEMORY_WRITE, _CHKIMG),
    _deny("!chkimg win32k -f", C.MEMORY_WRITE, _CHKIMG),  # the page's example, module first
    # the other ways the reference gives to change the target, each read_only's to refuse
    _deny("m @rsp L10 @rsp+0x100", C.MEMORY_WRITE, DOCS + "m--move-memory-"),
    _deny("wrmsr 0xc0000082 0", C.MEMORY_WRITE, DOCS + "wrmsr--write-msr-"),
    _deny("ob 0x80 0x1", C.MEMORY_WRITE, DOCS + "ob--ow--od--output-to-port-"),
    _deny("!ed 1000 0", C.MEMORY_WRITE, DOCS + "-eb---ed", dll="kdexts"),
    _deny(".dvalloc 1000", C.MEMORY_WRITE, DOCS + "-dvalloc--allocate-memory-"),
    _deny(".dvfree 7ff00000 0", C.MEMORY_WRITE, DOCS + "-dvfree--free-memory-"),
    _deny(".fiximports mydrv", C.MEMORY_WRITE, DOCS + "-fiximports--fix-target-module-imports-"),
    _deny("!gflag +hpa", C.MEMORY_WRITE, DOCS + "-gflag", dll="exts"),
]

# ------------------------------------------------------------------ hidden run effects
RUN_EFFECTS: list[Base] = [
    # ".pcmd -s g": g runs at every prompt, starting with the one right after this line
    _runs(".pcmd -s g", ISSUE),
    _runs(".pcmd -s gh", _PCMD),
    _runs(".pcmd -s p", _PCMD),
    _runs(".pcmd -s gu", _PCMD),
    _runs(".idle_cmd g", _IDLE),
    _runs('.pcmd -s ".block { g }"', _PCMD),
    _runs(".pcmd -s ~*e gh", _PCMD),
    # steps and goes with their argument glued to the command word (kd reads "pa(x)" as "pa (x)")
    _runs("pa(nt!NtCreateFile)", ISSUE),
    _runs("ta@$ra", ISSUE),
    _runs("pc(1)", ISSUE),
    _runs("tc(2)", DOCS + "tc--trace-to-next-call-"),
    _runs("pt(1)", DOCS + "pt--step-to-next-return-"),
    _runs("tt@$t0", DOCS + "tt--trace-to-next-return-"),
    _runs("ph(1)", DOCS + "ph--step-to-next-branching-instruction-"),
    _runs("th(1)", DOCS + "th--trace-to-next-branching-instruction-"),
    _runs("pct(1)", DOCS + "pct--step-to-next-call-or-return-"),
    _runs("p(2)", DOCS + "p--step-"),
    _runs("t(1)", DOCS + "t--trace-"),
    _runs("pa@rip+10", DOCS + "pa--step-to-address-"),
    _runs("ta(@rip+10)", DOCS + "ta--trace-to-address-"),
    _runs("g(nt!NtClose)", DOCS + "g--go-"),
    _runs("g@$ra", DOCS + "g--go-"),
    _runs("gh(nt!NtClose)", DOCS + "gh--go-with-exception-handled-"),
    _runs("tb(1)", DOCS + "tb--trace-to-next-branch-"),
    _runs("tct(2)", DOCS + "tct--trace-to-next-call-or-return-"),
    _runs("PA(nt!NtCreateFile)", DOCS + "pa--step-to-address-"),
]

BASES: list[Base] = [
    *FILE_WRITES,
    *NETWORK_PATHS,
    *HOST_FILE_READS,
    *CODE_LOADS,
    *SETTINGS_CHANGES,
    *ALIASES,
    *HOST_EFFECTS,
    *TARGET_WRITES,
    *RUN_EFFECTS,
]

# ------------------------------------------------------------------ wrappers


def _in_double_quotes(command: str) -> str:
    """A command inside a "…" command string: kd reads \\" there as a quotation mark (bp, sx*, .pcmd)."""
    return command.replace('"', '\\"')


Wrapper = Callable[[str], str]

# Each makes kd run its argument: now, per thread, in a loop, on a breakpoint or event, at every prompt.
WRAPPERS: dict[str, Wrapper] = {
    "bare": lambda c: c,
    "block": lambda c: f".block {{ {c} }}",
    "if": lambda c: f".if (1) {{ {c} }}",
    "j": lambda c: f"j 1 '{c}' ; ''",
    "thread_e": lambda c: f"~*e {c}",
    # the loop variable is a name no base line holds: kd pastes the token wherever the name occurs
    "foreach": lambda c: f".foreach (tok {{.echo 1}}) {{ {c} }}",
    "bp": lambda c: f'bp nt!NtClose "{_in_double_quotes(c)}"',
    "sxe": lambda c: f'sxe -c "{_in_double_quotes(c)}" ld',
    "pcmd": lambda c: f'.pcmd -s "{_in_double_quotes(c)}"',
}

# A breakpoint's or an event's command string runs at a later break: the target is already
# running then, so a run effect inside one hides nothing from the engine (it waits for a break).
LATER_WRAPPERS = frozenset({"bp", "sxe"})

EXTENSION_PREFIXES = ("ext", "kdexts")


def _prefixed(line: str, module: str) -> str | None:
    """``!chkimg -f nt`` -> ``!ext.chkimg -f nt``; None for a line that is no bare extension command."""
    if not line.startswith("!") or line.startswith("!!"):
        return None
    name = line[1:].split(" ", 1)[0]
    if "." in name:
        return None
    return f"!{module}.{line[1:]}"


def _product() -> list[Attack]:
    attacks: list[Attack] = []
    for base in BASES:
        variants = [("", base.line)]
        for module in EXTENSION_PREFIXES:
            prefixed = _prefixed(base.line, module)
            if prefixed is not None:
                variants.append((module, prefixed))
        for prefix, line in variants:
            for name, wrap in WRAPPERS.items():
                if base.effect is not None and name in LATER_WRAPPERS:
                    continue
                attacks.append(Attack(line=wrap(line), base=base, wrapper=name, prefix=prefix))
    return attacks


ATTACKS: list[Attack] = _product()
