"""``sxe``, ``sxd``, ``sxn``, ``sxi``: set an event filter (:mod:`.filters`); kd and cdb print nothing."""

from __future__ import annotations

from kdmcp.sim.world.filters import set_filter
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.registry import command


@command(
    "sxe", "sxd", "sxn", "sxi", modes=("kernel", "user"), summary="set an event filter (break, output, ignore)"
)
def _sx(world: World, name: str, args: str) -> str | None:
    return "" if set_filter(world, name, args) else None
