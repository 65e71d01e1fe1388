"""The sessions' ends and the setup's state: ``stop_kd``, ``list_sessions``, ``health_check``.

``health_check`` reports each check, never raises one: a caller asks for health precisely when
something is wrong, and must see every finding at once.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kdmcp.discovery import file_version, find_debugger
from kdmcp.engine import SessionState, simulator_command
from kdmcp.errors import KdMcpError
from kdmcp.local_kernel import readiness
from kdmcp.server import models
from kdmcp.server.app import KdMcpApp
from kdmcp.server.args import SessionId
from kdmcp.server.call import Call
from kdmcp.server.registry import destroys, reads, tool
from kdmcp.server.tools.sessions.shares import Shares, shared

__all__ = ["health_check", "list_sessions", "stop_kd", "summaries"]


@tool("session", destroys("End a debugging session"))
def stop_kd(
    call: Call,
    session_id: SessionId = None,
    resume: Annotated[bool, Field()] = True,
) -> models.StopResult:
    """End a session (resumes a kernel target first)."""
    app = call.app
    session = app.session(session_id, call.owner)
    result = app.manager.stop(session.session_id, resume=resume, owner=call.owner)
    share = app.state_of(Shares).remove(session.session_id)
    if share is not None and result.state == SessionState.exited:
        # The server lives in the debugger's process: it ended with it, and its clients were dropped.
        result = result.model_copy(update={"actions": [*result.actions,
                                                       f"closed the debugging server on {share.listener}"]})
    if app.transcript is not None:
        app.transcript.record("session", event="stopped", session_id=session.session_id, how=result.left,
                              actions=result.actions, exit_code=result.exit_code, reason="stop_kd")
    return models.StopResult(session_id=session.session_id, **models.served_fields(models.StopResult, result))


@tool("session", reads("List sessions"))
def list_sessions(call: Call) -> models.SessionList:
    """Sessions and their states."""
    return models.SessionList(sessions=summaries(call.app, call.owner), max_sessions=call.app.manager.max_sessions)


@tool("session", reads("Check the setup"))
def health_check(call: Call) -> models.HealthResult:
    """Checks: debuggers, config, state file."""
    app = call.app
    sessions = summaries(app, call.owner)
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


def summaries(app: KdMcpApp, owner: str | None) -> list[models.SessionSummary]:
    infos = app.manager.infos(owner=owner)
    live = {s.session_id for s in infos if s.state != SessionState.exited}
    return [
        models.SessionSummary(live=info.session_id in live, shared=shared(app, info.session_id),
                              **models.served_fields(models.SessionSummary, info))
        for info in infos
    ]

