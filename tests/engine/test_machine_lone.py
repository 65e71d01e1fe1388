"""The lone answer's lean path (``SessionMachine._feed_lone``, ``StreamRecognizer.feed_lone``) against
the full ``feed``: the same byte streams, cut anywhere, through a machine with it and one without,
end in the same state after every chunk, with the same transitions — events, prompt changes, text
that looks like a prompt, an answer with no output, a marker line ending in ``\\n`` only. Fast tier.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.engine.events import SessionState
from kdmcp.engine.machine import SessionMachine
from kdmcp.engine.recognizer import _KEYWORDS, _LOWER_KEYWORDS
from kdmcp.secret import Secret
from tests.engine.test_machine import BREAK_IN, CONNECTED, PROMPT
from tests.engine.test_reading import ANSWER_LINES

KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"
_SKIPPED = {"_rec", "_lone", "_lone_marker", "lean", "_clock", "_out", "_markers", "_auto", "_secrets"}
_REC_CACHES = {"_prompt_cache", "_suffix_cache", "_lone_cache"}


def _machine(lean: bool) -> SessionMachine:
    machine = SessionMachine((Secret(KEY),), marker_prefix=b"KDMCPTESTN", clock=lambda: 1.5)
    machine.lean = lean
    return machine


def _snapshot(machine: SessionMachine) -> dict[str, Any]:
    """Everything the machine and its recognizer hold but caches, which change no outcome."""
    seen = {k: v for k, v in vars(machine).items() if k not in _SKIPPED}
    seen["events"] = list(machine.events)
    seen["markers"] = {k: (v.hit, v.done) for k, v in machine._markers.items()}
    seen["auto"] = vars(machine._auto)
    seen["rec"] = {k: v for k, v in vars(machine._rec).items() if k not in _REC_CACHES}
    return seen


_LINES = st.sampled_from([
    *ANSWER_LINES,
    b"Shutdown occurred at (Sun Nov 29 12:00:00.000 2026 (UTC + 0:00))...unloading all symbol tables.\r\n",
    b"ModLoad: 00007ff9`9cd70000 00007ff9`9cda0000   C:\\WINDOWS\\System32\\IMM32.DLL\r\n",
    b"0: kd> ",  # kd's output on the prompt's line
    b"key=" + KEY.encode() + b"\r\n",
    b"KDMCPTESTN1\r\n",  # a marker (of the first command) in a later command's output
])
_PROMPTS = st.sampled_from([b"0: kd> ", b"0: kd> ", b"1: kd> ", b"kd> ", b"", b"0: kd> x"])
_COMMAND = st.tuples(st.lists(_LINES, max_size=5), st.booleans(), st.sampled_from([b"\r\n", b"\n"]), _PROMPTS,
                     st.lists(st.integers(min_value=0, max_value=600), max_size=3))


@settings(max_examples=150, deadline=None)
@given(commands=st.lists(_COMMAND, min_size=1, max_size=4), line=st.sampled_from(["r", "sxe -c \"g\" ld", "k"]))
def test_the_lean_path_ends_where_the_full_feed_does(commands, line):
    lean, full = _machine(True), _machine(False)
    for machine in (lean, full):
        machine.feed(CONNECTED + BREAK_IN)
        machine.feed(PROMPT)
    assert _snapshot(lean) == _snapshot(full)
    for lines, prompt_first, line_end, final, cuts in commands:
        if lean.state != SessionState.broken:
            break
        markers = [machine.new_marker() for machine in (lean, full)]
        assert markers[0] == markers[1]
        for machine in (lean, full):
            machine.command_sent(markers[0], line)
        answer = b"".join(lines) + (PROMPT if prompt_first else b"") + markers[0] + line_end + final
        edges = sorted({0, len(answer), *(c % (len(answer) + 1) for c in cuts)})
        for lo, hi in itertools.pairwise(edges):
            assert lean.feed(answer[lo:hi]) == full.feed(answer[lo:hi])
            assert _snapshot(lean) == _snapshot(full)


def test_a_lone_answer_takes_the_lean_path():
    """The common case — the output, the prompt, the marker, the prompt, in one chunk — is fed by
    ``_feed_lone`` and completes the command."""
    machine = _machine(True)
    machine.feed(CONNECTED + BREAK_IN)
    machine.feed(PROMPT)
    taken: list[bytes] = []
    original = machine._feed_lone

    def spy(data: bytes, *args: Any) -> Any:
        taken.append(data)
        return original(data, *args)

    machine._feed_lone = spy  # type: ignore[method-assign]
    for _ in range(2):
        marker = machine.new_marker()
        pending = machine.command_sent(marker, "r")
        machine.feed(b"rax=0000000000000000\r\n" + PROMPT + marker + b"\r\n" + PROMPT)
        assert pending.done and pending.hit is not None and machine.state == SessionState.broken
    assert len(taken) == 2
    # an event line in the answer: the full path, which reports it
    marker = machine.new_marker()
    machine.command_sent(marker, "r")
    machine.feed(b"Breakpoint 0 hit\r\n" + PROMPT + marker + b"\r\n" + PROMPT)
    assert len(taken) == 2 and machine.state == SessionState.broken


def test_no_event_keyword_has_a_digit_or_goes_on_past_a_line_end():
    """What ``StreamRecognizer.expect_lone`` checks once per prompt stands for every command's
    ending only if no keyword can take in the marker's counter; and ``feed_lone`` scans the output
    and the ending apart only if no keyword goes on past the output's last line end."""
    for keyword in (*_KEYWORDS, *_LOWER_KEYWORDS):
        assert not any(chr(c).isdigit() for c in keyword), keyword
        assert b"\n" not in keyword.rstrip(b"\n"), keyword
