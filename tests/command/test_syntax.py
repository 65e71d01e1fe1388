"""kdmcp/command/syntax.py (through the policy's findings): where ``;`` ends a command, and how quotes and
escapes are read — every reading kd's documentation leaves open.
"""

from __future__ import annotations

from kdmcp.command import classify
from tests.command.helpers import (
    EXECUTION,
    HOST_EXEC,
    READ,
    UNKNOWN,
    classes,
    pieces,
)


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
