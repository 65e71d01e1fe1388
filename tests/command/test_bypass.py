"""Policy-bypass attempts: every one is denied under ``standard`` (and ``read_only``).

Peers check commands with substring lists; each case below is a way around such a list,
and names the class the verdict must report (the worst denied finding).
"""

from __future__ import annotations

import pytest

from kdmcp.command import CommandClass, check

H = CommandClass.HOST_EXEC
C = CommandClass.CODE_LOAD
F = CommandClass.FILE_WRITE
S = CommandClass.SESSION_ENDING
U = CommandClass.UNKNOWN

BYPASSES: list[tuple[str, CommandClass, str]] = [
    # case and whitespace games
    (".shell calc", H, "plain"),
    (".SHELL calc", H, "upper case"),
    (".ShElL calc", H, "mixed case"),
    ("  \t.shell\tcalc", H, "tabs and leading blanks"),
    ('.shell -ci "dir" findstr x', H, "shell with -ci input"),
    ("!!dir", H, "bang-bang"),
    ("!! dir", H, "bang-bang with a blank"),
    ("Q", S, "upper-case quit"),
    # ';' splitting games
    ("r;.shell calc", H, "no blanks around ;"),
    ("k;;;.shell calc", H, "empty commands"),
    ("r; !!dir", H, "bang-bang second"),
    ("r eax=1; .shell calc", H, "after an allowed write"),
    ("ad *; .shell calc", H, "after alias delete"),
    # nesting
    (".block { .shell calc }", H, "block"),
    (".block{.shell calc}", H, "block without blanks"),
    (".block { r; .block { k; .block { .shell calc } } }", H, "nested blocks"),
    ("{ .shell calc }", H, "bare braces"),
    (".if (1) { .shell calc }", H, "if body"),
    (".if (0) { r } .else { .shell calc }", H, "else body"),
    (".if (0) { r } .elsif (1) { .shell calc } .else { k }", H, "elsif body"),
    (".if (1; .shell calc) { r }", H, "semicolon in a condition"),
    (".while (1) { .shell calc }", H, "while body"),
    (".do { .shell calc } (0)", H, "do body"),
    (".for (.shell calc; 0; r) { k }", H, "for initial command"),
    (".for (r $t0=0; @$t0<1; .shell calc) { k }", H, "for increment command"),
    (".catch { .shell calc }", H, "catch body"),
    # j and z
    ("j 1 '.shell calc' ; 'r'", H, "j first branch"),
    ("j (1) 'r; .shell calc' ; 'k'", H, "j quoted list"),
    ("j 0 r ; .shell calc", H, "j unquoted second branch"),
    ("j (1) r ; '.shell calc'", H, "j quoted second branch"),
    ("z (0) .shell calc", H, "after z"),
    ("r; z(@$t0 < 1) ; .shell calc", H, "after a z loop"),
    # aliases
    ('aS x ".shell calc"; ${x}', H, "alias defined and used"),
    ('aS x ".shell calc"; .block { ${x} }', H, "alias used in a later block"),
    ("as x .shell calc", H, "as takes the rest of the line"),
    ("as /c x .shell calc", H, "as /c runs a command"),
    ('aS /c x ".shell calc"', H, "aS /c runs a command"),
    ("${/v:x}", U, "alias with /v"),
    ("${x} calc", U, "alias from an earlier call"),
    (".echo ${x}", U, "alias pasted into an argument"),
    ("$u0 calc", U, "fixed-name alias"),
    ("r $.u0 = .shell calc", H, "fixed-name alias set by r"),
    ("aS /f x c:\\cmds.txt", CommandClass.HOST_FILE_READ, "alias from a file"),
    ("aS /ma x @rcx", U, "alias from target memory"),
    # breakpoint and event command strings
    ('bp nt!NtCreateFile ".shell calc"', H, "bp command string"),
    ('bp nt!NtCreateFile "k; .shell calc; g"', H, "bp command list"),
    ('bu nt!NtCreateFile "!!dir"', H, "bu command string"),
    ('bm nt!Nt* ".shell calc"', H, "bm command string"),
    ('ba e1 fffff800`12345678 "$$<c:\\\\x.txt"', C, "ba script"),
    ('ba w4 @rsp "$$>a< c:\\\\x.txt"', C, "ba script with arguments"),
    ('bp /w "Debugger.Utility.Control.ExecuteCommand(\\".shell calc\\")" nt!Foo', H, "bp /w dx condition"),
    ('bs 0 ".shell calc"', H, "bs changes a command"),
    ('bsc 0 1 ".shell calc"', H, "bsc conditional command"),
    ("bp nt!NtCreateFile \"j 1 '.shell calc' ; 'g'\"", H, "j inside bp"),
    ('bp nt!NtCreateFile ".block { .shell calc }"', H, "block inside bp"),
    ("bp nt!Foo .shell", U, "unquoted bp command"),
    ('sxe -c ".shell calc" ld', H, "sx first-chance command"),
    ('sxe -c2 ".shell calc" av', H, "sx second-chance command"),
    ("sxe -c .shell ld", H, "sx unquoted command"),
    ('sx- -c "!!dir" ld', H, "sx- command"),
    ('p ".shell calc"', H, "step command string"),
    ('.pcmd -s ".shell calc"', H, "prompt command"),
    # scripts and code
    ("$$<c:\\x.txt", C, "script"),
    ("$<c:\\x.txt", C, "script, one dollar"),
    ("$><c:\\x.txt", C, "condensed script"),
    ("$$><c:\\x.txt", C, "condensed script, two dollars"),
    ("$$>a< c:\\x.txt arg", C, "script with arguments"),
    ("$$ >a< c:\\x.txt", C, "script with blanks"),
    (".scriptload c:\\x.js", C, "scriptload"),
    (".scriptrun c:\\x.js", C, "scriptrun"),
    (".load c:\\evil.dll", C, "load"),
    ("!load c:\\evil.dll", C, "bang load"),
    (".loadby evil nt", C, "loadby"),
    ("!evil.run", C, "extension loaded by module name"),
    (".extpath c:\\evil", C, "extension path"),
    (".kdfiles c:\\map.ini", C, "driver replacement"),
    (".ocommand run:", C, "target output as commands"),
    # dx
    ('dx Debugger.Utility.Control.ExecuteCommand(".shell calc")', H, "dx ExecuteCommand"),
    ('dx -r1 Debugger.Utility.Control.ExecuteCommand("!\\x21dir")', H, "dx hex escape"),
    ('dx Debugger.Utility.Control.ExecuteCommand(".she" + "ll calc")', U, "dx concatenation"),
    ("dx @$c = Debugger.Utility.Control", U, "dx stashes Control"),
    ("dx @$c.ExecuteCommand(@$cmd)", U, "dx non-literal command"),
    ('dx Debugger.Utility["Control"].ExecuteCommand("k")', U, "dx string indexer"),
    ('dx Debugger.Utility.FileSystem.CreateFile("c:\\\\x.txt")', F, "dx file system"),
    ("dx @$scripts.evil.Contents.run()", U, "dx script call"),
    # selectors
    ("~*e .shell calc", H, "per-thread command"),
    ("~0 e .shell calc", H, "thread command with a blank"),
    ("~*e!!dir", H, "per-thread bang-bang"),
    ("|0 ~* e .shell calc", H, "process then thread selector"),
    # loops
    (".foreach (x {lm1m}) { .shell x }", H, "foreach body"),
    (".foreach (x {.echo .shell}) { x calc }", U, "foreach variable as a command"),
    ('.foreach /s (x ".shell") { x calc }', H, "foreach string token"),
    ('.foreach /f (x "c:\\cmds.txt") { x }', CommandClass.HOST_FILE_READ, "foreach over a file"),
    ("!for_each_module .shell calc", H, "for_each_module"),
    ('!for_each_module "!!dir"', H, "for_each_module quoted"),
    ("!for_each_module @#ModuleName", U, "for_each_module pastes module names"),
    ('!list -x ".shell calc" @rcx', U, "list with a command"),
    # quotes, escapes and comments
    ('.echo "a\\"; .shell calc; \\""', H, "escaped quote in echo"),
    ('.echo "a\\\\"; .shell calc', H, "escaped backslash in echo"),
    ('.printf "%s", 1; .shell calc', H, "after printf"),
    ('.block { .echo "}" ; .shell calc }', H, "quoted brace in a block"),
    ('k "a;.shell calc"', H, "quoted ; in a command that takes no quotes"),
    ("* comment ; .shell calc", H, "star comment (kd skips the rest; checked anyway)"),
    ("$$ comment ; .shell calc", H, "dollar comment ends at ;"),
    ("r; * comment; .shell calc", H, "star comment later"),
    # lookalikes and control characters
    ("\uff0eshell calc", U, "fullwidth full stop"),
    (".\uff53hell calc", U, "fullwidth s"),
    ("\uff01\uff01dir", U, "fullwidth exclamation marks"),
    (".she\u200bll calc", U, "zero-width space"),
    ("r\u037e .shell calc", U, "greek question mark looks like ;"),
    ("r\x00;.shell calc", H, "NUL"),
    ("r\n.shell calc", H, "line feed"),
    ("r\r.shell calc", H, "carriage return"),
    ("k\x1b[2J", U, "escape sequence"),
    ("", U, "empty line repeats the last command"),
    # files, host, session
    (".dump /ma c:\\x.dmp", F, "dump"),
    (".writemem c:\\x.bin @rsp L100", F, "writemem"),
    (".logopen c:\\x.log", F, "logopen"),
    (".logappend c:\\x.log", F, "logappend"),
    ("!analyze -v -xmf c:\\x.xml", F, "analyze writes xml"),
    (".create cmd.exe", H, "create"),
    (".attach 0n1234", H, "attach"),
    (".server tcp:port=5005", H, "debugging server"),
    (".sympath c:\\sym; .shell calc", H, "after a path list"),
    (".sympath+ srv*; .shell calc", H, "after an appended path list"),
    (".browse .shell calc", H, "browse"),
    (".settings load c:\\x.xml", CommandClass.HOST_FILE_READ, "settings load"),
    ("q", S, "quit"),
    ("qq", S, "quit all"),
    ("qd", S, "quit and detach"),
    (".detach", S, "detach"),
    (".abandon", S, "abandon"),
]


@pytest.mark.parametrize(
    ("command", "denied_class"),
    [pytest.param(command, denied_class, id=note) for command, denied_class, note in BYPASSES],
)
def test_bypass_is_denied(command: str, denied_class: CommandClass) -> None:
    verdict = check(command, "standard")
    assert not verdict.allowed, verdict.findings
    assert verdict.denied_class is denied_class, verdict.message
    assert not check(command, "read_only").allowed


def test_corpus_size_and_variety() -> None:
    assert len(BYPASSES) >= 40
    assert len({note for _, _, note in BYPASSES}) == len(BYPASSES)
    assert {c for _, c, _ in BYPASSES} == {H, C, F, S, U, CommandClass.HOST_FILE_READ}
