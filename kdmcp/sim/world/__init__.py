"""The simulated machine: one consistent Windows world behind the simulated kd and cdb.

:func:`~kdmcp.sim.world.build.build` makes it from a seed; :class:`~kdmcp.sim.world.machine.World`
holds it; :mod:`~kdmcp.sim.world.commands` answers kd's commands from it (docs/simulator.md).
"""

from kdmcp.sim.world.build import build
from kdmcp.sim.world.machine import World

__all__ = ["World", "build"]
