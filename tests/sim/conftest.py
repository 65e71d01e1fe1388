"""Fixtures of the simulator's tests."""

from tests.sim.dump_debugger import debugger

__all__ = ["debugger"]
