"""Command classification, validation, argv building and secret handling."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kdmcp.engine import (
    DumpTarget,
    KdnetTarget,
    LocalKernelTarget,
    ProcessTarget,
    RemoteTarget,
    build_plan,
    simulator_command,
)
from kdmcp.engine.commands import command_kind, validate
from kdmcp.errors import InvalidArgument
from kdmcp.secret import Secret, redact


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
        ("as x g", "immediate"), ("wt", "go"), ("p", "immediate"), ("gs", "immediate"),
    ],
)
def test_command_kind(line, kind):
    assert command_kind(line) == kind


def test_split_respects_quotes_and_blocks():
    from kdmcp.parse.command_list import split_command_list

    assert split_command_list('bp x "k; g"; .block { r; k }; lm') == ['bp x "k; g"', ".block { r; k }", "lm"]


def test_validate():
    assert validate("r") is None
    assert validate("dt nt!_EPROCESS\tx") is None
    for bad in ["", " ", "a\nb", "a\rb", "\x1b[A", "a\x7f", "x" * 4001]:
        assert validate(bad) is not None


def test_argv_for_each_mode():
    kd = ["kd.exe"]
    plan = build_plan(kd, KdnetTarget(port=50005, key=Secret("a.b.c.d"), host="10.0.0.5"),
                      symbol_path="srv*C:\\sym", initial_break=True)
    assert plan.argv == ["kd.exe", "-y", "srv*C:\\sym", "-b", "-k", "net:port=50005,key=a.b.c.d,target=10.0.0.5"]
    assert plan.display == "kd.exe -y srv*C:\\sym -b -k net:port=50005,key=***,target=10.0.0.5"
    assert plan.live_kernel and plan.flavor == "kd" and plan.stops_at_start
    assert not build_plan(kd, KdnetTarget(port=1, key=Secret("a.b.c.d"))).stops_at_start
    assert build_plan(kd, LocalKernelTarget()).argv == ["kd.exe", "-kl"]
    assert build_plan(kd, DumpTarget(path="C:\\MEMORY.DMP")).argv == ["kd.exe", "-z", "C:\\MEMORY.DMP"]
    cdb = ["cdb.exe"]
    user_dump = build_plan(cdb, DumpTarget(path="app.dmp", kernel=False))
    assert user_dump.flavor == "cdb" and not user_dump.live_kernel
    assert build_plan(cdb, ProcessTarget(pid=4242)).argv == ["cdb.exe", "-p", "4242"]
    assert build_plan(cdb, ProcessTarget(pid=7, noninvasive=True)).argv == ["cdb.exe", "-pv", "-p", "7"]
    launched = build_plan(cdb, ProcessTarget(command_line=["app.exe", "-x"]), extra_args=["-g"])
    assert launched.argv == ["cdb.exe", "-g", "app.exe", "-x"]
    assert build_plan(kd, RemoteTarget(connection="tcp:server=h,port=5005")).argv == [
        "kd.exe", "-remote", "tcp:server=h,port=5005"]
    with pytest.raises(InvalidArgument):
        build_plan(cdb, ProcessTarget())
    with pytest.raises(InvalidArgument):
        build_plan([], LocalKernelTarget())
    with pytest.raises(ValidationError):
        KdnetTarget(port=70000, key=Secret("a.b.c.d"))
    with pytest.raises(ValidationError):
        KdnetTarget(port=50000, key=Secret(""))


def test_simulator_command_runs_this_python():
    import sys

    assert simulator_command("cdb", "x.yaml") == [sys.executable, "-m", "kdmcp.sim", "cdb", "--scenario", "x.yaml"]


def test_secret_never_renders():
    key = Secret("2steg4fzbj2sz.3tqgjxx3kdz6y.1thq6ipbwyebm.2y9aa2z6g1tdk")
    target = KdnetTarget(port=50000, key=key)
    for rendering in (str(key), repr(key), f"{key}", f"{key:>40}", repr(target), str(target),
                      target.model_dump_json(round_trip=False) if False else repr(target.model_dump())):
        assert "2steg4fzbj2sz" not in rendering
    assert key == Secret(key.reveal()) and key != Secret("x")
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(key)
    text = "kd -k net:port=1,key=abc.def.ghi.jkl and again abc.def.ghi.jkl password=hunter2"
    assert redact(text, [Secret("abc.def.ghi.jkl")]) == "kd -k net:port=1,key=*** and again *** password=***"
