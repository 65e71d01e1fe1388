"""The world's test modules share their fixtures: a freshly built default machine per module, and
for the process tier the simulator on pipes (kd at its initial break, cdb attached to a process)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from pexpect.popen_spawn import PopenSpawn

from kdmcp.sim.world.build import build
from kdmcp.sim.world.machine import World


@pytest.fixture(scope="module")
def world() -> World:
    """The default world (seed 0), built once for the module; tests that write build their own."""
    return build()


def _simulator(argv: list[str], prompt: str) -> Iterator[PopenSpawn]:
    from tests.sim.test_cli import T, reap

    child = PopenSpawn([sys.executable, "-m", "kdmcp.sim", *argv], timeout=T)
    try:
        child.expect_exact(prompt)
        yield child
    finally:
        reap(child)


@pytest.fixture
def kd() -> Iterator[PopenSpawn]:
    """``kd -b`` on KDNET at its initial break's prompt."""
    from tests.sim.test_cli import KDNET

    yield from _simulator(["kd", "-b", *KDNET], "0: kd> ")


@pytest.fixture
def cdb() -> Iterator[PopenSpawn]:
    """``cdb -p 1234`` at the attach break's prompt."""
    yield from _simulator(["cdb", "-p", "1234"], "0:002> ")
