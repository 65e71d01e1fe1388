"""The checks of ``kd-mcp selftest``, each run through the engine on one console backend.

Each check answers one question the simulator cannot (docs/architecture.md, "Known caveats"),
and reports a figure with its verdict, so a report from a machine that fails says how it fails:
a prompt not recognised, a marker that never came, a capture cut short, an answer held back in
a pipe buffer, a break that did not arrive.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kdmcp.console import BackendName, Console, SpawnSpec, open_console
from kdmcp.engine import DebuggerSession, SessionConfig, SessionManager, SessionState
from kdmcp.engine.launch import LaunchPlan
from kdmcp.errors import KdMcpError

__all__ = ["CAPTURE_LINE", "CAPTURE_LINES", "Check", "no_console_factory", "run_checks"]

# 16384 lines of 64 bytes (63 + newline; 65 with CR LF): 1 MiB or a little more. A .for of .echo
# needs no target memory or symbols, so it is the same 1 MB on a dump, a process and a kernel.
CAPTURE_LINE = "0123456789abcdef" * 3 + "0123456789abcde"
CAPTURE_LINES = 16384
_CAPTURE_COMMAND = (f".for (r $t0 = 0; @$t0 < 0n{CAPTURE_LINES}; r $t0 = @$t0 + 1) "
                    f"{{ .echo {CAPTURE_LINE} }}")
_ROUND_TRIPS = 10
_ROUND_TRIP_TIMEOUT_S = 5.0  # an answer held in a pipe buffer never comes: this ends the wait
_CAPTURE_TIMEOUT_S = 120.0
_BREAK_ROUNDS = 3
# Output that looks like a prompt: the command must still end at its marker, not here.
_LOOKALIKES = ("0:000> looks like a prompt", "1: kd> looks like a prompt", "kd> ")

ConsoleFactory = Callable[[SpawnSpec, BackendName], Console]


@dataclass(frozen=True)
class Check:
    """One verdict: ``ok`` is None when the check does not apply (a dump cannot run)."""

    name: str
    variant: str
    ok: bool | None
    figures: str

    def line(self) -> str:
        mark = {True: "PASS", False: "FAIL", None: "SKIP"}[self.ok]
        return f"{mark}  {self.name} [{self.variant}]: {self.figures}"


def run_checks(
    plan: LaunchPlan, variant: str, backend: BackendName, factory: ConsoleFactory = open_console, *, full: bool
) -> Iterator[Check]:
    """Start one session on ``backend`` and check it; ``full`` adds the backend-independent checks.

    A generator, so the report shows each verdict as it is reached (a hang shows where it is).
    """
    config = SessionConfig(startup_timeout=60.0, command_timeout=30.0, break_timeout=10.0, stop_timeout=15.0,
                           backend=backend)
    manager = SessionManager(config, max_sessions=1, console_factory=factory)
    try:
        session = manager.create(plan)
        start = _check(variant, "start and prompt detection", lambda: _start(session, plan))
        yield start
        if not start.ok:
            return
        name = "pipe buffering (answers not held back)" if backend == "pipe" else "command round trip"
        yield _check(variant, name, lambda: _round_trips(session))
        if full:
            yield _check(variant, "marker completion", lambda: _markers(session))
            yield _check(variant, "1 MB capture", lambda: _capture(session))
        if plan.stops_at_start and "-z" in plan.argv:
            yield Check("continue and break-in", variant, None, "a dump cannot run")
        else:
            yield from _break_rounds(session, variant)
        yield _check(variant, "stop", lambda: _stop(manager, session))
    finally:
        manager.stop_all()


def _check(variant: str, name: str, run: Callable[[], tuple[bool, str]]) -> Check:
    try:
        ok, figures = run()
    except KdMcpError as exc:
        ok, figures = False, f"{exc.category}: {exc.message}"
    return Check(name, variant, ok, figures)


def _start(session: DebuggerSession, plan: LaunchPlan) -> tuple[bool, str]:
    result = session.start()
    took = f"started in {result.elapsed_ms:.0f} ms"
    if not plan.stops_at_start and result.state == SessionState.running:
        # A KDNET guest runs once connected: its first prompt comes from a break-in.
        brk = session.break_in()
        took += f", connected; first break-in {brk.elapsed_ms:.0f} ms"
    if session.state != SessionState.broken or session.prompt is None:
        tail = result.banner[-300:].replace("\r", "").replace("\n", " | ")
        return False, f"{took}, no prompt recognised (state {session.state.value}); output ends: {tail!r}"
    return True, f"{took}, prompt {session.prompt.text!r}"


def _round_trips(session: DebuggerSession) -> tuple[bool, str]:
    times: list[float] = []
    for n in range(_ROUND_TRIPS):
        expected = f"kdmcp-selftest-{n}"
        result = session.execute(f".echo {expected}", timeout=_ROUND_TRIP_TIMEOUT_S)
        if result.output.strip() != expected:
            return False, f"command {n}: expected {expected!r}, got {result.output[:200]!r}"
        times.append(result.elapsed_ms)
    return True, (f"{_ROUND_TRIPS} commands, median {statistics.median(times):.1f} ms, max {max(times):.1f} ms "
                  f"({_ROUND_TRIP_TIMEOUT_S:g} s allowed each)")


def _markers(session: DebuggerSession) -> tuple[bool, str]:
    """Output that looks like a prompt must not end a command, and no output may leak to the next."""
    for text in _LOOKALIKES:
        result = session.execute(f".echo {text}")
        if result.output.strip() != text.strip():
            return False, f"{text!r} came back as {result.output[:200]!r}"
        after = session.execute(".echo after")
        if after.output.strip() != "after":
            return False, f"after {text!r}, the next command read {after.output[:200]!r}"
    version = session.execute("version")
    lines = [line.strip() for line in version.output.splitlines()]
    versions = [line for line in lines if "Debugger Version" in line] or [line for line in lines if "Version" in line]
    first = versions[0] if versions else ""
    if not first:
        return False, f"version printed no version line: {version.output[:200]!r}"
    return True, f"{len(_LOOKALIKES)} prompt lookalikes ended by the marker; {first}"


def _capture(session: DebuggerSession) -> tuple[bool, str]:
    t0 = time.monotonic()
    result = session.execute(_CAPTURE_COMMAND, timeout=_CAPTURE_TIMEOUT_S)
    seconds = time.monotonic() - t0
    size = result.output_end - result.output_offset
    raw = session.read_output(result.output_offset, size)
    lines = sum(1 for line in raw.decode("utf-8", errors="replace").splitlines() if line.strip() == CAPTURE_LINE)
    figures = (f"{size:,} bytes, {lines}/{CAPTURE_LINES} lines in {seconds:.2f} s "
               f"({size / 1_048_576 / max(seconds, 1e-6):.1f} MB/s)")
    return lines == CAPTURE_LINES and size >= CAPTURE_LINES * len(CAPTURE_LINE), figures


def _break_rounds(session: DebuggerSession, variant: str) -> Iterator[Check]:
    go_ms: list[float] = []
    break_ms: list[float] = []
    problem: str | None = None
    for n in range(_BREAK_ROUNDS):
        try:
            go = session.go("g")
            if go.confirmed != "running":
                problem = f"round {n + 1}: g did not leave the target running (it stopped again: {go.state.value})"
                break
            go_ms.append(go.elapsed_ms)
            brk = session.break_in()
            break_ms.append(brk.elapsed_ms)
        except KdMcpError as exc:
            problem = f"round {n + 1}: {exc.category}: {exc.message}"
            break
    yield Check("continue latency", variant, problem is None or len(go_ms) == _BREAK_ROUNDS,
                _figures(go_ms, "resumed") + ("" if len(go_ms) == _BREAK_ROUNDS else f"; {problem}"))
    yield Check("break-in (console break delivery) latency", variant, problem is None,
                _figures(break_ms, "broke in") + ("" if problem is None else f"; {problem}"))


def _figures(times: list[float], what: str) -> str:
    if not times:
        return f"0/{_BREAK_ROUNDS} {what}"
    return (f"{len(times)}/{_BREAK_ROUNDS} {what}, median {statistics.median(times):.0f} ms, "
            f"max {max(times):.0f} ms")


def _stop(manager: SessionManager, session: DebuggerSession) -> tuple[bool, str]:
    result = manager.stop(session.session_id)
    actions = ", ".join(result.actions) or "nothing to do"
    figures = f"{actions}; exit code {result.exit_code}, {result.elapsed_ms:.0f} ms"
    return result.state == SessionState.exited, figures


class _NoConsoleKernel32:
    """kernel32 as a server started by a GUI MCP client sees it: no console to share.

    So ``PipeConsole`` starts kd with a hidden console of its own and breaks in through
    ``ctrl_helper``, the path a terminal user would otherwise never exercise.
    """

    def __init__(self, real: Any) -> None:
        self._real = real

    def AttachConsole(self, process_id: int, /) -> int:
        return int(self._real.AttachConsole(process_id))

    def FreeConsole(self) -> int:
        return int(self._real.FreeConsole())

    def SetConsoleCtrlHandler(self, handler: Any, add: int, /) -> int:
        return int(self._real.SetConsoleCtrlHandler(handler, add))

    def GenerateConsoleCtrlEvent(self, ctrl_event: int, process_group_id: int, /) -> int:
        return int(self._real.GenerateConsoleCtrlEvent(ctrl_event, process_group_id))

    def GetConsoleProcessList(self, process_list: Any, count: int, /) -> int:
        return 0

    def GetConsoleWindow(self) -> Any:
        return 0

    def last_error(self) -> int:
        return int(self._real.last_error())


def no_console_factory(spec: SpawnSpec, backend: BackendName) -> Console:
    """A pipe console started as if this process had no console (Windows only)."""
    del backend
    from kdmcp.console import win32
    from kdmcp.console.pipe_backend import PipeConsole

    return PipeConsole.spawn(spec, kernel32=_NoConsoleKernel32(win32.load_kernel32()))
