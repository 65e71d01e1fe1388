"""``debug_batch`` (issue 15): ordered steps on one session, with a rollback that runs on every path.

A step is a call of a registered tool's function through the wrapper every call goes
through (``call.invoke``), with arguments validated by that tool's served argument model, so it
behaves exactly as the same call from the client: the same validation, policy, kind rules,
errors, progress, cancellation (its ``on_cancel``). What the step gave is read from its result
model or its error (``expect.py``). The batch only adds what a client cannot do across calls:
the session forced into every step, ``expect``, a bound on the whole, and the rollback.

Order at the end, on every path (committed, failed, timed out, cancelled, client gone):
the ``always`` steps first, then — unless committed — the rollback. ``always`` runs first
because it is the batch's own epilogue: it reads the state the steps left (the registers at
the failure, ``bl``, a log line) or tidies up what the caller knows to tidy, and that state
is gone once rolled back; the rollback, comparing with the snapshot from the start, then
undoes what the ``always`` steps changed as well. Both run shielded from cancellation and
each under its own bound.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
from mcp.server.mcpserver import Context
from pydantic import ValidationError

from kdmcp.engine import DebuggerEvent, DebuggerSession, SessionState
from kdmcp.errors import InvalidArgument, KdMcpError, PolicyDenied
from kdmcp.server.call import Call, argument_model, invoke, served_tools
from kdmcp.server.registry import TOOLS, Tool, tool_groups
from kdmcp.server.tools.batch import rollback as batch_rollback
from kdmcp.server.tools.batch.expect import Observed, observe, summary_of, unmet
from kdmcp.server.tools.batch.models import BatchRequest, BatchResult, Expect, Outcome, Step, StepError, StepRecord
from kdmcp.server.typed import Ran
from kdmcp.validation import validation_problems

__all__ = ["Batch", "PlannedStep", "execute", "parse_request", "plan"]

log = logging.getLogger(__name__)

# Tools that start, end or share sessions, or list them, are not steps: a batch is about one
# session it does not own the life of. (registry.tool_groups()["session"], and the batch itself.)
REFUSED_REASON = "starts, ends or shares sessions: not a step of a batch on one session"
# How long the always steps, then the rollback, may take once the steps are over: both run
# shielded from cancellation, so each needs a bound of its own.
ALWAYS_BOUND_S = 120.0
ROLLBACK_BOUND_S = 120.0


def _refused_tools() -> frozenset[str]:
    return frozenset(tool_groups()["session"]) | {"debug_batch"}


# ------------------------------------------------------------------------ validation


@dataclass(frozen=True)
class PlannedStep:
    """A step checked against its tool: what to call with which (validated) arguments."""

    index: int
    step: Step
    kwargs: dict[str, Any]
    always: bool = False

    @property
    def expect(self) -> Expect:
        return self.step.expect or Expect()


def _arg_models() -> dict[str, Any]:
    """Each tool's served argument model (the SDK's, built once per process: ``call.argument_model``)."""
    return {served.name: argument_model(served.name) for served in served_tools()}


def plan(request: BatchRequest, session_id: str, surface: frozenset[str]) -> list[PlannedStep]:
    """Every step of ``request`` checked (tool known, allowed, in the caller's surface; arguments
    valid for its tool, with ``session_id`` forced), or the first problem raised: nothing runs
    unless all of them are fine."""
    metadata = _arg_models()
    refused = _refused_tools()
    planned: list[PlannedStep] = []
    for always, steps in ((False, request.steps), (True, request.always)):
        for index, step in enumerate(steps, 1):
            where = f"{'always' if always else 'steps'}[{index}]"
            name = step.tool_name
            if name not in TOOLS or name not in metadata:
                raise InvalidArgument(f"{where}: unknown tool {name!r}")
            if name in refused:
                raise InvalidArgument(f"{where}: {name} {REFUSED_REASON}")
            if name not in surface:
                raise PolicyDenied(f"{where}: tool {name!r} is not available to this client")
            arguments = step.tool_arguments
            named = arguments.get("session_id")
            if named is not None and named != session_id:
                raise InvalidArgument(f"{where}: a step runs on the batch's session ({session_id}), not {named!r}")
            meta = metadata[name]
            known = {f.alias or n for n, f in meta.arg_model.model_fields.items()}
            unknown = sorted(set(arguments) - known)
            if unknown:
                # The SDK would ignore them; in a batch a misspelt argument is a step that does
                # something else than meant, found only after the steps before it ran.
                raise InvalidArgument(
                    f"{where}: {name} has no argument {', '.join(map(repr, unknown))} "
                    f"(its arguments: {', '.join(sorted(known))})"
                )
            try:
                kwargs = meta.validate_arguments({**arguments, "session_id": session_id})
            except ValidationError as exc:
                problems = "; ".join(validation_problems(exc, top="(arguments)"))
                raise InvalidArgument(f"{where}: invalid arguments for {name}: {problems}") from None
            planned.append(PlannedStep(index, step, kwargs, always))
    return planned


def parse_request(
    steps: list[dict[str, Any]], always: list[dict[str, Any]] | None, restore: dict[str, Any] | None
) -> BatchRequest:
    try:
        return BatchRequest.model_validate({"steps": steps, "always": always or [], "restore": restore or {}})
    except ValidationError as exc:
        raise InvalidArgument("; ".join(validation_problems(exc, top="(batch)"))) from None


# --------------------------------------------------------------------------- running


class _StepContext:
    """The batch's context as a step sees it: everything passes through, but progress is the
    batch's (seconds since it began, rising across steps, as MCP wants progress to rise), with the
    step named in the message."""

    def __init__(self, ctx: Context[Any, Any], batch: Batch) -> None:
        self._ctx = ctx
        self._batch = batch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        # ``message`` comes masked (call.py); the label names the step, a command as the client wrote it
        label = self._batch.call.app.redactor.text(self._batch.label)
        await self._ctx.report_progress(
            time.monotonic() - self._batch.t0, self._batch.timeout_s, f"{label}: {message}" if message else label
        )


@dataclass
class Batch:
    """One batch under way: the ``debug_batch`` call (its app, its client and that client's context),
    the session, the planned steps, what they did, the snapshot to roll back to."""

    call: Call
    session: DebuggerSession
    request: BatchRequest
    planned: list[PlannedStep]
    timeout_s: float
    t0: float = field(default_factory=time.monotonic)
    label: str = ""
    records: list[StepRecord] = field(default_factory=list)
    events: list[DebuggerEvent] = field(default_factory=list)
    snapshot: batch_rollback.Snapshot | None = None
    snapshot_problem: str | None = None

    def ran(self) -> Ran:
        return Ran(self.call.app, self.session, self.call.owner, batch_rollback.ROLLBACK_COMMAND_S)

    async def ensure_snapshot(self) -> None:
        """The snapshot, taken the first time the session is broken in (before any step that could
        change a breakpoint, a register or memory: none can while the target runs)."""
        snap = self.snapshot
        if snap is None or snap.taken or self.session.state != SessionState.broken:
            return
        await anyio.to_thread.run_sync(batch_rollback.take_snapshot, self.ran(), snap, self.request.restore)

    async def step(self, planned: PlannedStep) -> StepRecord:
        what = planned.step.what
        of = sum(1 for p in self.planned if p.always == planned.always)
        self.label = f"{'always ' if planned.always else ''}step {planned.index}/{of} {what}"
        parent = self.call.ctx
        ctx = cast(Context[Any, Any], _StepContext(parent, self)) if parent is not None else None
        try:
            seen = await self._observed(TOOLS[planned.step.tool_name], planned.kwargs, ctx)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception:
            log.exception("batch step %s failed", what)
            failed = KdMcpError("the step failed unexpectedly; see the server log")
            seen = observe(failed, self.call.app.redactor, self.session.state)
        self.events += seen.events
        miss = unmet(planned.expect, seen)
        error = None if seen.ok else StepError(category=str(seen.category), message=str(seen.data.get("message")))
        output_id = seen.data.get("output_id")
        return StepRecord(
            index=planned.index,
            what=what,
            always=planned.always,
            ok=miss is None,
            error=error,
            unmet=miss,
            summary=summary_of(seen),
            output_id=output_id,
        )

    async def _observed(self, entry: Tool, kwargs: dict[str, Any], ctx: Context[Any, Any] | None) -> Observed:
        """The step's call, through the wrapper of every call, and what it gave (the session's state
        read after it, for a result that does not say it)."""
        outcome = await invoke(ctx, entry.fn, kwargs)
        return observe(outcome, self.call.app.redactor, self.session.state)

    def interrupted(self, planned: PlannedStep) -> StepRecord:
        """The step that was running when the batch's time ran out or the client cancelled it
        (``execute`` says which, once it knows)."""
        return StepRecord(
            index=planned.index,
            what=planned.step.what,
            always=planned.always,
            ok=False,
            error=StepError(category="cancelled", message="interrupted"),
        )


async def _run_steps(batch: Batch, steps: Iterable[PlannedStep]) -> int | None:
    """Run ``steps`` in order until one misses its expect; the index of that one (None: all met)."""
    for planned in steps:
        await batch.ensure_snapshot()
        try:
            record = await batch.step(planned)
        except anyio.get_cancelled_exc_class():
            batch.records.append(batch.interrupted(planned))
            raise
        batch.records.append(record)
        if not record.ok:
            return planned.index
    return None


async def _epilogue(batch: Batch, outcome: Outcome) -> tuple[list[str], list[str]]:
    """The always steps (each reported, none stopping the others), then the rollback unless committed."""
    done: list[str] = []
    missed: list[str] = []
    with anyio.CancelScope(shield=True):
        always = [p for p in batch.planned if p.always]
        if always:
            with anyio.move_on_after(ALWAYS_BOUND_S) as scope:
                for planned in always:
                    try:
                        await batch.ensure_snapshot()
                    except KdMcpError as exc:
                        batch.snapshot_problem = f"snapshot: error[{exc.category}]: {exc.message}"
                    batch.records.append(await batch.step(planned))
            if scope.cancelled_caught:
                missed.append(f"always steps: cut off after {ALWAYS_BOUND_S:g}s")
        if outcome != "committed" and batch.snapshot is not None:
            with anyio.move_on_after(ROLLBACK_BOUND_S) as scope:
                done, more = await anyio.to_thread.run_sync(
                    batch_rollback.rollback, batch.ran(), batch.snapshot, batch.request.restore, abandon_on_cancel=True
                )
                missed += more
            if scope.cancelled_caught:
                missed.append(f"rollback: cut off after {ROLLBACK_BOUND_S:g}s")
        if batch.snapshot_problem is not None:
            missed.append(batch.snapshot_problem)
    return done, missed


async def execute(batch: Batch) -> BatchResult:
    """Run the batch; always and rollback on every path; re-raise a cancellation after them."""
    outcome: Outcome = "committed"
    failed: int | None = None
    cancelled: BaseException | None = None
    steps = [p for p in batch.planned if not p.always]
    try:
        with anyio.move_on_after(batch.timeout_s) as scope:
            try:
                failed = await _run_steps(batch, steps)
            except KdMcpError as exc:  # the snapshot could not be taken: nothing more is run
                batch.snapshot_problem = f"snapshot: error[{exc.category}]: {exc.message}"
                failed = batch.records[-1].index + 1 if batch.records else 1
        if failed is not None:
            outcome = "failed"
        elif scope.cancelled_caught:
            outcome = "timed_out"
    except anyio.get_cancelled_exc_class() as exc:
        outcome, cancelled = "cancelled", exc
    last = batch.records[-1] if batch.records else None
    if (
        outcome in ("timed_out", "cancelled")
        and last is not None
        and last.error is not None
        and last.error.message == "interrupted"
    ):
        ran_out = f"the batch's timeout_s ({batch.timeout_s:g}s) ran out"
        last.error = (
            StepError(category="cancelled", message="the client cancelled the batch")
            if cancelled
            else StepError(category="timeout", message=ran_out)
        )
        failed = last.index
    done, missed = await _epilogue(batch, outcome)
    session = batch.session
    result = BatchResult(
        session_id=session.session_id,
        state=session.state,
        prompt=session.prompt.text if session.prompt is not None else None,
        events=[*batch.events, *batch.call.app.new_events(session)],
        elapsed_ms=round((time.monotonic() - batch.t0) * 1000, 3),
        outcome=outcome,
        failed_step=failed,
        steps=batch.records,
        rolled_back=done,
        not_rolled_back=missed,
    )
    if cancelled is not None:
        log.info("debug_batch on %s cancelled: rolled back %s; not rolled back %s", session.session_id, done, missed)
        raise cancelled
    return result
