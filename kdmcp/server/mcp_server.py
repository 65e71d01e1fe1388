"""The MCP server object: instructions, each client's tool surface, the transcript of every call.

``KdMcpServer`` is the SDK's ``MCPServer`` with three things added through public API: a
middleware that lists each client only its own tools (``ToolSurface``), a ``call_tool`` that
refuses unknown tools as the MCP spec asks (a JSON-RPC error, -32602) and tools outside the
caller's surface as ``policy_denied``, turns the SDK's argument-validation failures into
``invalid_argument`` results, and writes the transcript. The tools themselves are the families
of ``kdmcp/server/tools/``; the prompts (three workflow recipes) in ``prompts.py``, listed to a
client only when it may call every tool a recipe names.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import anyio
import mcp.server.mcpserver.server as sdk_server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.logging import configure_logging as sdk_configure_logging
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, GetPromptResult, InputRequiredResult
from pydantic import ValidationError
from starlette.requests import Request

from kdmcp import __version__
from kdmcp.errors import ErrorCategory, category_list
from kdmcp.prelude import Early
from kdmcp.secret import MASK
from kdmcp.server.app import KdMcpApp
from kdmcp.server.options import ServerOptions
from kdmcp.server.prompts import PROMPTS, PromptArgumentError, served_prompts
from kdmcp.server.redaction import Redactor
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


class ToolSurface:
    """Server middleware: ``tools/list`` answers each client with its own tool surface only, and
    ``prompts/list`` with the prompts whose every tool is in it."""

    def __init__(self, options: ServerOptions) -> None:
        self._options = options

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method not in ("tools/list", "prompts/list") or not isinstance(result, dict):
            return result
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

    async def run_stdio_async(self, early: Early | None = None) -> None:
        """The SDK's stdio transport; after the stdio prelude, its bytes first (``server.handover``)."""
        if early is None:
            await super().run_stdio_async()
            return
        from kdmcp.server.handover import run_stdio

        await run_stdio(self, early)

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
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            # The SDK reports a schema violation as a plain-text ToolError caused by a ValidationError;
            # callers here branch on ``category``, so it becomes invalid_argument naming the fields.
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                log.exception("tool %s failed", name)
                return _error_result("internal", f"{name} failed unexpectedly; see the server log", self.app.redactor)
            fields = sorted({".".join(str(p) for p in place(err["loc"])) or "(arguments)" for err in cause.errors()})
            problems = "; ".join(validation_problems(cause, top="(arguments)"))
            message = f"invalid arguments for {name} ({', '.join(fields)}): {problems}"
            return _error_result("invalid_argument", message, self.app.redactor)
