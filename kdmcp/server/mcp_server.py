"""The MCP server object: instructions, each client's tool surface, the transcript of every call.

``KdMcpServer`` is the SDK's ``MCPServer`` with these added: a middleware that lists each client
only its own tools (``ToolSurface``), its own ``tools/call`` handler and ``call_tool``, which
refuse unknown tools as the MCP spec asks (a JSON-RPC error, -32602) and tools outside the
caller's surface as ``policy_denied``, turn argument-validation failures into
``invalid_argument`` results, and write the transcript, and stdio served by the event loop
(``loop_stdio_server``, below). The tools themselves are the families
of ``kdmcp/server/tools/``; the prompts (three workflow recipes) in ``prompts.py``, listed to a
client only when it may call every tool a recipe names.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.server.mcpserver.server as sdk_server
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.logging import configure_logging as sdk_configure_logging
from mcp.shared._context_streams import create_context_streams
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_PARAMS, CallToolRequestParams, CallToolResult, GetPromptResult, InputRequiredResult
from pydantic import ValidationError
from starlette.requests import Request

from kdmcp import __version__
from kdmcp.errors import ErrorCategory, category_list
from kdmcp.prelude import Early, loop_serves
from kdmcp.secret import MASK
from kdmcp.server.app import KdMcpApp
from kdmcp.server.options import ServerOptions
from kdmcp.server.prompts import PROMPTS, PromptArgumentError, served_prompts
from kdmcp.server.redaction import Redactor
from kdmcp.server.registry import TOOLS, load_families
from kdmcp.validation import place, validation_problems

log = logging.getLogger(__name__)

INSTRUCTIONS = f"""\
kd-mcp drives Microsoft's kd (kernel) and cdb (user mode, dumps).
Start with start_from_state (the WinRM companion's KDNET guest), open_dump (many: triage_dumps) or attach_process;
break_in before reading a live target; resume_for_winrm lets the guest run; stop_kd ends it.
Prefer typed tools, shorter than kd_command: processes (how many), modules (symbols),
backtrace, registers, analyze (crash cause), exception, handles, location, set_breakpoint.
session_id: default the only live session; an address is a kd expression without blanks.
A result is text: [session state "prompt" ms ...], then the answer; a cut output names
the output_id read_output takes. Errors read error[category]: message. Categories: {category_list()}.
"""

_SECRET_ARGUMENTS = ("key", "token", "password")


def _error_result(category: ErrorCategory, message: str, redactor: Redactor) -> CallToolResult:
    """An error as a tool result. The served models and the renderer (and the engine they name) are
    imported by the first call that needs them, not at start-up (docs/performance.md, "Cold start")."""
    from kdmcp.server import models
    from kdmcp.server.render import error_result

    return error_result(models.ErrorResult(category=category, message=message), redactor)


def owner_of(options: ServerOptions, headers: Mapping[str, str] | None) -> str | None:
    """The calling client's name (the owner of its sessions); None on stdio."""
    if options.clients is None:
        return None
    client = options.clients.match_headers(headers)
    # The listener's auth middleware already refused requests without a valid token.
    return client.name if client is not None else "\0unauthenticated"


def surface_of(options: ServerOptions, headers: Mapping[str, str] | None) -> frozenset[str]:
    """The tools the calling client may see and call: ``--tools`` on stdio, its entry's on the listener."""
    if options.clients is None:
        return options.tools
    client = options.clients.match_headers(headers)
    return client.tools if client is not None else frozenset()


def _masked_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments as a transcript may show them: secret-named values masked, in this record only.

    Nothing is registered as a secret here: the arguments are not validated yet and any tool
    may be sent any name, so ``list_sessions(key="f")`` would otherwise mask every "f" for every
    client. A valid key is registered by ``start_kd`` itself, after checking it.
    """
    return {name: MASK if name in _SECRET_ARGUMENTS and value not in (None, "") else value
            for name, value in arguments.items()}


# Off: the tool families are imported by the first call, not once the tools are listed (to
# measure the lazy start: tests/server/test_schema_e2e.py).
ENV_NO_WARM_UP = "KDMCP_NO_WARM_UP"


def warm_up() -> threading.Thread | None:
    """Import the tool families (and with them the engine, the parsers, the result models) in a
    thread of their own, once the tools are listed.

    A start from the kept listing (docs/performance.md, "Cold start") lists the tools without
    them, and the stdio prelude answers the handshake before the SDK is even imported; a client
    then calls its first tool seconds later (a person types, a model thinks), and that call would
    pay the ~0.5 s of imports the start left out. Imported here meanwhile, it does not. A call that
    comes first waits for them, as it would have (``registry.load_families``: one thread imports,
    the others wait for the whole).
    """
    if os.environ.get(ENV_NO_WARM_UP) == "1":
        return None

    def warm() -> None:
        try:
            load_families()
        except Exception:  # the first call will import them again and report what fails
            log.warning("warm-up: the tool families could not be imported", exc_info=True)
        else:
            log.debug("warm-up: the tool families are imported")

    thread = threading.Thread(target=warm, name="kdmcp-warm-up", daemon=True)
    thread.start()
    return thread


class ToolSurface:
    """Server middleware: ``tools/list`` answers each client with its own tool surface only, and
    ``prompts/list`` with the prompts whose every tool is in it; the first ``tools/list`` starts
    the warm-up (``warm_up``)."""

    def __init__(self, options: ServerOptions) -> None:
        self._options = options
        self._warmed = False

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method not in ("tools/list", "prompts/list") or not isinstance(result, dict):
            return result
        if not self._warmed and ctx.method == "tools/list":
            self._warmed = True
            warm_up()
        headers = ctx.request.headers if isinstance(ctx.request, Request) else None
        surface = surface_of(self._options, headers)
        if ctx.method == "prompts/list":
            listed = [p for p in result.get("prompts", []) if p.get("name") in PROMPTS
                      and PROMPTS[p["name"]].visible(surface)]
            return {**result, "prompts": listed}
        return {**result, "tools": [tool for tool in result.get("tools", []) if tool.get("name") in surface]}


# Where a client reads the server's instructions: the handshake of the 2025 protocol generations,
# and the 2026-07-28 generation's discovery request (which has no handshake); the SDK serves both.
_OPENING_METHODS = frozenset({"initialize", "server/discover"})


class EarlierSessions:
    """Server middleware: a listener client that connects again is told, in the instructions it
    opens with (``initialize`` or ``server/discover``), which of its sessions are still live (they
    belong to its token, not to a connection: docs/remote-listener.md, "Sessions and clients")."""

    def __init__(self, app: KdMcpApp) -> None:
        self._app = app

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method not in _OPENING_METHODS or not isinstance(result, dict) or self._app.options.clients is None:
            return result
        from kdmcp.engine import SessionState

        owner = owner_of(self._app.options, ctx.request.headers if isinstance(ctx.request, Request) else None)
        live = [i for i in self._app.manager.infos(owner=owner) if i.state != SessionState.exited]
        if not live:
            return result
        listed = ", ".join(f"{i.session_id} ({i.kind}, {i.state.value})" for i in live)
        note = (f"\nThis client's sessions from an earlier connection are still live: {listed}. Name one with "
                "session_id, or stop_kd it; unused ones are stopped after idle_stop_minutes.")
        return {**result, "instructions": (result.get("instructions") or "") + note}




def _sdk_logging_unless_configured(level: Any) -> None:
    """The SDK's ``configure_logging`` (run by every ``MCPServer()``), skipped where it would do
    nothing: it builds a rich handler (importing rich: ~60-130 ms of a cold start) only to hand it
    to ``logging.basicConfig``, which ignores it once the root logger has a handler — as it has
    when ``kd-mcp serve`` starts (``logs.configure_logging`` runs first)."""
    if logging.getLogger().handlers:
        return
    sdk_configure_logging(level)


# The name MCPServer.__init__ calls (mcp 2.x has no setting that leaves logging alone).
setattr(sdk_server, "configure_logging", _sdk_logging_unless_configured)  # noqa: B010


class KdMcpServer(MCPServer[Any]):
    """MCPServer whose errors, of every kind, are categorized results or protocol errors."""

    def __init__(self, app: KdMcpApp, tools: list[Tool] | None = None) -> None:
        super().__init__(
            name="kd-mcp",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
            middleware=[ToolSurface(app.options), EarlierSessions(app)],
            tools=tools,
        )
        self.app = app
        self.tool_names: frozenset[str] = frozenset()  # what build_server registered
        for prompt in served_prompts():
            self.add_prompt(prompt)
        # Tools and prompts are served; with no resources behind them, the resources capability
        # (derived from the handlers present) would promise what is not there, so its methods are unknown.
        handlers = self._lowlevel_server._request_handlers  # no public way to remove one in mcp 2.x
        for method in ("resources/list", "resources/read", "resources/templates/list"):
            handlers.pop(method, None)
        # tools/call reaches call_tool below directly, not through the SDK's tool layer
        # (MCPServer.call_tool -> ToolManager -> Tool.run -> FuncMetadata.call_fn): every tool's
        # answer is built by call.serve_call, so that layer only added work to each call
        self._lowlevel_server.add_request_handler("tools/call", CallToolRequestParams, self._handle_tools_call)

    async def run_stdio_async(self, early: Early | None = None) -> None:
        """Serve on stdin and stdout: on the event loop where they are pipes (``loop_stdio_server``:
        no thread hop per message), else through the SDK's transport. ``early``: what the stdio
        prelude read and answered (``kdmcp.prelude``), handed over first; the prelude only starts
        where the loop serves (pipes or sockets, POSIX: ``prelude.serve_prelude``)."""
        if not loop_stdio_usable():
            await super().run_stdio_async()
            return
        async with loop_stdio_server(early) as (read_stream, write_stream):
            await self._lowlevel_server.run(read_stream, write_stream,
                                            self._lowlevel_server.create_initialization_options())

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[Any, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        """A prompt, or a JSON-RPC error -32602 naming what is wrong (the MCP spec's code for an
        invalid prompt name or missing arguments), never the SDK's ValueError and its traceback."""
        recipe = PROMPTS.get(name)
        if recipe is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {name}")
        surface = surface_of(self.app.options, context.headers if context is not None else None)
        if not recipe.visible(surface):
            missing = ", ".join(sorted(recipe.tools - surface))
            raise MCPError(code=INVALID_PARAMS,
                           message=f"prompt {name!r} is not available to this client: it calls tools outside "
                           f"its surface ({missing})")
        try:
            recipe.validate(arguments)
        except PromptArgumentError as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None
        return await super().get_prompt(name, arguments, context)

    async def _handle_tools_call(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        """The ``tools/call`` request handler: the SDK's own (``MCPServer._handle_call_tool``) but
        for what a failure returns, here a categorized ``internal`` error, never the exception's text."""
        context = Context(request_context=ctx, mcp_server=self, input_params=params, subscriptions=self._subscriptions)
        try:
            return await self.call_tool(params.name, params.arguments or {}, context)
        except MCPError:
            raise
        except Exception:
            log.exception("tool %s failed", params.name)
            return self._failed(params.name)

    def _failed(self, name: str) -> CallToolResult:
        return _error_result("internal", f"{name} failed unexpectedly; see the server log", self.app.redactor)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        transcript = self.app.transcript
        if transcript is None:
            return await self._answer(name, arguments, context)
        t0 = time.monotonic()
        client = owner_of(self.app.options, context.headers if context is not None else None)
        transcript.record("request", tool=name, args=_masked_arguments(arguments), client=client)
        from kdmcp.server.render import read_error, result_data

        try:
            result = await self._answer(name, arguments, context)
        except MCPError as exc:  # an unknown tool: a protocol error, answered in the transcript too
            transcript.record("result", tool=name, client=client, status="error", category="protocol_error",
                              elapsed_ms=round((time.monotonic() - t0) * 1000, 3), text=exc.error.message)
            raise
        data = (result_data(result) or read_error(result)) if isinstance(result, CallToolResult) else None
        data = data or {}
        transcript.record(
            "result", tool=name, client=client,
            status="error" if isinstance(result, CallToolResult) and result.is_error else "ok",
            category=data.get("category"), session_id=data.get("session_id"), state=data.get("state"),
            output_id=data.get("output_id"), elapsed_ms=round((time.monotonic() - t0) * 1000, 3),
            text=data.get("output") or data.get("message"),
        )
        await anyio.to_thread.run_sync(self.app.flush_session_logs)
        return result

    async def _answer(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> CallToolResult | InputRequiredResult:
        if name not in self.tool_names:
            # The MCP spec: an unknown tool is a protocol error (-32602), not a tool result.
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        if name not in surface_of(self.app.options, context.headers if context is not None else None):
            return _error_result("policy_denied", f"tool {name!r} is not available to this client", self.app.redactor)
        from kdmcp.server import call  # call.py imports this module

        if context is None:
            context = Context(mcp_server=self, subscriptions=self._subscriptions)
        try:
            # as the SDK validates them (its pre-parse of JSON in strings included), by the tool's cached model
            validated = call.validated_arguments(name, arguments)
        except ValidationError as exc:
            # callers branch on ``category``: a schema violation is invalid_argument naming the fields
            fields = sorted({".".join(str(p) for p in place(err["loc"])) or "(arguments)" for err in exc.errors()})
            problems = "; ".join(validation_problems(exc, top="(arguments)"))
            message = f"invalid arguments for {name} ({', '.join(fields)}): {problems}"
            return _error_result("invalid_argument", message, self.app.redactor)
        try:
            return await call.serve_call(context, TOOLS[name].fn, validated)
        except MCPError:
            raise
        except Exception:  # serve_call categorizes every failure of the work; this is one of its own
            log.exception("tool %s failed", name)
            return self._failed(name)


# ------------------------------------------------------------------ stdio on the event loop
#
# stdio without worker threads: JSON-RPC lines read and written on the event loop (POSIX pipes).
#
# The SDK's ``stdio_server`` reads stdin and writes stdout through ``anyio.wrap_file``: every line
# read is a hop to a worker thread and back, every message written two (``write``, ``flush``) —
# three thread hops per tool call on top of the one the call's own work takes (``call.invoke``),
# each a wake-up of another thread (~0.1 ms on the 2-core machine the benches run on, more when
# the cores are busy; docs/performance.md, "Over MCP: one kd_command r"). Where stdin and stdout
# are pipes or sockets on POSIX — how an MCP client starts a server — they are read and written
# here by the event loop itself (``connect_read_pipe`` / ``connect_write_pipe``): no thread.
#
# Everything else is the SDK's transport's: the same newline-delimited UTF-8 JSON (an undecodable
# byte replaced, a line that is not a JSON-RPC message handed to the server as the exception the
# SDK's reader hands it), the same context-carrying streams, and the same claim of the standard
# descriptors: while serving, fd 0 reads the null device and fd 1 writes to stderr, so a child
# (a debugger) or a stray ``print`` cannot read the client's requests or tear its answers; both
# are put back on exit. Anywhere else (Windows, a terminal, a regular file) the SDK's transport
# serves (``loop_stdio_usable``).

# A line may be as long as the client makes it (the SDK's reader has no bound either); the
# reader's buffer is bounded only so that a line without end cannot take all memory.
LINE_LIMIT = 1 << 30


def loop_stdio_usable() -> bool:
    """Whether this transport can serve: POSIX, stdin and stdout pipes or sockets (a terminal is
    left to the SDK: a non-blocking terminal would outlive the server in the shell)."""
    return loop_serves(0, 1)


class _Claim:
    """fd 0 and 1 moved aside for the server's life: the wire on private duplicates, fd 0 on the
    null device, fd 1 on stderr (as the SDK's ``stdio_server`` does)."""

    def __init__(self) -> None:
        self.stdin = os.dup(0)
        self.stdout = os.dup(1)
        os.set_inheritable(self.stdin, False)
        os.set_inheritable(self.stdout, False)
        _point(0, os.devnull, os.O_RDONLY)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr to point at: stray output goes nowhere
            _point(1, os.devnull, os.O_WRONLY)

    def release(self) -> None:
        """The wire back on fd 0 and 1, blocking as it was given (the loop made it non-blocking)."""
        for private, fd in ((self.stdin, 0), (self.stdout, 1)):
            with contextlib.suppress(OSError):
                os.set_blocking(private, True)
                os.dup2(private, fd)
            with contextlib.suppress(OSError):
                os.close(private)


def _point(fd: int, path: str, flags: int) -> None:
    """``fd`` opened on ``path``."""
    opened = os.open(path, flags)
    try:
        os.dup2(opened, fd)
    finally:
        os.close(opened)


def _message(line: bytes) -> SessionMessage | Exception:
    try:
        text = line.decode("utf-8", errors="replace")
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False))
    except Exception as exc:  # the SDK's reader hands the server the exception, and reads on
        return exc


@asynccontextmanager
async def loop_stdio_server(early: Early | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` over the process's stdin and stdout, served by the loop;
    fd 0 and 1 claimed meanwhile (``_Claim``)."""
    claim = _Claim()
    try:
        async with loop_streams(claim.stdin, claim.stdout, early) as streams:
            yield streams
    finally:
        claim.release()


@asynccontextmanager
async def loop_streams(stdin_fd: int, stdout_fd: int, early: Early | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` of JSON-RPC lines read from ``stdin_fd`` and written to
    ``stdout_fd`` (pipes or sockets) by the event loop; the streams end at end of input."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
    if early is not None:  # what the prelude read comes first
        reader.feed_data(early.prefix)
    # closefd=False: the descriptors are the caller's (the claim's) to close
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(stdin_fd, "rb", buffering=0, closefd=False))
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(stdout_fd, "wb", buffering=0, closefd=False))
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)

    read_stream_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_stream_reader = create_context_streams[SessionMessage](0)

    async def stdin_reader() -> None:
        async with read_stream_writer:
            while line := await reader.readline():  # b"": end of input
                if early is not None:
                    early.incoming(line)
                await read_stream_writer.send(_message(line))

    async def stdout_writer() -> None:
        async with write_stream_reader:
            async for session_message in write_stream_reader:
                data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
                if early is not None:
                    kept = early.outgoing(data)
                    if kept is None:  # the SDK's twin of an early answer, already sent
                        continue
                    data = kept
                writer.write(data + b"\n")
                await writer.drain()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stdin_reader)
            tg.start_soon(stdout_writer)
            yield read_stream, write_stream
    finally:
        read_transport.close()
        write_transport.close()
