"""The tools, one package per family; importing this registers them all (``registry.py``).

Nothing imports it at start-up: the registry does, through the loader ``kdmcp.server`` gives it,
when it is first read (a tool's first call, ``debug_batch``, the docs), so a start that lists the
tools from the cache imports no family (docs/architecture.md, "Start-up").

The order of the imports below is the order of ``tools/list``: the session starts first, then
commands and reads, run control, output, the sessions' ends, then the typed families. Families
import the core (``kdmcp/server/*.py``), never each other; ``debug_batch`` reaches the other
tools only through the registry.
"""

from __future__ import annotations

from kdmcp.server.call import build_server

# The order of these imports is the order of tools/list.
# isort: off
from kdmcp.server.tools.sessions import kdnet
from kdmcp.server.tools.sessions import targets
from kdmcp.server.tools.commands import commands
from kdmcp.server.tools.run import target
from kdmcp.server.tools.output import reads
from kdmcp.server.tools.sessions import lifecycle
from kdmcp.server.tools.batch import tool as batch
from kdmcp.server.tools.inspect import inspection as inspect
from kdmcp.server.tools.ioctl import control_codes as ioctl
from kdmcp.server.tools.kobjects import drivers
from kdmcp.server.tools.pool import blocks, page_tables
from kdmcp.server.tools.run import breakpoints
from kdmcp.server.tools.run import stops
from kdmcp.server.tools.lists import walk, handles
from kdmcp.server.tools.triage import tool as triage
# isort: on

__all__ = ["FAMILIES", "build_server"]

# The modules that registered tools, in registration order.
FAMILIES = (kdnet, targets, commands, target, reads, lifecycle, batch, inspect, ioctl, drivers, blocks, page_tables,
            breakpoints, stops, walk, handles, triage)

