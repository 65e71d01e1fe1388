"""The world's test modules share one fixture: a freshly built default machine per module."""

from __future__ import annotations

import pytest

from kdmcp.sim.world.build import build
from kdmcp.sim.world.machine import World


@pytest.fixture(scope="module")
def world() -> World:
    """The default world (seed 0), built once for the module; tests that write build their own."""
    return build()
