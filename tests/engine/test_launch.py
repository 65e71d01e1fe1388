"""``build_plan``: the argv of each mode, every element checked, on the model and again as it is built.

A target copied with ``model_copy(update=...)`` (or built with ``model_construct``) skips
pydantic validation; ``build_plan`` is the one door to an argv, so it checks again.
"""

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
from kdmcp.errors import InvalidArgument
from kdmcp.secret import Secret, redact

KD = ["kd.exe"]
KEY = Secret("1.2.3.4")


@pytest.mark.parametrize("host", ["127.0.0.2,key=9.9.9.9,port=1", "-b", "10.0.0.5\nq", '"x"', "a=b", "x;y"])
def test_kdnet_host(host: str) -> None:
    with pytest.raises(ValidationError, match="must be a host name"):
        KdnetTarget(port=50000, key=KEY, host=host)
    smuggled = KdnetTarget(port=50000, key=KEY).model_copy(update={"host": host})
    with pytest.raises(InvalidArgument, match=r"^target_host: must be a host name"):
        build_plan(KD, smuggled)


@pytest.mark.parametrize("key", ["1.2.3.4,target=10.0.0.9", "1.2.3.4;q", "-1.2.3.4", "1.2.3.4\nq"])
def test_kdnet_key(key: str) -> None:
    with pytest.raises(ValidationError, match="four dot-separated"):
        KdnetTarget(port=50000, key=Secret(key))
    smuggled = KdnetTarget(port=50000, key=KEY).model_copy(update={"key": Secret(key)})
    with pytest.raises(InvalidArgument, match=r"^key: must be four dot-separated") as info:
        build_plan(KD, smuggled)
    assert key not in str(info.value)


def test_kdnet_port() -> None:
    smuggled = KdnetTarget(port=50000, key=KEY).model_copy(update={"port": 0})
    with pytest.raises(InvalidArgument, match=r"^port: "):
        build_plan(KD, smuggled)


@pytest.mark.parametrize("path", ["-y", "x.dmp\n-c", 'C:\\"x.dmp'])
def test_dump_path(path: str) -> None:
    with pytest.raises(ValidationError):
        DumpTarget(path=path)
    with pytest.raises(InvalidArgument, match=r"^dump path: "):
        build_plan(KD, DumpTarget(path="x.dmp").model_copy(update={"path": path}))


@pytest.mark.parametrize("connection", ["tcp:server=h,port=1 -y x", "tcp:server=-h,port=1", "-remote",
                                        "tcp:server=h,port=1,password=\"x\""])
def test_remote_connection(connection: str) -> None:
    with pytest.raises(ValidationError):
        RemoteTarget(connection=connection)
    good = RemoteTarget(connection="tcp:server=h,port=1")
    with pytest.raises(InvalidArgument, match=r"^remote connection: "):
        build_plan(KD, good.model_copy(update={"connection": connection}))


@pytest.mark.parametrize("command_line", [["-p", "1"], ["app.exe", "a\nb"], ["app.exe", 'x"y']])
def test_command_line(command_line: list[str]) -> None:
    with pytest.raises(ValidationError):
        ProcessTarget(command_line=command_line)
    good = ProcessTarget(command_line=["app.exe"])
    with pytest.raises(InvalidArgument, match=r"^command_line: "):
        build_plan(["cdb.exe"], good.model_copy(update={"command_line": command_line}))


@pytest.mark.parametrize("symbol_path", ["-c .shell calc", "srv*C:\\sym\n.shell", 'srv*"C:\\sym"'])
def test_symbol_path(symbol_path: str) -> None:
    with pytest.raises(InvalidArgument, match=r"^symbol_path: "):
        build_plan(KD, KdnetTarget(port=50000, key=KEY), symbol_path=symbol_path)


@pytest.mark.parametrize("extra", [["-c", ".shell calc"], ["-noshell\n"], ["noshell"]])
def test_extra_args(extra: list[str]) -> None:
    with pytest.raises(InvalidArgument, match=r"^extra argument \d: "):
        build_plan(KD, KdnetTarget(port=50000, key=KEY), extra_args=extra)


@pytest.mark.parametrize("debugger", [["kd.exe\n"], ["C:\\\"kd.exe"], ["python", "-m", "x\x00"]])
def test_debugger_prefix(debugger: list[str]) -> None:
    with pytest.raises(InvalidArgument, match=r"^debugger argv\[\d\]: "):
        build_plan(debugger, KdnetTarget(port=50000, key=KEY))


@pytest.mark.parametrize("scenario", ["-x", "a\nb", 'a"b'])
def test_simulator_scenario(scenario: str) -> None:
    with pytest.raises(InvalidArgument, match=r"^scenario: "):
        simulator_command("kd", scenario)


def test_good_values_still_build() -> None:
    plan = build_plan(KD, KdnetTarget(port=50000, key=KEY, host="lab-vm.example"), symbol_path="srv*C:\\sym",
                      extra_args=["-noshell"])
    assert plan.argv == ["kd.exe", "-y", "srv*C:\\sym", "-k", "net:port=50000,key=1.2.3.4,target=lab-vm.example",
                         "-noshell"]
    launched = build_plan(["cdb.exe"], ProcessTarget(command_line=["C:\\app.exe", "-x", "a b"]), initial_break=True)
    assert launched.argv == ["cdb.exe", "C:\\app.exe", "-x", "a b"]
    assert simulator_command("kd", "/tmp/x.yaml")[-2:] == ["--scenario", "/tmp/x.yaml"]


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
    launched = build_plan(cdb, ProcessTarget(command_line=["app.exe", "-x"]), extra_args=["-noshell"])
    # no initial break asked for: cdb's -g ("ignore initial breakpoint"), and the start ends running
    assert launched.argv == ["cdb.exe", "-g", "-noshell", "app.exe", "-x"]
    assert not launched.stops_at_start and launched.kind == "launched" and launched.attached_to == "app.exe -x"
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


def test_each_target_names_its_kind_and_what_it_is_attached_to():
    kd, cdb = ["kd.exe"], ["cdb.exe"]
    kinds = {
        "kdnet": build_plan(kd, KdnetTarget(port=50005, key=Secret("a.b.c.d"))),
        "local_kernel": build_plan(kd, LocalKernelTarget()),
        "kernel_dump": build_plan(kd, DumpTarget(path="C:\\MEMORY.DMP")),
        "user_dump": build_plan(cdb, DumpTarget(path="app.dmp", kernel=False)),
        "process": build_plan(cdb, ProcessTarget(pid=4242, noninvasive=True)),
        "launched": build_plan(cdb, ProcessTarget(command_line=["app.exe"]), initial_break=True),
        "remote": build_plan(kd, RemoteTarget(connection="tcp:server=h,port=5005")),
    }
    assert {kind: plan.kind for kind, plan in kinds.items()} == {kind: kind for kind in kinds}
    assert [plan.attached_to for plan in kinds.values()] == [
        "KDNET port 50005", "the local kernel", "C:\\MEMORY.DMP", "app.dmp", "pid 4242 (noninvasive)", "app.exe",
        "tcp:server=h,port=5005"]
    assert kinds["process"].noninvasive and kinds["launched"].stops_at_start


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

