"""The stdio hand-over (kdmcp.server.handover): the prelude's bytes before the wire, its answers' twins dropped.

On a pipe and a byte buffer (no process); the server behind it is in tests/server/test_prelude_e2e.py.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import anyio
import pytest

from kdmcp.prelude import HEAD, Early
from kdmcp.server.handover import streams

pytestmark = pytest.mark.anyio

INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}'


async def test_the_kept_bytes_are_read_first_then_the_wire(tmp_path: Path) -> None:
    early = Early(key="k", directory=tmp_path, answers={}, prefix=INIT + b"\n" + b'{"jsonrpc":"2.0","id":1,')
    seen: list[bytes] = []
    early.incoming = seen.append  # type: ignore[method-assign]
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b'"method":"tools/list"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as wire:
        stdin, _ = streams(early, wire, io.BytesIO())
        with anyio.fail_after(30):
            lines = [line async for line in stdin]
    assert lines == [INIT.decode() + "\n", '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n',
                     '{"jsonrpc":"2.0","id":2,"method":"ping"}\n']
    assert b"".join(seen) == early.prefix + b'"method":"tools/list"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n'


async def test_what_the_sdk_writes_goes_through_the_filter(tmp_path: Path) -> None:
    answer = HEAD + b'0,"result":{"protocolVersion":"2025-06-18"}}'
    early = Early(key="k", directory=tmp_path, answers={}, answered={b"0": answer})
    out = io.BytesIO()
    _, stdout = streams(early, io.BytesIO(), out)
    await stdout.write(answer.decode() + "\n")  # as the SDK's writer does: a line, then a flush
    await stdout.flush()
    await stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\n')
    await stdout.flush()
    assert out.getvalue() == b'{"jsonrpc":"2.0","id":1,"result":{}}\n' and not early.answered
