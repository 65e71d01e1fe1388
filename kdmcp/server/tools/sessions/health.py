"""``health_check``: which debuggers are found, whether the config and the state file are usable.

Each check is reported, never raised: a caller asks for health precisely when something is
wrong, and must see every finding at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdmcp.discovery import file_version, find_debugger
from kdmcp.engine import simulator_command
from kdmcp.errors import KdMcpError
from kdmcp.local_kernel import readiness
from kdmcp.server import models

if TYPE_CHECKING:
    from kdmcp.server.app import KdMcpApp


def check(app: KdMcpApp, sessions: list[models.SessionSummary]) -> models.HealthResult:
    """The server's health as ``app`` sees it, with the caller's ``sessions``."""
    options = app.options
    checks: list[models.DebuggerCheck] = []
    for flavor in ("kd", "cdb"):
        if options.simulate:
            checks.append(models.DebuggerCheck(
                name=flavor, found=True, path=" ".join(simulator_command(flavor)), source="simulator",
                version="kdmcp.sim (simulated 10.0.26100.1)",
            ))
            continue
        found = find_debugger(flavor, getattr(options.config.debuggers, flavor))
        checks.append(models.DebuggerCheck(
            name=flavor, found=found.path is not None, path=found.path, source=found.source,
            version=file_version(found.path) if found.path else None, looked_in=found.looked_in,
        ))
    state_path: str | None = None
    state_ok, state_error, state_warnings = False, None, []
    try:
        loaded = app.load_state(None)
        state_path, state_ok, state_warnings = str(loaded.path), True, loaded.warnings
        app.redactor.remember(loaded.state.key)
    except KdMcpError as exc:
        state_error = exc.message
    return models.HealthResult(
        ok=checks[0].found and state_ok,
        simulated=options.simulate,
        debuggers=checks,
        config_path=options.config_path,
        config_ok=True,
        state_file=state_path,
        state_file_ok=state_ok,
        state_file_error=state_error,
        state_file_warnings=state_warnings,
        # the simulator answers kd -kl anywhere; a real one needs elevation and boot-time debugging
        local_kernel=[] if options.simulate else readiness(),
        sessions=sessions,
    )
