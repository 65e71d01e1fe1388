"""kdmcp/console/win32.py (and the Windows paths of ctrl_helper and pipe_backend),
run on any OS with fakes of kernel32, subprocess and os.kill."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from kdmcp.console import ctrl_helper, lifetime, pipe_backend, win32
from kdmcp.console.base import ConsoleClosed, ConsoleError, SpawnSpec

WAIT = 10.0


class FakeKernel32:
    """Records every kernel32 call in order; ``fail`` names calls that return FALSE."""

    def __init__(self, *, window: int = 0, processes: int = 0, fail: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.window = window
        self.processes = processes
        self.fail = fail

    def _result(self, name: str, *args: Any) -> int:
        self.calls.append((name, *args))
        return 0 if name in self.fail else 1

    def AttachConsole(self, process_id: int, /) -> int:
        return self._result("AttachConsole", process_id)

    def FreeConsole(self) -> int:
        return self._result("FreeConsole")

    def SetConsoleCtrlHandler(self, handler: Any, add: int, /) -> int:
        return self._result("SetConsoleCtrlHandler", handler, add)

    def GenerateConsoleCtrlEvent(self, ctrl_event: int, process_group_id: int, /) -> int:
        return self._result("GenerateConsoleCtrlEvent", ctrl_event, process_group_id)

    def GetConsoleProcessList(self, process_list: Any, count: int, /) -> int:
        self.calls.append(("GetConsoleProcessList", count))
        return self.processes

    def GetConsoleWindow(self) -> Any:
        self.calls.append(("GetConsoleWindow",))
        return self.window or None

    def last_error(self) -> int:
        return 5  # ERROR_ACCESS_DENIED


class Completed:
    def __init__(self, returncode: int, stdout: bytes = b"", stderr: bytes = b"") -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


class FakeRun:
    """Stands in for subprocess.run: records argv and options, answers with ``result``."""

    def __init__(self, result: Completed | BaseException | None = None) -> None:
        self.calls: list[tuple[list[str], dict[str, Any]]] = []
        self.result = result if result is not None else Completed(0)

    def __call__(self, argv: list[str], **kwargs: Any) -> Completed:
        self.calls.append((list(argv), kwargs))
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


# -- win32 wrappers ------------------------------------------------------------------------


def test_has_console_trusts_a_window_first() -> None:
    k = FakeKernel32(window=0x1234)
    assert win32.has_console(k)
    assert k.calls == [("GetConsoleWindow",)]


def test_has_console_counts_processes_when_there_is_no_window() -> None:
    assert win32.has_console(FakeKernel32(processes=2))
    k = FakeKernel32(processes=0)
    assert not win32.has_console(k)
    assert k.calls == [("GetConsoleWindow",), ("GetConsoleProcessList", 1)]


def test_failed_call_raises_with_last_error() -> None:
    with pytest.raises(win32.Win32Error) as info:
        win32.attach_console(77, FakeKernel32(fail=("AttachConsole",)))
    assert info.value.winerror == 5
    assert info.value.function == "AttachConsole"


def test_load_kernel32_is_windows_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(win32, "_kernel32", None)
    monkeypatch.setattr(sys, "platform", "linux")
    with pytest.raises(OSError, match="only on Windows"):
        win32.load_kernel32()


def test_ctypes_kernel32_declares_types_and_forwards(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real wrapper, over a fake WinDLL: argument types declared, calls forwarded."""

    class Function:
        def __init__(self, name: str, log: list[tuple[Any, ...]]) -> None:
            self.name, self.log = name, log
            self.argtypes: list[Any] | None = None
            self.restype: Any = None

        def __call__(self, *args: Any) -> int:
            self.log.append((self.name, *args))
            return 1

    class FakeDll:
        def __init__(self, name: str, use_last_error: bool) -> None:
            assert (name, use_last_error) == ("kernel32", True)
            self.log: list[tuple[Any, ...]] = []
            for function in (
                "AttachConsole",
                "FreeConsole",
                "SetConsoleCtrlHandler",
                "GenerateConsoleCtrlEvent",
                "GetConsoleProcessList",
                "GetConsoleWindow",
            ):
                setattr(self, function, Function(function, self.log))

    monkeypatch.setattr(ctypes, "WinDLL", FakeDll, raising=False)
    monkeypatch.setattr(ctypes, "get_last_error", lambda: 87, raising=False)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(win32, "_kernel32", None)
    k = win32.load_kernel32()
    assert win32.load_kernel32() is k  # loaded once
    dll: Any = k._dll
    assert dll.AttachConsole.argtypes == [ctypes.c_uint32]
    assert dll.GenerateConsoleCtrlEvent.argtypes == [ctypes.c_uint32, ctypes.c_uint32]
    assert dll.GetConsoleWindow.restype is ctypes.c_void_p
    win32.attach_console(42)
    win32.ignore_ctrl_c()
    win32.generate_ctrl_event(win32.CTRL_BREAK_EVENT, 42)
    assert dll.log == [
        ("AttachConsole", 42),
        ("SetConsoleCtrlHandler", None, 1),
        ("GenerateConsoleCtrlEvent", 1, 42),
    ]
    assert k.last_error() == 87


