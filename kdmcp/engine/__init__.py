"""Debugger sessions: launch plans, the output pump, the state machine, the session manager."""

from kdmcp.engine.config import SessionConfig
from kdmcp.engine.events import DebuggerEvent, SessionState
from kdmcp.engine.launch import (
    DumpTarget,
    KdnetTarget,
    LaunchPlan,
    LocalKernelTarget,
    ProcessTarget,
    RemoteTarget,
    Target,
    build_plan,
    simulator_command,
)
from kdmcp.engine.manager import SessionManager
from kdmcp.engine.session import DebuggerSession

__all__ = [
    "DebuggerEvent",
    "DebuggerSession",
    "DumpTarget",
    "KdnetTarget",
    "LaunchPlan",
    "LocalKernelTarget",
    "ProcessTarget",
    "RemoteTarget",
    "SessionConfig",
    "SessionManager",
    "SessionState",
    "Target",
    "build_plan",
    "simulator_command",
]
