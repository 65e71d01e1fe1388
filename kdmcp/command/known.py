"""The allowlist: every command kd-mcp lets ``read_only`` and ``standard`` run, with its grammar.

ONE table. A command kd would run (after blocks, branches, loops, ``~e``, breakpoint and event
command strings, aliases) must match an :class:`~kdmcp.command.grammar.Entry` here -- its name,
every option (listed positively; extensions in both ``-`` and ``/`` spellings), every argument's
shape -- or it is refused as ``unknown`` (``full`` is the explicit opt-out). The class of a
command on the table still comes from :mod:`~kdmcp.command.leaf_rules` and decides per profile:
the table says a command is *understood*, the class says what it may touch. Run effects
(``g``, ``p``, ``t``... resume the target; ``.reboot`` reboots it) are read from here too, by the
engine and the simulator (:func:`kdmcp.command.tables.leaf_effect`).

Each entry cites the kd documentation page it relies on (``Entry.doc`` under
:data:`~kdmcp.command.grammar.DOCS`); docs/security.md's counts and ``config`` extensions are
checked against this table (tests/command/test_known.py).

Left off on purpose, though kd documents them: ``a`` (Assemble) and ``e`` without values wait for
more input lines (the engine's completion marker would be read as their input); every option
that names a host file or a command string run later (``!chkimg -mmw``/``-p``, ``!analyze -xmf``
/``-c``, ``!address -c:``, ``.extmatch /e``, ``ld /f``, ``.pcmd -s``) and every extension not
listed -- one that writes a log (``!wdfkd.wdflogsave``) or sets a host path is as easy to spell
as one that reads.

Longer than 500 lines: it is data, one entry per command, and one table is the point.

Pure: stdlib only.
"""

from __future__ import annotations

from kdmcp.command.classes import RunEffect
from kdmcp.command.grammar import Entry, Shape

__all__ = ["EXTENSIONS", "LETTERS", "METAS", "SYMBOLS", "TABLE"]

_E, _O, _S, _P, _T, _N = Shape.EXPR, Shape.OBJECT, Shape.STRING, Shape.PATH, Shape.TEXT, Shape.NONE
_RUNS = RunEffect.RESUMES
# Display-memory options ("d*": /c Columns, /p physical with c/u/w caching attributes).
_D_OPTS = ("/c=", "/c[0-9]+", "/p[uw]?c?")
# Breakpoint options ("bp": /1 once, /f predicated count, /p process, /t thread, /c /C call depth,
# /w a dx condition; "bm": /a all, /d no-deferred).
_BP_OPTS = ("/1", "/f=", "/p=", "/t=", "/c=", "/C=", "/w=")



def _step(names: tuple[str, ...], doc: str) -> Entry:
    """A step or trace: the target runs; an argument may be a "command string" run after it."""
    return Entry(names, doc, args=_S, effect=_RUNS, steps=True)


