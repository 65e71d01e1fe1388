"""Shared fixtures: sessions on the simulator, always stopped at teardown."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# The engine (and pydantic under it) is imported where a fixture needs it, not here: every
# pytest run loads this file first, the skip gate's child runs included, which need none of it.
if TYPE_CHECKING:
    from kdmcp.engine import DebuggerSession, KdnetTarget, SessionManager, Target

pytest_plugins = ("tests.tiers",)  # the fast and process tiers, enforced (tests/tiers.py)

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "fixtures" / "scenarios"
GOOD_KEY = "1.2.3.4"

SessionMaker = Callable[..., "DebuggerSession"]

# Secrets the tests use (KDNET keys, listener tokens): no byte kd-mcp emits may hold one.
CANARIES = ("c4n4ryk3y0000", "k3yc4n4ry0000", "fr35hk3y00000", "t0kenAl1ce-0123456789", "t0kenB0b-fedcba98765")
CAPTURED_LEAKS: list[str] = []


# The skip gate (issue 10): a test may skip only because of the platform it runs on, never because a
# file it needs is missing (fixtures live in the repository, so a missing one is a failure). Every
# skip reason the suite gives is listed here; any other skip fails the run, after the summary.
PLATFORM_SKIPS = tuple(re.compile(p) for p in (
    r"POSIX permission bits",                          # chmod/umask checks, off POSIX
    r"executable bits",                                 # discovery's X_OK checks, off POSIX
    r"FIFOs, /proc and /dev as Linux has them",         # hostile state files, off Linux
    r"/(proc|sys)/\S+ does not exist here",            # a kernel built without that entry
    r"root reads mode 000 files",                       # the suite runs as root (containers, CI)
    r"drives POSIX signals on real children",           # the pipe backend, on Windows
    r"on Windows the real version\.dll answers",       # Windows-only behaviour, on Windows
    r"on Windows this would really send Ctrl\+Break",  # likewise
    r"node is not installed \(the TypeScript SDK harness needs Node >= 18\)",  # tests/interop
))
# Not a platform: the canary sweep has nothing to sweep when a partial run (``pytest tests/parse``)
# selects it without the tests that write server output. Allowed there; in the whole suite
# (pytest run on its configured testpaths, as CI does) the sweep always has files, so it fails.
PARTIAL_RUN_SKIPS = (re.compile(r"no kd-mcp output files in this run \(run the whole suite\)"),)
SKIPS: list[tuple[str, str]] = []  # (node id, reason) of every skip in this run
UNEXPECTED_SKIPS: list[str] = []  # filled at session end: the skips neither list above allows


def _record_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not report.skipped or hasattr(report, "wasxfail"):  # an xfail reports as skipped too
        return
    longrepr = report.longrepr  # (path, line, "Skipped: <reason>") for a skip
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    SKIPS.append((report.nodeid, reason.removeprefix("Skipped: ")))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Look for canaries in everything each test captured: stdout, stderr, log records; note skips."""
    for section, content in report.sections:
        for canary in CANARIES:
            if canary in content:
                CAPTURED_LEAKS.append(f"{report.nodeid} {section}: {canary}")
    _record_skip(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A module skipped at collection (``allow_module_level``, ``importorskip``) is gated too."""
    _record_skip(report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An unexpected skip fails an otherwise green run (exit status 1, as a failed test would).

    A run whose only module skipped at collection would exit 5 (no tests collected): 1 as well.
    """
    allowed = PLATFORM_SKIPS
    if session.config.args_source is not pytest.Config.ArgsSource.TESTPATHS:
        allowed += PARTIAL_RUN_SKIPS
    UNEXPECTED_SKIPS[:] = [f"{node}: {why}" for node, why in SKIPS if not any(p.fullmatch(why) for p in allowed)]
    if UNEXPECTED_SKIPS and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Runs after pytest_sessionfinish: name each skip that failed the run."""
    if UNEXPECTED_SKIPS:
        terminalreporter.section("skipped, and not for the platform: the run fails (tests/conftest.py)", red=True)
        for line in UNEXPECTED_SKIPS:
            terminalreporter.line(line, red=True)


def scenario(name: str) -> str:
    return str(SCENARIOS / f"{name}.yaml")


def kdnet(port: int = 50000, key: str = GOOD_KEY) -> KdnetTarget:
    from kdmcp.engine import KdnetTarget
    from kdmcp.secret import Secret

    return KdnetTarget(port=port, key=Secret(key))


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (pytest.mark.anyio) run on asyncio, as the MCP SDK's stdio transport does."""
    return "asyncio"


@pytest.fixture(params=["pexpect", "pipe"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_session(backend: str) -> Iterator[SessionMaker]:
    """Start sessions on the simulator over ``backend``; stop every one at teardown."""
    from kdmcp.engine import DebuggerSession, SessionConfig, build_plan, simulator_command

    started: list[DebuggerSession] = []

    def make(
        target: Target | None = None,
        scenario_name: str | None = None,
        flavor: str = "kd",
        initial_break: bool = True,
        start_timeout: float = 10.0,
        **config: object,
    ) -> DebuggerSession:
        plan = build_plan(
            simulator_command(flavor, scenario(scenario_name) if scenario_name else None),  # type: ignore[arg-type]
            target or kdnet(),
            initial_break=initial_break,
        )
        cfg = SessionConfig(backend=backend, **config)  # type: ignore[arg-type]
        session = DebuggerSession(f"t{len(started) + 1}", plan, cfg)
        started.append(session)
        session.start(start_timeout)
        return session

    yield make
    for session in started:
        session.stop(timeout=5.0)
        session.store.close()


@pytest.fixture
def manager(backend: str) -> Iterator[SessionManager]:
    from kdmcp.engine import SessionConfig, SessionManager

    mgr = SessionManager(SessionConfig(backend=backend))  # type: ignore[arg-type]
    yield mgr
    mgr.stop_all()
