"""The KDNET starts: ``start_from_state`` with the port and key the WinRM companion wrote, and
``start_kd`` with a port and key given, or a named connection of the config.

Each waits (bounded) for the guest to answer and stops a kd that never hears from it
(``starting.py``). The key is registered with the redactor before kd can print it: the state
file's as read, a given one only once ``kdnet_target`` has checked its format (a malformed
"key" masks nothing).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kdmcp.engine.launch import kdnet_target
from kdmcp.errors import InvalidArgument
from kdmcp.secret import Secret
from kdmcp.server import models
from kdmcp.server.args import InitialBreak, Timeout
from kdmcp.server.call import Call
from kdmcp.server.registry import connects, tool
from kdmcp.server.tools.sessions.starting import started, waiting

__all__ = ["start_from_state", "start_kd"]


@tool("session", connects("Connect to the guest from the WinRM companion's state file"))
def start_from_state(
    call: Call,
    state_file: Annotated[
        str | None, Field(max_length=4096)
    ] = None,
    initial_break: InitialBreak = False,
    use_target_host: Annotated[
        bool, Field(description='pass guest_host as target=')
    ] = False,
    timeout_s: Timeout = None,
) -> models.StartResult:
    """Connect kd to the guest in the WinRM state file."""
    waiting(call, "waiting for the guest to connect", timeout_s)
    loaded = call.app.load_state(state_file)
    state = loaded.state
    call.app.redactor.remember(state.key)
    target = kdnet_target(state.port, state.key, state.guest_host if use_target_host else None,
                          host_field="guest_host")
    return started(call, target, initial_break=initial_break, timeout_s=timeout_s, state_file=str(loaded.path),
                   warnings=loaded.warnings)


@tool("session", connects("Connect to a guest over KDNET"))
def start_kd(
    call: Call,
    port: Annotated[int | None, Field(ge=1, le=65535)]
    = None,
    key: Annotated[
        str | None,
        Field(pattern=r"^[0-9A-Za-z]{1,13}(\.[0-9A-Za-z]{1,13}){3}$"),
    ] = None,
    target_host: Annotated[str | None, Field(max_length=255, pattern=r"^[0-9A-Za-z.:\-\[\]]+$")] = None,
    connection: Annotated[str | None, Field(description='config name',
                                            max_length=128)] = None,
    initial_break: InitialBreak = False,
    timeout_s: Timeout = None,
) -> models.StartResult:
    """Connect kd over KDNET: port+key or a config connection."""
    waiting(call, "waiting for the guest to connect", timeout_s)
    connections = call.app.options.config.connections
    if connection is not None:
        if port is not None or key is not None:
            raise InvalidArgument("give either a named connection or port/key, not both")
        named = connections.get(connection)
        if named is None:
            known = ", ".join(sorted(connections)) or "none configured"
            raise InvalidArgument(f"no connection named {connection!r} in the config ({known})")
        target = kdnet_target(named.port, named.key, target_host or named.target_host)
    else:
        if port is None or key is None:
            raise InvalidArgument("start_kd needs port and key (or a named connection)")
        target = kdnet_target(port, Secret(key), target_host)
    # Registered only now, after kdnet_target checked its format: a malformed "key" masks nothing.
    call.app.redactor.remember(target.key)
    return started(call, target, initial_break=initial_break, timeout_s=timeout_s)
