"""The sessions' ends and the setup's state: ``stop_kd``, ``list_sessions``, ``health_check``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kdmcp.engine import SessionState
from kdmcp.server import models
from kdmcp.server.app import KdMcpApp
from kdmcp.server.args import SessionId
from kdmcp.server.call import Call
from kdmcp.server.registry import destroys, reads, tool
from kdmcp.server.tools.sessions import health
from kdmcp.server.tools.sessions.shares import Shares, shared

__all__ = ["health_check", "list_sessions", "stop_kd", "summaries"]


@tool("session", destroys("End a debugging session"))
def stop_kd(
    call: Call,
    session_id: SessionId = None,
    resume: Annotated[bool, Field(description="resume a broken-in kernel target before quitting "
                                  "(a guest left at a break is frozen)")] = True,
) -> models.StopResult:
    """Stop the debugger: resume a live kernel target, quit, and kill only as a last resort."""
    app = call.app
    session = app.session(session_id, call.owner)
    result = app.manager.stop(session.session_id, resume=resume, owner=call.owner)
    share = app.state_of(Shares).remove(session.session_id)
    if share is not None and result.state == SessionState.exited:
        # The server lives in the debugger's process: it ended with it, and its clients were dropped.
        result = result.model_copy(update={"actions": [*result.actions,
                                                       f"closed the debugging server on {share.listener}"]})
    if app.transcript is not None:
        app.transcript.record("session", event="stopped", session_id=session.session_id,
                              actions=result.actions, exit_code=result.exit_code)
    return models.StopResult(session_id=session.session_id, **models.served_fields(models.StopResult, result))


@tool("session", reads("List sessions"))
def list_sessions(call: Call) -> models.SessionList:
    """Live and recently ended sessions with their states."""
    return models.SessionList(sessions=summaries(call.app, call.owner), max_sessions=call.app.manager.max_sessions)


@tool("session", reads("Check the setup"))
def health_check(call: Call) -> models.HealthResult:
    """Which debuggers are found (and their versions), whether the config and state file are valid, sessions."""
    return health.check(call.app, summaries(call.app, call.owner))


def summaries(app: KdMcpApp, owner: str | None) -> list[models.SessionSummary]:
    infos = app.manager.infos(owner=owner)
    live = {s.session_id for s in infos if s.state != SessionState.exited}
    return [
        models.SessionSummary(live=info.session_id in live, shared=shared(app, info.session_id),
                              **models.served_fields(models.SessionSummary, info))
        for info in infos
    ]

