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


def scenario(name: str) -> str:
    return str(SCENARIOS / f"{name}.yaml")


def kdnet(port: int = 50000, key: str = GOOD_KEY) -> KdnetTarget:
    return KdnetTarget(port=port, key=Secret(key))


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
