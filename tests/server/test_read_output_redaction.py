"""read_output never shows a key, even one that straddles the boundary between two reads."""

from __future__ import annotations

import pytest

from tests.server.helpers import CANARY_KEY, CANARY_WORD, in_memory, make_app

pytestmark = pytest.mark.anyio



async def test_chunked_reads_never_show_any_part_of_the_key():
    app = make_app()
    async with in_memory(app) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.structured_content
        version = await client.call_tool("kd_command", {"command": "version"})
        session = app.manager.get()
        raw = session.read_output(0, session.store.size)
        key_at = raw.index(CANARY_KEY.encode())  # the debugger really printed it
        pieces = [CANARY_KEY[:4], CANARY_KEY[-6:], CANARY_KEY.split(".")[2]]
        for size in (7, 13, 64, 4096):
            # Start reads at every offset around the key so some chunk boundary cuts through it.
            for start in range(key_at - size, key_at + len(CANARY_KEY), max(1, size // 3)):
                offset, texts = max(0, start), []
                while offset < min(session.store.size, key_at + len(CANARY_KEY) + size):
                    chunk = await client.call_tool("read_output", {"offset": offset, "limit": size})
                    data = chunk.structured_content
                    assert data["next_offset"] > offset
                    texts.append(data["text"])
                    offset = data["next_offset"]
                joined = "".join(texts)
                assert CANARY_WORD not in joined
                for piece in pieces:
                    assert piece not in joined, (size, start, piece)
        assert CANARY_WORD not in str(version.structured_content)
