"""Asking the human: a command the standard policy refuses only for its class is put to the person.

Under ``standard``, a line whose every refused finding is of a class a person can judge (a file
written or read on the debugger host, a network path, code loaded, a setting changed, the
session ended, a command the reader does not know: ``ASKABLE``) and that ``full`` would run is
not refused outright when the client declared MCP form elicitation: the person is asked, with
the exact line, what it would do and one choice, "allow once". Accepted, that one
``enforce_policy`` lets it through (the next identical line asks again); declined, cancelled or
unanswered within ``ASK_TIMEOUT_S``, it is ``policy_denied`` as before. Never under
``read_only``, never when the config says ``ask: false``; a client that cannot be asked gets
``policy_denied`` saying how to allow it.

``host_exec`` and ``output_control`` are never asked: kd runs with ``-noshell`` outside
``full``, so allowing ``.shell`` once could not make it work, and ``.outmask``/``.ofilter``
blind the engine's completion marker for the rest of the session, which no "once" undoes.

How the question travels depends on the protocol generation the client speaks (chosen once per
client call by ``call.serve_call``, so every path a command reaches the policy asks the same
way: ``kd_command``, ``debug_batch`` steps, typed tools, ``set_symbol_path``): up to 2025-11-25
an ``elicitation/create`` request sent mid-call (``FormAsker``); from 2026-07-28 an
``input_required`` result the client answers by calling again (``Round``, below). Either way the
worker thread that checks the line blocks until the answer (or the call's cancellation) comes,
so the call goes on from where it asked.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolResult,
    ClientCapabilities,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import is_version_at_least
from pydantic import Field, ValidationError

from kdmcp import command as reader
from kdmcp.command import PROFILE_ALLOWS, Profile
from kdmcp.errors import PolicyDenied
from kdmcp.validation import LazyModel

if TYPE_CHECKING:
    from kdmcp.command import Verdict
    from kdmcp.server.app import KdMcpApp

__all__ = [
    "ASKABLE",
    "ASK_TIMEOUT_S",
    "INPUT_KEY",
    "WOULD_DO",
    "Answer",
    "Approval",
    "Asker",
    "Cancellable",
    "FormAsker",
    "Question",
    "Round",
    "Rounds",
    "asking_channel",
    "asking_with",
    "serve_in_rounds",
    "settle",
    "within_call",
]

# The classes a person may allow once, and what each would do, in the words the question uses.
WOULD_DO: dict[str, str] = {
    "file_write": "write a file on the debugger host",
    "host_file_read": "read a file of the debugger host into the session (and so to the agent)",
    "network_path": "make the debugger host reach a network location (for SMB, authenticating to it)",
    "code_load": "load code into the debugger (an extension, a script, a symbol-server DLL) and run it on the host",
    "settings_change": "change a debugger setting for the rest of the session",
    "session_ending": "end or detach the debugging session outside stop_kd",
    "unknown": "something kd-mcp cannot tell: the command is not one it knows",
}
ASKABLE: frozenset[str] = frozenset(WOULD_DO)
# How long a question waits for its answer: the SDK keeps a 2026-07-28 round's state as long.
ASK_TIMEOUT_S = 600.0
# The first protocol generation whose questions ride an input_required result, not a request.
INPUT_ROUND_VERSION = "2026-07-28"

Answer = Literal["accept", "decline", "cancel"]


class Approval(LazyModel):
    """The form the person fills in: one choice."""

    allow_once: bool = Field(title="Allow once", description="run this exact command this one time", strict=True)


@dataclass(frozen=True)
class Question:
    """One refused line put to the person."""

    line: str
    session_id: str | None
    denied_class: str
    verdict: str

    def message(self) -> str:
        where = f" (session {self.session_id})" if self.session_id else ""
        return (f"The agent asks kd-mcp to run this debugger command{where}, which the standard policy refuses:\n\n"
                f"    {self.line}\n\nIt would {WOULD_DO.get(self.denied_class, self.denied_class)}. "
                f"({self.verdict})\n\nAllow it once? Only this call runs it; the same line asks again next time.")


class Cancellable(Protocol):
    """The call a question is asked for (``call.Call``): its cancel flag and what stops its work."""

    cancel: threading.Event

    def on_cancel(self, stop: Callable[[], object]) -> None: ...


class Asker(Protocol):
    """Puts a question to the person and blocks the calling worker thread until the answer."""

    def __call__(self, question: Question, call: Cancellable) -> Answer: ...


# The asker of the client's call being served (set by ``answer_call``, copied into its worker
# threads), and the call whose work runs in this thread (set by ``within_call``).
_ASKER: ContextVar[Asker | None] = ContextVar("kdmcp_asker", default=None)
_CALL: ContextVar[Cancellable | None] = ContextVar("kdmcp_call", default=None)


def within_call(call: Cancellable, work: Callable[[], Any]) -> Any:
    """Run ``work`` (in a call's worker thread) as ``call``'s: a question it asks ends with the call."""
    token = _CALL.set(call)
    try:
        return work()
    finally:
        _CALL.reset(token)


# ------------------------------------------------------------------------------------- the rule


def _askable(command: str, verdict: Verdict, profile: Profile, roots: tuple[str, ...]) -> str | None:
    """The refused class to ask about, when ``profile`` refuses ``command`` only for classes a
    person may allow and ``full`` would run it; else None."""
    if profile != "standard" or verdict.denied_class is None:
        return None
    allowed = {c.value for c in PROFILE_ALLOWS[profile]}
    denied = {f.command_class.value for f in verdict.findings} - allowed
    if not denied or not denied <= ASKABLE or not reader.check(command, "full", roots).allowed:
        return None
    return verdict.denied_class.value


def settle(app: KdMcpApp, command: str, verdict: Verdict, profile: Profile, roots: tuple[str, ...],
           owner: str | None, session_id: str | None) -> None:
    """``verdict`` refused ``command``: return if the person allows it once, else ``policy_denied``."""
    denied = _askable(command, verdict, profile, roots)
    if denied is None:
        raise PolicyDenied(verdict.message, session_id=session_id)
    where = "this client's token-file entry" if app.options.clients is not None else "the config"
    if not app.options.config.ask:
        raise PolicyDenied(f"{verdict.message}. Asking is off (ask: false in the config): a person allows it with "
                           f"policy: full in {where} (docs/security.md, \"Asking the human\")", session_id=session_id)
    asker, call = _ASKER.get(), _CALL.get()
    if asker is not None and _on_event_loop():
        asker = None  # a question waits in a worker thread; on the loop it would stop the server
    if asker is None or call is None:
        raise PolicyDenied(f"{verdict.message}. This client cannot ask its user (it declared no form elicitation): "
                           f"use a client that does, or policy: full in {where} (docs/security.md, \"Asking the "
                           "human\")", session_id=session_id)
    question = Question(app.redactor.text(command), session_id, denied, app.redactor.text(verdict.message))
    answer = asker(question, call)
    if call.cancel.is_set():
        answer = "cancel"
    if app.transcript is not None:
        app.transcript.record("asked", session_id=session_id, client=owner, command=command,
                              command_class=denied, answer=answer)
    if answer != "accept":
        said = {"decline": "the person declined to allow it",
                "cancel": "the person was asked and did not allow it (cancelled or no answer)"}[answer]
        raise PolicyDenied(f"{verdict.message}; {said}", session_id=session_id)


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# ------------------------------------------------------------------------- which way to ask


def _declares_form(capabilities: ClientCapabilities | None) -> bool:
    """Form elicitation declared: ``elicitation: {form: {}}``, or a bare ``elicitation: {}`` (the
    only shape before modes existed); a client declaring URL mode alone cannot fill a form."""
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def asking_channel(ctx: Context[Any, Any], app: KdMcpApp, owner: str | None) -> Literal["none", "form", "rounds"]:
    """How this call may ask its person: not at all, by an ``elicitation/create`` request, or by
    ``input_required`` rounds (2026-07-28 on)."""
    if app.profile_for(owner) != "standard" or not app.options.config.ask:
        return "none"
    try:
        capabilities = ctx.client_capabilities
    except ValueError:  # no request behind this context
        return "none"
    if not _declares_form(capabilities):
        return "none"
    version = ctx.protocol_version
    return "rounds" if version is not None and is_version_at_least(version, INPUT_ROUND_VERSION) else "form"


class FormAsker:
    """Asks with ``elicitation/create`` requests on the call's own request (up to 2025-11-25)."""

    def __init__(self, ctx: Context[Any, Any]) -> None:
        self._ctx = ctx
        self._scopes: set[anyio.CancelScope] = set()
        self._closed = False
        # made on the loop; the call's work asks from its own thread (call.Workers)
        self._loop_token = anyio.lowlevel.current_token()

    def __call__(self, question: Question, call: Cancellable) -> Answer:
        answer: Answer = anyio.from_thread.run(self._ask, question, call, token=self._loop_token)
        return answer

    async def _ask(self, question: Question, call: Cancellable) -> Answer:
        if self._closed:
            return "cancel"
        loop = asyncio.get_running_loop()
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)

            def withdraw() -> None:  # from the thread that runs the call's cancellers
                if not loop.is_closed():
                    loop.call_soon_threadsafe(scope.cancel)

            call.on_cancel(withdraw)
            try:
                with anyio.fail_after(ASK_TIMEOUT_S):
                    got = await self._ctx.elicit(question.message(), Approval)
            except TimeoutError:
                return "cancel"
            except (ValueError, ValidationError):  # accepted, but not with the form asked for
                return "decline"
            except MCPError:  # the client refused the request itself
                return "cancel"
            finally:
                self._scopes.discard(scope)
            if got.action == "accept":
                return "accept" if got.data.allow_once else "decline"
            return got.action
        return "cancel"  # the call was cancelled, or the request it asks on is over

    def close(self) -> None:
        """The call is over: a question still open is withdrawn (its thread gets "cancel")."""
        self._closed = True
        for scope in list(self._scopes):
            scope.cancel()


