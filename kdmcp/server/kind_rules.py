"""Which tools make sense on which kind of target: refused as ``invalid_argument`` with the reason.

The rules come from the one table of kinds (``kdmcp.engine.kinds.KINDS``): a dump and the local
kernel never run, so there is nothing to break into or resume; only a KDNET guest has a WinRM
companion waiting on it; ``!process`` lists a kernel's processes, which user mode has not.
A remote session follows its server: its prompt says whether that is a kernel or a process.
"""

from __future__ import annotations

from typing import Literal

from kdmcp.engine import DebuggerSession
from kdmcp.engine.kinds import KINDS
from kdmcp.errors import InvalidArgument

# run: let the target run (g, a step, run_to); break_in; breakpoint: set one (only a target that
# runs can hit it); resume_for_winrm; processes: a kernel's process list; kernel: any read of kernel
# objects (drivers, devices, IRPs, pool, page tables, kernel lists), which a process has not.
Action = Literal["run", "break_in", "breakpoint", "resume_for_winrm", "processes", "kernel"]


def refuse_for_kind(session: DebuggerSession, action: Action) -> None:
    """Raise ``InvalidArgument`` when ``action`` cannot be done on the session's kind of target."""
    kind = session.plan.kind
    rules = KINDS[kind]
    reason: str | None = None
    # cdb -pv: "commands like g (Go) do not work"
    if action in ("run", "break_in", "breakpoint") and session.plan.noninvasive:
        reason = "a noninvasive attach (cdb -pv) cannot control the process: g and break_in do not work"
    elif action == "breakpoint" and not rules.runs:
        reason = f"{rules.title} never runs: a breakpoint set on it could never be hit"
    elif action in ("run", "break_in", "resume_for_winrm") and not rules.runs:
        reason = (f"{rules.title} never runs: there is nothing to break into or resume"
                  + ("" if kind != "local_kernel" else " (kd -kl reads the live machine without stopping it)"))
    elif action == "resume_for_winrm" and kind != "kdnet":
        reason = (f"resume_for_winrm lets a KDNET guest run so its WinRM companion answers; {rules.title} has "
                  "none: use continue_go")
    elif action == "processes" and not is_kernel(session):
        reason = (f"processes lists a kernel's processes (!process); {rules.title} is user mode: use kd_command "
                  "with '|' (processes) or '~' (threads)")
    elif action == "kernel" and not is_kernel(session):
        reason = ("this tool reads kernel objects (drivers, devices, IRPs, pool, page tables, kernel lists); "
                  f"{rules.title} is user mode: use kd_command with cdb's own commands")
    if reason is not None:
        raise InvalidArgument(reason, session_id=session.session_id, state=session.state)


def is_kernel(session: DebuggerSession) -> bool:
    """Whether the session debugs a kernel (else a user-mode process): tools choose their commands by it."""
    if session.plan.kind != "remote":
        return KINDS[session.plan.kind].kernel
    # a remote session is what its server debugs: the prompt says, else the client's debugger
    prompt = session.prompt
    if prompt is None or prompt.mode in ("no_target", "unknown"):  # the prompt cannot say
        return session.plan.flavor == "kd"
    return prompt.mode != "user"
