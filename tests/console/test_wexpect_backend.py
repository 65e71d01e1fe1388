"""kdmcp/console/wexpect_backend.py: WexpectConsole over a fake ``wexpect`` module, plus its launcher run for real."""

from __future__ import annotations

import importlib.util
import os
import queue
import signal
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kdmcp.console import ctrl_helper
from kdmcp.console import wexpect_backend as wb
from kdmcp.console.base import Console, ConsoleClosed, ConsoleError, SpawnSpec

WAIT = 10.0
READER_PID, LAUNCHER_PID, KD_PID = 4242, 5151, 6161


class FakeEOF(Exception):
    """wexpect.EOF"""


class FakeSpawn:
    """Mimics wexpect 4.0's SpawnPipe: read_nonblocking blocks until the test feeds output."""

    instances: list[FakeSpawn] = []  # noqa: RUF012 - reset per test by the fixture

    def __init__(self, command: str, args: list[str] | None = None, **kwargs: Any) -> None:
        self.command, self.args, self.kwargs = command, list(args or []), kwargs
        self.pythonpath_at_spawn = os.environ.get("PYTHONPATH")
        self.console_pid = READER_PID
        self.child_pid = READER_PID  # as in wexpect 4.0: the reader, not the program
        self.delaybeforesend = 0.1
        self.flag_eof = False
        self.alive = True
        self.exitstatus: int | None = None
        self.sent: list[str] = []
        self.isalive_timeouts: list[float] = []
        self.disconnected = False
        self.output: queue.Queue[str | None] = queue.Queue()
        FakeSpawn.instances.append(self)

    def read_nonblocking(self, size: int = 1) -> str:
        assert size >= 1 << 20
        try:
            item = self.output.get(timeout=WAIT)
        except queue.Empty:
            item = None  # never strand the reader thread
        if item is None:
            self.flag_eof = True
            raise FakeEOF("broken pipe, bye bye")
        return item

    def send(self, s: str) -> int:
        if self.flag_eof:
            raise FakeEOF("End of file has been already detected.")
        self.sent.append(s)
        return len(s)

    def isalive(self, trust_console: bool = True, timeout: float = 0) -> bool:
        assert trust_console is False
        self.isalive_timeouts.append(timeout)
        return self.alive

    def disconnect_from_child(self) -> None:
        self.disconnected = True

    def end(self, status: int) -> None:
        self.alive, self.exitstatus = False, status
        self.output.put(None)


def fake_wexpect_module() -> types.ModuleType:
    module = types.ModuleType("wexpect")
    module.EOF = FakeEOF  # type: ignore[attr-defined]
    module.spawn = FakeSpawn  # type: ignore[attr-defined]
    return module


TREE = {READER_PID: [LAUNCHER_PID], LAUNCHER_PID: [KD_PID], KD_PID: []}


