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


SWEEP_PROBLEMS: list[str] = []  # filled at session end of a pytest-xdist run, by its controller


# Under pytest-xdist (``pytest -n 2``) the tests run in worker processes, each with a temporary
# directory of its own under the controller's, and the controller sees every test's report. So
# the controller does the gate and the whole canary sweep at session end; a worker does neither.
def is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _is_xdist_controller(config: pytest.Config) -> bool:
    return config.pluginmanager.has_plugin("dsession")


OUTPUT_SUFFIXES = (".bin", ".jsonl", ".log", ".cast", ".json")


def _is_sparse(path: Path) -> bool:
    """Mostly holes: fewer blocks on disk than half its length (st_blocks counts 512-byte units)."""
    st = path.stat()
    blocks = getattr(st, "st_blocks", None)
    return blocks is not None and st.st_size > 1 << 20 and blocks * 512 < st.st_size // 2


def sweep_for_canaries(base: Path) -> tuple[int, list[str]]:
    """Every file kd-mcp wrote under ``base``: how many were read, and each canary found in one.

    Inputs the tests wrote on purpose (state files, token files, a sparse 8 GiB "state file") and
    the simulated debugger's own raw output (``emitted-*.bin``) are not kd-mcp's output.
    """
    swept = 0
    leaks: list[str] = []
    for path in base.rglob("*"):
        if not path.is_file() or path.name.startswith("emitted-") or "kd-session" in path.name:
            continue
        if not (path.suffix in OUTPUT_SUFFIXES or ".jsonl." in path.name):
            continue
        if _is_sparse(path):  # a test's hostile input (an 8 GiB hole); kd-mcp writes no holes
            continue
        data = path.read_bytes()
        swept += 1
        leaks += [f"{path}: {c}" for c in CANARIES if c.encode() in data]
    return swept, leaks


def _record_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not report.skipped or hasattr(report, "wasxfail"):  # an xfail reports as skipped too
        return
    longrepr = report.longrepr  # (path, line, "Skipped: <reason>") for a skip, a list once sent by xdist
    reason = longrepr[2] if isinstance(longrepr, (tuple, list)) and len(longrepr) == 3 else str(longrepr)
    SKIPS.append((report.nodeid, str(reason).removeprefix("Skipped: ")))


SWEEP_TEST = "test_zz_canary_sweep.py::test_no_canary_in_anything_emitted"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The canary sweep runs after every other test, whatever directory sorts after its name."""
    items.sort(key=lambda item: item.nodeid.endswith(SWEEP_TEST))  # stable: the rest keep their order


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
    Under xdist the controller also sweeps every worker's directory for canaries here
    (tests/test_zz_canary_sweep.py, on a worker, sees only its own share and may not run last).
    """
    config = session.config
    if is_xdist_worker(config):
        return
    whole_suite = config.args_source is pytest.Config.ArgsSource.TESTPATHS
    allowed = PLATFORM_SKIPS if whole_suite else PLATFORM_SKIPS + PARTIAL_RUN_SKIPS
    UNEXPECTED_SKIPS[:] = [f"{node}: {why}" for node, why in SKIPS if not any(p.fullmatch(why) for p in allowed)]
    if _is_xdist_controller(config):
        # The workers' temporary directories are popen-gw<N> under this one (xdist's own rule).
        swept, leaks = sweep_for_canaries(Path(config._tmp_path_factory.getbasetemp()))
        SWEEP_PROBLEMS[:] = [*CAPTURED_LEAKS, *leaks]
        if whole_suite and swept == 0 and not SWEEP_PROBLEMS:
            SWEEP_PROBLEMS.append("no kd-mcp output files in the whole suite's temporary directories")
    if (UNEXPECTED_SKIPS or SWEEP_PROBLEMS) and session.exitstatus in (
        pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Runs after pytest_sessionfinish: name each skip, and under xdist each leak, that failed the run."""
    if UNEXPECTED_SKIPS:
        terminalreporter.section("skipped, and not for the platform: the run fails (tests/conftest.py)", red=True)
        for line in UNEXPECTED_SKIPS:
            terminalreporter.line(line, red=True)
    if SWEEP_PROBLEMS:
        terminalreporter.section("canary sweep of every xdist worker: the run fails (tests/conftest.py)", red=True)
        for line in SWEEP_PROBLEMS:
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
