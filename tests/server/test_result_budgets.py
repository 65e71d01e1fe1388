"""The result budgets (docs/results.md): what a model and a program pay for the commonest commands.

On the simulator's kd, for each command, where raw is the debugger's output in bytes:

* the default server sends one text block and no ``structuredContent``, so a client that shows
  the text and one that shows ``structuredContent`` (Claude Code, VS Code: they fall back to the
  text when there is none) show the model the same bytes: ≤ raw + 120 B (a header line, and the
  output with ``\\n`` line ends and no trailing blanks);
* the typed listings (``processes``, ``modules``) cost less than their raw output, count their
  items in the text and honour ``limit`` there;
* a server started for programs (``--structured``) adds ``structuredContent`` (compact JSON, as
  sent) ≤ 2.5 x raw + 600 B, never holding the raw output beside a record of it.
"""

from __future__ import annotations

import json

import pytest

from tests.server.helpers import CANARY_KEY, in_memory, make_app, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts the simulator (tests/tiers.py)

BUDGETED = ("k", "r", "lm", "!process 0 0", "!analyze -v", "dt nt!_EPROCESS")
TYPED = (("processes", {}), ("processes", {"limit": 5}), ("modules", {}), ("modules", {"limit": 3}))


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def _run(structured: bool) -> dict[object, object]:
    out: dict[object, object] = {}
    async with in_memory(make_app(structured=structured)) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.content
        for command in BUDGETED:
            result = await client.call_tool("kd_command", {"command": command})
            raw = await client.call_tool("read_output", {"output_id": result.structured_content["output_id"]})
            out[command] = (result, len(text_of(raw).partition("\n")[2].encode()))
        for name, args in TYPED:
            out[(name, args.get("limit"))] = await client.call_tool(name, args)
    return out


@pytest.fixture(scope="module")
async def programs(anyio_backend):
    return await _run(structured=True)


@pytest.fixture(scope="module")
async def models_(anyio_backend):
    out = {}
    async with in_memory(make_app(structured=False)) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.content
        for command in BUDGETED:
            out[command] = await client.call_tool("kd_command", {"command": command})
        for name, args in TYPED:
            out[(name, args.get("limit"))] = await client.call_tool(name, args)
    return out


@pytest.mark.parametrize("command", BUDGETED)
def test_the_default_result_is_one_text_block_within_its_budget(programs, models_, command):
    _, raw = programs[command]
    result = models_[command]
    assert not result.is_error, result.content
    assert result.structured_content is None  # one rendering, whatever the client shows
    (block,) = result.content
    text = len(block.text.encode())
    assert raw > 300, "the simulator's output shrank: the budget no longer measures much"
    assert text <= raw + 120, f"{command}: text {text} B for {raw} B of output"
    head, _, body = block.text.partition("\n")
    assert head.startswith("[s1 broken ") and head.endswith("]")
    assert "\r" not in body and not any(line != line.rstrip() for line in body.split("\n"))


@pytest.mark.parametrize("command", BUDGETED)
def test_a_program_gets_the_record_and_not_the_raw_output_twice(programs, command):
    result, raw = programs[command]
    data = result.structured_content
    structured = len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())
    assert structured <= 2.5 * raw + 600, f"{command}: structuredContent {structured} B for {raw} B of output"
    assert data["record"]["kind"] not in ("text", None)
    assert "output" not in data  # it is the text block's, and read_output's
    assert text_of(result).partition("\n")[2]  # the text block still carries it


def test_typed_listings_count_and_honour_limit_in_the_text(models_, programs):
    _, raw_processes = programs["!process 0 0"]
    _, raw_lm = programs["lm"]
    every = text_of(models_[("processes", None)])
    assert every.split("\n")[1] == "40 processes" and len(every.encode()) < raw_processes
    five = text_of(models_[("processes", 5)]).split("\n")
    assert five[1] == "40 processes, 5 shown" and len(five) == 2 + 5
    assert "raw: output_id=s1:" in five[0]  # kd's own text: one read_output away
    lm = text_of(models_[("modules", None)]).split("\n")
    assert lm[1].startswith("27 modules; symbols loaded: nt; 26 deferred") and len("\n".join(lm).encode()) < raw_lm
    three = text_of(models_[("modules", 3)]).split("\n")
    assert three[1].startswith("27 modules, 3 shown") and len(three) == 2 + 3
