"""Properties: classify never fails, and a dangerous command stays denied however it is wrapped.

The wrappers are kd's own ways of running a command indirectly; they are composed,
joined with read commands by ';' in several spellings, and the names' case is shuffled.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.command import CommandClass, check, classify

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


@settings(max_examples=300, deadline=None)
@given(wrapped())
def test_wrapped_dangerous_commands_are_denied(line: str) -> None:
    verdict = check(line, "standard")
    assert not verdict.allowed, line
    assert not check(line, "read_only").allowed


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(READS), min_size=1, max_size=5), st.sampled_from(SEPARATORS))
def test_lists_of_reads_are_allowed(reads: list[str], separator: str) -> None:
    assert check(separator.join(reads), "read_only").allowed


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_classify_never_fails_and_never_returns_nothing(text: str) -> None:
    findings = classify(text)
    assert findings
    assert all(isinstance(f.command_class, CommandClass) and f.reason for f in findings)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(".!$;{}()\"'\\~|*ejqgr shl<>a@")), max_size=60))
def test_kd_punctuation_soup_never_fails(text: str) -> None:
    assert classify(text)
