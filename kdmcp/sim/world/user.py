"""The simulated cdb's world: one user-mode process (being written)."""

from __future__ import annotations

from kdmcp.sim.world.machine import World

__all__ = ["build_user"]


def build_user(seed: int, pid: int, command_line: str) -> World:
    """The process ``cdb -p PID`` attaches to, or the one it launches with ``command_line``."""
    raise NotImplementedError
