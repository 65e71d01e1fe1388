"""A line that runs commands, then the target (``.echo X; bl; g``): which lines kd-mcp cuts before
their run command, that the cut line is the same commands with ``.echo <marker>`` between, and the
machine's reading of what kd prints for it -- the commands' output up to the marker's line, the
target's after it, in any chunking (issue 29, item 1's class: what kd prints for commands is never
the target's DbgPrint)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.command import RunEffect, run_effect
from kdmcp.command.lexing import KD_LEXING
from kdmcp.command.syntax import command_texts
from kdmcp.engine.run_line import MARKER_ROOM, split_run_line
from tests.engine.test_machine import BREAKPOINT, PROMPT, S, _connected_and_broken
from tests.engine.test_step_stop import LOCATION, REGISTERS
from tests.tiers import examples

M = "KDMCPTESTN9"

SPLIT = [
    (".echo X; bl; g", ".echo X; bl", "; g", "g"),
    ("bp nt!NtCreateFile; g", "bp nt!NtCreateFile", "; g", "g"),
    ("r; p", "r", "; p", "p"),
    ("r;t 3", "r", ";t 3", "t 3"),
    ('bp nt!NtCreateFile ".echo hit; gc"; g', 'bp nt!NtCreateFile ".echo hit; gc"', "; g", "g"),  # runs later
    ('.echo "a; b"; bl; gh', '.echo "a; b"; bl', "; gh", "gh"),
    ("r;; g ;", "r", ";; g ;", "g"),
    ("~1s; g", "~1s", "; g", "g"),
    ("bc *; .reboot", "bc *", "; .reboot", ".reboot"),
    ("r @$t0 = 1; gu", "r @$t0 = 1", "; gu", "gu"),
    ("dx @$curthread; g nt!NtReadFile", "dx @$curthread", "; g nt!NtReadFile", "g nt!NtReadFile"),
]

NOT_SPLIT = [
    "g",  # nothing before the run command
    "p",
    "r; g; r",  # the run command is not the last: kd runs "r" at the next stop
    "g; r",
    "r; k",  # no run command
    ".block { r }; g",  # a block
    ".if (1) { r } .else { k }; g",
    ".for (r $t0 = 0; @$t0 < 2; r $t0 = @$t0 + 1) { r }; g",
    ".while (0) { r }; g",
    "j 1 'r; g' ; 'k'",  # j takes the rest of the line
    "~*e r; g",  # so does ~e
    ".sympath c:\\sym; g",  # and a path list
    "as x y; g",  # alias commands
    "aS x y; g",
    "ad x; g",
    "r ${x}; g",  # alias uses
    "r $u0; g",
    ".echo $CurrentDumpFile; g",
    "r; z(@$t0 < 5); g",  # z repeats the commands before it
    "r @$t0 = @$t0 + 1; z(@$t0 < 5)",
    "p; g",  # a run command before the last
    "r; q",  # ending the session is not a run
    ".echo x\"; g",  # the readings of the quote disagree on where commands end
    ".echo \"never closes; g",
    "{ r }; g",
    ".outmask- 1; g",  # it would hide the marker too
    '.ofilter "x*"; g',
]


@pytest.mark.parametrize(("line", "head", "tail", "run"), SPLIT)
def test_lines_that_are_cut_before_their_run_command(line, head, tail, run):
    split = split_run_line(line)
    assert split is not None and (split.head, split.tail, split.run) == (head, tail, run)
    assert split.line(M) == f"{head}; .echo {M}{tail}"


@pytest.mark.parametrize("line", NOT_SPLIT)
def test_lines_that_are_sent_as_they_are(line):
    assert split_run_line(line) is None


def test_a_line_with_no_room_for_the_marker_is_sent_as_it_is():
    assert split_run_line("r; " + "dd 0;" * 800 + " g") is None
    assert len(split_run_line("r; g").line("X" * (MARKER_ROOM - len("; .echo ")))) <= MARKER_ROOM + 4  # type: ignore[union-attr]


def _checks(line: str) -> None:
    """What every cut line keeps: the same commands, in order, with the marker's ``.echo`` between."""
    split = split_run_line(line)
    if split is None:
        return
    assert split.head + split.tail == line
    before, run = command_texts(split.head, KD_LEXING), command_texts(split.tail, KD_LEXING)
    assert before + run == command_texts(line, KD_LEXING)
    assert command_texts(split.line(M), KD_LEXING) == [*before, f".echo {M}", *run]
    assert run == [split.run] and run_effect(split.head) is RunEffect.IMMEDIATE
    assert run_effect(split.line(M)) is run_effect(line) is run_effect(split.run)


_IMMEDIATE = ["r", "bl", "k", ".echo X", "bp nt!NtCreateFile", "dd nt!KiBugCheckData L4",
              'bp nt!NtReadFile ".echo a; g"', '.echo "a; b"',
              "~1s", "bc *", "lm m nt", "dx @$curthread", ".printf \"%d\\n\", 5", "sxe ld"]
_RUN = ["g", "p", "t", "gu", "gh", "gn", "pc", "t 3", "g nt!NtReadFile", ".reboot"]
_SEPARATORS = [";", "; ", " ; ", ";; ", ";\t"]


@settings(max_examples=examples(400), deadline=None)
@given(commands=st.lists(st.sampled_from(_IMMEDIATE), min_size=1, max_size=5), run=st.sampled_from(_RUN),
       seps=st.lists(st.sampled_from(_SEPARATORS), min_size=6, max_size=6), end=st.sampled_from(["", " ", ";"]))
