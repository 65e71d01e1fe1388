"""The tools that start a session, one per kind of target, and the one that shares a session.

What each does is ``app.py`` (KDNET) and ``targets.py`` (every other kind); here are their
arguments as clients see them. Each start waits (bounded) for the debugger and stops one that
never gets there.
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.server import models
from kdmcp.server.args import InitialBreak, SessionId, Timeout
from kdmcp.server.call import Call, Ctx, app_of, run_tool
from kdmcp.server.registry import connects, starts, tool
from kdmcp.server.tools.sessions import targets

__all__ = ["attach_local_kernel", "attach_process", "join_remote", "launch", "open_dump", "share_session",
           "start_from_state", "start_kd"]


# ------------------------------------------------------------------------------ session

@tool("session", connects("Connect to the guest from the WinRM companion's state file"))
async def start_from_state(
    state_file: Annotated[
        str | None, Field(description="path of the winrm-kd-session-v1 state file (default: config, "
                          "KDMCP_STATE_FILE, then the companion's default)", max_length=4096)
    ] = None,
    initial_break: InitialBreak = False,
    use_target_host: Annotated[
        bool, Field(description="pass guest_host as kd's target= (needed when the host must reach out)")
    ] = False,
    timeout_s: Timeout = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.StartResult]:
    """Start kd.exe on KDNET with the port and key the WinRM companion wrote, and wait for the guest.

    Returns once kd is connected (the target runs unless initial_break) or fails with
    not_connected when the guest does not answer within the timeout (then kd is stopped).
    """
    return await run_tool(
        ctx, lambda c: c.app.start_from_state(state_file, initial_break, timeout_s, use_target_host, c.cancel,
                                              owner=c.owner),
        progress="waiting for the guest to connect", total_s=timeout_s or app_of(ctx).options.config.timeouts.startup,
        on_cancel=_abort_start,
    )


@tool("session", connects("Connect to a guest over KDNET"))
async def start_kd(
    port: Annotated[int | None, Field(description="KDNET port (bcdedit /dbgsettings net port=)", ge=1, le=65535)]
    = None,
    key: Annotated[
        str | None,
        Field(description="KDNET key: four dot-separated base-36 words",
              pattern=r"^[0-9A-Za-z]{1,13}(\.[0-9A-Za-z]{1,13}){3}$"),
    ] = None,
    target_host: Annotated[str | None, Field(description="the guest's address, passed as target=",
                                             max_length=255, pattern=r"^[0-9A-Za-z.:\-\[\]]+$")] = None,
    connection: Annotated[str | None, Field(description="a named connection from the config",
                                            max_length=128)] = None,
    initial_break: InitialBreak = False,
    timeout_s: Timeout = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.StartResult]:
    """Start kd.exe on KDNET with an explicit port and key, or a named connection from the config."""
    return await run_tool(
        ctx, lambda c: c.app.start_kd(port, key, target_host, connection, initial_break, timeout_s, c.cancel,
                                      owner=c.owner),
        progress="waiting for the guest to connect", total_s=timeout_s or app_of(ctx).options.config.timeouts.startup,
        on_cancel=_abort_start,
    )


def _abort_start(call: Call) -> None:
    call.app.abort_start(call.cancel)


# ------------------------------------------------------------------------- other kinds

def _started(ctx: Ctx, timeout_s: float | None) -> float:
    return timeout_s or app_of(ctx).options.config.timeouts.startup


@tool("session", starts("Open a crash dump"))
async def open_dump(
    path: Annotated[str, Field(description="a kernel dump (kd) or user minidump (cdb): chosen by its header",
                               min_length=1, max_length=4096)],
    timeout_s: Timeout = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.DumpResult]:
    """Open a dump and summarise it: OS, build, architecture, bugcheck or exception, modules."""
    return await run_tool(ctx, lambda c: targets.open_dump(c.app, path, timeout_s, c.cancel, owner=c.owner),
                          progress="opening the dump", total_s=_started(ctx, timeout_s), on_cancel=_abort_start)


@tool("session", starts("Attach to a process"))
async def attach_process(
    pid: Annotated[int, Field(description="process id", ge=0, le=0xFFFFFFFF)],
    noninvasive: Annotated[bool, Field(description="cdb -pv: read only, the process keeps running")] = False,
    timeout_s: Timeout = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.StartResult]:
    """cdb -p: stop the process at the attach break. stop_kd detaches; the process runs on."""
    return await run_tool(
        ctx, lambda c: targets.attach_process(c.app, pid, noninvasive, timeout_s, c.cancel, owner=c.owner),
        progress="attaching", total_s=_started(ctx, timeout_s), on_cancel=_abort_start)


@tool("session", connects("Launch a program under cdb"))
async def launch(
    command_line: Annotated[list[Annotated[str, Field(max_length=4096)]],
                            Field(description="the executable, then its arguments", min_length=1, max_length=64)],
    initial_break: Annotated[bool, Field(description="stop at the loader's initial breakpoint")] = True,
    timeout_s: Timeout = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.StartResult]:
    """Run a program on this host under cdb (policy full or allow_launch). stop_kd terminates it."""
    return await run_tool(
        ctx, lambda c: targets.launch(c.app, command_line, initial_break, timeout_s, c.cancel, owner=c.owner),
        progress="launching", total_s=_started(ctx, timeout_s), on_cancel=_abort_start)


@tool("session", starts("Debug this machine's kernel"))
async def attach_local_kernel(timeout_s: Timeout = None, ctx: Ctx = None) -> Annotated[CallToolResult,
                                                                                       models.StartResult]:
    """kd -kl: read the local kernel live (elevated; bcdedit /debug on; see doctor). It never stops."""
    return await run_tool(ctx, lambda c: targets.attach_local_kernel(c.app, timeout_s, c.cancel, owner=c.owner),
                          progress="starting kd -kl", total_s=_started(ctx, timeout_s), on_cancel=_abort_start)


@tool("session", connects("Join a debugging server"))
async def join_remote(
    connection: Annotated[str, Field(description="tcp:server=H,port=N or npipe:server=H,pipe=P",
                                     min_length=1, max_length=512)],
    timeout_s: Timeout = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.StartResult]:
    """Join a windbg/kd/cdb -server session as a client; stop_kd leaves it running."""
    return await run_tool(ctx, lambda c: targets.join_remote(c.app, connection, timeout_s, c.cancel, owner=c.owner),
                          progress="joining", total_s=_started(ctx, timeout_s), on_cancel=_abort_start)


@tool("session", connects("Share a session with a person"))
async def share_session(session_id: SessionId = None, ctx: Ctx = None) -> Annotated[CallToolResult,
                                                                                     models.ShareResult]:
    """Open a debugging server on this machine (.server) and return the windbg -remote line to join it.

    Needs a prompt and policy full or allow_share. stop_kd closes it.
    """
    return await run_tool(ctx, lambda c: targets.share_session(c.app, session_id, owner=c.owner))
