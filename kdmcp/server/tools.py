"""The tools: one module-level function each, their argument schemas and annotations, and ``build_server``.

Each tool states its arguments (the schema clients see) and hands its work to ``run_tool``
(``call.py``), which runs it in a worker thread for the calling client; what each tool *does*
is ``KdMcpApp``'s (``app.py``). ``TOOLS`` is the registration order of ``tools/list``; the
groups a client may be given are ``surface.TOOL_GROUPS`` (a test holds the two equal).
"""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from typing import Annotated, Literal

from mcp.server.mcpserver.tools import Tool as ServedTool
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from kdmcp.errors import KdMcpError
from kdmcp.server import models
from kdmcp.server.app import KdMcpApp
from kdmcp.server.call import Call, app_of, run_tool
from kdmcp.server.kind_rules import Action
from kdmcp.server.mcp_server import KdMcpServer
from kdmcp.server.schema import compact_schema, served_annotations

# The tools that start sessions register first, so tools/list begins with them.
from kdmcp.server.starts import (
    attach_local_kernel,
    attach_process,
    join_remote,
    launch,
    open_dump,
    share_session,
    start_from_state,
    start_kd,
)
from kdmcp.server.toolkit import (
    LIST_LIMIT,
    TOOLS,
    Ctx,
    Limit,
    SessionId,
    Timeout,
    Tool,
    controls,
    destroys,
    reads,
    tool,
)

__all__ = [
    "TOOLS",
    "attach_local_kernel",
    "attach_process",
    "breakpoints",
    "build_server",
    "clear_breakpoints",
    "debug_batch",
    "decode_error",
    "decode_ioctl",
    "device_object",
    "disassemble",
    "driver_object",
    "evaluate",
    "exception",
    "handles",
    "ioctl_map",
    "irp",
    "join_remote",
    "launch",
    "location",
    "lookup_symbol",
    "open_dump",
    "pool",
    "pool_find",
    "pool_usage",
    "pte",
    "read_memory",
    "read_type",
    "run_to",
    "set_breakpoint",
    "set_symbol_path",
    "share_session",
    "start_from_state",
    "start_kd",
    "step",
    "threads",
    "wait_for_stop",
    "walk_list",
]

log = logging.getLogger(__name__)

def _served(entry: Tool) -> ServedTool:
    """One tool as ``tools/list`` serves it: the docstring without its indentation, the compact
    argument schema, the hints that say something (``schema.py``), and no ``outputSchema``.

    No output schema, by choice (docs/results.md): a command's record is an open object (one of
    some sixty kinds), so a schema could not describe it; the parts it could describe (the
    state, the events) would be repeated in every tool, as MCP has no schema shared between
    tools — 73 % of the surface once; and a published schema makes every client validate every
    result. The results' fields are documented from the models instead (``result_model``).
    """
    served = ServedTool.from_function(entry.fn, description=inspect.cleandoc(entry.fn.__doc__ or ""),
                                      annotations=served_annotations(entry.annotations), structured_output=False)
    served.parameters = compact_schema(served.parameters)
    return served


@functools.cache
def _served_tools() -> tuple[ServedTool, ...]:
    """The SDK's tool objects, built once per process.

    Building them (an argument model and schemas per tool) cost 60-90 ms on every server; they
    hold the module-level functions and their schemas only (each call finds its app through its
    context), so every server of the process can share them.
    """
    return tuple(_served(entry) for entry in TOOLS.values())


def result_model(name: str) -> type[BaseModel]:
    """The model of what tool ``name`` returns (its return annotation): what docs/results.md lists."""
    hint = typing.get_type_hints(TOOLS[name].fn, include_extras=True)["return"]
    model: type[BaseModel] = typing.get_args(hint)[1]
    return model


def build_server(app: KdMcpApp) -> KdMcpServer:
    """The MCP server with kd-mcp's tools registered on ``app``."""
    server = KdMcpServer(app, tools=list(_served_tools()))
    server.tool_names = frozenset(TOOLS)
    return server


# ----------------------------------------------------------------------------- commands

