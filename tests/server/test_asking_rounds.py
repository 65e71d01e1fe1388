"""A round (``kdmcp/server/asking.py``, ``Round``): a parked question answered once, for its own seq, by its
own client; withdrawn when the call is cancelled or no answer comes."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import pytest
from mcp_types import ElicitRequest, ElicitResult

from kdmcp.server import asking as rounds_module
from kdmcp.server.asking import INPUT_KEY, Answer, Question, Round, Rounds, _answer_of
from kdmcp.server.call import Call
from tests.server.helpers import make_app

pytestmark = pytest.mark.anyio

QUESTION = Question(".sympath \\\\evil\\share", "s1", "network_path", "denied by profile 'standard'")


class Ctx:
    """What a round reads of a request's context."""

    def __init__(self, responses: dict[str, Any] | None = None) -> None:
        self.input_responses = responses


async def _parked(round_: Round, call: Call) -> tuple[asyncio.Future[Answer], threading.Thread]:
    """``round_.ask`` in a worker thread, and the future of its answer, once the question is up."""
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[Answer] = loop.create_future()
    thread = threading.Thread(target=lambda: (lambda a: loop.call_soon_threadsafe(answered.set_result, a))(
        round_.ask(QUESTION, call)))
    thread.start()
    with anyio.fail_after(10):
        while round_.asked() is None:
            round_.wake.clear()
            if round_.asked() is None:
                await round_.wake.wait()
    return answered, thread


async def test_an_answer_counts_once_and_only_for_the_question_it_answers() -> None:
    call = Call(make_app(), None)
    round_ = Round("alice", Ctx())  # type: ignore[arg-type]
    answered, thread = await _parked(round_, call)
    required = round_.input_required()
    state = required.request_state
    assert state == f"{round_.id}.1" and isinstance(required.input_requests[INPUT_KEY], ElicitRequest)
    assert not round_.answer(f"{round_.id}.2", "accept")  # not the question waiting
    assert round_.answer(state, "accept")
    with anyio.fail_after(10):
        assert await answered == "accept"
    thread.join(10)
    assert not round_.answer(state, "accept")  # replayed: nothing waits any more


async def test_a_cancelled_call_or_a_closed_round_releases_the_question() -> None:
    call = Call(make_app(), None)
    round_ = Round(None, Ctx())  # type: ignore[arg-type]
    answered, thread = await _parked(round_, call)
    await anyio.to_thread.run_sync(call.cancelled)  # what the call's on_cancel does
    with anyio.fail_after(10):
        assert await answered == "cancel"
    thread.join(10)
    assert round_.asked() is None
    second = Round(None, Ctx())  # type: ignore[arg-type]
    answered, thread = await _parked(second, Call(make_app(), None))
    second.close()
    with anyio.fail_after(10):
        assert await answered == "cancel"
    thread.join(10)


async def test_no_answer_in_time_is_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rounds_module, "ASK_TIMEOUT_S", 0.01)
    round_ = Round(None, Ctx())  # type: ignore[arg-type]
    answer = await anyio.to_thread.run_sync(round_.ask, QUESTION, Call(make_app(), None))
    assert answer == "cancel" and round_.asked() is None  # withdrawn: a late retry finds nothing to answer


async def test_a_round_is_found_only_by_its_own_client() -> None:
    rounds = Rounds()
    round_ = Round("alice", Ctx())  # type: ignore[arg-type]
    rounds.add(round_)
    assert rounds.find(f"{round_.id}.1", "alice") is round_
    assert rounds.find(f"{round_.id}.1", "bob") is None and rounds.find("nope.1", "alice") is None
    rounds.remove(round_)
    assert rounds.find(f"{round_.id}.1", "alice") is None


@pytest.mark.parametrize(("response", "answer"), [
    (ElicitResult(action="accept", content={"allow_once": True}), "accept"),
    (ElicitResult(action="accept", content={"allow_once": False}), "decline"),
    (ElicitResult(action="accept", content={"allow_once": "yes"}), "decline"),
    (ElicitResult(action="accept"), "decline"),
    (ElicitResult(action="decline"), "decline"),
    (ElicitResult(action="cancel"), "cancel"),
    (None, None),
])
def test_what_a_retry_answers(response: ElicitResult | None, answer: Answer | None) -> None:
    responses = {INPUT_KEY: response} if response is not None else {}
    assert _answer_of(Ctx(responses)) == answer  # type: ignore[arg-type]
