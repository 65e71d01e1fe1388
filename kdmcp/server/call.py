"""The one wrapper every tool call goes through: owner, worker thread, progress, errors, cancellation.

A tool's function (``registry.py``) runs in a worker thread, so a ``break_in`` is served while a
``kd_command`` waits on a hung debugger. What the work returns or raises leaves through
``render.py``; a client's cancellation sets ``Call.cancel`` and runs what the work registered
with ``Call.on_cancel`` (stop the debugger a start waits on, break off a command).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import logging
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool as ServedTool
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import BaseModel, ValidationError

from kdmcp.errors import InvalidArgument, KdMcpError
from kdmcp.server.app import KdMcpApp
from kdmcp.server.asking import FormAsker, asking_channel, asking_with, serve_in_rounds, within_call
from kdmcp.server.mcp_server import KdMcpServer, owner_of
from kdmcp.server.registry import TOOLS, Tool
from kdmcp.server.schema import cached_listing, compact_schema, served_annotations, store_surface, surface_key
from kdmcp.validation import validation_problems

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 1.0


def _every_second(ctx: Context[Any, Any], call: Call) -> Callable[[], list[asyncio.Task[None]]]:
    """Report the call's progress every PROGRESS_EVERY_S from now until the returned function is
    called; it returns the reports still being sent, which the caller awaits (none may follow
    the call's answer). A tick before the work named its progress sends nothing.

    A timer on the event loop, not a task beside the work: a task group with a progress task
    cost two loop iterations per call, ~0.5 ms of a 6 ms ``r`` round trip over stdio, for a
    report only calls longer than a second ever send. kd-mcp serves on asyncio (``anyio.run``'s
    default, as the SDK's runners do), so the loop is asyncio's.
    """
    loop = asyncio.get_running_loop()
    sending: set[asyncio.Task[None]] = set()
    elapsed = 0.0
    handle: asyncio.TimerHandle | None = None

    async def send(seconds: float, progress: str, total_s: float | None) -> None:
        try:
            await ctx.report_progress(seconds, total_s, call.app.redactor.text(f"{progress} ({seconds:.0f}s)"))
        except Exception as exc:  # the call may have answered meanwhile; progress is best effort
            log.debug("progress not sent: %s", exc)

    def tick() -> None:
        nonlocal elapsed, handle
        elapsed += PROGRESS_EVERY_S
        if call.progress_text is not None:
            task = loop.create_task(send(elapsed, call.progress_text, call.progress_total))
            sending.add(task)
            task.add_done_callback(sending.discard)
        handle = loop.call_later(PROGRESS_EVERY_S, tick)

    handle = loop.call_later(PROGRESS_EVERY_S, tick)

    async def send_count(done: float, total: float | None, text: str) -> None:
        try:
            await ctx.report_progress(done, total, call.app.redactor.text(text))
        except Exception as exc:
            log.debug("progress not sent: %s", exc)

    def count(done: float, total: float | None, text: str) -> None:  # from the work's threads
        def schedule() -> None:
            task = loop.create_task(send_count(done, total, text))
            sending.add(task)
            task.add_done_callback(sending.discard)

        with contextlib.suppress(RuntimeError):  # the loop is gone: the call has ended
            loop.call_soon_threadsafe(schedule)

    call._counter = count

    def stop() -> list[asyncio.Task[None]]:
        call._counter = None
        if handle is not None:
            handle.cancel()
        return list(sending)

    return stop


class Call:
    """One tool call as its work sees it: the app, the calling client, the call's cancel flag, and
    what the work says of itself while it runs (its progress line, what stops it if the client
    gives up)."""

    def __init__(self, app: KdMcpApp, owner: str | None, ctx: Context[Any, Any] | None = None) -> None:
        self.app = app
        self.owner = owner
        self.ctx = ctx
        # Whether what the work returns is read beyond its text block (False only for a client's
        # call to a server that sends text alone: ``kd_command`` then reads its record's kind only).
        self.record_read = True
        self.cancel = threading.Event()
        self.progress_text: str | None = None
        self.progress_total: float | None = None
        self._lock = threading.Lock()
        self._cancellers: list[Callable[[], object]] = []
        self._counter: Callable[[float, float | None, str], None] | None = None

    def progress(self, text: str, total_s: float | None = None) -> None:
        """Report ``text (Ns)`` to the client every second while the work runs (``total_s``: its bound)."""
        self.progress_text, self.progress_total = text, total_s

    def count(self, done: float, total: float | None, text: str) -> None:
        """Report ``done`` of ``total`` items to the client now (a batch's, one notification per
        item; callable from any thread; ``done`` only ever increases, as MCP's progress must; ``total``
        None while not yet known). The per-second report stops: one scale per call."""
        self.progress_text = None
        counter = self._counter
        if counter is not None:
            counter(done, total, text)

    def on_cancel(self, stop: Callable[[], object]) -> None:
        """What stops the work if the client cancels the call (Ctrl+C to kd, the debugger a start
        waits on). Registered after the cancellation came, it runs at once."""
        with self._lock:
            cancelled = self.cancel.is_set()
            if not cancelled:
                self._cancellers.append(stop)
        if cancelled:
            stop()

    def cancelled(self) -> None:
        """The client gave up: set the flag and run what the work registered (in this thread)."""
        with self._lock:
            self.cancel.set()
            stops, self._cancellers = self._cancellers, []
        for stop in stops:
            try:
                stop()
            except KdMcpError as exc:
                log.info("could not cancel: %s", exc.message)


def app_of(ctx: Context[Any, Any] | None) -> KdMcpApp:
    """The app behind the server this call reached (the SDK hands every tool its context)."""
    server = ctx.mcp_server if ctx is not None else None
    if not isinstance(server, KdMcpServer):
        raise TypeError("kd-mcp tools run on a KdMcpServer (build_server)")
    return server.app


Outcome = BaseModel | KdMcpError


def _caught(work: Callable[[], BaseModel]) -> Outcome:
    try:
        return work()
    except KdMcpError as exc:
        return exc
    except ValidationError as exc:  # a model built from the caller's values refused them
        return InvalidArgument("; ".join(validation_problems(exc)))
    except Exception:
        log.exception("tool work failed")
        return KdMcpError("the tool failed unexpectedly; see the server log")


async def invoke(ctx: Context[Any, Any] | None, fn: Callable[..., Any], arguments: dict[str, Any]) -> Outcome:
    """Call a tool's function with validated ``arguments``: the one path of every call, a
    client's or a ``debug_batch`` step's. A plain function runs in a worker thread (the engine
    blocks, with bounds, and a ``break_in`` must be served meanwhile: ``Workers``); a
    coroutine function on the loop. Progress is sent while it runs; a client's cancellation
    sets ``call.cancel`` and runs what the work registered with ``call.on_cancel``."""
    app = app_of(ctx)
    return await _invoke(ctx, app, owner_of(app.options, ctx.headers if ctx is not None else None), fn, arguments)


async def _invoke(ctx: Context[Any, Any] | None, app: KdMcpApp, owner: str | None, fn: Callable[..., Any],
                  arguments: dict[str, Any], *, record_read: bool = True) -> Outcome:
    call = Call(app, owner, ctx)
    call.record_read = record_read
    if inspect.iscoroutinefunction(fn):
        try:
            result: BaseModel = await fn(call, **arguments)
        except KdMcpError as exc:
            return exc
        return result
    stop_progress = _every_second(ctx, call) if ctx is not None else None
    try:
        return await WORKERS.run(lambda: _caught(lambda: within_call(call, lambda: fn(call, **arguments))))
    except anyio.get_cancelled_exc_class():
        # the work runs on, in its thread, until what it registered stops it; the thread then ends
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(call.cancelled)
        raise
    finally:
        sending = stop_progress() if stop_progress is not None else None
        if sending:  # a report on its way: it goes out before the answer does
            with anyio.CancelScope(shield=True):
                for task in sending:
                    await task


def rendered(outcome: Outcome, app: KdMcpApp) -> CallToolResult:
    """What a client receives for ``outcome`` (``render.py``: imported by the first call, with the
    served models and the engine they name, not at start-up)."""
    from kdmcp.server import render

    if isinstance(outcome, KdMcpError):
        return render.from_exception(outcome, app.redactor)
    return render.ok_result(outcome, app.redactor, structured=app.options.structured)


async def serve_call(ctx: Context[Any, Any], fn: Callable[..., Any],
                     arguments: dict[str, Any]) -> CallToolResult | InputRequiredResult:
    """A client's call: ``invoke``, then rendered; a command its policy refuses may be put to the
    person meanwhile (``asking.py``), by a request mid-call or in ``input_required`` rounds."""
    app = app_of(ctx)
    owner = owner_of(app.options, ctx.headers)
    channel = asking_channel(ctx, app, owner)
    if channel == "rounds":
        return await serve_in_rounds(ctx, app, owner, lambda c: invoke(c, fn, arguments),
                                     lambda outcome: rendered(outcome, app))
    read = app.options.structured  # the text block alone is sent otherwise (render.ok_result)
    if channel == "none":
        return rendered(await _invoke(ctx, app, owner, fn, arguments, record_read=read), app)
    asker = FormAsker(ctx)
    try:
        with asking_with(asker):
            return rendered(await _invoke(ctx, app, owner, fn, arguments, record_read=read), app)
    finally:
        asker.close()


# ------------------------------------------------------------------ the worker threads
#
# A call's work runs off the event loop (a hung kd must not stop every other call, ``break_in``
# among them), as ``anyio.to_thread.run_sync`` would run it. That costs, per call, a checkpoint
# (one more turn of the loop), a capacity limiter, a cancel scope and a ``queue.Queue`` (a
# condition variable and two locks) on top of the two thread wake-ups the hop needs: 58-84 µs a
# hop on the 2-core bench machine, against 17-30 µs for a thread waiting on its own
# ``SimpleQueue`` and answering with ``call_soon_threadsafe``, which is all ``Workers`` is
# (docs/performance.md, "Over MCP: one kd_command r").
#
# As with anyio's ``abandon_on_cancel``: a caller cancelled while the work runs stops waiting at
# once; the work runs on, and its thread ends when it is done instead of serving another call
# (nothing else waits on it). The work runs in a copy of the caller's context (``contextvars``),
# as anyio's does: the asker of the call is found there (``asking.asking_with``).

T = TypeVar("T")

IDLE_S = 10.0  # an idle worker thread ends after this long, as anyio's do

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Callable[[], Any]]


class _Worker(threading.Thread):
    def __init__(self, pool: Workers) -> None:
        super().__init__(name="kdmcp-call", daemon=True)  # daemon: a hung debugger's call holds no exit
        self.pool = pool
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                loop, future, context, fn = self.jobs.get(timeout=IDLE_S)
            except queue.Empty:
                if self.pool.retire(self):
                    return
                continue  # taken for a call meanwhile: its job is on the way
            result: Any = None
            error: BaseException | None = None
            if not future.cancelled():  # the caller gave up before it started: it is not started
                try:
                    result = context.run(fn)
                except BaseException as exc:  # handed to the caller, as anyio does
                    error = exc
            if future.cancelled():
                return  # the caller gave up on this work: the thread ends with it
            self.pool.idle(self)
            with contextlib.suppress(RuntimeError):  # the loop is closed: the server has ended
                loop.call_soon_threadsafe(_settle, future, result, error)
            del result, error, fn, context, future


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class Workers:
    """A pool of threads, each taking one job at a time from its own queue."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a worker thread, in a copy of the current context; its result or exception."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
            worker.start()
        worker.jobs.put((loop, future, contextvars.copy_context(), fn))
        return await future

    def idle(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def retire(self, worker: _Worker) -> bool:
        """Whether idle ``worker`` may end (False: it was just taken for a call)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


WORKERS = Workers()


# --------------------------------------------------------------------- the tools as the SDK serves them

def _served(entry: Tool) -> ServedTool:
    """One tool as ``tools/list`` serves it: the docstring without its indentation, the compact
    argument schema (from the function's own signature, ``call`` left out), the hints that say
    something (``schema.py``), and no ``outputSchema``; calling it goes through ``serve_call``.

    No output schema, by choice (docs/results.md): a command's record is an open object (one of
    some sixty kinds), so a schema could not describe it; the parts it could describe (the
    state, the events) would be repeated in every tool, as MCP has no schema shared between
    tools — 73 % of the surface once; and a published schema makes every client validate every
    result. The results' fields are documented from the models instead (``Tool.result_model``).
    """
    served = ServedTool.from_function(entry.fn, name=entry.name, description=_description(entry),
                                      context_kwarg="call", annotations=served_annotations(entry.annotations),
                                      structured_output=False)
    served.parameters = compact_schema(served.parameters)
    served.fn = _answer(entry.name)
    served.is_async = True
    return served


def _description(entry: Tool) -> str:
    return inspect.cleandoc(entry.fn.__doc__ or "")


def _answer(name: str) -> Callable[..., Awaitable[CallToolResult | InputRequiredResult]]:
    async def answer(call: Context[Any, Any], **arguments: Any) -> CallToolResult | InputRequiredResult:
        return await serve_call(call, TOOLS[name].fn, arguments)

    return answer


@functools.cache
def _built(name: str) -> ServedTool:
    return _served(TOOLS[name])


def argument_model(name: str) -> Any:
    """The SDK's argument metadata of tool ``name`` (``FuncMetadata``: its model validates a call's
    arguments), built on first use."""
    return _built(name).fn_metadata


def validated_arguments(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` of tool ``name`` validated as the SDK validates them (``FuncMetadata.validate_arguments``),
    as keyword arguments; raises ``ValidationError``.

    The SDK first tries ``json.loads`` on every string given for a field that is not a ``str``
    (``pre_parse_json``: a client that sends ``"[1, 2]"`` for a list) and keeps what parses to an
    object, a list, a boolean or null — JSON that starts, after blanks, with ``{ [ t f n``. A call
    with no such string (most: ``session_id="s1"`` is one only in name) skips that step, which is
    a failed ``json.loads`` per such argument.
    """
    metadata = argument_model(name)
    json_fields = _json_fields(name)
    if any(isinstance(value, str) and key in json_fields and value.lstrip()[:1] in _JSON_STARTS
           for key, value in arguments.items()):
        return metadata.validate_arguments(arguments)  # type: ignore[no-any-return]
    return metadata.arg_model.model_validate(arguments).model_dump_one_level()  # type: ignore[no-any-return]


_JSON_STARTS = frozenset("{[tfn")


@functools.cache
def _json_fields(name: str) -> frozenset[str]:
    """The argument names (and aliases) of tool ``name`` whose strings the SDK tries as JSON."""
    fields = argument_model(name).arg_model.model_fields
    return frozenset(key for field_name, info in fields.items() if info.annotation is not str
                     for key in (field_name, info.alias) if key)


class _LazyTool(ServedTool):
    """A tool listed from the cached listing (``schema.cached_listing``): ``tools/list`` serves the
    same bytes, and its family is imported and its argument model built (``_served``) when it is
    first called."""

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return None  # as _served's: structured_output=False

    async def run(self, arguments: dict[str, Any], context: Context[Any, Any],
                  convert_result: bool = False) -> Any:
        return await _built(self.name).run(arguments, context, convert_result=convert_result)


def lazy_tools(listing: list[dict[str, Any]]) -> tuple[ServedTool, ...]:
    """The tools listed from a cached ``listing`` (``schema.listing_of``), no family imported."""
    return tuple(
        _LazyTool.model_construct(
            fn=_answer(entry["name"]), name=entry["name"], title=None, description=entry["description"],
            parameters=entry["parameters"], fn_metadata=None, is_async=True, context_kwarg="call",
            resolved_params={}, resolver_plans={},
            annotations=ToolAnnotations(**entry["annotations"]) if entry["annotations"] is not None else None,
            icons=None, meta=None,
        )
        for entry in listing
    )


def built_tools() -> tuple[ServedTool, ...]:
    return tuple(_built(name) for name in TOOLS)


def kept_listing(tools: tuple[ServedTool, ...]) -> list[dict[str, Any]]:
    """What the cache keeps of built ``tools``: the served fields, and each one's group."""
    return [{"name": tool.name, "group": TOOLS[tool.name].group, "description": tool.description,
             "annotations": tool.annotations.model_dump(exclude_none=True) if tool.annotations is not None else None,
             "parameters": tool.parameters} for tool in tools]


@functools.cache
def served_tools() -> tuple[ServedTool, ...]:
    """The SDK's tool objects, built once per process.

    Building them (importing the families, an argument model and schemas per tool) was most of
    kd-mcp's own cold start; they hold the module-level functions and their schemas only (each
    call finds its app through its context), so every server of the process can share them. What
    they serve is kept between starts (``schema.cached_listing``): a start that finds it lists the
    tools from it, and imports the families and builds a tool's argument model on its first call.
    """
    cached = cached_listing()
    if cached is not None:
        return lazy_tools(cached)
    tools = built_tools()
    store_surface(surface_key(), {"tools": kept_listing(tools)})
    return tools


def build_server(app: KdMcpApp) -> KdMcpServer:
    """The MCP server with kd-mcp's tools registered on ``app``."""
    tools = served_tools()
    server = KdMcpServer(app, tools=list(tools))
    server.tool_names = frozenset(tool.name for tool in tools)
    return server