@tool(destroys("Run one debugger command"))
async def kd_command(
    command: Annotated[str, Field(description="one kd/cdb command line, e.g. 'k', 'lm', '!analyze -v'",
                                  min_length=1, max_length=4000)],
    session_id: SessionId = None,
    timeout_s: Timeout = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.CommandResult]:
    """Run one command at the debugger's prompt and return its output (capped; see read_output).

    The target must be broken in (else target_running). Go-class commands (g, gu, p, t…)
    return as soon as the target is confirmed running or stopped again.
    """
    def cancel_command(call: Call) -> None:
        """The client gave up on the command: stop kd working on it (Ctrl+C)."""
        try:
            call.app.manager.get(session_id, owner=call.owner).break_in()
        except KdMcpError as exc:
            log.info("could not cancel %r: %s", command, exc.message)

    return await run_tool(
        ctx, lambda c: c.app.kd_command(command, session_id, timeout_s, owner=c.owner),
        progress=f"running {command!r}", total_s=timeout_s or app_of(ctx).options.config.timeouts.command,
        on_cancel=cancel_command,
    )


async def _inspect(ctx: Ctx, command: str, session_id: str | None, limit: int,
                   timeout_s: float | None = None, needs: Action | None = None) -> CallToolResult:
    """A typed read: one fixed command, its record, each list cut to ``limit``."""
    return await run_tool(
        ctx, lambda c: c.app.inspect(command, session_id, limit, timeout_s, owner=c.owner, needs=needs),
        progress=f"running {command!r}", total_s=timeout_s or app_of(ctx).options.config.timeouts.command,
    )


@tool(reads("Registers"))
async def registers(
    session_id: SessionId = None,
    register: Annotated[str | None, Field(description="one register (rip, rsp, eax, efl…); default all",
                                          pattern=r"^[A-Za-z][A-Za-z0-9]{0,15}$")] = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.InspectResult]:
    """The register context as a typed record (`r`): values, flags, segments, current instruction."""
    return await _inspect(ctx, f"r {register}" if register else "r", session_id, LIST_LIMIT)


@tool(reads("Call stack"))
async def backtrace(
    session_id: SessionId = None,
    variant: Annotated[Literal["k", "kb", "kv", "kn", "kp", "kP", "kc", "kL", "knL"],
                       Field(description="the k command: kb/kv add arguments, kn numbers frames")] = "kn",
    limit: Limit = LIST_LIMIT,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.InspectResult]:
    """The current thread's stack as frames (module, function, offset, addresses, source)."""
    return await _inspect(ctx, variant, session_id, limit)


@tool(reads("Loaded modules"))
async def modules(
    session_id: SessionId = None,
    pattern: Annotated[str | None, Field(description="module name pattern, e.g. nt or win32k*",
                                         pattern=r"^[A-Za-z0-9_*?.\-]{1,64}$")] = None,
    verbose: Annotated[bool, Field(description="lmv: image path, timestamp, checksum, versions")] = False,
    limit: Limit = LIST_LIMIT,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.InspectResult]:
    """Loaded modules (`lm`, `lm m PATTERN`, `lmv …`) with ranges and symbol status."""
    command = "lmv" if verbose else "lm"
    if pattern:
        command += f" m {pattern}"
    return await _inspect(ctx, command, session_id, limit)


@tool(reads("Processes"))
async def processes(
    session_id: SessionId = None,
    name: Annotated[str | None, Field(description="only processes with this image name, e.g. lsass.exe",
                                      pattern=r"^[A-Za-z0-9_.\-]{1,64}$")] = None,
    limit: Limit = LIST_LIMIT,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.InspectResult]:
    """Processes (`!process 0 0 [name]`): address, cid, parent, DirBase, handle count, image."""
    return await _inspect(ctx, f"!process 0 0 {name}" if name else "!process 0 0", session_id, limit,
                          needs="processes")


@tool(reads("Crash analysis"))
async def analyze(
    session_id: SessionId = None,
    timeout_s: Timeout = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.InspectResult]:
    """`!analyze -v` as a record: bugcheck code and arguments, faulting module, bucket, stack."""
    return await _inspect(ctx, "!analyze -v", session_id, LIST_LIMIT,
                          timeout_s or max(app_of(ctx).options.config.timeouts.command, 300.0))


@tool(reads("Target version"))
async def vertarget(session_id: SessionId = None, ctx: Ctx = None) -> Annotated[CallToolResult, models.InspectResult]:
    """The target's OS, build, architecture, processors, kernel base and uptime (`vertarget`)."""
    return await _inspect(ctx, "vertarget", session_id, LIST_LIMIT)


# ------------------------------------------------------------------------------ control