def test_a_plain_sequence_is_cut_and_its_commands_are_the_lines(commands, run, seps, end):
    line = "".join(c + s for c, s in zip(commands, seps, strict=False)) + run + end
    assert split_run_line(line) is not None, line
    _checks(line)


_WORDS = ["r", "g", "p", "bl", ".echo", "X", ";", " ", '"', "'", "{", "}", ".block", ".if", "(1)", "j", "1", "$u0",
          "${x}", "as", "z(1)", "~*e", "\\", "bp", "nt!Foo", "gu", ".reboot", "q", ".for", ".catch", "(", ")"]


@settings(max_examples=examples(600), deadline=None)
@given(words=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=14))
def test_any_line_that_is_cut_keeps_its_commands(words):
    _checks("".join(words))


# ------------------------------------------------------------ the machine's side

LINE = "bp nt!NtCreateFile; bl; g"
SENT = LINE.replace("; g", "; .echo KDMCPTESTN2; g").encode()
BL = b"     0 e Disable Clear  fffff800`62c3a1e0     0001 (0001) nt!NtCreateFile\r\n"
DBGPRINT = b"myfault: IOCTL 0x83362000 received\r\n"
STREAM = SENT + b"\r\n" + BL + b"KDMCPTESTN2\r\n" + DBGPRINT + BREAKPOINT + PROMPT


def _sent(line: str = LINE, *, step: bool = False):
    m = _connected_and_broken()
    assert m.seq == 3  # waiting, connected, break_in (_new reads the events after them)
    m.new_marker()  # the session's first marker is N1: this one is N2
    pending = m.run_line_sent(b"KDMCPTESTN2", step=step, command=line)
    assert m.state == S.busy and m.busy_command
    return m, pending


def _new(m):
    """The events since the line was sent (``_connected_and_broken`` made three)."""
    return m.events_after(3)


def _feed(m, stream: bytes, cuts: list[int]) -> None:
    for a, b in itertools.pairwise([0, *sorted(set(cuts)), len(stream)]):
        if b > a:
            m.feed(stream[a:b])


def _check_run(m, pending, base: int) -> None:
    assert pending.hit is not None and pending.done
    assert pending.hit.output_end - base == STREAM.index(b"KDMCPTESTN2\r\n")  # the commands' output ends there
    assert pending.hit.line_end - base == STREAM.index(DBGPRINT)
    events = [(e.kind, e.text) for e in _new(m)]
    assert events[0] == ("dbgprint", DBGPRINT.decode())  # only what the target printed after the marker
    assert [k for k, _ in events] == ["dbgprint", "breakpoint"] and m.events[-1].stopped
    assert m.state == S.broken and not m.busy_command


def test_the_commands_output_is_the_commands_and_what_follows_the_marker_the_targets():
    m, pending = _sent()
    base = m.end
    _feed(m, STREAM, [])
    _check_run(m, pending, base)


@settings(max_examples=examples(200), deadline=None)
@given(cuts=st.lists(st.integers(1, len(STREAM) - 1), max_size=12))
def test_any_chunking_reads_the_run_line_the_same(cuts):
    m, pending = _sent()
    base = m.end
    _feed(m, STREAM, cuts)
    _check_run(m, pending, base)


def test_the_state_is_busy_until_the_marker_then_running():
    m, pending = _sent()
    cut = STREAM.index(b"KDMCPTESTN2\r\n")
    out = m.feed(STREAM[:cut])
    assert m.state == S.busy and pending.hit is None and not [t for t in out if t.event]
    out = m.feed(STREAM[cut : cut + len(b"KDMCPTESTN2\r\n")])
    assert m.state == S.running and pending.hit is not None and [(t.before, t.after) for t in out] == [
        (S.busy, S.running)]


def test_an_error_ends_the_line_before_its_run_command():
    # "If .catch is not used, an error will terminate the entire debugger command program" (.catch)
    m, pending = _sent("r foo; g")
    m.feed(b"r foo; .echo KDMCPTESTN2; g\r\n       ^ Bad register error in 'r foo'\r\n" + PROMPT)
    assert m.state == S.broken and pending.hit is None and not m.busy_command
    assert [e.kind for e in _new(m)] == []
    m.feed(b"KDMCPTESTN2\r\n")  # a stray marker later is no boundary any more
    assert m.state == S.broken


def test_a_step_after_commands_is_a_step_event():
    m, pending = _sent("r; p", step=True)
    regs = REGISTERS
    m.feed(b"r; .echo KDMCPTESTN2; p\r\n" + regs + b"KDMCPTESTN2\r\n" + regs + LOCATION + PROMPT)
    assert pending.hit is not None and m.state == S.broken
    assert [e.kind for e in _new(m)] == ["step"]


def test_the_marker_after_output_without_a_line_end_keeps_that_output():
    m, pending = _sent('.printf "x"; g')
    base, stream = m.end, b'.printf "x"; .echo KDMCPTESTN2; g\r\nxKDMCPTESTN2\r\n' + DBGPRINT
    cut = stream.index(b"KDMCPTESTN2\r\n") + 5
    m.feed(stream[:cut])
    m.feed(stream[cut:])  # the marker's line cut between chunks
    assert pending.hit is not None and m.state == S.running
    assert pending.hit.output_end - base == stream.index(b"KDMCPTESTN2\r\n")  # "x" is the commands'
    assert [(e.kind, e.text) for e in _new(m)] == [("dbgprint", DBGPRINT.decode())]


def test_the_echo_of_the_line_is_no_boundary():
    m, pending = _sent()
    m.feed(SENT + b"\r\n")  # "... .echo KDMCPTESTN2; g": the marker, but the ';' follows it
    assert pending.hit is None and m.state == S.busy
