"""Classification per command family, and how nested and split forms are read.

Each test names the kd behaviour it relies on; the bypass corpus lives in test_bypass.py.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kdmcp.command import CommandClass, Finding, classify

READ = CommandClass.READ
MEMORY_WRITE = CommandClass.MEMORY_WRITE
EXECUTION = CommandClass.EXECUTION
HOST_EXEC = CommandClass.HOST_EXEC
CODE_LOAD = CommandClass.CODE_LOAD
FILE_WRITE = CommandClass.FILE_WRITE
TARGET_DESTRUCTIVE = CommandClass.TARGET_DESTRUCTIVE
SESSION_ENDING = CommandClass.SESSION_ENDING
HOST_FILE_READ = CommandClass.HOST_FILE_READ
NETWORK_PATH = CommandClass.NETWORK_PATH
SETTINGS_CHANGE = CommandClass.SETTINGS_CHANGE
OUTPUT_CONTROL = CommandClass.OUTPUT_CONTROL
UNKNOWN = CommandClass.UNKNOWN


def classes(command: str) -> set[CommandClass]:
    return {f.command_class for f in classify(command)}


def pieces(command: str, command_class: CommandClass) -> list[str]:
    return [f.piece for f in classify(command) if f.command_class is command_class]


# --------------------------------------------------------------------------- families

FAMILIES: dict[CommandClass, list[str]] = {
    READ: [
        "k", "kb", "kv 20", "kn20", "kP", "kpn", "k = @rsp @rip 20",
        "r", "r rip", "r @rax, @rbx", "rM 0x4", "rdmsr 0xc0000082", "r $t0 = @rax + 1",
        "d", "db @rsp", "dc @rsp L10", "dd poi(@rsp)", "dD @rsp", "dq @rsp L4", "du @rcx", "dW @rsp",
        "dyb @rsp", "ds @rcx", "dS @rcx", "dds @rsp", "dps @rsp", "dqs @rsp L20", "da @rcx", "dd@rsp",
        "dt nt!_EPROCESS", "dt -r1 nt!_KTHREAD @$thread", "dv /t /v", "dg @cs", "dl @rcx 10",
        "dx @$curprocess", "dx -r2 @$curthread.Stack.Frames",
        "dx Debugger.Sessions[0].Processes.Where(p => p.Name == \"System\")",
        "dx @$curprocess.Threads.Where(t => t.Id <= 4 && t.Id >= 1 && t.Id != 2)",
        "u @rip", "ub @rip L8", "uf nt!KeBugCheckEx", "uf /c nt!NtCreateFile",
        "lm", "lmv", "lmvm nt", "lm1m", "lmDvmSecondDriver", "x nt!Ke*", "ln @rip", "ld nt", "ls", "lsa @rip",
        "s -d 0 L?80000000 41414141", "s -a @rsp L100 \"hello\"", "c @rsp L8 @rbx",
        "? @rax + 8", "? @rax = 5", "?? sizeof(nt!_EPROCESS)", "?? @$teb->NtTib", "#mov @rip",
        ".echo hello", ".echo \"a;b\"", ".printf \"%ma %p\\n\", @rcx, @rdx", ".formats 0x1234",
        ".frame 3", ".frame /c 2", ".f+", ".trap @rsp", ".cxr @rcx", ".exr -1", ".ecxr", ".lastevent",
        ".reload", ".reload /f nt", ".sympath", ".sympath+ c:\\symbols", ".symfix", ".srcpath c:\\src",
        ".effmach amd64", ".cls", ".chain", ".logclose", ".time", ".process /r /p fffff80012345678",
        ".thread @rcx", ".bugcheck", ".expr", ".settings list", ".outmask", ".outmask /d", ".outmask /a",
        ".noshell", ".unload x",
        "vertarget", "version", "bl", "n 16",
        "!process 0 0", "!process 0 7 System", "!thread", "!analyze -v", "!pcr", "!irql", "!pte @rip",
        "!pool @rcx", "!poolfind Tag1", "!vm", "!object \\Driver", "!drvobj \\Driver\\Null 2", "!devobj @rcx",
        "!devstack @rcx", "!irp @rcx", "!error 0xc0000005", "!peb", "!teb", "!heap -s", "!handle 0 f",
        "!running -it", "!ready", "!sysptes", "!locks", "!stacks 2", "!idt", "!sym noisy", "!chkimg nt",
        "!kdexts.process 0 0", "!nt.process", "!PROCESS 0 0",
        "* a comment", "$$ a comment", "al", "ad /q x", "aS x lm", "as /x x @rax",
        "~", "~.", "~*k", "~*kb 100", "~3 kv", "~*e kb", "~*e r", "~0 s", "~0s", "~~[1a4]s", "|", "|1s", "||0s",
    ],
    MEMORY_WRITE: [
        "e @rsp 90", "eb @rsp 90", "ed @rsp 1", "eD @rsp 1.0", "eq @rsp 1", "ew @rsp 1", "ea @rsp \"x\"",
        "eu @rsp \"x\"", "eza @rsp \"x\"", "ezu @rsp \"x\"", "f @rsp L10 0", "fp 1000 L10 0",
        "r rax=1", "r @rip = nt!KiSystemCall64", "r eax=1, ebx=2", "r $ip = 0", "m @rsp L8 @rbx", "a @rip",
        "ob 0xcf9 6", "ib 0x60", "wrmsr 0xc0000082 0", "!ed 1000 1", "!eb 1000 1",
        "?? x = 1", "?? x++", "? @@c++(x = 1)", "dx @$curthread.Registers.User.rax = 1", "dx @$x += 1",
        ".dvalloc 1000", ".dvfree 1000 0", ".cxr /w @rcx", "!chkimg -f nt", ".pop /r",
    ],
    EXECUTION: [
        "g", "G", "gu", "gh", "gn", "gN", "gc", "g nt!KeBugCheckEx", "p", "p 5", "pa @rip+10", "pc", "pct",
        "ph", "pt", "pr", "t", "ta @rip+10", "tb", "tc", "tct", "th", "tt", "wt", "bp nt!NtCreateFile",
        "bp1 nt!NtCreateFile", "bu nt!NtCreateFile", "bm nt!Nt*", "ba r4 @rsp", "ba e1 fffff800`12345678",
        "bc *", "bd 1", "be 1", "br 1 2", "bs 0 \"k\"", "bsc 0 @rax==0 \"k\"", "sxe ld", "sxd av", "sxn ld",
        "sxi av", "sxr", "sx- -c \"k\" ld", "~2f", "~2 u", "~2 n", "~2 m", ".step_filter \"nt!*\"",
        ".call nt!Foo(1)", ".pagein @rcx", ".breakin", ".process /i ffffa00012345678",
        "dx Debugger.Utility.Control.SetBreakpointAtOffset(\"NtCreateFile\", 0, \"nt\")",
    ],
    HOST_EXEC: [
        ".shell dir", ".SHELL dir", ".shell -ci \"dir\" findstr x", "!!dir", "!! dir", ".create cmd.exe",
        ".createdir c:\\", ".attach 0n1234", ".server tcp:port=5005", ".remote x", ".hh", ".dbgdbg",
        ".netuse /a x", ".open x.c",
    ],
    CODE_LOAD: [
        ".load c:\\x.dll", ".LOAD x", "!load x", ".loadby sos clr", ".extpath c:\\x", ".extpath+ c:\\x",
        ".kdfiles c:\\map.ini", ".scriptload c:\\x.js", ".scriptrun c:\\x.js", ".scriptunload x.js",
        ".scriptdebug x.js", ".setdll x", ".cordll -ve -u -l", ".nvload x.natvis", ".ocommand run:",
        "$<c:\\x.txt", "$><c:\\x.txt", "$$<c:\\x.txt", "$$><c:\\x.txt", "$$>a< c:\\x.txt 1 2", "$$ >a< c:\\x",
        "!evil.run", "!sos.clrstack", "!ext.load x",
    ],
    FILE_WRITE: [
        ".dump /ma c:\\x.dmp", ".dumpcab -a c:\\x.cab", ".writemem c:\\x.bin @rsp L100", ".logopen c:\\x.log",
        ".logopen /t c:\\x.log", ".logappend c:\\x.log", ".write_cmd_hist c:\\x.txt", ".settings save x.xml",
        "!analyze -v -xmf c:\\x.xml", ".send_file -f c:\\x d:\\x",
        "dx Debugger.Utility.FileSystem.TempDirectory",
    ],
    HOST_FILE_READ: [
        ".readmem c:\\x.bin 1000", "lsf c:\\src\\a.c", "ld nt /f c:\\x\\nt.pdb", ".dml_start c:\\x.dml",
        "!analyze -c -load c:\\k.ini", ".cmdtree c:\\t.txt", ".opendump c:\\x.dmp", ".settings load x.xml",
        '.foreach /f (x "c:\\cmds.txt") { .echo hi }', "dx Debugger.Utility.FileSystem.TempDirectory",
        "aS /f x c:\\x.txt",
    ],
    NETWORK_PATH: [
        ".sympath \\\\evil\\s", ".sympath+ //evil/s", ".srcpath \\\\h\\src", ".exepath \\\\h\\bin",
        ".symfix \\\\evil\\cache", "lsf \\\\evil\\x.c", ".sympath srv*c:\\s*https://evil.example/s",
        ".sympath cache*\\\\evil\\c;c:\\sym", ".srcfix", ".srcpath srv*", "ld nt /f \\\\evil\\nt.pdb",
        ".sympath http://evil.example/sym",
    ],
    SETTINGS_CHANGE: [
        ".settings set x=1", ".expr /s masm", ".expr /s c++", "dx Debugger.Settings.Sources.SkipCrossOrigin = 1",
        ".settings clear",
    ],
    OUTPUT_CONTROL: [
        ".outmask 8", ".outmask- 1", ".outmask- /l 1", ".OUTMASK- 0x3f7", ".ofilter x*", ".prompt_allow -reg",
    ],
    TARGET_DESTRUCTIVE: [".reboot", ".crash", ".kill", ".restart", ".closehandle 4"],
    SESSION_ENDING: ["q", "qq", "qd", "Q", ".detach", ".abandon", ".remote_exit", ".endpsrv"],
    UNKNOWN: [
        "foo", "jmp", "cls", ".foo", "!foo", "!list -x \"k\" @rcx", "!gflag +hpa", "${x}", "$u0", "$foo",
        ".", "'r'", "\"r\"", "(r)", "}", "~*e", "aS /ma x @rcx", "aS /e x PATH",
        "aS x two words", ".settings frob", ".idle_cmd k",
        "dx Debugger.Utility.Control", "dx @$scripts.x.Contents.f()", "dx nt!KeBugCheckEx(1)", "bp x .shell",
    ],
}  # fmt: skip

FAMILY_CASES = [
    pytest.param(command, command_class, id=f"{command_class.value}:{command}")
    for command_class, commands in FAMILIES.items()
    for command in commands
]


@pytest.mark.parametrize(("command", "command_class"), FAMILY_CASES)
def test_family(command: str, command_class: CommandClass) -> None:
    """The command's strongest class is the family's (reads are read and nothing else)."""
    found = classes(command)
    if command_class is READ:
        assert found == {READ}, classify(command)
    else:
        assert command_class in found, classify(command)
        assert not found - {READ, command_class, EXECUTION, *_COMPANIONS.get(command_class, ())}, classify(command)


# Classes a command of a family may carry as well (".readmem" reads a host file *and*
# writes target memory; "dx ...FileSystem" can read and write host files).
_COMPANIONS: dict[CommandClass, tuple[CommandClass, ...]] = {
    HOST_FILE_READ: (MEMORY_WRITE, FILE_WRITE, SETTINGS_CHANGE, NETWORK_PATH, UNKNOWN),
    FILE_WRITE: (HOST_FILE_READ,),
    NETWORK_PATH: (HOST_FILE_READ,),
    SETTINGS_CHANGE: (MEMORY_WRITE,),
}


def test_every_family_is_covered() -> None:
    assert set(FAMILIES) == set(CommandClass)
    assert len(FAMILY_CASES) > 300


# --------------------------------------------------------------------------- findings


def test_findings_are_frozen_and_explained() -> None:
    findings = classify(".shell dir")
    assert findings == [Finding(piece=".shell dir", command_class=HOST_EXEC, reason=findings[0].reason)]
    assert "debugger host" in findings[0].reason
    with pytest.raises(ValidationError):
        findings[0].piece = "k"


def test_never_empty_and_empty_line_repeats() -> None:
    """An empty line makes kd repeat the last command (``p``, ``t``, ``d*``...)."""
    for command in ("", "   ", "\t"):
        assert [f.command_class for f in classify(command)] == [UNKNOWN]
    assert all(f.reason for f in classify("k; r; dd @rsp"))


# --------------------------------------------------------------------------- splitting


def test_splits_at_semicolons_in_order() -> None:
    assert [f.piece for f in classify("r ; k;dd @rsp;;  lm  ")] == ["r", "k", "dd @rsp", "lm"]


def test_quoted_semicolons_stay_inside_commands_that_take_quotes() -> None:
    """``.echo "a;b"`` is one command; ``bp x "k; g"`` sets one breakpoint with two commands."""
    assert pieces('.echo "a;b"', READ) == ['.echo "a;b"']
    assert [(f.piece, f.command_class) for f in classify('bp nt!Foo "k; g"')] == [
        ('bp nt!Foo "k; g"', EXECUTION),
        ("k", READ),
        ("g", EXECUTION),
    ]


def test_quoted_semicolons_split_other_commands() -> None:
    """Only commands documented to take quoted strings keep a quoted ';' (the safe reading)."""
    assert pieces('k "a; .shell calc"', HOST_EXEC) == ['.shell calc"']


def test_unterminated_quote_is_unknown() -> None:
    assert UNKNOWN in classes('.echo "abc')
    assert UNKNOWN in classes('bp nt!Foo "k')


def test_escaped_quotes_are_read_both_ways() -> None:
    """Whether kd reads ``\\"`` as an escape or not, ``.shell`` could run: both readings count."""
    assert HOST_EXEC in classes('.echo "a\\"; .shell calc; \\""')
    assert HOST_EXEC in classes('.echo "a\\\\"; .shell calc')