@tool(controls("Break into the running target", idempotent=True))
async def break_in(session_id: SessionId = None, timeout_s: Timeout = None,
                   ctx: Ctx = None) -> Annotated[CallToolResult, models.BreakResult]:
    """Break in (Ctrl+C) and wait for the prompt; also cancels a command that hangs.

    While broken in, the guest is frozen: WinRM and everything else on it stop answering.
    """
    return await run_tool(ctx, lambda c: c.app.break_in(session_id, timeout_s, owner=c.owner))


@tool(controls("Let the target run"))
async def continue_go(
    session_id: SessionId = None,
    command: Annotated[str, Field(description="the go command: g, gh, gn, or g with an address",
                                  min_length=1, max_length=256)] = "g",
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.ContinueResult]:
    """Resume the target and return once it is confirmed running (or stopped again at once)."""
    return await run_tool(ctx, lambda c: c.app.continue_go(session_id, command, owner=c.owner))


@tool(controls("Resume the guest so WinRM answers again"))
async def resume_for_winrm(
    session_id: SessionId = None,
    wait_s: Annotated[float | None, Field(description="seconds to let the guest run before returning "
                                          "(default: timeouts.continue_wait_sec)", ge=0, le=600)] = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.ResumeResult]:
    """Continue the target, confirm it runs, let it run wait_s seconds, and say what happened.

    The hint names the next step: retry the WinRM call (target running) or inspect the stop.
    """
    wait = app_of(ctx).options.config.timeouts.continue_wait_sec if wait_s is None else wait_s
    return await run_tool(
        ctx, lambda c: c.app.resume_for_winrm(session_id, wait_s, c.cancel, owner=c.owner),
        progress="letting the guest run", total_s=wait,
    )


# ------------------------------------------------------------------------ output, end, list

@tool(reads("Read a session's output"))
async def read_output(
    session_id: SessionId = None,
    output_id: Annotated[str | None, Field(description="an output_id from a result: reads that output",
                                           max_length=128)] = None,
    offset: Annotated[int, Field(description="byte offset (within output_id's output, if given)", ge=0)] = 0,
    limit: Annotated[int, Field(description="bytes to read at most", ge=1, le=1024 * 1024)] = 65536,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.OutputChunk]:
    """Read any part of a session's output by offset; nothing is ever dropped (ended sessions too)."""
    return await run_tool(ctx, lambda c: c.app.read_output(session_id, output_id, offset, limit, owner=c.owner))


@tool(destroys("End a debugging session"))
async def stop_kd(
    session_id: SessionId = None,
    resume: Annotated[bool, Field(description="resume a broken-in kernel target before quitting "
                                  "(a guest left at a break is frozen)")] = True,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, models.StopResult]:
    """Stop the debugger: resume a live kernel target, quit, and kill only as a last resort."""
    return await run_tool(ctx, lambda c: c.app.stop_kd(session_id, resume, owner=c.owner))


@tool(reads("List sessions"))
async def list_sessions(ctx: Ctx = None) -> Annotated[CallToolResult, models.SessionList]:
    """Live and recently ended sessions with their states."""
    return await run_tool(ctx, lambda c: c.app.list_sessions(owner=c.owner))


@tool(reads("Check the setup"))
async def health_check(ctx: Ctx = None) -> Annotated[CallToolResult, models.HealthResult]:
    """Which debuggers are found (and their versions), whether the config and state file are valid, sessions."""
    return await run_tool(ctx, lambda c: c.app.health_check(owner=c.owner))


# The typed run-control and inspection tools (issue 15) register after these, in their own modules.
from kdmcp.server.batch_tool import debug_batch  # noqa: E402  (registers it)
from kdmcp.server.inspect_tools import (  # noqa: E402  (registers its tools)
    decode_error,
    disassemble,
    evaluate,
    exception,
    lookup_symbol,
    read_memory,
    read_type,
    set_symbol_path,
    threads,
)
from kdmcp.server.ioctl_tools import (  # noqa: E402  (registers its tools)
    decode_ioctl,
    ioctl_map,
)
from kdmcp.server.kobject_tools import (  # noqa: E402  (registers its tools: issue 16's driver tools)
    device_object,
    driver_object,
    irp,
)
from kdmcp.server.pool_tools import (  # noqa: E402  (registers its tools after these)
    pool,
    pool_find,
    pool_usage,
    pte,
)
from kdmcp.server.run_tools import (  # noqa: E402  (registers its tools after these)
    breakpoints,
    clear_breakpoints,
    location,
    run_to,
    set_breakpoint,
    step,
    wait_for_stop,
)
from kdmcp.server.walk_tools import handles, walk_list  # noqa: E402  (registers its tools, issue 16)
