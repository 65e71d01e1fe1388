"""Shared fixtures: sessions on the simulator, always stopped at teardown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kdmcp.engine import (
    DebuggerSession,
    KdnetTarget,
    SessionConfig,
    SessionManager,
    Target,
    build_plan,
    simulator_command,
)
from kdmcp.secret import Secret

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "fixtures" / "scenarios"
GOOD_KEY = "1.2.3.4"

SessionMaker = Callable[..., DebuggerSession]

# Secrets the tests use (KDNET keys, listener tokens): no byte kd-mcp emits may hold one.
CANARIES = ("c4n4ryk3y0000", "k3yc4n4ry0000", "fr35hk3y00000", "t0kenAl1ce-0123456789", "t0kenB0b-fedcba98765")
CAPTURED_LEAKS: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Look for canaries in everything each test captured: stdout, stderr, log records."""
    for section, content in report.sections:
        for canary in CANARIES:
            if canary in content:
                CAPTURED_LEAKS.append(f"{report.nodeid} {section}: {canary}")


def scenario(name: str) -> str:
    return str(SCENARIOS / f"{name}.yaml")


def kdnet(port: int = 50000, key: str = GOOD_KEY) -> KdnetTarget:
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
    mgr = SessionManager(SessionConfig(backend=backend))  # type: ignore[arg-type]
    yield mgr
    mgr.stop_all()
