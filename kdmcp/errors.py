"""One exception hierarchy, one class per error category the tools return.

Categories are chosen by what the caller does next (retry, break in, start a session, fix
an argument), and are stable: programs branch on ``category``, people read ``message``.
"""

from __future__ import annotations

from typing import ClassVar, Literal, get_args

from kdmcp.session_state import SessionState

ErrorCategory = Literal[
    "invalid_argument",
    "unknown_session",
    "capacity",
    "target_running",
    "not_connected",
    "busy",
    "timeout",
    "debugger_exited",
    "state_file",
    "config",
    "debugger",
    "policy_denied",
    "internal",
]
# The one list of categories: the exceptions below, the result models, the server instructions,
# the README and docs/clients.md are built from (or checked against) it, in this order.
ERROR_CATEGORIES: tuple[ErrorCategory, ...] = get_args(ErrorCategory)

# What the caller does next, per category (the instructions, README and docs/clients.md quote it).
# Short clauses without a full stop: they are joined into one sentence.
NEXT_STEP: dict[ErrorCategory, str] = {
    "invalid_argument": "fix the named argument",
    "unknown_session": "list_sessions, or start one",
    "capacity": "stop a session first",
    "target_running": "break in first",
    "not_connected": "no target answers yet: check the guest, or wait while it reconnects",
    "busy": "another command or run holds it: wait, or break_in a timed-out command",
    "timeout": "the command may still be running: break_in cancels it; partial output attached",
    "debugger_exited": "its output stays readable",
    "state_file": "fix the state file or name another",
    "config": "fix the named key",
    "debugger": "not found or could not be driven: see health_check",
    "policy_denied": "the tool or command is outside this client's surface or policy",
    "internal": "a bug: see the server log",
}


class KdMcpError(Exception):
    """Base of every error kd-mcp reports to a caller."""

    category: ClassVar[ErrorCategory] = "internal"
    # What a caller may get besides the message; typed here so the server reads fields, not
    # attributes that may or may not exist. Only the subclasses below set the last three.
    partial_output: str | None = None
    output_span: tuple[int, int] | None = None  # [start, end) in the session's output store
    exit_code: int | None = None

    def __init__(self, message: str, *, session_id: str | None = None, state: SessionState | None = None,
                 file_problem: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.session_id = session_id
        self.state = state
        # A file the caller named is missing, unreadable or not a regular file: the machine said
        # no, whatever the category. The CLI ends with its one code for that (EXIT_ENVIRONMENT).
        self.file_problem = file_problem


class InvalidArgument(KdMcpError):
    """An argument is malformed: fix it and call again."""

    category = "invalid_argument"


class UnknownSession(KdMcpError):
    """No live session has that id (or none is live and no id was given)."""

    category = "unknown_session"


class CapacityError(KdMcpError):
    """The session limit is reached: stop a session first."""

    category = "capacity"


class TargetRunning(KdMcpError):
    """The target is running: break in before issuing commands."""

    category = "target_running"


class NotConnected(KdMcpError):
    """The debugger has no target yet (waiting to reconnect, rebooting, transport lost)."""

    category = "not_connected"


class SessionBusy(KdMcpError):
    """A previous command is still running (it timed out): break in or wait."""

    category = "busy"


class CommandTimeout(KdMcpError):
    """The command did not finish in time; it may still be running. Partial output is kept."""

    category = "timeout"

    def __init__(
        self,
        message: str,
        *,
        session_id: str | None = None,
        state: SessionState | None = None,
        partial_output: str = "",
        output_offset: int = 0,
        output_end: int = 0,
    ) -> None:
        super().__init__(message, session_id=session_id, state=state)
        self.partial_output = partial_output
        self.output_span = (output_offset, output_end)


class DebuggerExited(KdMcpError):
    """The debugger process ended; its output stays readable."""

    category = "debugger_exited"

    def __init__(
        self,
        message: str,
        *,
        session_id: str | None = None,
        state: SessionState | None = None,
        exit_code: int | None = None,
    ) -> None:
        super().__init__(message, session_id=session_id, state=state)
        self.exit_code = exit_code


class DebuggerError(KdMcpError):
    """The debugger could not be started or driven (not found, spawn failed, pipe error)."""

    category = "debugger"


class StateFileError(KdMcpError):
    """The KDNET state file is missing, unreadable or malformed: fix it or point elsewhere."""

    category = "state_file"


class ConfigError(KdMcpError):
    """The server configuration is unreadable or invalid: fix the named key."""

    category = "config"


class PolicyDenied(KdMcpError):
    """The command, or the tool, is outside what this client is allowed to do."""

    category = "policy_denied"


def category_list(*, markdown: bool = False) -> str:
    """Every error category with its next step, in their one order: ``a (do x), b (do y), …``.

    The server's instructions, the README and docs/clients.md quote this very sentence.
    """
    return ", ".join(f"`{c}` ({NEXT_STEP[c]})" if markdown else f"{c} ({NEXT_STEP[c]})" for c in ERROR_CATEGORIES)


class CheckFailed(Exception):
    """A check of ``selftest``, ``doctor`` or ``demo`` failed: the CLI ends with its error line and exit 1.

    Not a :class:`~kdmcp.errors.KdMcpError`: no tool returns it, so it has no category; it is the
    CLI's verdict after a report that was printed whole.
    """
