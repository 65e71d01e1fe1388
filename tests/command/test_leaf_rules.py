"""kdmcp/command/leaf_rules.py: each command family's class, selectors, ``z``, comments, extension modules.

Each test names the kd behaviour it relies on; the bypass corpora are in corpus.py.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.command import CommandClass, classify
from tests.command.helpers import (
    CODE_LOAD,
    EXECUTION,
    FILE_WRITE,
    HOST_EXEC,
    HOST_FILE_READ,
    MEMORY_WRITE,
    NETWORK_PATH,
    OUTPUT_CONTROL,
    READ,
    SESSION_ENDING,
    SETTINGS_CHANGE,
    TARGET_DESTRUCTIVE,
    UNKNOWN,
    classes,
    pieces,
)
from tests.tiers import examples

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
        "vertarget", "version", "bl", "n",
        "!process 0 0", "!process 0 7 System", "!thread", "!analyze -v", "!pcr", "!irql", "!pte @rip",
        "!pool @rcx", "!poolfind Tag1", "!vm", "!object \\Driver", "!drvobj \\Driver\\Null 2", "!devobj @rcx",
        "!devstack @rcx", "!irp @rcx", "!error 0xc0000005", "!peb", "!teb", "!heap -s", "!handle 0 f",
        "!running -it", "!ready", "!sysptes", "!locks", "!stacks 2", "!idt", "!sym noisy", "!chkimg nt",
        "!kdexts.process 0 0", "!nt.process", "!PROCESS 0 0",
        "* a comment", "$$ a comment", "al", "ad /q x", "aS va lm", "as /x va @rax",
        "~", "~.", "~*k", "~*kb 100", "~3 kv", "~*e kb", "~*e r", "~0 s", "~0s", "~~[1a4]s", "|", "|1s", "||0s",
    ],
    MEMORY_WRITE: [
        "e @rsp 90", "eb @rsp 90", "ed @rsp 1", "eD @rsp 1.0", "eq @rsp 1", "ew @rsp 1", "ea @rsp \"x\"",
        "eu @rsp \"x\"", "eza @rsp \"x\"", "ezu @rsp \"x\"", "f @rsp L10 0", "fp 1000 L10 0",
        "r rax=1", "r @rip = nt!KiSystemCall64", "r eax=1, ebx=2", "r $ip = 0", "m @rsp L8 @rbx",
        "ob 0xcf9 6", "ib 0x60", "wrmsr 0xc0000082 0", "!ed 1000 1", "!eb 1000 1",
        "?? x = 1", "?? x++", "? @@c++(x = 1)", "dx @$curthread.Registers.User.rax = 1", "dx @$x += 1",
        ".dvalloc 1000", ".dvfree 1000 0", ".cxr /w @rcx", "!chkimg -f nt", ".pop /r", "!gflag +hpa",
    ],
    EXECUTION: [
        "g", "G", "gu", "gh", "gn", "gN", "gc", "g nt!KeBugCheckEx", "p", "p 5", "pa @rip+10", "pc", "pct",
        "ph", "pt", "pr", "t", "ta @rip+10", "tb", "tc", "tct", "th", "tt", "wt", "bp nt!NtCreateFile",
        "bp1 nt!NtCreateFile", "bu nt!NtCreateFile", "bm nt!Nt*", "ba r4 @rsp", "ba e1 fffff800`12345678",
        "bc *", "bd 1", "be 1", "br 1 2", "bs 0 \"k\"", "bsc 0 @rax==0 \"k\"", "sxe ld", "sxd av", "sxn ld",
        "sxi av", "sxr", "sx- -c \"k\" ld", "~2f", "~2 u", "~2 n", "~2 m",
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
        "aS /f myalias c:\\x.txt",
    ],
    NETWORK_PATH: [
        ".sympath \\\\evil\\s", ".sympath+ //evil/s", ".srcpath \\\\h\\src", ".exepath \\\\h\\bin",
        ".symfix \\\\evil\\cache", "lsf \\\\evil\\x.c", ".sympath srv*c:\\s*https://evil.example/s",
        ".sympath cache*\\\\evil\\c;c:\\sym", ".srcfix", ".srcpath srv*", "ld nt /f \\\\evil\\nt.pdb",
        ".sympath http://evil.example/sym",
    ],
    SETTINGS_CHANGE: [
        ".settings set x=1", ".expr /s masm", ".expr /s c++", "dx Debugger.Settings.Sources.SkipCrossOrigin = 1",
        ".settings clear", "n 8", "n 0n10", "N 16", ".step_filter \"nt!*\"", "rm 8", "ss a", "l+t",
        ".pcmd -s g", ".pcmd -s \".echo x\"",
    ],
    OUTPUT_CONTROL: [
        ".outmask 8", ".outmask- 1", ".outmask- /l 1", ".OUTMASK- 0x3f7", ".ofilter x*", ".prompt_allow -reg",
    ],
    TARGET_DESTRUCTIVE: [".reboot", ".crash", ".kill", ".restart", ".closehandle 4"],
    SESSION_ENDING: ["q", "qq", "qd", "Q", ".detach", ".abandon", ".remote_exit", ".endpsrv"],
    UNKNOWN: [
        "foo", "jmp", "cls", ".foo", "!foo", "!list -x \"k\" @rcx", "${x}", "$u0", "$foo",
        ".", "'r'", "\"r\"", "(r)", "}", "~*e", "aS /ma myalias @rcx", "aS /e myalias PATH",
        "aS myalias two words", ".settings frob", ".idle_cmd k",
        "dx Debugger.Utility.Control", "dx @$scripts.x.Contents.f()", "dx nt!KeBugCheckEx(1)", "bp x .shell",
        # Known commands left off the allowlist: "a" waits for more lines; an option not listed.
        "!chkimg -zz nt", "!process -x 0 0", "uf -x nt!KeBugCheckEx",
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


def test_z_repeats_and_checks_what_follows() -> None:
    assert classes("r; z(@$t0 < 2)") == {READ}
    assert pieces("z (1) g", EXECUTION) == ["g"]


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


def test_fixed_name_alias_register() -> None:
    assert HOST_EXEC in classes("r $.u0 = .shell dir")
    assert classes("r $.u0 = lm") == {READ}


def test_comments() -> None:
    """``*`` comments out the rest of the line, ``$$`` up to ';': we check what follows both."""
    assert classes("* note") == {READ}
    assert pieces("* note ; g", EXECUTION) == ["g"]
    assert pieces("$$ note ; g", EXECUTION) == ["g"]


def test_extension_modules() -> None:
    """``!module.name`` loads ``module.dll`` by name: only the debugger's own are known."""
    assert classes("!kdexts.pool @rcx") == {READ}
    assert classes("!wdfkd.wdfdriverinfo") == {READ}
    assert classes("!wdfkd.wdflogsave mydrv") == {UNKNOWN}  # writes a log file: not on the allowlist
    assert classes("!x.pool") == {CODE_LOAD}