# --------------------------------------------------------------------- letter commands
# Name patterns are regular expressions over the command word (case-insensitive, as kd reads
# letter commands), glued suffixes included: "kbn", "lmvm", "dps".
LETTERS: tuple[Entry, ...] = (
    Entry((r"k[bcdpvnflmt]*",), "k--kb--kc--kd--kp--kp--kv--display-stack-backtrace-"),
    Entry((r"d[abcdfpquw]?", r"dy[bd]"), "d--da--db--dc--dd--dd--df--dp--dq--du--dw--dw--dyb--dyd--display-memor",
          options=_D_OPTS),
    Entry((r"d[dpq][apu]",), "dda--ddp--ddu--dpa--dpp--dpu--dqa--dqp--dqu--display-referenced-memory", options=_D_OPTS),
    Entry((r"d[dpq]s",), "dds--dps--dqs--display-words-and-symbols-", options=_D_OPTS),
    Entry((r"dg",), "dg--display-selector-"),
    Entry((r"dlb?",), "dl--display-linked-list-"),
    Entry((r"ds",), "ds--ds--display-string-"),
    Entry((r"dt",), "dt--display-type-",
          options=("-[abcdehiopvty]+[0-9]*", "-r[0-9]*", "-s=", "-y", "-l=")),
    Entry((r"dtx",), "dtx--display-type---extended-debugger-object-model-information-"),
    Entry((r"dv",), "dv--display-local-variables-",
          options=("/f=", "/i", "/r", "/t", "/v", "/V", "/a", "/A", "/n", "/N", "/z", "/Z"), both_spellings=True),
    # dx: the expression's grammar is command_strings.dx's (methods and functions it may call).
    Entry((r"dx",), "dx--display-visualizer-variables-", args=_T),
    Entry((r"e[abdfpquw]?", r"ez[au]"), "e--ea--eb--ed--ed--ef--ep--eq--eu--ew--eza--ezu--enter-values-", args=_S),
    Entry((r"fp?",), "f--fp--fill-memory-", args=_S),
    Entry((r"m",), "m--move-memory-"),
    Entry((r"i[bdw]",), "ib--iw--id--input-from-port-"),
    Entry((r"o[bdw]",), "ob--ow--od--output-to-port-"),
    Entry((r"rdmsr",), "rdmsr--read-msr-"),
    Entry((r"wrmsr",), "wrmsr--write-msr-"),
    Entry((r"g", r"ga"), "g--go-", effect=_RUNS),
    Entry((r"gc",), "gc--go-from-conditional-breakpoint-", effect=_RUNS),
    Entry((r"gh",), "gh--go-with-exception-handled-", effect=_RUNS),
    Entry((r"gn",), "gn--gn--go-with-exception-not-handled-", effect=_RUNS),
    Entry((r"gu",), "gu--go-up-", effect=_RUNS),
    _step((r"p", r"pr"), "p--step-"),
    _step((r"pa",), "pa--step-to-address-"),
    _step((r"pc",), "pc--step-to-next-call-"),
    _step((r"pct",), "pct--step-to-next-call-or-return-"),
    _step((r"ph",), "ph--step-to-next-branching-instruction-"),
    _step((r"pt",), "pt--step-to-next-return-"),
    _step((r"t", r"tr"), "t--trace-"),
    _step((r"ta",), "ta--trace-to-address-"),
    _step((r"tb",), "tb--trace-to-next-branch-"),
    _step((r"tc",), "tc--trace-to-next-call-"),
    _step((r"tct",), "tct--trace-to-next-call-or-return-"),
    _step((r"th",), "th--trace-to-next-branching-instruction-"),
    _step((r"tt",), "tt--trace-to-next-return-"),
    Entry((r"wt",), "wt--trace-and-watch-data-", effect=_RUNS,
          options=("-l=", "-m=", "-i=", "-ni", "-nc", "-ns", "-nw", "-oa", "-or", "-oR")),
    Entry((r"b[pu](?:[0-9]+|\[[^\]]*\])?", r"bm"), "bp--bu--bm--set-breakpoint-", options=(*_BP_OPTS, "/a", "/d"),
          args=_S, value=_S),
    Entry((r"ba(?:[0-9]+|\[[^\]]*\])?",), "ba--break-on-access-", options=_BP_OPTS, args=_S, value=_S),
    Entry((r"bc",), "bc--breakpoint-clear-"),
    Entry((r"bd",), "bd--breakpoint-disable-"),
    Entry((r"be",), "be--breakpoint-enable-"),
    Entry((r"bl",), "bl--breakpoint-list-", options=("/N", "/M", "/D")),
    Entry((r"br",), "br--breakpoint-renumber-"),
    Entry((r"bs",), "bs--update-breakpoint-command-", args=_S),
    Entry((r"bsc",), "bsc--update-conditional-breakpoint-", args=_S),
    Entry((r"sx[-ednir]?",), "sx--sxd--sxe--sxi--sxn--sxr--sx---set-exceptions-", options=("-c=", "-c2=", "-h"),
          value=_S),
    Entry((r"r[mxflq]?", r"r\."), "r--registers-"),
    Entry((r"rm",), "rm--register-mask-", args=_N),
    # as/aS: the name and the value are command_strings.alias_command's to judge.
    Entry((r"as",), "as--as--set-alias-", args=_T),
    Entry((r"ad",), "ad--delete-alias-", options=("/q",)),
    Entry((r"al",), "al--list-aliases-", args=_N),
    Entry((r"z",), "z--execute-while-", args=_T),
    Entry((r"s",), "s--search-memory-", options=(r"-(?:\[[^\]]*\])?(?:[bwdqau]|s[au]|v)?",), args=_S),
    Entry((r"so",), "so--set-kernel-debugging-options-"),
    Entry((r"sq",), "sq--set-quiet-mode-"),
    Entry((r"ss",), "ss--set-symbol-suffix-", args=_N),
    Entry((r"u", r"ub", r"uu"), "u--unassemble-"),
    Entry((r"uf",), "uf--unassemble-function-", options=("/c", "/D", "/m", "/o", "/O", "/i")),
    Entry((r"up",), "up--unassemble-from-physical-memory-"),
    Entry((r"ur",), "ur--unassemble-real-mode-bios-"),
    Entry((r"ux",), "ux--unassemble-x86-bios-"),
    Entry((r"lm[a-z0-9]*",), "lm--list-loaded-modules-"),
    Entry((r"ln",), "ln--list-nearest-symbols-"),
    Entry((r"ld",), "ld--load-symbols-"),
    Entry((r"ls", r"lsa"), "ls--lsa--list-source-lines-"),
    Entry((r"lsc",), "lsc--list-current-source-"),
    Entry((r"lsp",), "lsp--set-number-of-source-lines-", args=_N),
    Entry((r"x",), "x--examine-symbols-",
          options=("/D", "/t", "/v", "/q", "/p", "/P", "/f", "/d", "/a", "/A", "/n", "/N", "/z", "/Z", "/s=")),
    Entry((r"n",), "n--set-number-base-", args=_N),
    Entry((r"c",), "c--compare-memory-"),
    Entry((r"vertarget",), "vertarget--show-target-computer-version-", args=_N),
    Entry((r"version",), "version--show-debugger-version-", args=_N),
    Entry((r"vercommand",), "vercommand--show-debugger-command-line-", args=_N),
    Entry((r"#",), "---search-for-disassembly-pattern-"),
)