def test_kill_process_tree_runs_taskkill(monkeypatch: pytest.MonkeyPatch) -> None:
    run = FakeRun()
    monkeypatch.setattr(subprocess, "run", run)
    assert win32.kill_process_tree(4321)
    argv, options = run.calls[0]
    assert argv == ["taskkill", "/T", "/F", "/PID", "4321"]
    assert options["creationflags"] == win32.CREATE_NO_WINDOW
    assert options["timeout"] > 0


@pytest.mark.parametrize(
    "result", [Completed(128, stdout=b"ERROR: not found"), FileNotFoundError("taskkill")]
)
def test_kill_process_tree_reports_failure(monkeypatch: pytest.MonkeyPatch, result: Any) -> None:
    monkeypatch.setattr(subprocess, "run", FakeRun(result))
    assert not win32.kill_process_tree(4321)


# -- ctrl_helper ---------------------------------------------------------------------------


def test_helper_break_sequence() -> None:
    k = FakeKernel32()
    assert ctrl_helper.main(["1234", "break"], kernel32=k) == 0
    assert k.calls == [
        ("FreeConsole",),
        ("AttachConsole", 1234),
        ("SetConsoleCtrlHandler", None, 1),
        ("GenerateConsoleCtrlEvent", win32.CTRL_BREAK_EVENT, 1234),
    ]


def test_helper_defaults_to_break() -> None:
    k = FakeKernel32()
    assert ctrl_helper.main(["99"], kernel32=k) == 0
    assert k.calls[-1] == ("GenerateConsoleCtrlEvent", win32.CTRL_BREAK_EVENT, 99)


def test_helper_ctrl_c_goes_to_the_whole_console() -> None:
    k = FakeKernel32()
    assert ctrl_helper.main(["1234", "c"], kernel32=k) == 0
    assert k.calls[-1] == ("GenerateConsoleCtrlEvent", win32.CTRL_C_EVENT, 0)


def test_helper_without_a_console_of_its_own_carries_on() -> None:
    k = FakeKernel32(fail=("FreeConsole",))
    assert ctrl_helper.main(["1234"], kernel32=k) == 0
    assert [c[0] for c in k.calls] == [
        "FreeConsole",
        "AttachConsole",
        "SetConsoleCtrlHandler",
        "GenerateConsoleCtrlEvent",
    ]


