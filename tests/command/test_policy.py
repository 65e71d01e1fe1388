"""kdmcp/command/policy.py: verdicts per profile, their messages, launch flags, the bypass corpora, properties.

What each profile allows and how a denial reads; the project's bypass corpora (corpus.py:
every attack denied, ordinary debugging allowed; a ``BYPASS`` entry names a class the line
must be found to hold, a ``BYPASS_VERDICTS`` entry the class the verdict must report -- the
worst denied finding, so ``.outmask- 1; .shell x`` is reported as host_exec); and properties:
classify never fails, and a dangerous command stays denied however kd's own ways of running a
command indirectly wrap it (composed, joined with read commands by ';' in several spellings,
the names' case shuffled).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.command import PROFILE_ALLOWS, CommandClass, Profile, check, classify, launch_flags
from tests.command import corpus
from tests.command.corpus import ANY, BYPASS, BYPASS_VERDICTS, ORDINARY
from tests.command.helpers import EXECUTION, READ, UNKNOWN, classes, pieces
from tests.tiers import examples

# ------------------------------------------------------------------ profiles and verdicts


PROFILES: tuple[Profile, ...] = ("read_only", "standard", "full")

# One command per class, and which profiles allow it.
SAMPLES: list[tuple[str, CommandClass, set[Profile]]] = [
    ("kb", CommandClass.READ, {"read_only", "standard", "full"}),
    ("eb @rsp 90", CommandClass.MEMORY_WRITE, {"standard", "full"}),
    ("g", CommandClass.EXECUTION, {"standard", "full"}),
    (".reboot", CommandClass.TARGET_DESTRUCTIVE, {"standard", "full"}),
    (".shell dir", CommandClass.HOST_EXEC, {"full"}),
    (".load x.dll", CommandClass.CODE_LOAD, {"full"}),
    (".dump /ma c:\\x.dmp", CommandClass.FILE_WRITE, {"full"}),
    ("q", CommandClass.SESSION_ENDING, {"full"}),
    ("frobnicate", CommandClass.UNKNOWN, {"full"}),
]

# Everyday reads an agent sends: all allowed under read_only (and so under standard).
COMMON_READS = [
    "k", "kb", "kv", "kn 20", "~*k", "r", "r rip", "dd @rsp", "dq @rsp L8", "db @rcx L40", "dps @rsp",
    "du @rcx", "da @rcx", "dt nt!_EPROCESS", "dv /t", "dx @$curprocess", "dx -r2 @$curthread.Stack.Frames",
    "u @rip", "ub @rip", "uf nt!KeBugCheckEx", "lm", "lmvm nt", "x nt!Ke*", "ln @rip", "? @rax+8",
    "?? sizeof(nt!_EPROCESS)", ".frame 2", ".trap @rsp", ".cxr @rcx", ".exr -1", ".ecxr", ".lastevent",
    "vertarget", "version", "bl", "~", "~0 s", "|", ".reload", ".reload /f nt", ".sympath", ".symfix",
    ".effmach", ".formats 10", ".echo hi", ".printf \"%p\\n\", @rip", "!process 0 0", "!thread",
    "!analyze -v", "!pcr", "!irql", "!pte @rip", "!pool @rcx", "!vm", "!object \\Driver", "!drvobj x 2",
    "!devobj @rcx", "!devstack @rcx", "!irp @rcx", "!error 5", "!peb", "!teb", "!heap -s", "!handle",
    "!running", "!ready", "!sysptes", "!locks", "!stacks 2", "!idt", "!kdexts.process 0 0",
    "s -d 0 L?100 41414141", "k; r; lm", ".block { k; r }", ".if (@rax == 0) { k } .else { r }",
]  # fmt: skip


@pytest.mark.parametrize(("command", "command_class", "allowed_by"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_profiles_allow_exactly(command: str, command_class: CommandClass, allowed_by: set[Profile]) -> None:
    for profile in PROFILES:
        verdict = check(command, profile)
        assert verdict.allowed == (profile in allowed_by), (profile, verdict.message)
        assert verdict.profile == profile
        if not verdict.allowed:
            assert verdict.denied_class is command_class
            assert verdict.denied_piece == command


def test_profile_table() -> None:
    assert PROFILE_ALLOWS["read_only"] == {CommandClass.READ}
    assert PROFILE_ALLOWS["standard"] == {
        CommandClass.READ,
        CommandClass.MEMORY_WRITE,
        CommandClass.EXECUTION,
        CommandClass.TARGET_DESTRUCTIVE,
    }
    assert PROFILE_ALLOWS["full"] == set(CommandClass)


@pytest.mark.parametrize("command", COMMON_READS)
@pytest.mark.parametrize("profile", ["read_only", "standard"])
def test_common_reads_are_allowed(command: str, profile: Profile) -> None:
    verdict = check(command, profile)
    assert verdict.allowed, verdict.message
    assert verdict.denied_class is None and verdict.denied_piece is None


def test_denied_message_names_the_piece_class_and_reason() -> None:
    verdict = check("k; .shell dir", "standard")
    assert not verdict.allowed
    assert verdict.message == (
        "denied by profile 'standard': '.shell dir' is host_exec (runs a program on the debugger host)"
    )
    assert verdict.denied_piece == ".shell dir"
    assert [f.piece for f in verdict.findings] == ["k", ".shell dir"]


def test_denied_message_names_the_worst_and_counts_the_rest() -> None:
    verdict = check("q; frobnicate; .shell dir", "read_only")
    assert verdict.denied_class is CommandClass.HOST_EXEC
    assert verdict.message.endswith("; 2 more denied finding(s)")


def test_message_escapes_control_characters_and_cuts_long_pieces() -> None:
    assert "\\x1b" in check("k\x1b", "standard").message
    verdict = check(".shell " + "x" * 500, "standard")
    assert len(verdict.message) < 300
    assert verdict.denied_piece == ".shell " + "x" * 500


def test_allowed_message() -> None:
    verdict = check("k; g", "standard")
    assert verdict.allowed
    assert verdict.message == "allowed by profile 'standard' (execution, read)"


def test_full_allows_unknown() -> None:
    assert check("${x}", "full").allowed
    assert not check("${x}", "standard").allowed


def test_unknown_profile_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown policy profile"):
        check("k", "admin")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown policy profile"):
        launch_flags("admin")  # type: ignore[arg-type]


def test_launch_flags() -> None:
    """-noshell makes kd itself refuse .shell: defence in depth unless host_exec is allowed."""
    assert launch_flags("read_only") == ["-noshell"]
    assert launch_flags("standard") == ["-noshell"]
    assert launch_flags("full") == []


# ------------------------------------------------------------------ lines no reader should run


def test_never_empty_and_empty_line_repeats() -> None:
    """An empty line makes kd repeat the last command (``p``, ``t``, ``d*``...)."""
    for command in ("", "   ", "\t"):
        assert [f.command_class for f in classify(command)] == [UNKNOWN]
    assert all(f.reason for f in classify("k; r; dd @rsp"))


def test_alias_uses_are_unknown() -> None:
    for command in ("${x}", ".echo ${x}", "${/v:x}", "${/f:x}", "$u0", "dd $u1", ".echo $CurrentDumpFile"):
        assert UNKNOWN in classes(command), command
    assert classes(".echo ${/d:x}") == {READ}


def test_same_line_alias_inside_a_later_block_is_expanded() -> None:
    """A line starting with aS is not expanded as a whole; each { } block is, when it starts."""
    assert classes('aS va "lm"; .block { ${va} }') == {READ}
    assert EXECUTION in classes('aS va "g"; .block { ${va} }')
    # Anywhere else the value may be one set by an earlier call.
    assert UNKNOWN in classes('aS va "lm"; ${va}')
    assert UNKNOWN in classes(' aS va "lm"; .block { ${va} }')
    assert UNKNOWN in classes('r; aS va "lm"; .block { ${va} }')
    assert UNKNOWN in classes('aS va "lm"; .block { ${y} }')


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


# ------------------------------------------------------------------ the bypass corpora


_ID_WIDTH = 48  # characters of a command shown in a test id

# The classes the corpus expects the policy to tell apart (values of CommandClass).
EXPECTED_CLASSES = {
    "host_exec",
    "code_load",
    "file_write",
    "host_file_read",
    "network_path",
    "settings_change",
    "output_control",
    "session_ending",
}


DENYING_PROFILES: tuple[Profile, ...] = ("standard", "read_only")


def _case_id(index: int, command: str) -> str:
    """``042:.block{.shell whoami}``: the index and the command, cut (pytest escapes the rest)."""
    shown = command if len(command) <= _ID_WIDTH else command[: _ID_WIDTH - 3] + "..."
    return f"{index:03d}:{shown}"


@pytest.mark.parametrize(
    ("command", "expected"),
    [pytest.param(command, expected, id=_case_id(i, command)) for i, (command, expected) in enumerate(BYPASS)],
)
def test_bypass_is_denied_and_found(command: str, expected: str) -> None:
    for profile in DENYING_PROFILES:
        verdict = check(command, profile)
        assert not verdict.allowed, (profile, verdict.message, verdict.findings)
    if expected != ANY:
        verdict = check(command, "standard")
        found = {f.command_class.value for f in verdict.findings}
        assert expected in found, (verdict.message, verdict.findings)


@pytest.mark.parametrize("command", [pytest.param(c, id=_case_id(i, c)) for i, c in enumerate(ORDINARY)])
def test_ordinary_is_allowed(command: str) -> None:
    for profile in ("standard", "full"):
        verdict = check(command, profile)
        assert verdict.allowed, (profile, verdict.message)


def test_corpus_size_and_shape() -> None:
    commands = [command for command, _ in BYPASS]
    assert len(BYPASS) >= 250
    assert len(ORDINARY) >= 60
    assert len(set(commands)) == len(commands), "duplicate bypass entries"
    assert len(set(ORDINARY)) == len(ORDINARY), "duplicate ordinary entries"
    assert not set(commands) & set(ORDINARY)


def test_corpus_covers_every_class() -> None:
    expected = {cls for _, cls in BYPASS}
    assert expected - {ANY} == EXPECTED_CLASSES


def test_expected_classes_are_policy_classes() -> None:
    """A typo in the corpus would otherwise read as a missing finding."""
    assert {c.value for c in CommandClass} >= EXPECTED_CLASSES


@pytest.mark.parametrize(
    ("command", "denied_class"),
    [pytest.param(command, denied_class, id=note) for command, denied_class, note in BYPASS_VERDICTS],
)
def test_bypass_verdict_names_its_class(command: str, denied_class: str) -> None:
    verdict = check(command, "standard")
    assert not verdict.allowed, verdict.findings
    assert verdict.denied_class is CommandClass(denied_class), verdict.message
    assert not check(command, "read_only").allowed


def test_bypass_verdicts_size_and_variety() -> None:
    assert len(BYPASS_VERDICTS) >= 40
    assert len({note for _, _, note in BYPASS_VERDICTS}) == len(BYPASS_VERDICTS)
    assert {c for _, c, _ in BYPASS_VERDICTS} == {
        corpus.HOST_EXEC,
        corpus.CODE_LOAD,
        corpus.FILE_WRITE,
        corpus.SESSION_ENDING,
        corpus.UNKNOWN,
        corpus.HOST_FILE_READ,
    }


# ------------------------------------------------------------------ properties


READS = ["k", "kb", "r", "dd @rsp", "lm", "!process 0 0", ".echo hi", "u @rip", "dx @$curprocess", "~*k", "bl"]

# Denied under "standard", and free of '"' and "'" so every wrapper can hold them.
DANGEROUS = [
    ".shell calc",
    "!!dir",
    "$$<c:\\x.txt",
    "$$>a< c:\\x.txt 1",
    ".load evil",
    "!evil.run",
    ".scriptrun c:\\x.js",
    ".dump /ma c:\\x.dmp",
    ".writemem c:\\x 0 L1",
    ".logopen c:\\x.log",
    "q",
    ".detach",
    ".create cmd",
]

Wrapper = Callable[[str], str]

# Each wrapper makes kd run its argument (now, per thread, on a breakpoint, in a loop...).
WRAPPERS: list[tuple[Wrapper, bool]] = [  # (wrapper, puts its argument inside "double quotes")
    (lambda c: f".block {{ {c} }}", False),
    (lambda c: f".if (1) {{ {c} }}", False),
    (lambda c: f".if (0) {{ r }} .else {{ {c} }}", False),
    (lambda c: f".while (0) {{ {c} }}", False),
    (lambda c: f".foreach (v {{lm1m}}) {{ {c} }}", False),
    (lambda c: f"~*e {c}", False),
    (lambda c: f"z(0) {c}", False),
    (lambda c: f"j (@rax == 0) '{c}' ; 'r'", False),
    (lambda c: f'bp nt!NtCreateFile "{c}"', True),
    (lambda c: f'sxe -c "{c}" ld', True),
    (lambda c: f'.pcmd -s "{c}"', True),
    (lambda c: f'dx Debugger.Utility.Control.ExecuteCommand("{c}")', True),
]


SEPARATORS = [";", " ;", "; ", " ; ", ";\t", ";;"]


def shuffle_case(text: str, flips: list[bool]) -> str:
    """Flip the case of letters in dot and bang command names (kd does not care)."""
    out = []
    for i, ch in enumerate(text):
        out.append(ch.swapcase() if flips[i % len(flips)] and ch.isalpha() else ch)
    return "".join(out)


@st.composite
def wrapped(draw: st.DrawFn) -> str:
    command = draw(st.sampled_from(DANGEROUS))
    if command.startswith((".", "!")):
        name, _, rest = command.partition(" ")
        command = shuffle_case(name, draw(st.lists(st.booleans(), min_size=1, max_size=8))) + " " + rest
    quoted = False  # double quotes are not nested (that needs \" escapes, tested elsewhere)
    for _ in range(draw(st.integers(0, 3))):
        choices = [(w, q) for w, q in WRAPPERS if not (q and quoted)]
        wrapper, wraps_in_quotes = draw(st.sampled_from(choices))
        quoted = quoted or wraps_in_quotes
        command = wrapper(command)
    reads = draw(st.lists(st.sampled_from(READS), max_size=4))
    position = draw(st.integers(0, len(reads)))
    parts = [*reads[:position], command, *reads[position:]]
    line = parts[0]
    for part in parts[1:]:
        line += draw(st.sampled_from(SEPARATORS)) + part
    return line


@settings(max_examples=examples(300), deadline=None)
@given(wrapped())
def test_wrapped_dangerous_commands_are_denied(line: str) -> None:
    verdict = check(line, "standard")
    assert not verdict.allowed, line
    assert not check(line, "read_only").allowed


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(READS), min_size=1, max_size=5), st.sampled_from(SEPARATORS))
def test_lists_of_reads_are_allowed(reads: list[str], separator: str) -> None:
    assert check(separator.join(reads), "read_only").allowed


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=120))
def test_classify_never_fails_and_never_returns_nothing(text: str) -> None:
    findings = classify(text)
    assert findings
    assert all(isinstance(f.command_class, CommandClass) and f.reason for f in findings)


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet=st.sampled_from(list(".!$;{}()\"'\\~|*ejqgr shl<>a@")), max_size=60))
def test_kd_punctuation_soup_never_fails(text: str) -> None:
    assert classify(text)


# ------------------------------------------------------------------ the plain-line fast path

# Lines the fast path takes and lines it must leave to the full reader, with the tricky parts
# the walker still reads on the fast path (';' lists, blocks, j, z, .foreach, selectors).
FAST_PATH_LINES = [
    *COMMON_READS, *(s[0] for s in SAMPLES), *ORDINARY, *(line for line, *_ in BYPASS),
    "r", "k", "lm", "dt nt!_EPROCESS", "!process 0 0", "r rax=1", "r; g", "k;;k", " ; ", ";", "\t r \t",
    ".block { r; k }; lm", ".block { .shell x }", ".shell dir", "!!dir", ".foreach (x {k}) { r }",
    "j 1 'r';'.shell x'", "j (1) 'k'", "z(1)", "r; z(@rax)", "as x .shell", "aS x y", "ad *", "al",
    "bp nt!NtCreateFile", "bp nt!NtCreateFile 'kb; g'", "~*e r", "~*e .shell x", "|1s", "~3 kb",
    ".if (1) { r } .else { .load x }", ".sympath srv*c:\\s*https://msdl.microsoft.com/download/symbols",
    ".sympath c:\\x;.shell x", "$$ comment; .shell x", "r $t0=1", "${x}", "${/d:x}", "as x r; .block { ${x} }",
    "r @@c++(x=1)", "?? x = 1", "dx Debugger.Utility.Control.ExecuteCommand(\"r\")", 'bp x "kb; g"',
    '.echo "a; .shell b"', "r\r\nk", "r\x01", "r\u00e9", "r" + "x" * 17000, "", "   ", "{", "}", "{ r",
    ".do { r } (1)", ".for (r $t0=0; @$t0<2; r $t0=@$t0+1) { k }", ".while (1) { g }", "sxe -c 'k' ld",
    "wt", "gu", ".reboot", "q", "qd", "ed @rsp 0", "!bang", "~", "|", "* comment ; .shell x",
]  # fmt: skip


def _verdicts(line: str, roots: tuple[str, ...]) -> list[tuple[bool, str]]:
    return [(v.allowed, v.message) for v in (check(line, p, roots) for p in PROFILES)]


def _assert_same_as_full(line: str) -> None:
    from kdmcp.command import policy

    for roots in (policy.DEFAULT_NETWORK_ROOTS, ("\\\\share",)):
        policy._classify_cached.cache_clear()
        fast = policy._classify_cached(line, roots, ())
        full = policy._classify_full(line, roots, ())
        assert fast == full, line
        assert [f.effect for f in fast] == [f.effect for f in full]
        policy._classify_cached.cache_clear()
        with_fast = _verdicts(line, roots)
        policy._classify_cached.cache_clear()
        original = policy._classify_cached
        try:
            policy._classify_cached = policy._classify_full  # type: ignore[assignment]
            assert _verdicts(line, roots) == with_fast, line
        finally:
            policy._classify_cached = original


@pytest.mark.parametrize("line", FAST_PATH_LINES)
def test_fast_path_gives_the_full_readers_findings(line: str) -> None:
    _assert_same_as_full(line)


def test_fast_path_takes_plain_lines_only():
    from kdmcp.command.policy import _PLAIN_LINE_RE

    for line in ["r", "k", "lm", "dt nt!_EPROCESS", "!process 0 0", ".block { r; k }; lm", "j 1 'r';'k'"]:
        assert _PLAIN_LINE_RE.fullmatch(line), line
    for line in ['bp x "kb"', "${x}", "$$ c", "r @@c++(1)", "c:\\x", "r\n", "r\x01", "r\u00e9", "r\u3000"]:
        assert not _PLAIN_LINE_RE.fullmatch(line), line


_SOUP = [
    *".!$;{}()\"'\\~|*ejqgrzkbplmtdxs =@,/:_-0123456789\t",
    ".block", ".if", ".else", ".foreach", ".for", ".while", ".do", ".shell", ".load", "as", "aS", "ad",
    "bp", "bu", "j", "z", "~*e", "!process", "!!", "${x}", "$$", ".sympath", "srv*", "\\\\host\\s", "g", "q",
    "sxe -c", "dx", "r rax=", " ; ", "{ ", " }", "'", '"',
]


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(st.sampled_from(_SOUP), max_size=14).map("".join) | st.text(max_size=40))
def test_fast_path_agrees_with_the_full_reader(line: str) -> None:
    _assert_same_as_full(line)