# ------------------------------------------------------------------ letter(): rules by first letter


def _parsed_first(pattern: str) -> set[str] | None:
    """The characters a match can start with, as the regex parser reads ``pattern`` (None: not plain)."""
    import sys

    if sys.version_info >= (3, 11):
        from re import _constants as c
        from re import _parser as p
    else:  # pragma: no cover
        import sre_constants as c
        import sre_parse as p

    def first(items: list[tuple[object, object]]) -> set[str] | None:
        if not items:
            return None
        op, av = items[0]
        if op is c.LITERAL:
            return {chr(av)}  # type: ignore[arg-type]
        if op is c.SUBPATTERN:
            return first(list(av[3]))  # type: ignore[index]
        if op is c.BRANCH:
            sets = [first(list(b)) for b in av[1]]  # type: ignore[index]
            return None if any(s is None for s in sets) else set().union(*sets)  # type: ignore[arg-type]
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:  # type: ignore[index]
            return first(list(av[2]))  # type: ignore[index]
        return None

    return first(list(p.parse(pattern)))


def test_rule_first_letters_are_the_regex_parsers():
    from kdmcp.command.tables import _LETTER_RULE_FIRSTS, _LETTER_RULES

    for (pattern, _, _), derived in zip(_LETTER_RULES, _LETTER_RULE_FIRSTS, strict=True):
        if derived is None:
            continue
        parsed = _parsed_first(pattern.pattern)
        assert parsed is not None and {ch.lower() for ch in parsed} == {derived}, pattern.pattern
        assert pattern.flags & re.ASCII or not derived.isalpha(), pattern.pattern  # no Unicode case folds
        for ch in map(chr, range(32, 127)):
            if ch.lower() != derived:
                assert pattern.match(ch + "x 1") is None and pattern.match(ch) is None, (pattern.pattern, ch)


