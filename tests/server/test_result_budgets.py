"""The result budgets (docs/results.md): what a model and a program pay for the commonest commands.

On the simulator's kd, for each command: the text block ≤ 1.2 * raw + 300 B, and
``structuredContent`` as sent (compact JSON) ≤ 2.5 * raw + 600 B, where raw is the debugger's
output in bytes. The text block is the header line and the raw output, never the JSON again.
"""

from __future__ import annotations

import json

import pytest

from tests.server.helpers import CANARY_KEY, in_memory, make_app

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts the simulator (tests/tiers.py)

BUDGETED = ("k", "r", "lm", "!process 0 0", "!analyze -v", "dt nt!_EPROCESS")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def results(anyio_backend):
    out = {}
    async with in_memory(make_app()) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.content
        for command in BUDGETED:
            out[command] = await client.call_tool("kd_command", {"command": command})
    return out


def _sizes(result) -> tuple[int, int, int]:
    data = result.structured_content
    raw = len(data["output"].encode())
    text = sum(len(block.text.encode()) for block in result.content)
    structured = len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())
    return raw, text, structured


@pytest.mark.parametrize("command", BUDGETED)
def test_the_result_fits_its_budgets(results, command):
    result = results[command]
    assert not result.is_error, result.content
    raw, text, structured = _sizes(result)
    assert raw > 300, "the simulator's output shrank: the budget no longer measures much"
    assert text <= 1.2 * raw + 300, f"{command}: text {text} B for {raw} B of output"
    assert structured <= 2.5 * raw + 600, f"{command}: structuredContent {structured} B for {raw} B of output"


@pytest.mark.parametrize("command", BUDGETED)
def test_the_text_block_is_the_header_and_the_raw_output(results, command):
    result = results[command]
    (block,) = result.content
    data = result.structured_content
    head, _, body = block.text.partition("\n")
    assert head.startswith(f"[{data['session_id']} {data['state']} ") and head.endswith("]")
    assert body == data["output"].rstrip("\r\n")
    assert data["record"]["kind"] not in ("text", None)
