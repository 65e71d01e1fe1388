"""Asking the human (issue 28, item 4), with the Python SDK's own client on both protocol
generations it speaks: ``legacy`` (2025-11-25: an ``elicitation/create`` request mid-call) and
``2026-07-28`` (an ``input_required`` result, answered by calling again; the SDK's client
drives that loop itself through the same ``elicitation_callback``).

``.sympath \\\\evil\\share`` is the line asked about: a network path, refused by ``standard`` for
its class only, run by the simulator when allowed (it answers "Symbol search path is: ...").
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ElicitRequest, ElicitResult, ErrorData, InputRequiredResult

from kdmcp.engine import SessionState
from kdmcp.server import KdMcpApp, build_server
from tests.server.helpers import make_app, result_data
from tests.server.test_listener import TOKEN_A, TOKEN_B, _env, listener

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)

LINE = ".sympath \\\\evil\\share"
RAN = "Symbol search path is: \\\\evil\\share"
MODES = ["legacy", "2026-07-28"]


class Person:
    """The client's user: answers each question with the next of ``answers`` and keeps what it was asked."""

    def __init__(self, *answers: ElicitResult) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult | ErrorData:
        self.asked.append(params.message)
        assert params.requested_schema["properties"]["allow_once"]["type"] == "boolean"
        return self.answers.pop(0)


ACCEPT = ElicitResult(action="accept", content={"allow_once": True})
UNTICKED = ElicitResult(action="accept", content={"allow_once": False})
DECLINE = ElicitResult(action="decline")
CANCEL = ElicitResult(action="cancel")


@asynccontextmanager
async def broken_in(app: KdMcpApp, mode: str, person: Person | None) -> AsyncIterator[Client]:
    """An in-memory client of ``app`` in protocol ``mode`` with a KDNET session broken in."""
    try:
        async with Client(build_server(app), mode=mode, elicitation_callback=person) as client:
            started = result_data(await client.call_tool("start_from_state", {"initial_break": True}))
            assert started["state"] == "broken", started
            yield client
    finally:
        await anyio.to_thread.run_sync(app.shutdown)


async def command(client: Client, line: str = LINE) -> dict[str, Any]:
    with anyio.fail_after(60):
        return result_data(await client.call_tool("kd_command", {"command": line}))


@pytest.mark.parametrize("mode", MODES)
async def test_accepted_runs_once_and_the_same_line_asks_again(mode: str) -> None:
    person = Person(ACCEPT, ACCEPT)
    async with broken_in(make_app(), mode, person) as client:
        first = await command(client)
        assert RAN in first["_body"], first
        assert len(person.asked) == 1
        question = person.asked[0]
        assert LINE in question and "(session s1)" in question and "network location" in question
        assert "Allow it once?" in question
        second = await command(client)
        assert RAN in second["_body"] and len(person.asked) == 2  # asked again, not remembered
        assert "category" not in await command(client, "r")  # what standard allows is never asked
        assert len(person.asked) == 2


@pytest.mark.parametrize("mode", MODES)
async def test_declined_or_cancelled_is_refused(mode: str) -> None:
    answers = [(DECLINE, "the person declined"), (CANCEL, "did not allow it"), (UNTICKED, "the person declined")]
    person = Person(*(answer for answer, _ in answers))
    async with broken_in(make_app(), mode, person) as client:
        for count, (_, said) in enumerate(answers, 1):
            refused = await command(client)
            assert refused["category"] == "policy_denied" and said in refused["message"], refused
            assert "network_path" in refused["message"] and len(person.asked) == count
        shown = result_data(await client.call_tool("kd_command", {"command": ".sympath"}))
        assert "evil" not in shown["_body"], shown  # none of them ran


@pytest.mark.parametrize("mode", MODES)
async def test_read_only_and_ask_false_never_ask(mode: str) -> None:
    for config, said in (({"policy": "read_only"}, "denied by profile 'read_only'"),
                         ({"ask": False}, "Asking is off (ask: false in the config)")):
        person = Person(ACCEPT)
        async with broken_in(make_app(**config), mode, person) as client:
            refused = await command(client)
            assert refused["category"] == "policy_denied" and said in refused["message"], refused
            assert person.asked == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_elicitation_is_told_how_to_allow_it(mode: str) -> None:
    async with broken_in(make_app(), mode, None) as client:
        refused = await command(client)
        assert refused["category"] == "policy_denied", refused
        assert "This client cannot ask its user (it declared no form elicitation)" in refused["message"]
        assert "policy: full in the config" in refused["message"]


@pytest.mark.parametrize("mode", MODES)
async def test_what_only_a_person_cannot_allow_is_never_asked(mode: str) -> None:
    person = Person(ACCEPT)
    async with broken_in(make_app(), mode, person) as client:
        for line in (".shell dir", ".outmask- 0xffff", f"{LINE}; .shell dir"):
            refused = await command(client, line)
            assert refused["category"] == "policy_denied", refused
        assert person.asked == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_batch_step_asks_and_the_steps_before_it_run_once(mode: str) -> None:
    person = Person(ACCEPT)
    async with broken_in(make_app(), mode, person) as client:
        with anyio.fail_after(60):
            batch = result_data(await client.call_tool("debug_batch", {"steps": [
                {"command": "bp nt!NtCreateFile"},
                {"command": LINE, "expect": {"contains": "Symbol search path is"}},
                {"command": "bl"},
            ]}))
        assert batch["outcome"] == "committed", batch
        assert len(person.asked) == 1
        listed = result_data(await client.call_tool("breakpoints", {}))
        assert len(listed["breakpoints"]) == 1, listed  # the first step did not run again on the retry

        person.answers.append(DECLINE)
        batch = result_data(await client.call_tool("debug_batch", {"steps": [
            {"command": "bp nt!NtReadFile"}, {"command": LINE}]}))
        assert batch["outcome"] == "failed" and batch["failed_step"] == 2, batch
        assert "declined" in str(batch["steps"][1]["error"])
        assert len(result_data(await client.call_tool("breakpoints", {}))["breakpoints"]) == 1  # rolled back