@contextmanager
def asking_with(asker: Asker) -> Iterator[None]:
    """``asker`` puts this call's questions: in the current context and every worker thread started
    from it (``call.Workers`` and ``anyio.to_thread`` copy the context), batch steps included."""
    token = _ASKER.set(asker)
    try:
        yield
    finally:
        _ASKER.reset(token)


# ------------------------------------------------------------------- input_required rounds
#
# Asking in ``input_required`` rounds (MCP 2026-07-28): the call waits, parked, for its retry.
#
# From 2026-07-28 a server asks its client's user by answering ``tools/call`` with an
# ``InputRequiredResult`` (the questions, and an opaque ``requestState``) instead of sending a
# request mid-call; the client asks the person and calls again with the answers and the state.
# The SDK seals that state (AES-GCM, bound to the tool, its arguments and a 10-minute expiry), so
# what comes back is what this server minted.
#
# kd-mcp's questions come from deep inside a call (the policy check before a command, in a
# worker thread, perhaps in the third step of a batch whose first two already ran), so the call
# cannot simply be run again from the start on the retry: what ran would run twice. Instead a
# call that may ask runs as its own task (a ``Round``), not the request's: when it asks, the
# request answers ``input_required`` and the work stays parked on the question; the retry finds
# the round by the id its state carries, hands the answer to the waiting thread, and awaits the
# round again (its result, or its next question). A round is this process's, for the client that
# started it (owner checked), and asks one question at a time (``seq`` in the state: an answer
# counts only for the question it was asked for, once).
#
# A round whose retry never comes gets "cancel" after ``ASK_TIMEOUT_S`` and finishes (refused);
# a retry that names no round (finished and collected, expired, replayed) starts the call afresh,
# so its line is asked again. A finished round's result waits for the retry that collects it.

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
        rounds.remove(round_)
        if not task.done():  # the client gave up on the call: so does its work, before the answer
            round_.close()
            task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait({task})
        raise
    if task.done():
        rounds.remove(round_)
        return render(task.result())
    return round_.input_required()