@pytest.mark.parametrize(
    ("failing", "calls_made", "message"),
    [
        ("AttachConsole", ["FreeConsole", "AttachConsole"], "cannot attach to the console of process 1234"),
        (
            "SetConsoleCtrlHandler",
            ["FreeConsole", "AttachConsole", "SetConsoleCtrlHandler"],
            "cannot deliver break to process 1234",
        ),
        (
            "GenerateConsoleCtrlEvent",
            ["FreeConsole", "AttachConsole", "SetConsoleCtrlHandler", "GenerateConsoleCtrlEvent"],
            "cannot deliver break to process 1234",
        ),
    ],
)
def test_helper_failures_exit_1_with_a_message(
    capsys: pytest.CaptureFixture[str], failing: str, calls_made: list[str], message: str
) -> None:
    k = FakeKernel32(fail=(failing,))
    assert ctrl_helper.main(["1234", "break"], kernel32=k) == 1
    assert [c[0] for c in k.calls] == calls_made
    err = capsys.readouterr().err
    assert message in err
    assert "Windows error 5" in err


@pytest.mark.parametrize("argv", [[], ["abc"], ["0"], ["-5"], ["12", "sideways"], ["1", "break", "extra"]])
def test_helper_usage_errors_touch_nothing(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    k = FakeKernel32()
    assert ctrl_helper.main(argv, kernel32=k) == 1
    assert k.calls == []
    assert capsys.readouterr().err.startswith("ctrl_helper: ")


@pytest.mark.process
def test_helper_runs_as_a_module_and_fails_cleanly_off_windows() -> None:
    if sys.platform == "win32":
        pytest.skip("on Windows this would really send Ctrl+Break")
    completed = subprocess.run(
        [sys.executable, "-m", "kdmcp.console.ctrl_helper", "1234", "break"],
        capture_output=True,
        timeout=WAIT,
        check=False,
    )
    assert completed.returncode == 1
    assert b"only on Windows" in completed.stderr


def test_helper_argv() -> None:
    assert ctrl_helper.helper_argv(1234) == [
        sys.executable,
        "-m",
        "kdmcp.console.ctrl_helper",
        "1234",
        "break",
    ]
    assert ctrl_helper.helper_argv(7, "c")[-2:] == ["7", "c"]
    with pytest.raises(ValueError):
        ctrl_helper.helper_argv(7, "sigint")


def test_send_ctrl_event_runs_the_helper_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    run = FakeRun()
    monkeypatch.setattr(subprocess, "run", run)
    ctrl_helper.send_ctrl_event(1234, "break", env={"PATH": "x"}, timeout=3.0)
    argv, options = run.calls[0]
    assert argv == ctrl_helper.helper_argv(1234, "break")
    assert options["creationflags"] == win32.CREATE_NO_WINDOW
    assert options["env"] == {"PATH": "x"}
    assert options["timeout"] == 3.0


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (Completed(1, stderr=b"ctrl_helper: cannot attach"), "exited 1: ctrl_helper: cannot attach"),
        (subprocess.TimeoutExpired(["x"], 3.0), "did not finish within 3 s"),
        (FileNotFoundError("python"), "cannot run the console control helper"),
    ],
)
def test_send_ctrl_event_failures(monkeypatch: pytest.MonkeyPatch, result: Any, message: str) -> None:
    monkeypatch.setattr(subprocess, "run", FakeRun(result))
    with pytest.raises(RuntimeError, match=message):
        ctrl_helper.send_ctrl_event(1234, "break", env={}, timeout=3.0)


# -- PipeConsole on "Windows" --------------------------------------------------------------