@pytest.mark.parametrize("mode", MODES)
async def test_set_symbol_path_asks_once_for_its_line(mode: str) -> None:
    person = Person(ACCEPT)
    async with broken_in(make_app(), mode, person) as client:
        with anyio.fail_after(60):
            done = result_data(await client.call_tool("set_symbol_path", {"path": "\\\\evil\\share", "reload": True}))
        assert done.get("path") == "\\\\evil\\share" and done["reloaded"], done
        assert len(person.asked) == 1 and ".sympath \\\\evil\\share" in person.asked[0]


@pytest.mark.parametrize("mode", MODES)
async def test_the_listener_asks_each_client_by_its_own_policy(tmp_path: Path, mode: str) -> None:
    tokens = tmp_path / "clients.yaml"
    tokens.write_text(f"alice: {{token: {TOKEN_A}, policy: standard}}\nbob: {{token: {TOKEN_B}, policy: read_only}}\n")
    tokens.chmod(0o600)
    with listener("--token-file", str(tokens), env=_env()) as (url, _lines):
        for token, answers, asked in ((TOKEN_A, [ACCEPT], 1), (TOKEN_B, [ACCEPT], 0)):
            person = Person(*answers)
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
            async with http, Client(streamable_http_client(url, http_client=http), mode=mode,
                                    elicitation_callback=person, read_timeout_seconds=30) as client:
                started = result_data(await client.call_tool("start_from_state", {"initial_break": True}))
                assert started["state"] == "broken", started
                got = await command(client)
                assert len(person.asked) == asked, (token == TOKEN_A, got)
                if asked:
                    assert RAN in got["_body"], got
                else:
                    assert got["category"] == "policy_denied" and "read_only" in got["message"], got
                await client.call_tool("stop_kd", {})


@pytest.mark.parametrize("mode", MODES)
async def test_a_cancelled_call_that_was_allowed_is_broken_off_and_the_session_stays_usable(mode: str) -> None:
    """The allowed line runs as the call's work (in a round on 2026-07-28): the client's cancel
    still reaches it, and kd is broken off with Ctrl+C as for any command."""
    app = make_app("faults")  # !hang: an extension the standard policy does not know, so asked
    person = Person(ACCEPT)
    async with broken_in(app, mode, person) as client:
        session = app.manager.get()
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: client.call_tool("kd_command", {"command": "!hang", "timeout_s": 60}))
                while session.state != SessionState.busy:  # asked, allowed, running inside the server
                    await anyio.sleep(0.02)
                tg.cancel_scope.cancel()
        assert len(person.asked) == 1 and "!hang" in person.asked[0]
        broken = await anyio.to_thread.run_sync(
            lambda: session.wait_for(lambda: session.state == SessionState.broken, 20))
        assert broken
        after = result_data(await client.call_tool("kd_command", {"command": ".echo alive"}))
        assert after["output"].strip() == "alive"


async def test_on_2026_07_28_the_question_is_an_input_required_round_answered_once() -> None:
    """The wire as a 2026-07-28 client sees it, driven by hand: the call answers input_required
    (the question, a sealed state); the retry with the answer runs the line; the same retry sent
    again runs nothing twice (the round was collected, so it is a new call, asked again)."""
    async with broken_in(make_app(), "2026-07-28", Person()) as client:
        session = client.session
        arguments = {"command": LINE}
        first = await session.call_tool("kd_command", arguments, allow_input_required=True)
        assert isinstance(first, InputRequiredResult), first
        request = first.input_requests["allow_once"]  # type: ignore[index]
        assert isinstance(request, ElicitRequest) and LINE in request.params.message
        assert first.request_state and first.request_state.startswith("v1.")  # sealed by the SDK, not our id.seq
        yes = {"allow_once": ElicitResult(action="accept", content={"allow_once": True})}
        done = await session.call_tool("kd_command", arguments, input_responses=yes,
                                       request_state=first.request_state, allow_input_required=True)
        assert isinstance(done, CallToolResult) and RAN in result_data(done)["_body"], done
        again = await session.call_tool("kd_command", arguments, input_responses=yes,
                                        request_state=first.request_state, allow_input_required=True)
        assert isinstance(again, InputRequiredResult), again  # asked anew, not run on the old yes
        unanswered = await session.call_tool("kd_command", arguments, request_state=again.request_state,
                                             allow_input_required=True)
        assert isinstance(unanswered, InputRequiredResult)  # a retry without the answer: the same question
        no = {"allow_once": ElicitResult(action="decline")}
        refused = await session.call_tool("kd_command", arguments, input_responses=no,
                                          request_state=unanswered.request_state, allow_input_required=True)
        assert isinstance(refused, CallToolResult) and result_data(refused)["category"] == "policy_denied"