# --------------------------------------------------------------------- symbol-led commands
SYMBOLS: tuple[Entry, ...] = (
    Entry(("?",), "---evaluate-expression-", args=_T),
    Entry(("??",), "----evaluate-c---expression-", args=_T),
    Entry(("$$",), "-----comment-specifier-", args=_T),
    Entry(("*",), "----comment-line-specifier-", args=_T),
    # Selectors: the command after a prefix (or ~e's string) is looked up on its own.
    Entry(("~",), "---thread-status-", args=_T),
    Entry(("~s",), "-s--set-current-thread-", args=_T),
    Entry(("~f",), "-f--freeze-thread-", args=_T),
    Entry(("~u",), "-u--unfreeze-thread-", args=_T),
    Entry(("~n",), "-n--suspend-thread-", args=_T),
    Entry(("~m",), "-m--resume-thread-", args=_T),
    Entry(("~e",), "-e--thread-specific-command-", args=_T),
    Entry(("|",), "---process-status-", args=_T),
    Entry(("|s",), "-s--set-current-process-", args=_T),
    Entry(("||",), "----system-status-", args=_T),
    Entry(("||s",), "--s--set-current-system-", args=_T),
)

# --------------------------------------------------------------------- meta (dot) commands
METAS: tuple[Entry, ...] = (
    Entry((".echo",), "-echo--echo-comment-", args=_T),
    Entry((".printf",), "-printf", args=_T),
    Entry((".frame",), "-frame--set-local-context-", options=("/c", "/r")),
    Entry((".f+", ".f-"), "-f----f---shift-local-context-", args=_N),
    Entry((".trap",), "-trap--display-trap-frame-"),
    Entry((".cxr",), "-cxr--display-context-record-", options=("/f", "/w")),
    Entry((".exr",), "-exr--display-exception-record-"),
    Entry((".ecxr",), "-ecxr--display-exception-context-record-", options=("/f",)),
    Entry((".exptr",), "-exptr--display-exception-pointers-"),
    Entry((".lastevent",), "-lastevent--display-last-event-", args=_N),
    Entry((".reload",), "-reload--reload-module-",
          options=("/d", "/f", "/i", "/l", "/n", "/o", "/s", "/u", "/unl", "/user", "/v", "/w", "/wow64", "/P",
                   "-\\?")),
    Entry((".symfix", ".symfix+"), "-symfix--set-symbol-store-path-", args=_P),
    Entry((".sympath", ".sympath+"), "-sympath--set-symbol-path-", args=_P),
    Entry((".srcpath", ".srcpath+", ".lsrcpath", ".lsrcpath+"), "-srcpath---lsrcpath--set-source-path-", args=_P),
    Entry((".exepath", ".exepath+"), "-exepath--set-executable-path-", args=_P),
    Entry((".symopt", ".symopt+", ".symopt-"), "-symopt--set-symbol-options-"),
    Entry((".effmach",), "-effmach--effective-machine-"),
    Entry((".formats",), "-formats--show-number-formats-"),
    Entry((".cls",), "-cls--clear-screen-", args=_N),
    Entry((".chain",), "-chain--list-debugger-extensions-", options=("/D",)),
    Entry((".extmatch",), "-extmatch--display-all-matching-extensions-", options=("/D", "/n")),
    Entry((".logclose",), "-logclose--close-log-file-", args=_N),
    Entry((".logfile",), "-logfile--display-log-file-status-", args=_N),
    Entry((".time",), "-time--display-system-time-", options=("-h=",)),
    Entry((".process",), "-process--set-process-context-", options=("/i", "/p", "/r", "/P", "-i", "-p", "-r")),
    Entry((".thread",), "-thread--set-register-context-", options=("/p", "/r", "/w")),
    Entry((".context",), "-context--set-user-mode-address-context-"),
    Entry((".tss",), "-tss--display-task-state-segment-"),
    Entry((".fnent",), "-fnent--display-function-data-"),
    Entry((".fnret",), "-fnret--display-function-return-value-", options=("/s",)),
    Entry((".enable_unicode",), "-enable-unicode--enable-unicode-display-"),
    Entry((".enable_long_status",), "-enable-long-status--enable-long-integer-display-"),
    Entry((".force_radix_output",), "-force-radix-output--use-radix-for-integers-"),
    Entry((".typeopt",), "-typeopt--set-type-options-"),
    Entry((".asm", ".asm+", ".asm-"), "-asm--change-disassembly-options-"),
    Entry((".lines",), "-lines--toggle-source-line-support-", options=("-e", "-d", "-t")),
    Entry((".locale",), "-locale--set-locale-"),
    Entry((".noversion",), "-noversion--disable-version-checking-", args=_N),
    Entry((".hideinjectedcode",), "-hideinjectedcode"),
    Entry((".show_read_failures",), "-show-read-failures", options=("/v",)),
    Entry((".show_sym_failures",), "-show-sym-failures", options=("/s",)),
    Entry((".echotime",), "-echotime--show-current-time-", args=_N),
    Entry((".echocpunum",), "-echocpunum--show-cpu-number-"),
    Entry((".kframes",), "-kframes--set-stack-length-"),
    Entry((".help",), "-help--meta-command-help-", options=("/D",)),
    Entry((".bpcmds",), "-bpcmds--display-breakpoint-commands-", options=("-e", "-d", "-c", "-p=")),
    Entry((".sxcmds",), "sx--sxd--sxe--sxi--sxn--sxr--sx---set-exceptions-", options=("-1",)),
    Entry((".bugcheck",), "-bugcheck--display-bug-check-data-", args=_N),
    Entry((".clients",), "-clients--list-debugging-clients-", args=_N),
    Entry((".servers",), "-servers--list-debugging-servers-", args=_N),
    Entry((".scriptlist",), "-scriptlist--list-loaded-scripts-", args=_N),
    Entry((".scriptproviders",), "-scriptproviders--list-script-providers-", args=_N),
    Entry((".nvlist",), "-nvlist--natvis-list-", args=_N),
    Entry((".nvunload",), "-nvunload--natvis-unload-"),
    Entry((".nvunloadall",), "-nvunloadall--natvis-unload-all-", args=_N),
    Entry((".unload",), "-unload--unload-extension-dll-"),
    Entry((".unloadall",), "-unloadall--unload-all-extension-dlls-", args=_N),
    Entry((".ttime",), "-ttime--display-thread-times-", args=_N),
    Entry((".jdinfo",), "-jdinfo--use-jit-debug-info-"),
    Entry((".eventlog",), "-eventlog--display-recent-events-", args=_N),
    Entry((".dml_flow",), "-dml-flow"),
    Entry((".prefer_dml",), "-prefer-dml"),
    Entry((".beep",), "-beep--speaker-beep-", args=_N),
    Entry((".push",), "-push--save-debugger-state-", options=("/k", "/r", "/q")),
    Entry((".pop",), "-pop--restore-debugger-state-", options=("/k", "/r", "/q")),
    Entry((".record_branches",), "-record-branches--enable-branch-recording-"),
    Entry((".secure",), "-secure--activate-secure-mode-"),
    Entry((".noshell",), "-noshell--prohibit-shell-commands-", args=_N),
    Entry((".cache",), "-cache--set-cache-size-",
          keywords=("hold", "unhold", "decodeptes", "nodecodeptes", "forcedecodeptes", "forcedecodeuser", "noforce",
                    "flushall", "flushu", "flush")),
    Entry((".childdbg",), "-childdbg--debug-child-processes-"),
    Entry((".ignore_missing_pages",), "-ignore-missing-pages--suppress-missing-page-errors-"),
    Entry((".kdtargetmac",), "-kdtargetmac--display-target-mac-address-", args=_N),
    Entry((".srcnoisy",), "-srcnoisy--noisy-source-loading-"),
    Entry((".continue",), "-continue", args=_N),
    Entry((".leave",), "-leave", args=_N),
    # Only the forms that show a setting or turn all output on ("/a", "/d"); see leaf_rules.dot.
    Entry((".outmask",), "-outmask--control-output-mask-", options=("/a", "/d"), args=_N),
    Entry((".ofilter",), "-ofilter--filter-target-output-", args=_N),
    Entry((".prompt_allow",), "-prompt-allow--control-prompt-display-", args=_N),
    Entry((".expr",), "-expr--choose-expression-evaluator-", options=("/q",), args=_N),
    Entry((".settings",), "-settings--set-debug-settings-", args=_N, keywords=("list", "help")),
    Entry((".dml_start",), "-dml-start", args=_N),
    Entry((".pcmd",), "-pcmd--set-prompt-command-", options=("-c",), args=_N),
    Entry((".browse",), "-browse--display-command-in-browser-", args=_T),  # its command is checked on its own
    Entry((".call",), "-call--call-function-", options=("/v", "/s=", "/c")),
    Entry((".pagein",), "-pagein--page-in-memory-", options=("/p=",)),
    Entry((".step_filter",), "-step-filter--set-step-filter-", options=("/c",), args=_S),
    Entry((".breakin",), "-breakin--break-to-the-kernel-debugger-", args=_N),
    Entry((".apply_dbp",), "-apply-dbp--apply-data-breakpoint-to-context-", options=("/m=",)),
    Entry((".bpsync",), "-bpsync--synchronize-threads-at-breakpoint-"),
    Entry((".reboot",), "-reboot--reboot-target-computer-", args=_N, effect=RunEffect.REBOOTS),
    Entry((".restart",), "-restart--restart-kernel-connection-", options=("/f",), args=_N, effect=RunEffect.REBOOTS),
    Entry((".crash",), "-crash--force-system-crash-", args=_N),
    Entry((".kill",), "-kill--kill-process-", args=_N),
    Entry((".closehandle",), "-closehandle--close-handle-", options=("-a",)),
    Entry((".dvalloc",), "-dvalloc--allocate-memory-", options=("/b=", "/r")),
    Entry((".dvfree",), "-dvfree--free-memory-", options=("/d",)),
)

