"""Asking in ``input_required`` rounds (MCP 2026-07-28): the call waits, parked, for its retry.

From 2026-07-28 a server asks its client's user by answering ``tools/call`` with an
``InputRequiredResult`` (the questions, and an opaque ``requestState``) instead of sending a
request mid-call; the client asks the person and calls again with the answers and the state.
The SDK seals that state (AES-GCM, bound to the tool, its arguments and a 10-minute expiry), so
what comes back is what this server minted.

kd-mcp's questions come from deep inside a call (the policy check before a command, in a
worker thread, perhaps in the third step of a batch whose first two already ran), so the call
cannot simply be run again from the start on the retry: what ran would run twice. Instead a
call that may ask runs as its own task (a ``Round``), not the request's: when it asks, the
request answers ``input_required`` and the work stays parked on the question; the retry finds
the round by the id its state carries, hands the answer to the waiting thread, and awaits the
round again (its result, or its next question). A round is this process's, for the client that
started it (owner checked), and asks one question at a time (``seq`` in the state: an answer
counts only for the question it was asked for, once).

A round whose retry never comes gets "cancel" after ``ASK_TIMEOUT_S`` and finishes (refused);
a retry that names no round (finished and collected, expired, replayed) starts the call afresh,
so its line is asked again. A finished round's result waits for the retry that collects it.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, cast

from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from pydantic import ValidationError

from kdmcp.server.asking import ASK_TIMEOUT_S, Answer, Approval, Cancellable, Question, asking_with

if TYPE_CHECKING:
    from kdmcp.server.app import KdMcpApp

__all__ = ["INPUT_KEY", "Round", "Rounds", "serve_in_rounds"]

INPUT_KEY = "allow_once"  # the key of kd-mcp's one question in input_requests / input_responses


class _RoundContext:
    """The round's view of its client's context: that of the request now serving it (the first,
    then each retry), so progress and the batch's step contexts follow the request."""

    def __init__(self, ctx: Context[Any, Any]) -> None:
        self.current = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self.current, name)


class Round:
    """One client call that may ask: its task, and the question its work waits on."""

    def __init__(self, owner: str | None, ctx: Context[Any, Any]) -> None:
        self.id = secrets.token_urlsafe(16)
        self.owner = owner
        self.ctx = _RoundContext(ctx)
        self.loop = asyncio.get_running_loop()
        self.wake = asyncio.Event()  # the task finished, or its work asked
        self.task: asyncio.Task[Any] | None = None
        self.finished_at: float | None = None
        self._lock = threading.Lock()
        self._asked: Question | None = None
        self._seq = 0
        self._answer: Answer = "cancel"
        self._answered = threading.Event()

    # ---------------------------------------------------------------- the worker thread's side

    def ask(self, question: Question, call: Cancellable) -> Answer:
        """Park the calling worker thread on ``question`` until the retry answers it (or the call
        is cancelled, or ``ASK_TIMEOUT_S`` passes)."""
        with self._lock:
            self._seq += 1
            seq = self._seq
            self._asked, self._answer = question, "cancel"
            self._answered.clear()
        call.on_cancel(lambda: self._settle(seq, "cancel"))
        self.loop.call_soon_threadsafe(self.wake.set)
        self._answered.wait(ASK_TIMEOUT_S)
        with self._lock:
            if self._seq == seq and self._asked is not None:  # no answer came: withdraw the question
                self._asked = None
            return self._answer if self._answered.is_set() else "cancel"

    def _settle(self, seq: int, answer: Answer) -> bool:
        with self._lock:
            if self._asked is None or seq != self._seq:
                return False
            self._asked, self._answer = None, answer
            self._answered.set()
            return True

    # ----------------------------------------------------------------------- the loop's side

    def asked(self) -> tuple[int, Question] | None:
        with self._lock:
            return (self._seq, self._asked) if self._asked is not None else None

    def answer(self, state: str, answer: Answer) -> bool:
        """Hand ``answer`` to the question ``state`` names, if it is the one waiting."""
        _, _, seq = state.rpartition(".")
        return seq.isdigit() and self._settle(int(seq), answer)

    def close(self) -> None:
        """The client gave up on the call: no question of it waits any longer."""
        with self._lock:
            self._asked = None
            self._answered.set()

    async def settled(self) -> None:
        """Until the task finishes or its work asks a question not yet answered."""
        assert self.task is not None
        while not self.task.done() and self.asked() is None:
            self.wake.clear()
            if self.task.done() or self.asked() is not None:
                break
            await self.wake.wait()

    def input_required(self) -> InputRequiredResult:
        pending = self.asked()
        assert pending is not None
        seq, question = pending
        request = ElicitRequest(params=ElicitRequestFormParams(
            message=question.message(), requested_schema=render_elicitation_schema(Approval)))
        return InputRequiredResult(input_requests={INPUT_KEY: request}, request_state=f"{self.id}.{seq}")