class FakePopen:
    """A Popen whose stdin/stdout are real OS pipes the test holds the other ends of."""

    instances: ClassVar[list[FakePopen]] = []

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        self.argv, self.kwargs = argv, kwargs
        self.pid = 4242
        self._handle = 0x5150  # the process handle Popen keeps (AssignProcessToJobObject takes it)
        self.returncode: int | None = None
        self.actions: list[str] = []
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        self.stdin = open(in_w, "wb", buffering=0)  # noqa: SIM115 - closed by the console
        self.stdout = open(out_r, "rb", buffering=0)  # noqa: SIM115 - closed by the console
        self.child_stdin = open(in_r, "rb", buffering=0)  # noqa: SIM115 - closed by the fixture
        self.child_stdout = open(out_w, "wb", buffering=0)  # noqa: SIM115 - closed by the fixture
        FakePopen.instances.append(self)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.argv, timeout or 0)
        return self.returncode

    def terminate(self) -> None:
        self.actions.append("terminate")
        self.returncode = 1

    def kill(self) -> None:
        self.actions.append("kill")
        self.returncode = 1

    def exit(self, code: int) -> None:
        """The child ends: its end of stdout closes."""
        self.returncode = code
        if not self.child_stdout.closed:
            self.child_stdout.close()


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """sys.platform is "win32" and Popen is fake for the duration of the test."""
    FakePopen.instances = []
    monkeypatch.setattr(pipe_backend.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(sys, "platform", "win32")
    yield
    monkeypatch.undo()  # restore the real platform before the pipes are released
    for fake in FakePopen.instances:
        fake.exit(fake.returncode if fake.returncode is not None else 0)
        fake.child_stdin.close()


class FakeJobKernel32:
    """kernel32's job calls, recorded; ``fail`` names calls that return FALSE."""

    def __init__(self, fail: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail
        self.limit_flags: int | None = None

    def _result(self, name: str, *args: Any) -> int:
        self.calls.append((name, *args))
        return 0 if name in self.fail else 1

    def CreateJobObjectW(self, attributes: Any, name: Any, /) -> int:
        self.calls.append(("CreateJobObjectW", attributes, name))
        return 0 if "CreateJobObjectW" in self.fail else 0x70B

    def SetInformationJobObject(self, job: int, info_class: int, info: Any, size: int, /) -> int:
        limits = ctypes.cast(info, ctypes.POINTER(win32.JOBOBJECT_EXTENDED_LIMIT_INFORMATION)).contents
        self.limit_flags = limits.BasicLimitInformation.LimitFlags
        return self._result("SetInformationJobObject", job, info_class, size)

    def AssignProcessToJobObject(self, job: int, process: int, /) -> int:
        return self._result("AssignProcessToJobObject", job, process)

    def CloseHandle(self, handle: int, /) -> int:
        return self._result("CloseHandle", handle)

    def last_error(self) -> int:
        return 5  # ERROR_ACCESS_DENIED


def spawn_windows(k: FakeKernel32, env: dict[str, str] | None = None,
                  job: FakeJobKernel32 | None = None) -> pipe_backend.PipeConsole:
    return pipe_backend.PipeConsole.spawn(
        SpawnSpec(argv=["kd.exe", "-k", "net:port=1"], env=env or {}), kernel32=k,
        job=lifetime.KillOnCloseJob(job or FakeJobKernel32()),
    )


def finish(console: pipe_backend.PipeConsole) -> None:
    FakePopen.instances[-1].exit(0)
    console.close()


def test_spawn_sharing_a_console_uses_a_new_process_group(
    windows: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KDMCP_LISTEN_TOKEN", "canary")
    console = spawn_windows(FakeKernel32(window=0x1234), env={"_NT_SYMBOL_PATH": "srv*C:\\sym"})
    fake = FakePopen.instances[-1]
    assert fake.argv == ["kd.exe", "-k", "net:port=1"]
    assert fake.kwargs["creationflags"] == win32.CREATE_NEW_PROCESS_GROUP
    assert "start_new_session" not in fake.kwargs
    assert fake.kwargs["stdin"] == subprocess.PIPE
    assert fake.kwargs["stdout"] == subprocess.PIPE
    assert fake.kwargs["stderr"] == subprocess.STDOUT
    assert fake.kwargs["bufsize"] == 0
    assert fake.kwargs["env"]["_NT_SYMBOL_PATH"] == "srv*C:\\sym"
    assert "KDMCP_LISTEN_TOKEN" not in fake.kwargs["env"]
    finish(console)


def test_spawn_without_a_console_hides_the_childs_own(windows: None) -> None:
    console = spawn_windows(FakeKernel32(processes=0))
    flags = FakePopen.instances[-1].kwargs["creationflags"]
    assert flags == win32.CREATE_NEW_PROCESS_GROUP | win32.CREATE_NO_WINDOW
    finish(console)


def test_io_through_the_fake_pipes(windows: None) -> None:
    console = spawn_windows(FakeKernel32(window=1))
    fake = FakePopen.instances[-1]
    console.write(b"k\n")
    assert fake.child_stdin.read(2) == b"k\n"
    fake.child_stdout.write(b"0: kd> ")
    assert console.read(100, WAIT) == b"0: kd> "
    fake.exit(0)
    with pytest.raises(ConsoleClosed):
        console.read(100, WAIT)
    console.close()


def test_interrupt_sharing_a_console_sends_ctrl_break_to_the_group(
    windows: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    kills: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: kills.append((pid, sig)))
    run = FakeRun()
    monkeypatch.setattr(subprocess, "run", run)
    console = spawn_windows(FakeKernel32(window=1))
    console.interrupt()
    assert kills == [(4242, win32.CTRL_BREAK_EVENT)]
    assert run.calls == []
    finish(console)


def test_interrupt_without_a_console_runs_the_helper(windows: None, monkeypatch: pytest.MonkeyPatch) -> None:
    kills: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: kills.append((pid, sig)))
    monkeypatch.setenv("FOO_TOKEN", "canary")
    run = FakeRun()
    monkeypatch.setattr(subprocess, "run", run)
    console = spawn_windows(FakeKernel32(processes=0))
    console.interrupt()
    assert kills == []
    argv, options = run.calls[0]
    assert argv == [sys.executable, "-m", "kdmcp.console.ctrl_helper", "4242", "break"]
    assert options["creationflags"] == win32.CREATE_NO_WINDOW
    assert "FOO_TOKEN" not in options["env"]
    finish(console)


def test_interrupt_helper_failure_is_a_console_error(windows: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "run", FakeRun(Completed(1, stderr=b"ctrl_helper: cannot attach")))
    console = spawn_windows(FakeKernel32(processes=0))
    with pytest.raises(ConsoleError, match="cannot attach"):
        console.interrupt()
    finish(console)


def test_terminate_force_kills_the_tree_with_taskkill(windows: None, monkeypatch: pytest.MonkeyPatch) -> None:
    run = FakeRun()
    monkeypatch.setattr(subprocess, "run", run)
    console = spawn_windows(FakeKernel32(window=1))
    console.terminate(force=True)
    assert [argv for argv, _ in run.calls] == [["taskkill", "/T", "/F", "/PID", "4242"]]
    assert FakePopen.instances[-1].actions == []
    finish(console)


def test_terminate_force_falls_back_when_taskkill_fails(
    windows: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subprocess, "run", FakeRun(Completed(1, stdout=b"Access denied")))
    console = spawn_windows(FakeKernel32(window=1))
    console.terminate(force=True)
    assert FakePopen.instances[-1].actions == ["terminate"]
    finish(console)


def test_terminate_without_force_is_popen_terminate(windows: None, monkeypatch: pytest.MonkeyPatch) -> None:
    run = FakeRun()
    monkeypatch.setattr(subprocess, "run", run)
    console = spawn_windows(FakeKernel32(window=1))
    console.terminate()
    assert FakePopen.instances[-1].actions == ["terminate"]
    assert run.calls == []
    console.terminate()  # already ended: nothing more
    assert FakePopen.instances[-1].actions == ["terminate"]
    finish(console)


def test_windows_creationflags() -> None:
    assert pipe_backend.windows_creationflags(shares_console=True) == 0x200
    assert pipe_backend.windows_creationflags(shares_console=False) == 0x200 | 0x08000000


# ------------------------------------------------------------------ the kill-on-close job


def test_the_job_kills_its_processes_when_its_last_handle_closes() -> None:
    k = FakeJobKernel32()
    job = lifetime.KillOnCloseJob(k)
    assert job.handle == 0x70B and k.calls[0] == ("CreateJobObjectW", None, None)  # not inheritable
    size = ctypes.sizeof(win32.JOBOBJECT_EXTENDED_LIMIT_INFORMATION)
    assert k.calls[1] == ("SetInformationJobObject", 0x70B, 9, size)  # JobObjectExtendedLimitInformation
    assert k.limit_flags == win32.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE == 0x2000
    if ctypes.sizeof(ctypes.c_void_p) == 8:
        assert size == 144  # winnt.h's layout on x64
    job.assign(0x5150)
    assert k.calls[-1] == ("AssignProcessToJobObject", 0x70B, 0x5150)


def test_a_job_windows_refuses_is_an_error_and_not_left_open() -> None:
    with pytest.raises(win32.Win32Error, match="CreateJobObjectW"):
        lifetime.KillOnCloseJob(FakeJobKernel32(fail=("CreateJobObjectW",)))
    k = FakeJobKernel32(fail=("SetInformationJobObject",))
    with pytest.raises(win32.Win32Error, match="SetInformationJobObject"):
        lifetime.KillOnCloseJob(k)
    assert k.calls[-1] == ("CloseHandle", 0x70B)


def test_every_debugger_joins_the_job_as_it_starts(windows: None) -> None:
    k = FakeJobKernel32()
    console = spawn_windows(FakeKernel32(window=1), job=k)
    assert ("AssignProcessToJobObject", 0x70B, 0x5150) in k.calls
    assert FakePopen.instances[-1].kwargs["preexec_fn"] is None  # Windows has none: the job does it
    finish(console)


def test_a_debugger_the_job_cannot_take_still_starts_and_says_so(windows: None,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    console = spawn_windows(FakeKernel32(window=1), job=FakeJobKernel32(fail=("AssignProcessToJobObject",)))
    assert console.pid == 4242
    assert "not in a kill-on-close job" in caplog.text
    finish(console)


# ------------------------------------------------------------------ the server's console events


@pytest.mark.parametrize(("event", "name", "ending"), [
    (win32.CTRL_C_EVENT, "Ctrl+C", False), (win32.CTRL_BREAK_EVENT, "Ctrl+Break", False),
    (win32.CTRL_CLOSE_EVENT, "console closed", True), (win32.CTRL_LOGOFF_EVENT, "logoff", True),
    (win32.CTRL_SHUTDOWN_EVENT, "system shutdown", True),
])
def test_the_ctrl_handler_hands_each_event_on_and_says_handled(event: int, name: str, ending: bool) -> None:
    k = FakeKernel32()
    heard: list[tuple[str, bool]] = []
    callback = win32.install_ctrl_handler(lambda n, e: heard.append((n, e)), k)
    assert k.calls == [("SetConsoleCtrlHandler", callback, 1)]
    assert callback(event) == 1  # TRUE: handled, the default handler (ExitProcess) never runs
    assert heard == [(name, ending)]


def test_a_failing_event_handler_still_answers_handled() -> None:
    def boom(name: str, ending: bool) -> None:
        raise RuntimeError("no")

    callback = win32.install_ctrl_handler(boom, FakeKernel32())
    assert callback(win32.CTRL_CLOSE_EVENT) == 1


def test_a_refused_registration_is_an_error() -> None:
    with pytest.raises(win32.Win32Error, match="SetConsoleCtrlHandler"):
        win32.install_ctrl_handler(lambda n, e: None, FakeKernel32(fail=("SetConsoleCtrlHandler",)))