def test_nested_quotes_in_breakpoint_strings_use_documented_escapes() -> None:
    """``bp x "j (c) '.echo \\"hi\\"'; 'g'"`` (the documented form) is understood."""
    assert classes("bp x \"j (poi(x)=0) '.echo \\\"hi\\\"'; 'g'\"") == {READ, EXECUTION}


# --------------------------------------------------------------------------- nesting


def test_block_bodies_are_classified() -> None:
    assert pieces(".block { r; .block { k; g } }", EXECUTION) == ["g"]
    assert pieces(".block{r}", READ) == ["r", ".block{r}"]


def test_bare_braces_are_a_block() -> None:
    assert pieces("{ g }", EXECUTION) == ["g"]


def test_text_after_a_block_is_a_command() -> None:
    assert pieces(".block { r } g", EXECUTION) == ["g"]


def test_if_chain() -> None:
    command = ".if (@rax == 0) { k } .elsif (@rax == 1) { g } .else { eb @rsp 90 }"
    assert classes(command) == {READ, EXECUTION, MEMORY_WRITE}
    assert UNKNOWN in classes(".else { k }")
    assert UNKNOWN in classes(".if (1) k")


def test_loops() -> None:
    assert pieces(".while (@$t0 < 3) { g }", EXECUTION) == ["g"]
    assert pieces(".do { g } (@$t0 < 3)", EXECUTION) == ["g"]
    assert pieces(".for (r $t0 = 0; @$t0 < 3; r $t0 = @$t0 + 1) { g }", EXECUTION) == ["g"]
    assert pieces(".for (eb @rsp 1; 1; r) { k }", MEMORY_WRITE) == ["eb @rsp 1"]
    assert UNKNOWN in classes(".for (r; 1) { k }")


