"""kdmcp/command/lexing.py's selector reading: which prefixes a line opens with, and what they apply to.

The forms are the debugger documentation's: "Thread Syntax" (``~.``, ``~#``, ``~*``, ``~Number``,
``~~[TID]``, ``~[Expression]``), "Process Syntax" (``|.``, ``|#``, ``|*``, ``|Number``,
``|~[PID]``, ``|[Expression]``), "System Syntax" (``||.``, ``||#``, ``||*``, ``||ddd``) and
"~e (Thread-Specific Command)" (``~Thread e CommandString``, the rest of the line).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kdmcp.command.lexing import PROCESS_PREFIX_RE, THREAD_EXECUTE_RE, THREAD_PREFIX_RE, read_selectors, strip_selectors


@pytest.mark.parametrize(
    ("line", "selectors", "executes", "command"),
    [
        ("~.k", [("thread", ".")], False, "k"),
        ("~#k", [("thread", "#")], False, "k"),
        ("~*k", [("thread", "*")], False, "k"),
        ("~3 kb", [("thread", "3")], False, "kb"),
        ("~ 3 k", [("thread", "3")], False, "k"),
        ("~~[1a4]s", [("thread", "~[1a4]")], False, "s"),
        ("~[@$t0]k", [("thread", "[@$t0]")], False, "k"),
        ("~", [("thread", "")], False, ""),
        ("~*e kb", [("thread", "*")], True, "kb"),
        ("~ * e r; k", [("thread", "*")], True, "r; k"),
        ("~*e ~2 k", [("thread", "*")], True, "~2 k"),  # the command string is whole: reading stops at e
        ("|.k", [("process", ".")], False, "k"),
        ("|1s", [("process", "1")], False, "s"),
        ("|~[1a4] lm", [("process", "~[1a4]")], False, "lm"),
        ("|[@$t0] k", [("process", "[@$t0]")], False, "k"),
        ("|", [("process", "")], False, ""),
        ("||0", [("system", "0")], False, ""),
        ("||#k", [("system", "#")], False, "k"),
        ("||[@$t0] k", [("system", "[@$t0]")], False, "k"),  # a processor ("Multiprocessor Syntax")
        ("|1 ~2 kb", [("process", "1"), ("thread", "2")], False, "kb"),
        ("~3ekb", [("thread", "3")], False, "ekb"),  # "ekb" is no ~e: a letter follows the e
        ("kb", [], False, "kb"),
        (" ~3 k", [], False, " ~3 k"),  # selectors open a command; the caller strips it
    ],
)
def test_read_selectors(line: str, selectors: list[tuple[str, str]], executes: bool, command: str) -> None:
    selected = read_selectors(line)
    assert [(s.kind, s.id) for s in selected.selectors] == selectors
    assert (selected.executes, selected.command) == (executes, command)


def test_a_selector_keeps_its_text_as_written() -> None:
    assert [s.text for s in read_selectors("|~[1a4] ~ * e k").selectors] == ["|~[1a4]", "~ *"]


def _strip_selectors_before(text: str) -> str:
    """strip_selectors as it read lines before read_selectors existed (the engine's and policy's reading)."""
    while True:
        m = THREAD_PREFIX_RE.match(text) or PROCESS_PREFIX_RE.match(text)
        if m is None:
            return text
        rest = text[m.end() :].lstrip()
        if THREAD_EXECUTE_RE.match(rest):
            rest = rest[1:].lstrip()
        text = rest


_PIECES = ["~", "|", "||", "*", ".", "#", "3", "12", " ", "\t", "e", "E", "k", "s", "b", "[1a4]", "~[1a4]", ";", "r"]


@given(st.lists(st.sampled_from(_PIECES), max_size=10).map("".join))
def test_strip_selectors_reads_lines_as_it_did(line: str) -> None:
    assert strip_selectors(line) == _strip_selectors_before(line)