def test_handlers_start_with_their_letters():
    from kdmcp.command import leaf_rules, tables

    handlers = [tables._BREAKPOINT_RE, tables._BREAKPOINT_EDIT_RE, tables._SX_RE, tables._DX_RE, tables._REGISTER_RE,
                tables._ALIAS_SET_RE, tables._ALIAS_OTHER_RE, tables._Z_RE, tables._STEP_RE, leaf_rules.J_RE,
                tables._LSE_RE, tables._LSF_RE, tables._LD_RE]
    for pattern in handlers:
        parsed = _parsed_first(pattern.pattern)
        assert parsed is not None and {ch.lower() for ch in parsed} <= leaf_rules._HANDLED_FIRST, pattern.pattern


@settings(max_examples=examples(400), deadline=None)
@given(
    st.sampled_from(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ#")),
    st.text(alphabet=st.sampled_from(list("abcdefgilmnpqrstuvwxz0123456789 _-+[]#/'")), max_size=8),
)
def test_rules_by_first_letter_pick_what_the_whole_table_picks(head: str, tail: str) -> None:
    from kdmcp.command.tables import _LETTER_RULES, LETTER_RULES_BY_FIRST

    piece = head + tail
    whole = next((rule for rule in _LETTER_RULES if rule[0].match(piece)), None)
    indexed = next((rule for rule in LETTER_RULES_BY_FIRST[head.lower()] if rule[0].match(piece)), None)
    assert indexed == whole, piece


def test_run_effect_heads_cover_every_effect_pattern():
    import sys

    from kdmcp.command import tables

    every = "".join(map(chr, range(sys.maxunicode + 1)))
    for pattern in (tables._QUIT_EFFECT_RE, tables._REBOOT_EFFECT_RE, tables._RESUMES_EFFECT_RE):
        parsed = _parsed_first(pattern.pattern)
        assert parsed is not None and parsed <= set(tables._EFFECT_HEADS), pattern.pattern
        head = re.compile(re.escape(next(iter(parsed))), pattern.flags)  # its first character, same flags
        assert {m.group() for m in head.finditer(every)} <= set(tables._EFFECT_HEADS), pattern.pattern


def test_network_words_need_a_slash_or_a_colon():
    from kdmcp.command.tables import NETWORK_WORD_RE

    # walker.network_words skips text without '/', '\\' or ':': each alternative here needs one.
    forms = r"(?:[\\/]{2}|[\\/]\?\?[\\/]UNC[\\/]|(?:file|https?|ftps?|smb|webdav)\s*:)"
    assert f"(?P<path>{forms}" in NETWORK_WORD_RE.pattern
    for text in ["\\\\host\\s", "//host/s", "http://x", "FILE :x", "\\??\\UNC\\h\\s", "smb:x",
                 "\\??\\GLOBALROOT\\Device\\Mup\\h\\s", "\\Device\\LanmanRedirector\\h\\s", "\\GLOBAL??\\UNC\\h"]:
        assert NETWORK_WORD_RE.search(text) and any(ch in text for ch in "/\\:")