def test_condition_with_semicolon_is_unknown() -> None:
    assert UNKNOWN in classes(".if (1; r) { k }")


def test_foreach_from_a_string_substitutes_each_token() -> None:
    """kd pastes each token of InString where the variable stands in OutCommands."""
    assert classes('.foreach /s (c "k r") { c }') == {READ}
    assert classes('.foreach /s (c "k g") { c }') == {READ, EXECUTION}


def test_foreach_variable_from_output_or_file_is_unknown_when_used() -> None:
    assert classes(".foreach (m {lm1m}) { .echo found }") == {READ}
    assert UNKNOWN in classes(".foreach (m {lm1m}) { lm m m }")
    assert UNKNOWN in classes('.foreach /f (m "c:\\x.txt") { m }')
    assert pieces(".foreach (m {g}) { .echo x }", EXECUTION) == ["g"]


def test_j_branches() -> None:
    """``j Expression 'Command1' ; 'Command2'``; kd ignores what follows, we check it anyway."""
    assert classes("j (@rax == 0) 'k' ; 'r'") == {READ}
    assert pieces("j (@rax == 0) 'r; g' ; 'k'", EXECUTION) == ["g"]
    assert pieces("j @rax r ; g", EXECUTION) == ["g"]
    assert pieces("j 1 ''; 'r'; g", EXECUTION) == ["g"]
    assert UNKNOWN in classes("j 1 'r ; 'k'")


