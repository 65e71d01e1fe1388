"""The rule of asking the human (``kdmcp/server/asking.py``): which refusals are put to the
person, what they are told, what each answer does; the docs' table held to ``WOULD_DO``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kdmcp.command import CommandClass, check
from kdmcp.errors import PolicyDenied
from kdmcp.secret import Secret
from kdmcp.server.asking import ASKABLE, WOULD_DO, Answer, Question, asking_with, settle, within_call
from kdmcp.server.call import Call
from kdmcp.server.clients import ClientRegistry, ListenerClient
from kdmcp.server.registry import ALL_GROUPS, tools_for
from tests.server.helpers import make_app

ROOT = Path(__file__).resolve().parents[2]
NET = ".sympath \\\\evil\\share"


def test_every_askable_class_is_a_class_and_the_docs_say_what_each_would_do() -> None:
    assert {c.value for c in CommandClass} >= ASKABLE
    assert not ASKABLE & {"host_exec", "output_control", "read", "memory_write", "execution"}
    doc = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    section = doc.split("## Asking the human", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| (.+?) \|$", section, re.M))
    assert rows == {name: does.replace("stop_kd", "`stop_kd`") for name, does in WOULD_DO.items()}


class Person:
    """An asker that answers from a list and keeps the questions."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[Question] = []

    def __call__(self, question: Question, call: Any) -> Answer:
        self.asked.append(question)
        return self.answers.pop(0)


def _settle(line: str, *, profile: str = "standard", person: Person | None = None, call: Call | None = None,
            listener: bool = False, **config: Any) -> str | None:
    """``settle`` as ``enforce_policy`` calls it, in a call's thread with ``person`` asking."""
    app = make_app(**config)
    if listener:
        client = ListenerClient("alice", Secret("t0ken-alice-0123456789"), tools_for(ALL_GROUPS), "standard")
        app.options.clients = ClientRegistry([client])
    verdict = check(line, profile)  # type: ignore[arg-type]
    assert not verdict.allowed
    run: Callable[[], None] = lambda: settle(app, line, verdict, profile, (), "alice" if listener else None,  # type: ignore[arg-type]  # noqa: E731
                                             "s1")
    try:
        if person is None:
            within_call(call or Call(app, None), run)
        else:
            with asking_with(person):
                within_call(call or Call(app, None), run)
    except PolicyDenied as exc:
        return exc.message
    return None


def test_an_askable_refusal_is_asked_and_an_accept_lets_it_through_once() -> None:
    person = Person("accept")
    assert _settle(NET, person=person) is None
    [question] = person.asked
    assert (question.line, question.session_id, question.denied_class) == (NET, "s1", "network_path")
    text = question.message()
    assert NET in text and "(session s1)" in text and WOULD_DO["network_path"] in text and "Allow it once?" in text


@pytest.mark.parametrize(("answer", "said"), [("decline", "; the person declined to allow it"),
                                              ("cancel", "; the person was asked and did not allow it")])
def test_decline_and_cancel_are_refusals_that_say_so(answer: Answer, said: str) -> None:
    message = _settle(NET, person=Person(answer))
    assert message is not None and message.startswith("denied by profile 'standard'") and said in message


def test_a_call_cancelled_while_asking_is_refused_whatever_the_answer() -> None:
    app = make_app()
    call = Call(app, None)
    call.cancel.set()
    assert "did not allow it" in str(_settle(NET, person=Person("accept"), call=call))


# aliases named like a command word: "aS .echo r" would rewrite the engine's completion marker
@pytest.mark.parametrize("line", [".shell dir", ".outmask- 0xffff", f"{NET}; .shell dir", f"{NET}; .outmask- 0xffff",
                                  "aS .echo r", "aS lm g", f"{NET}; aS k gh"])
def test_what_a_person_may_not_allow_is_refused_without_asking(line: str) -> None:
    person = Person("accept")
    message = _settle(line, person=person)
    assert message is not None and "Allow" not in message and "cannot ask" not in message
    assert person.asked == []


def test_read_only_and_ask_false_never_ask() -> None:
    person = Person("accept")
    assert _settle(NET, profile="read_only", person=person) == check(NET, "read_only").message
    off = _settle(NET, person=person, ask=False)
    assert off is not None and "Asking is off (ask: false in the config)" in off and "policy: full in the config" in off
    assert person.asked == []


def test_a_client_that_cannot_be_asked_is_told_how_to_allow_it() -> None:
    stdio = _settle(NET)
    assert stdio is not None and "This client cannot ask its user (it declared no form elicitation)" in stdio
    assert "policy: full in the config" in stdio and '"Asking the human"' in stdio
    listener = _settle(NET, listener=True)
    assert listener is not None and "policy: full in this client's token-file entry" in listener


def test_each_question_and_answer_is_a_transcript_record(tmp_path: Path) -> None:
    app = make_app()
    records: list[tuple[str, dict[str, Any]]] = []

    class Recorder:
        def record(self, kind: str, **fields: Any) -> None:
            records.append((kind, fields))

    app.transcript = Recorder()  # type: ignore[assignment]
    verdict = check(NET, "standard")
    with asking_with(Person("decline")), pytest.raises(PolicyDenied):
        within_call(Call(app, None), lambda: settle(app, NET, verdict, "standard", (), None, "s1"))
    assert records == [("asked", {"session_id": "s1", "client": None, "command": NET,
                                  "command_class": "network_path", "answer": "decline"})]


def test_a_check_on_the_event_loop_never_waits_for_a_person() -> None:
    """A question parks its thread until the answer: on the loop's own thread that would stop the server."""
    import asyncio

    app = make_app()
    person = Person("accept")
    verdict = check(NET, "standard")

    async def on_loop() -> str:
        with asking_with(person), pytest.raises(PolicyDenied) as refused:
            within_call(Call(app, None), lambda: settle(app, NET, verdict, "standard", (), None, "s1"))
        return refused.value.message

    assert "cannot ask its user" in asyncio.run(on_loop()) and person.asked == []
