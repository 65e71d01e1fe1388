"""The MCP surface: tool registration, argument schemas, errors, progress and cancellation.

Handlers are async and run the blocking engine calls in worker threads, so a ``break_in``
is served while a ``kd_command`` waits on a hung debugger. Every result leaves as a
``CallToolResult`` built here: ``structuredContent`` is the (redacted) model and the text
content is the same JSON. Errors are ``isError`` results without ``structuredContent`` (it
would have to match the tool's output schema, and clients check that): their first text
block reads ``error[category]: message``, a second one holds the other fields as JSON
(docs/clients.md) — never a traceback. An unknown tool is a JSON-RPC error, as the MCP
spec asks.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ContentBlock,
    InputRequiredResult,
    ListToolsResult,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field, ValidationError

from kdmcp import __version__
from kdmcp.errors import ERROR_CATEGORIES, NEXT_STEP, InvalidArgument, KdMcpError
from kdmcp.secret import MASK
from kdmcp.server import models
from kdmcp.server.app import KdMcpApp
from kdmcp.server.surface import ALL_TOOLS
from kdmcp.validation import validation_problems

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_PROGRESS_EVERY_S = 1.0

SessionId = Annotated[
    str | None,
    Field(description="the session to use; may be omitted when exactly one session is live", max_length=64),
]
# How many items of each list a typed read returns (its counts say how many there were).
LIST_LIMIT = 200
Limit = Annotated[int, Field(description="return at most this many items of each list", ge=1, le=5000)]


Timeout = Annotated[
    float | None,
    Field(description="seconds to wait before giving up (default from the config)", gt=0, le=3600),
]


def category_list(*, markdown: bool = False) -> str:
    """Every error category with its next step, in their one order: ``a (do x), b (do y), …``."""
    return ", ".join(f"`{c}` ({NEXT_STEP[c]})" if markdown else f"{c} ({NEXT_STEP[c]})" for c in ERROR_CATEGORIES)


INSTRUCTIONS = f"""\
kd-mcp drives Microsoft's kernel debugger (kd.exe) and cdb.exe.
Typical loop: start_from_state (connect using the WinRM companion's state file) -> break_in ->
kd_command (any kd command; one per call) -> resume_for_winrm (let the guest run so WinRM
answers) -> break_in again. Every result reports the session state after the call; events
(DbgPrint, breakpoints, bugchecks, reboots) that arrived since the previous call are attached.
Long outputs are cut inline: read the rest with read_output(output_id). An error's text starts
error[category]: message (other fields follow as JSON). Categories: {category_list()}.
"""

# An error result's first text block: ``error[<category>]: <message>`` (the message may span lines).
ERROR_TEXT = re.compile(r"error\[([a-z_]+)\]: (.*)", re.DOTALL)


def error_result(error: models.ErrorResult, app: KdMcpApp) -> CallToolResult:
    """An ``isError`` result every client reads: the category and message as text, first; the other
    fields (session_id, state, output_id, partial_output, exit_code: those set) as a JSON block."""
    data = app.redacted(error)
    content: list[ContentBlock] = [TextContent(type="text", text=f"error[{data['category']}]: {data['message']}")]
    details = {name: value for name, value in data.items() if name not in ("category", "message") and value is not None}
    if details:
        content.append(TextContent(type="text", text=json.dumps(details)))
    return CallToolResult(content=content, is_error=True)


def read_error(result: CallToolResult) -> dict[str, Any] | None:
    """An error result as data (``category``, ``message`` and the fields set), or None if it is not one."""
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    match = ERROR_TEXT.fullmatch(texts[0]) if result.is_error and texts else None
    if match is None:
        return None
    data: dict[str, Any] = {"category": match[1], "message": match[2]}
    if len(texts) > 1:
        data.update(json.loads(texts[1]))
    return data


def from_exception(exc: KdMcpError, app: KdMcpApp) -> CallToolResult:
    output_id = None
    if exc.session_id is not None and exc.output_span is not None:
        output_id = KdMcpApp.output_id(exc.session_id, *exc.output_span)
    return error_result(
        models.ErrorResult(
            category=exc.category,
            message=exc.message,
            session_id=exc.session_id,
            state=exc.state,
            partial_output=exc.partial_output,
            output_id=output_id,
            exit_code=exc.exit_code,
        ),
        app,
    )


def ok_result(model: BaseModel, app: KdMcpApp) -> CallToolResult:
    data = app.redacted(model)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data))], structured_content=data)


def _owner(app: KdMcpApp, ctx: Context[Any, Any] | None) -> str | None:
    """The calling client's name (the owner of its sessions); None on stdio."""
    if app.options.clients is None or ctx is None:
        return None
    client = app.options.clients.match_headers(ctx.headers)
    # The listener's auth middleware already refused requests without a valid token.
    return client.name if client is not None else "\0unauthenticated"


_SECRET_ARGUMENTS = ("key", "token", "password")


def _masked_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments as a transcript may show them: secret-named values masked, in this record only.

    Nothing is registered as a secret here: the arguments are not validated yet and any tool
    may be sent any name, so ``list_sessions(key="f")`` would otherwise mask every "f" for every
    client. A valid key is registered by ``start_kd`` itself, after checking it.
    """
    return {name: MASK if name in _SECRET_ARGUMENTS and value not in (None, "") else value
            for name, value in arguments.items()}


def _surface(app: KdMcpApp, headers: Any) -> frozenset[str]:
    if app.options.clients is None:
        return app.options.tools
    client = app.options.clients.match_headers(headers)
    return client.tools if client is not None else frozenset()


class KdMcpServer(MCPServer[Any]):
    """MCPServer whose argument-validation failures are categorized errors like any other.

    The SDK reports a schema violation as a plain-text ``ToolError``; callers here branch on
    ``category``, so such failures become ``invalid_argument`` results naming the fields.
    """

    def __init__(self, app: KdMcpApp) -> None:
        super().__init__(
            name="kd-mcp",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
        )
        self.app = app
        # Only tools are served: with no prompts or resources behind them, the capabilities (derived
        # from the handlers present) would promise what is not there, so their methods are unknown.
        handlers = self._lowlevel_server._request_handlers  # no public way to remove one in mcp 2.x
        for method in ("prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list"):
            handlers.pop(method, None)

    async def _handle_list_tools(
        self, ctx: Any, params: Any
    ) -> ListToolsResult:
        """Each client lists only its own tool surface (the SDK's hook; private in mcp 2.x)."""
        surface = _surface(self.app, getattr(ctx.request, "headers", None) if ctx is not None else None)
        return ListToolsResult(tools=[t for t in await self.list_tools() if t.name in surface])

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        transcript = self.app.transcript
        if transcript is None:
            return await self._call_tool(name, arguments, context)
        t0 = time.monotonic()
        client = _owner(self.app, context)
        transcript.record("request", tool=name, args=_masked_arguments(arguments), client=client)
        result = await self._call_tool(name, arguments, context)
        data = (result.structured_content or read_error(result)) if isinstance(result, CallToolResult) else None
        data = data or {}
        transcript.record(
            "result", tool=name, client=client, status="error" if getattr(result, "is_error", False) else "ok",
            category=data.get("category"), session_id=data.get("session_id"), state=data.get("state"),
            output_id=data.get("output_id"), elapsed_ms=round((time.monotonic() - t0) * 1000, 3),
            text=data.get("output") or data.get("message"),
        )
        await anyio.to_thread.run_sync(self.app.flush_session_logs)
        return result

    async def _call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> CallToolResult | InputRequiredResult:
        if name not in ALL_TOOLS:
            # The MCP spec: an unknown tool is a protocol error (-32602), not a tool result.
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        surface = _surface(self.app, context.headers if context is not None else None)
        if name not in surface:
            return error_result(
                models.ErrorResult(category="policy_denied", message=f"tool {name!r} is not available to this client"),
                self.app,
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                fields = sorted({".".join(str(p) for p in err["loc"]) or "(arguments)" for err in cause.errors()})
                problems = "; ".join(validation_problems(cause, top="(arguments)"))
                message = f"invalid arguments for {name} ({', '.join(fields)}): {problems}"
            else:
                log.exception("tool %s failed", name)
                return error_result(
                    models.ErrorResult(category="internal", message=f"{name} failed unexpectedly; see the server log"),
                    self.app,
                )
            return error_result(models.ErrorResult(category="invalid_argument", message=message), self.app)


async def _run(
    app: KdMcpApp,
    ctx: Context[Any, Any] | None,
    work: Callable[[threading.Event], BaseModel],
    *,
    progress_label: str | None = None,
    total_s: float | None = None,
    on_cancel: Callable[[threading.Event], None] | None = None,
) -> CallToolResult:
    """Run blocking ``work`` in a thread; send progress meanwhile; map errors; honour cancellation."""
    cancel = threading.Event()
    box: dict[str, BaseModel | KdMcpError] = {}

    def target() -> None:
        try:
            box["result"] = work(cancel)
        except KdMcpError as exc:
            box["error"] = exc
        except ValidationError as exc:  # a model built from the caller's values refused them
            box["error"] = InvalidArgument("; ".join(validation_problems(exc)))
        except Exception:
            log.exception("tool work failed")
            box["error"] = KdMcpError("the tool failed unexpectedly; see the server log")

    done = anyio.Event()

    async def runner() -> None:
        try:
            await anyio.to_thread.run_sync(target, abandon_on_cancel=True)
        finally:
            done.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(runner)
            if progress_label is not None and ctx is not None:
                elapsed = 0.0
                while not done.is_set():
                    with anyio.move_on_after(_PROGRESS_EVERY_S):
                        await done.wait()
                    if done.is_set():
                        break
                    elapsed += _PROGRESS_EVERY_S
                    message = app.redact_text(f"{progress_label} ({elapsed:.0f}s)")
                    await ctx.report_progress(elapsed, total_s, message)
    except anyio.get_cancelled_exc_class():
        cancel.set()
        if on_cancel is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(on_cancel, cancel)
        raise
    if "error" in box:
        error = box["error"]
        assert isinstance(error, KdMcpError)
        return from_exception(error, app)
    result = box["result"]
    assert isinstance(result, BaseModel)
    return ok_result(result, app)


def build_server(app: KdMcpApp) -> KdMcpServer:
    """The MCP server with kd-mcp's tools registered on ``app``."""
    server = KdMcpServer(app)
    cfg = app.options.config

    @server.tool(
        annotations=ToolAnnotations(
            title="Connect to the guest from the WinRM companion's state file",
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True,
        ),
    )
    async def start_from_state(
        state_file: Annotated[
            str | None, Field(description="path of the winrm-kd-session-v1 state file (default: config, "
                              "KDMCP_STATE_FILE, then the companion's default)", max_length=4096)
        ] = None,
        initial_break: Annotated[bool, Field(description="break in as soon as kd connects")] = False,
        use_target_host: Annotated[
            bool, Field(description="pass guest_host as kd's target= (needed when the host must reach out)")
        ] = False,
        timeout_s: Timeout = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.StartResult]:
        """Start kd.exe on KDNET with the port and key the WinRM companion wrote, and wait for the guest.

        Returns once kd is connected (the target runs unless initial_break) or fails with
        not_connected when the guest does not answer within the timeout (then kd is stopped).
        """
        wait = timeout_s or cfg.timeouts.startup
        return await _run(
            app, ctx, lambda c: app.start_from_state(state_file, initial_break, timeout_s, use_target_host, c,
                                           owner=_owner(app, ctx)),
            progress_label="waiting for the guest to connect", total_s=wait, on_cancel=app.abort_start,
        )

    @server.tool(
        annotations=ToolAnnotations(
            title="Connect to a guest over KDNET", read_only_hint=False, destructive_hint=False,
            idempotent_hint=False, open_world_hint=True,
        ),
    )
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
        initial_break: Annotated[bool, Field(description="break in as soon as kd connects")] = False,
        timeout_s: Timeout = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.StartResult]:
        """Start kd.exe on KDNET with an explicit port and key, or a named connection from the config."""
        wait = timeout_s or cfg.timeouts.startup
        return await _run(
            app, ctx, lambda c: app.start_kd(port, key, target_host, connection, initial_break, timeout_s, c,
                                   owner=_owner(app, ctx)),
            progress_label="waiting for the guest to connect", total_s=wait, on_cancel=app.abort_start,
        )

    @server.tool(
        annotations=ToolAnnotations(
            title="Run one debugger command", read_only_hint=False, destructive_hint=True,
            idempotent_hint=False, open_world_hint=False,
        ),
    )
    async def kd_command(
        command: Annotated[str, Field(description="one kd/cdb command line, e.g. 'k', 'lm', '!analyze -v'",
                                      min_length=1, max_length=4000)],
        session_id: SessionId = None,
        timeout_s: Timeout = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.CommandResult]:
        """Run one command at the debugger's prompt and return its output (capped; see read_output).

        The target must be broken in (else target_running). Go-class commands (g, gh, gn, gu)
        return as soon as the target is confirmed running.
        """
        def cancel_command(_cancel: threading.Event) -> None:
            """The client gave up on the command: stop kd working on it (Ctrl+C)."""
            try:
                app.manager.get(session_id, owner=_owner(app, ctx)).break_in()
            except KdMcpError as exc:
                log.info("could not cancel %r: %s", command, exc.message)

        return await _run(
            app, ctx, lambda _c: app.kd_command(command, session_id, timeout_s, owner=_owner(app, ctx)),
            progress_label=f"running {command!r}", total_s=timeout_s or cfg.timeouts.command,
            on_cancel=cancel_command,
        )

    def read_tool(title: str) -> ToolAnnotations:
        return ToolAnnotations(title=title, read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                               open_world_hint=False)

    async def inspect(ctx: Context[Any, Any] | None, command: str, session_id: str | None, limit: int,
                      timeout_s: float | None = None) -> CallToolResult:
        return await _run(
            app, ctx, lambda _c: app.inspect(command, session_id, limit, timeout_s, owner=_owner(app, ctx)),
            progress_label=f"running {command!r}", total_s=timeout_s or cfg.timeouts.command,
        )

    @server.tool(annotations=read_tool("Registers"))
    async def registers(
        session_id: SessionId = None,
        register: Annotated[str | None, Field(description="one register (rip, rsp, eax, efl…); default all",
                                              pattern=r"^[A-Za-z][A-Za-z0-9]{0,15}$")] = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.InspectResult]:
        """The register context as a typed record (`r`): values, flags, segments, current instruction."""
        return await inspect(ctx, f"r {register}" if register else "r", session_id, LIST_LIMIT)

    @server.tool(annotations=read_tool("Call stack"))
    async def backtrace(
        session_id: SessionId = None,
        variant: Annotated[Literal["k", "kb", "kv", "kn", "kp", "kP", "kc", "kL", "knL"],
                           Field(description="the k command: kb/kv add arguments, kn numbers frames")] = "kn",
        limit: Limit = LIST_LIMIT,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.InspectResult]:
        """The current thread's stack as frames (module, function, offset, addresses, source)."""
        return await inspect(ctx, variant, session_id, limit)

    @server.tool(annotations=read_tool("Loaded modules"))
    async def modules(
        session_id: SessionId = None,
        pattern: Annotated[str | None, Field(description="module name pattern, e.g. nt or win32k*",
                                             pattern=r"^[A-Za-z0-9_*?.\-]{1,64}$")] = None,
        verbose: Annotated[bool, Field(description="lmv: image path, timestamp, checksum, versions")] = False,
        limit: Limit = LIST_LIMIT,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.InspectResult]:
        """Loaded modules (`lm`, `lm m PATTERN`, `lmv …`) with ranges and symbol status."""
        command = "lmv" if verbose else "lm"
        if pattern:
            command += f" m {pattern}"
        return await inspect(ctx, command, session_id, limit)

    @server.tool(annotations=read_tool("Processes"))
    async def processes(
        session_id: SessionId = None,
        name: Annotated[str | None, Field(description="only processes with this image name, e.g. lsass.exe",
                                          pattern=r"^[A-Za-z0-9_.\-]{1,64}$")] = None,
        limit: Limit = LIST_LIMIT,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.InspectResult]:
        """Processes (`!process 0 0 [name]`): address, cid, parent, DirBase, handle count, image."""
        return await inspect(ctx, f"!process 0 0 {name}" if name else "!process 0 0", session_id, limit)

    @server.tool(annotations=read_tool("Crash analysis"))
    async def analyze(
        session_id: SessionId = None,
        timeout_s: Timeout = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.InspectResult]:
        """`!analyze -v` as a record: bugcheck code and arguments, faulting module, bucket, stack."""
        return await inspect(ctx, "!analyze -v", session_id, LIST_LIMIT,
                             timeout_s or max(cfg.timeouts.command, 300.0))

    @server.tool(annotations=read_tool("Target version"))
    async def vertarget(
        session_id: SessionId = None, ctx: Context[Any, Any] | None = None
    ) -> Annotated[CallToolResult, models.InspectResult]:
        """The target's OS, build, architecture, processors, kernel base and uptime (`vertarget`)."""
        return await inspect(ctx, "vertarget", session_id, LIST_LIMIT)

    @server.tool(
        annotations=ToolAnnotations(
            title="Break into the running target", read_only_hint=False, destructive_hint=False,
            idempotent_hint=True, open_world_hint=False,
        ),
    )
    async def break_in(session_id: SessionId = None, timeout_s: Timeout = None,
                       ctx: Context[Any, Any] | None = None) -> Annotated[CallToolResult, models.BreakResult]:
        """Break in (Ctrl+C) and wait for the prompt; also cancels a command that hangs.

        While broken in, the guest is frozen: WinRM and everything else on it stop answering.
        """
        return await _run(app, ctx, lambda _c: app.break_in(session_id, timeout_s, owner=_owner(app, ctx)))

    @server.tool(
        annotations=ToolAnnotations(
            title="Let the target run", read_only_hint=False, destructive_hint=False,
            idempotent_hint=False, open_world_hint=False,
        ),
    )
    async def continue_go(
        session_id: SessionId = None,
        command: Annotated[str, Field(description="the go command: g, gh, gn, or g with an address",
                                      min_length=1, max_length=256)] = "g",
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.ContinueResult]:
        """Resume the target and return once it is confirmed running (or stopped again at once)."""
        return await _run(app, ctx, lambda _c: app.continue_go(session_id, command, owner=_owner(app, ctx)))

    @server.tool(
        annotations=ToolAnnotations(
            title="Resume the guest so WinRM answers again", read_only_hint=False, destructive_hint=False,
            idempotent_hint=False, open_world_hint=False,
        ),
    )
    async def resume_for_winrm(
        session_id: SessionId = None,
        wait_s: Annotated[float | None, Field(description="seconds to let the guest run before returning "
                                              "(default: timeouts.continue_wait_sec)", ge=0, le=600)] = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.ResumeResult]:
        """Continue the target, confirm it runs, let it run wait_s seconds, and say what happened.

        The hint names the next step: retry the WinRM call (target running) or inspect the stop.
        """
        wait = cfg.timeouts.continue_wait_sec if wait_s is None else wait_s
        return await _run(
            app, ctx, lambda c: app.resume_for_winrm(session_id, wait_s, c, owner=_owner(app, ctx)),
            progress_label="letting the guest run", total_s=wait,
        )

    @server.tool(
        annotations=ToolAnnotations(
            title="Read a session's output", read_only_hint=True, destructive_hint=False,
            idempotent_hint=True, open_world_hint=False,
        ),
    )
    async def read_output(
        session_id: SessionId = None,
        output_id: Annotated[str | None, Field(description="an output_id from a result: reads that output",
                                               max_length=128)] = None,
        offset: Annotated[int, Field(description="byte offset (within output_id's output, if given)", ge=0)] = 0,
        limit: Annotated[int, Field(description="bytes to read at most", ge=1, le=1024 * 1024)] = 65536,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.OutputChunk]:
        """Read any part of a session's output by offset; nothing is ever dropped (ended sessions too)."""
        return await _run(app, ctx, lambda _c: app.read_output(session_id, output_id, offset, limit,
                                                                 owner=_owner(app, ctx)))

    @server.tool(
        annotations=ToolAnnotations(
            title="End a debugging session", read_only_hint=False, destructive_hint=True,
            idempotent_hint=False, open_world_hint=False,
        ),
    )
    async def stop_kd(
        session_id: SessionId = None,
        resume: Annotated[bool, Field(description="resume a broken-in kernel target before quitting "
                                      "(a guest left at a break is frozen)")] = True,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, models.StopResult]:
        """Stop the debugger: resume a live kernel target, quit, and kill only as a last resort."""
        return await _run(app, ctx, lambda _c: app.stop_kd(session_id, resume, owner=_owner(app, ctx)))

    @server.tool(
        annotations=ToolAnnotations(
            title="List sessions", read_only_hint=True, destructive_hint=False, idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    async def list_sessions(ctx: Context[Any, Any] | None = None) -> Annotated[CallToolResult, models.SessionList]:
        """Live and recently ended sessions with their states."""
        return await _run(app, ctx, lambda _c: app.list_sessions(owner=_owner(app, ctx)))

    @server.tool(
        annotations=ToolAnnotations(
            title="Check the setup", read_only_hint=True, destructive_hint=False, idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    async def health_check(ctx: Context[Any, Any] | None = None) -> Annotated[CallToolResult, models.HealthResult]:
        """Which debuggers are found (and their versions), whether the config and state file are valid, sessions."""
        return await _run(app, ctx, lambda _c: app.health_check(owner=_owner(app, ctx)))

    return server