def test_z_repeats_and_checks_what_follows() -> None:
    assert classes("r; z(@$t0 < 2)") == {READ}
    assert pieces("z (1) g", EXECUTION) == ["g"]


def test_breakpoint_strings_and_conditions() -> None:
    assert classes('bp /w "@$curthread.Id == 4" nt!NtCreateFile') == {EXECUTION, READ}
    assert MEMORY_WRITE in classes('bp /w "@$x = 4" nt!NtCreateFile')
    assert pieces('ba e1 fffff800`12345678 "r rax=1"', MEMORY_WRITE) == ["r rax=1"]
    assert UNKNOWN in classes("bp nt!Foo !!dir")


def test_event_command_strings() -> None:
    assert pieces('sxe -c "k; g" -c2 "eb @rsp 1" av', MEMORY_WRITE) == ["eb @rsp 1"]
    assert pieces("sxe -c r ld", READ)[-1] == "r"
    assert classes("sx") == {READ}


def test_step_command_strings() -> None:
    """``p [Count] ["Command"]`` runs Command after the step."""
    assert pieces('p 2 "k; eb @rsp 1"', MEMORY_WRITE) == ["eb @rsp 1"]


def test_prompt_and_browse_commands() -> None:
    assert pieces('.pcmd -s "g"', EXECUTION) == ["g"]
    assert pieces(".browse g", EXECUTION) == ["g"]