# --------------------------------------------------------------------- extension commands
# "!name" and "!module.name" for the modules that ship with the debugger (tables.py). Options
# are listed with '-'; "/" is accepted as the same option (EngExtCpp parses both).


def _ext(name: str, doc: str | None = None, options: tuple[str, ...] = (), args: Shape = _E,
         keywords: tuple[str, ...] = ()) -> Entry:
    return Entry(("!" + name,), doc or "-" + name, options=options, args=args, keywords=keywords, both_spellings=True)


EXTENSIONS: tuple[Entry, ...] = (
    _ext("analyze", options=("-v+[0-9]*", "-f", "-hang", "-show")),
    _ext("process", options=("-s=", "-m=")),
    _ext("thread", options=("-p", "-t")),
    _ext("pool"),
    _ext("poolused"),
    _ext("poolfind", options=("-nonpaged", "-paged", "-session", "-global")),
    _ext("poolval"),
    _ext("pte"),
    _ext("vtop"),
    _ext("pfn"),
    _ext("pte2va"),
    _ext("ptov"),
    _ext("vm"),
    _ext("sysptes"),
    _ext("memusage"),
    _ext("address", options=("-summary", "-f:[A-Za-z0-9_,]+", "-o:(?:csv|tsv|1)", "-\\?", "-help")),
    _ext("handle"),
    _ext("object", args=_O),
    _ext("obja"),
    _ext("drvobj", args=_O),
    _ext("devobj", args=_O),
    _ext("devstack", args=_O),
    _ext("devnode"),
    _ext("devext"),
    _ext("irp"),
    _ext("irpfind"),
    _ext("irql"),
    _ext("pcr"),
    _ext("prcb"),
    _ext("idt", options=("-a",)),
    _ext("locks", "-locks---kdext--locks-", options=("-v", "-p", "-d")),
    _ext("qlocks"),
    _ext("stacks"),
    _ext("running", options=("-i", "-t", "-it", "-ti")),
    _ext("ready"),
    _ext("sysinfo", keywords=("cpuinfo", "cpumicrocode", "cpuspeed", "gbl", "machineid", "registers", "smbios")),
    _ext("cpuinfo"),
    _ext("error"),
    _ext("gle", options=("-all",)),
    _ext("lmi"),
    _ext("chkimg", options=("-nar", "-ss=", "-as", "-r=", "-nospec", "-noplock", "-np", "-d", "-db", "-lo=", "-v",
                            "-f")),
    _ext("sym", args=_N, keywords=("noisy", "quiet", "prompts", "off")),
    _ext("peb"),
    _ext("teb"),
    _ext("heap", options=("-s", "-a", "-p", "-x", "-v", "-i", "-l", "-h", "-stat", "-triage", "-srch", "-all", "-flt",
                          "-grp", "-k", "-m", "-t", "-hl", "-c")),
    _ext("token", options=("-n",)),
    _ext("sd"),
    _ext("sid"),
    _ext("acl"),
    _ext("session", options=("-s=",)),
    _ext("job"),
    _ext("timer"),
    _ext("dpcs"),
    _ext("apc"),
    _ext("vad"),
    _ext("filecache"),
    _ext("fileobj"),
    _ext("zombies"),
    _ext("pci"),
    _ext("pcitree"),
    _ext("mtrr"),
    _ext("ipi"),
    _ext("smt"),
    _ext("verifier"),
    _ext("deadlock"),
    _ext("findstack"),
    _ext("findthreads", options=("-v",)),
    _ext("uniqstack", options=("-b", "-v", "-p")),
    _ext("runaway"),
    _ext("exchain"),
    _ext("dlls", options=("-a", "-c", "-f", "-h", "-i", "-l", "-m", "-s", "-v")),
    _ext("cs", options=("-s", "-l", "-o", "-d")),
    _ext("str"),
    _ext("ustr"),
    _ext("reg", args=_O),
    _ext("bugdump"),
    _ext("blackboxbsd"),
    _ext("ca"),
    _ext("cpuid"),
    _ext("dh", options=("-f", "-s", "-e", "-a", "-h")),
    _ext("gflag"),
    _ext("vprot"),
    _ext("critsec"),
    _ext("apic", "kernel-mode-extensions"),  # no page of its own in the reference; typed in a real transcript
    _ext("dreg"),
    _ext("errlog"),
    _ext("help"),
    _ext("imgreloc"),
    _ext("lpc"),
    _ext("mps"),
    _ext("openmaps"),
    _ext("search"),
    _ext("stl"),
    _ext("tz"),
    _ext("tzinfo"),
    _ext("vadump"),
    _ext("wsle"),
    _ext("bcb"),
    _ext("defwrites"),
    _ext("arbiter"),
    _ext("filelock"),
    _ext("dml_proc", "-dml-proc"),
    *(_ext(name, "-db---dc---dd---dp---dq---du---dw", keywords=("c", "uc", "wc")) for name in
      ("db", "dc", "dd", "dp", "dq", "du", "dw")),
    *(_ext(name, "-eb---ed") for name in ("eb", "ed")),
    *(_ext(name, "-ib---id---iw") for name in ("ib", "id", "iw")),
    *(_ext(name, "-ob---od---ow") for name in ("ob", "od", "ow")),
    # KMDF (wdfkd.dll) and NDIS (ndiskd.dll) reads driver writers type; not the ones that set a
    # host path or write a file (!wdftmffile, !wdfsearchpath, !wdflogsave, !ndiskd.nbl -capfile).
    *(_ext(name, f"-wdfkd-{name}") for name in
      ("wdfldr", "wdfdriverinfo", "wdfdevice", "wdfqueue", "wdfrequest", "wdfhandle", "wdfobject", "wdfdevicequeues",
       "wdfiotarget")),
    _ext("wdflogdump", "-wdfkd-wdflogdump", options=("-d", "-f", "-a=")),
    _ext("netadapter", "-ndiskd-netadapter",
         options=("-handle=", "-basic", "-diag", "-state", "-bindings", "-ports", "-offloads", "-filterdb", "-timers",
                  "-rst", "-pm", "-ss", "-aoac", "-wol", "-protocoloffloads")),
    _ext("minidriver", "-ndiskd-minidriver", options=("-handle=", "-basic", "-miniports", "-devices", "-handlers")),
    _ext("protocol", "-ndiskd-protocol", options=("-handle=", "-findname=")),
    _ext("filter", "-ndiskd-filter", options=("-handle=", "-findname=", "-handlers")),
    _ext("oid", "-ndiskd-oid", options=("-handle=", "-legacyoid", "-nolimit", "-miniport=")),
    _ext("interfaces", "-ndiskd-interfaces", options=("-handle=", "-luid=")),
    _ext("nbl", "-ndiskd-nbl",
         options=("-handle=", "-basic", "-chain", "-info", "-data", "-stacks", "-NblCurrentOwner")),
    # Commands for each item: their command (quoted or the rest) is checked on its own.
    *(_ext(f"for_each_{what}", f"-for-each-{what}", args=_T) for what in
      ("frame", "function", "local", "module", "process", "register", "thread")),
)

TABLE: tuple[Entry, ...] = LETTERS + SYMBOLS + METAS + EXTENSIONS