class Rounds:
    """The rounds of this server (``app.state_of(Rounds)``), by id; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, Round] = {}

    def add(self, round_: Round) -> None:
        now = time.monotonic()
        with self._lock:
            # Finished rounds nobody came back for are dropped once a retry could no longer come.
            for stale in [r for r in self._by_id.values()
                          if r.finished_at is not None and now - r.finished_at > ASK_TIMEOUT_S]:
                self._by_id.pop(stale.id, None)
            self._by_id[round_.id] = round_

    def find(self, state: str | None, owner: str | None) -> Round | None:
        round_id = (state or "").rpartition(".")[0]
        with self._lock:
            found = self._by_id.get(round_id)
        return found if found is not None and found.owner == owner else None

    def remove(self, round_: Round) -> None:
        with self._lock:
            self._by_id.pop(round_.id, None)


def _answer_of(ctx: Context[Any, Any]) -> Answer | None:
    """The person's answer in this retry, if it carries one: accept counts only with the form's
    ``allow_once: true``."""
    response = (ctx.input_responses or {}).get(INPUT_KEY)
    if not isinstance(response, ElicitResult):
        return None
    if response.action != "accept":
        return response.action
    try:
        return "accept" if Approval.model_validate(response.content or {}).allow_once else "decline"
    except ValidationError:
        return "decline"


async def serve_in_rounds(ctx: Context[Any, Any], app: KdMcpApp, owner: str | None,
                          run: Callable[[Context[Any, Any]], Coroutine[Any, Any, Any]],
                          render: Callable[[Any], CallToolResult]) -> CallToolResult | InputRequiredResult:
    """A client's call that may ask in rounds: a new round, or the retry of the one its state names."""
    rounds = app.state_of(Rounds)
    state = ctx.request_state
    round_ = rounds.find(state, owner) if state else None
    if round_ is not None and round_.task is not None and not round_.task.done():
        round_.ctx.current = ctx
        answer = _answer_of(ctx)
        if answer is not None and state is not None:
            round_.answer(state, answer)
    elif round_ is None:
        round_ = Round(owner, ctx)
        rounds.add(round_)
        with asking_with(round_.ask):
            # The task copies this context: its worker threads ask through the round.
            round_.task = asyncio.get_running_loop().create_task(run(cast(Context[Any, Any], round_.ctx)))
        task_round = round_

        def finished(_: asyncio.Task[Any]) -> None:
            task_round.finished_at = time.monotonic()
            task_round.wake.set()

        round_.task.add_done_callback(finished)
    task = round_.task
    assert task is not None
    try:
        await round_.settled()
    except asyncio.CancelledError:
        if not task.done():  # the client gave up on the call: so does its work
            round_.close()
            task.cancel()
        rounds.remove(round_)
        raise
    if task.done():
        rounds.remove(round_)
        return render(task.result())
    return round_.input_required()