def test_for_each_extensions() -> None:
    assert classes("!for_each_module .echo hi") == {READ}
    assert pieces('!for_each_module "g"', EXECUTION) == ["g"]
    assert UNKNOWN in classes("!for_each_module .echo @#ModuleName")


def test_depth_limit_is_unknown() -> None:
    command = ".block {" * 40 + " k " + "}" * 40
    assert UNKNOWN in classes(command)


# --------------------------------------------------------------------------- selectors


def test_thread_selectors() -> None:
    """``~*e Command`` runs Command per thread; ``~Nf``/``~Nu`` freeze and thaw."""
    assert classes("~*e r") == {READ}
    assert classes("~*e!thread") == {READ}
    assert classes("~2f") == {EXECUTION}
    assert classes("~3 s") == {READ}
    assert pieces("~* e g", EXECUTION) == ["g"]
    assert UNKNOWN in classes("~0 eb @rsp 90")  # read both as "eb" and as "e b": the latter is not known


def test_process_selectors() -> None:
    assert classes("|1s") == {READ}
    assert pieces("|0 ~* e g", EXECUTION) == ["g"]


# --------------------------------------------------------------------------- aliases


def test_single_word_alias_definitions_are_classified_by_their_value() -> None:
    assert classes("aS x lm") == {READ}
    assert classes('aS x "k"') == {READ}
    assert EXECUTION in classes("aS x g")
    assert SESSION_ENDING in classes("aS kb q")
    assert classes("as /x base nt") == {READ}


def test_multi_word_alias_definitions_are_unknown() -> None:
    """An alias is pasted in wherever its name appears later, so only single words are safe."""
    assert UNKNOWN in classes('aS x "lm m nt"')
    assert HOST_EXEC in classes('aS x ".shell dir"')
    assert HOST_EXEC in classes("as x k; .shell dir")  # as takes the rest of the line
    assert UNKNOWN in classes("as /c x k")  # holds command output


