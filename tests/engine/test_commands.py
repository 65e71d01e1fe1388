"""Command classification, validation and the echo removed from a command's answer."""

from __future__ import annotations

import pytest

from kdmcp.engine.commands import command_kind, strip_echo, validate


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("g", "go"), ("G", "go"), ("gh", "go"), ("gn", "go"), ("gN", "go"), ("gc", "go"), ("gu", "go"),
        ("g nt!NtCreateFile", "go"), ("g=fffff800`62a05c20", "go"), ("~1 g", "go"), ("~* g", "go"),
        ("|0 g", "go"), ("r; g", "go"), (".reboot", "reboot"), (".restart", "reboot"), ("q", "quit"),
        ("qq", "quit"), ("qd", "quit"), ("r", "immediate"), ("gs", "immediate"), ("!gflag", "immediate"),
        ("bp nt!NtCreateFile \"kb; g\"", "immediate"), (".echo g", "immediate"), ("lm; k", "immediate"),
        # the reader's answer: a g inside a block, a branch, a body or a ~e string runs the target
        (".block { g }", "go"), ("j 1 'g';'r'", "go"), (".if (1) { gh }", "go"), ("~*e g", "go"),
        ('.foreach /s (x "g") {x}', "go"), (".echo x\"; g; \"", "go"), ("sxe -c \"g\" ld", "immediate"),
        ("as x g", "immediate"), ("wt", "go"), ("gs", "immediate"),
        # steps run the target until they end (issue 15): p, t and their variants are go-class
        ("p", "go"), ("t", "go"), ("p 3", "go"), ("pt", "go"), ("tt", "go"), ("pa fffff800`62c3a1e0", "go"),
        ("~1 t", "go"), ("p=1 2", "go"), ("pte 0", "immediate"), ("poi", "immediate"), ("time", "immediate"),
    ],
)
def test_command_kind(line, kind):
    assert command_kind(line) == kind


def test_validate():
    assert validate("r") is None
    assert validate("dt nt!_EPROCESS\tx") is None
    for bad in ["", " ", "a\nb", "a\rb", "\x1b[A", "a\x7f", "x" * 4001]:
        assert validate(bad) is not None


@pytest.mark.parametrize(
    ("command", "marker", "raw", "answer"),
    [
        # a pty echoes both lines at once, before the output
        (b"r", b"KDMCPX1", b"r\r\n.echo KDMCPX1\r\nrax=1\r\n0: kd> ", b"rax=1\r\n0: kd> "),
        # a console echoes the marker line as kd reads it, behind the intermediate prompt
        (b"r", b"KDMCPX1", b"r\r\nrax=1\r\n0: kd> .echo KDMCPX1\r\n", b"rax=1\r\n"),
        # a pty's echo of the marker line cut by kd's answer to the command before it
        # (seen under load: ".echo s3-301" answered ".s3-301" before this)
        (b".echo s3-301", b"KDMCPX301", b".echo s3-301\r\n.s3-301\r\necho KDMCPX301\r\n", b"s3-301\r\n"),
        (b"r", b"KDMCPX1", b"r\r\n.echo KDMrax=1\r\nCPX1\r\n", b"rax=1\r\n"),
        # pipes echo nothing
        (b"r", b"KDMCPX1", b"rax=1\n", b"rax=1\n"),
        # a go-class line has no marker: only the command's echo goes
        (b"j 0 'g';'r'", None, b"j 0 'g';'r'\r\nrax=1\r\n", b"rax=1\r\n"),
    ],
)
def test_strip_echo(command, marker, raw, answer):
    assert strip_echo(raw, command, marker) == answer


def test_a_marker_echo_cut_by_kds_answer_ends_after_the_output():
    # seen under load: kd's answer and its marker line came before the rest of the pty's echo
    raw, after = b".echo s3-43\r\n.s3-43\r\n", b"KDMCPX43\r\necho KDMCPX43\r\n0: kd> "
    assert strip_echo(raw, b".echo s3-43", b"KDMCPX43", after) == b"s3-43\r\n"
    # kd's prompt came between the echo's head and its tail (also seen under load)
    raw = b".echo s4-49\r\n.ecs4-49\r\n0: kd> ho KDMCPX50\r\n"
    assert strip_echo(raw, b".echo s4-49", b"KDMCPX50") == b"s4-49\r\n"
    # output that only starts like the echo is output: no echo tail follows it
    assert strip_echo(b".echo .abc\r\n.abc\r\n", b".echo .abc", b"KDMCPX7", b"KDMCPX7\r\n0: kd> ") == b".abc\r\n"