@pytest.fixture
def fake_wexpect(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    FakeSpawn.instances = []
    module = fake_wexpect_module()
    monkeypatch.setitem(sys.modules, "wexpect", module)
    monkeypatch.setattr(wb, "_pkg_resources_shimmed", False)
    yield module
    for child in FakeSpawn.instances:
        child.output.put(None)


@pytest.fixture
def console(fake_wexpect: types.ModuleType) -> Iterator[wb.WexpectConsole]:
    c = wb.WexpectConsole.spawn(
        SpawnSpec(
            argv=["kd.exe", "-k", "net:port=50000,key=1.2.3.4"], env={"_NT_SYMBOL_PATH": "srv*"}, cwd="C:\\w"
        ),
        process_children=lambda pid: TREE.get(pid, []),
    )
    yield c
    FakeSpawn.instances[-1].end(0)
    c.close()


def child() -> FakeSpawn:
    return FakeSpawn.instances[-1]


def test_spawn_runs_the_launcher_under_wexpect(console: wb.WexpectConsole) -> None:
    spawned = child()
    assert spawned.command == sys.executable
    assert spawned.args[:2] == ["-m", "kdmcp.console.wexpect_backend"]
    assert wb.decode_launch(spawned.args[2]) == (
        ["kd.exe", "-k", "net:port=50000,key=1.2.3.4"],
        {"_NT_SYMBOL_PATH": "srv*"},
    )
    assert spawned.kwargs["cwd"] == "C:\\w"
    assert spawned.delaybeforesend == 0
    assert isinstance(console, Console)
    assert console.echoes_input is True
    assert console.pid == READER_PID


def test_read_returns_scraped_text_as_bytes_then_closes(console: wb.WexpectConsole) -> None:
    child().output.put("Microsoft (R) Windows Debugger\r\n")
    child().output.put("0: kd> ")
    data = b""
    deadline = time.monotonic() + WAIT
    while not data.endswith(b"kd> ") and time.monotonic() < deadline:
        data += console.read(65536, deadline - time.monotonic())
    assert data == b"Microsoft (R) Windows Debugger\r\n0: kd> "
    assert console.read(10, 0.01) == b""
    child().output.put("bye \u00e9")
    child().end(0)
    assert console.read(65536, WAIT) == "bye \u00e9".encode()
    with pytest.raises(ConsoleClosed):
        console.read(65536, WAIT)


def test_write_turns_line_ends_into_enter(console: wb.WexpectConsole) -> None:
    console.write(b"k\n")
    console.write(b"r\r\n.echo done\n")
    assert child().sent == ["k\r", "r\r.echo done\r"]


@pytest.mark.parametrize("data", [b"\x012", b"\xff\xfe"])
def test_write_refuses_what_wexpect_would_misread(console: wb.WexpectConsole, data: bytes) -> None:
    with pytest.raises(ConsoleError):
        console.write(data)
    assert child().sent == []


def test_write_after_end_is_a_console_error(console: wb.WexpectConsole) -> None:
    child().end(0)
    with pytest.raises(ConsoleClosed):
        while True:
            console.read(65536, WAIT)
    with pytest.raises(ConsoleError):
        console.write(b"g\n")


def test_interrupt_breaks_into_kd_not_the_reader(
    console: wb.WexpectConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[list[str], dict[str, Any]]] = []

    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        calls.append((argv, kwargs))
        return subprocess.CompletedProcess(argv, 0, b"", b"")

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setenv("FOO_TOKEN", "canary")
    console.interrupt()
    argv, options = calls[0]
    assert argv == ctrl_helper.helper_argv(KD_PID, "break")
    assert "FOO_TOKEN" not in options["env"]


def test_interrupt_without_kd_is_a_console_error(fake_wexpect: types.ModuleType) -> None:
    c = wb.WexpectConsole.spawn(SpawnSpec(argv=["kd.exe"]), process_children=lambda pid: [])
    try:
        with pytest.raises(ConsoleError, match="no debugger process"):
            c.interrupt()
    finally:
        child().end(0)
        c.close()


def test_interrupt_helper_failure_is_a_console_error(
    console: wb.WexpectConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.CompletedProcess(argv, 1, b"", b"ctrl_helper: cannot attach")

    monkeypatch.setattr(subprocess, "run", run)
    with pytest.raises(ConsoleError, match="cannot attach"):
        console.interrupt()


def test_terminate_ends_kd_alone(console: wb.WexpectConsole, monkeypatch: pytest.MonkeyPatch) -> None:
    kills: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: kills.append((pid, sig)))
    console.terminate()
    assert kills == [(KD_PID, signal.SIGTERM)]


def test_terminate_force_kills_the_readers_tree(
    console: wb.WexpectConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    kills: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: kills.append((pid, sig)))
    runs: list[list[str]] = []

    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        runs.append(argv)
        return subprocess.CompletedProcess(argv, 0, b"", b"")

    monkeypatch.setattr(subprocess, "run", run)
    console.terminate(force=True)
    assert runs == [["taskkill", "/T", "/F", "/PID", str(READER_PID)]]
    assert kills == []


def test_terminate_force_failure_is_a_console_error(
    console: wb.WexpectConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.CompletedProcess(argv, 1, b"ERROR", b"")

    monkeypatch.setattr(subprocess, "run", run)
    with pytest.raises(ConsoleError):
        console.terminate(force=True)


def test_terminate_after_exit_does_nothing(
    console: wb.WexpectConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("nothing should be killed")

    monkeypatch.setattr(os, "kill", fail)
    monkeypatch.setattr(subprocess, "run", fail)
    child().end(0)
    console.terminate(force=True)


def test_exit_status_mapping(console: wb.WexpectConsole) -> None:
    assert console.is_alive()
    assert console.exit_status() is None
    assert console.wait(0.25) is None
    assert child().isalive_timeouts[-1] == 0.25
    child().end(3)
    assert not console.is_alive()
    assert console.exit_status() == 3
    assert console.wait(WAIT) == 3


def test_close_disconnects_after_the_reader_ends(console: wb.WexpectConsole) -> None:
    child().end(0)
    console.close()
    assert child().disconnected


def test_console_input() -> None:
    assert wb.console_input(b"dt nt!_EPROCESS\n") == "dt nt!_EPROCESS\r"
    assert wb.console_input("r \u00e9\n".encode()) == "r \u00e9\r"


# -- importing wexpect ---------------------------------------------------------------------


def test_missing_wexpect_is_a_clear_console_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wexpect", None)
    with pytest.raises(ConsoleError, match="pip install wexpect"):
        wb.WexpectConsole.spawn(SpawnSpec(argv=["kd.exe"]))


def test_broken_wexpect_dependency_is_a_console_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "wexpect"
    package.mkdir()
    (package / "__init__.py").write_text("import pywintypes_that_is_missing\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "wexpect", raising=False)
    with pytest.raises(ConsoleError, match="cannot import wexpect"):
        wb.import_wexpect()


WEXPECT_40_LIKE = """
import pkg_resources

class EOF(Exception):
    pass

class spawn:
    def __init__(self, command, args=(), **kwargs):
        import os
        self.pythonpath = os.environ.get("PYTHONPATH")
        self.console_pid = 4242
        self.flag_eof = True

    def read_nonblocking(self, size=1):
        raise EOF("done")

    def isalive(self, trust_console=True, timeout=0):
        return False

    exitstatus = 0

try:
    __version__ = pkg_resources.require("wexpect")[0].version
except Exception:
    __version__ = "0.0.1.unkowndev0"
"""


@pytest.fixture
def wexpect_without_pkg_resources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A wexpect whose ``import pkg_resources`` fails, as with setuptools >= 82."""
    package = tmp_path / "site" / "wexpect"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(WEXPECT_40_LIKE))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "wexpect", raising=False)
    monkeypatch.setitem(sys.modules, "pkg_resources", None)  # import raises ModuleNotFoundError
    monkeypatch.setattr(wb, "_pkg_resources_shimmed", False)
    monkeypatch.setattr(wb, "_reader_shim_dir", None)
    return tmp_path


def test_pkg_resources_is_stood_in_for(wexpect_without_pkg_resources: Path) -> None:
    wexpect = wb.import_wexpect()
    assert wexpect.__version__ == "0.0.1.unkowndev0"
    with pytest.raises(LookupError):
        sys.modules["pkg_resources"].require("wexpect")


def test_reader_process_finds_the_stand_in_on_pythonpath(
    wexpect_without_pkg_resources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", "/already/there")
    c = wb.WexpectConsole.spawn(SpawnSpec(argv=["kd.exe"]), process_children=lambda pid: [])
    shim_dir = wb.reader_shim_dir()
    assert c._child.pythonpath == os.pathsep.join(["/already/there", shim_dir])
    assert os.environ["PYTHONPATH"] == "/already/there"  # restored after the spawn
    with pytest.raises(ConsoleClosed):
        c.read(10, WAIT)
    c.close()
    # The file the reader process imports behaves like the in-process stand-in.
    spec = importlib.util.spec_from_file_location(
        "shim_pkg_resources", os.path.join(shim_dir, "pkg_resources.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(LookupError):
        module.require("wexpect")


def test_pythonpath_untouched_when_pkg_resources_exists(fake_wexpect: types.ModuleType) -> None:
    before = os.environ.get("PYTHONPATH")
    c = wb.WexpectConsole.spawn(SpawnSpec(argv=["kd.exe"]), process_children=lambda pid: [])
    assert child().pythonpath_at_spawn == before
    child().end(0)
    c.close()


# -- the launcher, for real ----------------------------------------------------------------

LAUNCHED = """
import os, sys
token, extra = os.environ.get("FOO_TOKEN"), os.environ.get("KDMCP_EXTRA")
print("FOO_TOKEN=%s KDMCP_EXTRA=%s" % (token, extra), flush=True)
sys.exit(3)
"""


def run_launcher(payload: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "kdmcp.console.wexpect_backend", payload],
        capture_output=True,
        env=env,
        timeout=WAIT,
        check=False,
    )


@pytest.mark.process
def test_launcher_scrubs_the_environment_and_passes_the_exit_status() -> None:
    payload = wb.encode_launch([sys.executable, "-c", LAUNCHED], {"KDMCP_EXTRA": "x y"})
    assert payload.replace("-", "").replace("_", "").isalnum()  # survives wexpect's quoting
    completed = run_launcher(payload, {**os.environ, "FOO_TOKEN": "canary"})
    assert completed.stdout.strip() == b"FOO_TOKEN=None KDMCP_EXTRA=x y"
    assert completed.returncode == 3


@pytest.mark.process
def test_launcher_reports_a_missing_program() -> None:
    completed = run_launcher(wb.encode_launch(["/nonexistent/kd.exe"], {}), dict(os.environ))
    assert completed.returncode == wb.LAUNCH_FAILED_EXIT
    assert b"cannot start '/nonexistent/kd.exe'" in completed.stderr


@pytest.mark.parametrize("args", [[], ["!!!"], [wb.encode_launch([], {})], ["a", "b"]])
def test_launcher_rejects_bad_payloads(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert wb.launch_main(args) == 2
    assert capsys.readouterr().err


def test_launch_payload_round_trip() -> None:
    argv = ["C:\\Program Files\\kd.exe", "-c", '"quoted" and \\trailing\\', "é"]
    assert wb.decode_launch(wb.encode_launch(argv, {"A": "1"})) == (argv, {"A": "1"})