def test_alias_uses_are_unknown() -> None:
    for command in ("${x}", ".echo ${x}", "${/v:x}", "${/f:x}", "$u0", "dd $u1", ".echo $CurrentDumpFile"):
        assert UNKNOWN in classes(command), command
    assert classes(".echo ${/d:x}") == {READ}


def test_same_line_alias_inside_a_later_block_is_expanded() -> None:
    """A line starting with aS is not expanded as a whole; each { } block is, when it starts."""
    assert classes('aS x "lm"; .block { ${x} }') == {READ}
    assert EXECUTION in classes('aS x "g"; .block { ${x} }')
    # Anywhere else the value may be one set by an earlier call.
    assert UNKNOWN in classes('aS x "lm"; ${x}')
    assert UNKNOWN in classes(' aS x "lm"; .block { ${x} }')
    assert UNKNOWN in classes('r; aS x "lm"; .block { ${x} }')
    assert UNKNOWN in classes('aS x "lm"; .block { ${y} }')


def test_fixed_name_alias_register() -> None:
    assert HOST_EXEC in classes("r $.u0 = .shell dir")
    assert classes("r $.u0 = lm") == {READ}


# --------------------------------------------------------------------------- dx


def test_dx_reads() -> None:
    assert classes("dx @$curprocess.Modules.Select(m => m.Name)") == {READ}


def test_dx_execute_command_literal_is_classified() -> None:
    assert classes('dx Debugger.Utility.Control.ExecuteCommand("k")') == {READ}
    assert pieces('dx Debugger.Utility.Control.ExecuteCommand("g")', EXECUTION) == ["g"]
    # dx is not documented to keep a quoted ';', so the line splits there (and the rest is checked).
    assert {UNKNOWN, EXECUTION} <= classes('dx Debugger.Utility.Control.ExecuteCommand("k; g")')
    assert pieces('dx -r1 Debugger.Utility.Control.ExecuteCommand("!\\x21dir")', HOST_EXEC) == ["!!dir"]


def test_dx_non_literal_control_use_is_unknown() -> None:
    for command in (
        "dx Debugger.Utility.Control.ExecuteCommand(@$cmd)",
        'dx Debugger.Utility.Control.ExecuteCommand("k" + "")',
        "dx @$ctl = Debugger.Utility.Control",
        'dx Debugger.Utility["Control"]',
        'dx Debugger.Utility.Control.ExecuteCommand("k',  # never closes
    ):
        assert UNKNOWN in classes(command), command


# --------------------------------------------------------------------------- other forms


def test_comments() -> None:
    """``*`` comments out the rest of the line, ``$$`` up to ';': we check what follows both."""
    assert classes("* note") == {READ}
    assert pieces("* note ; g", EXECUTION) == ["g"]
    assert pieces("$$ note ; g", EXECUTION) == ["g"]


def test_path_lists_are_not_commands() -> None:
    """``.sympath a;b`` takes the whole path list; elements that are not paths are checked."""
    assert classes(".sympath srv*c:\\sym*https://msdl.microsoft.com/download/symbols;c:\\other") == {READ}
    assert classes(".sympath srv*c:\\sym*https://msdl.microsoft.com/download/symbols;\\\\srv\\s") == {
        READ, NETWORK_PATH
    }
    assert pieces(".sympath c:\\sym; g", EXECUTION) == ["g"]
    assert "network" in classify(".sympath srv*")[0].reason


def test_extension_modules() -> None:
    """``!module.name`` loads ``module.dll`` by name: only the debugger's own are known."""
    assert classes("!kdexts.pool @rcx") == {READ}
    assert classes("!wdfkd.wdfdriverinfo") == {UNKNOWN}
    assert classes("!x.pool") == {CODE_LOAD}


def test_line_breaks_and_control_characters() -> None:
    assert pieces("r\ng", EXECUTION) == ["g"]
    assert UNKNOWN in classes("r\ng")
    assert UNKNOWN in classes("r\x00")
    assert UNKNOWN in classes("k\x1b[2J")
    assert classes("k\tL5") == {READ}


def test_non_ascii_is_unknown() -> None:
    assert UNKNOWN in classes(".echo caf\u00e9")
    assert UNKNOWN in classes("\uff4b")  # fullwidth k


def test_too_long_is_unknown() -> None:
    assert classes("k" + " " * 20000) == {UNKNOWN}
