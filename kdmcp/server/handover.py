"""The stdio transport after the prelude: the bytes it read first, then fd 0; the early answers' twins dropped.

``kdmcp.prelude`` read fd 0 (and may have answered ``initialize`` and ``tools/list``) while the SDK
was loading. Here the SDK's ``stdio_server`` serves as usual, on streams given to it: reading
yields ``Early.prefix`` before fd 0 (every chunk shown to ``Early.incoming``), and every
line written goes through ``Early.outgoing``, which drops the SDK's answers to the ids already
answered (compared first) and keeps the handshake's answers for the next start. Given streams,
``stdio_server`` does not divert fd 0 and fd 1 from the wire (children and stray prints miss it,
``mcp.server.stdio``); this does it with the SDK's own helpers, as it would.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import IO, Any, cast

import anyio
from mcp.server import stdio as sdk_stdio

from kdmcp.prelude import Early


class _Incoming(io.RawIOBase):
    """``prefix``, then the wire (every chunk shown to ``seen``: ``Early.incoming`` skips the prefix)."""

    def __init__(self, prefix: bytes, wire: IO[bytes], seen: Callable[[bytes], None]) -> None:
        super().__init__()
        self._prefix = memoryview(prefix)
        self._wire = wire
        self._seen = seen

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._prefix:
            chunk = bytes(self._prefix[: len(buffer)])
            self._prefix = self._prefix[len(chunk):]
        else:
            chunk = self._wire.read1(len(buffer))  # type: ignore[attr-defined]  # a BufferedReader
        self._seen(chunk)
        buffer[: len(chunk)] = chunk
        return len(chunk)


class _Outgoing(io.TextIOBase):
    """Each line the SDK writes (``json + "\\n"``), through ``Early.outgoing``."""

    def __init__(self, wire: IO[bytes], early: Early) -> None:
        super().__init__()
        self._wire = wire
        self._early = early

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        for line in text.encode("utf-8").splitlines():
            kept = self._early.outgoing(line)
            if kept is not None:
                self._wire.write(kept + b"\n")
        return len(text)

    def flush(self) -> None:
        self._wire.flush()


def streams(early: Early, wire_in: IO[bytes], wire_out: IO[bytes]) -> tuple[Any, Any]:
    """The text streams ``stdio_server`` reads and writes, decoded as it decodes its own."""
    reader = io.TextIOWrapper(io.BufferedReader(_Incoming(early.prefix, wire_in, early.incoming)),
                              encoding="utf-8", errors="replace")
    return anyio.wrap_file(reader), anyio.wrap_file(cast(IO[str], _Outgoing(wire_out, early)))


async def run_stdio(server: Any, early: Early) -> None:
    """``MCPServer.run_stdio_async`` with the prelude's streams (``server``: a ``KdMcpServer``)."""
    import sys

    wire_in, release_in = sdk_stdio._claim_fd(0, sys.stdin, "rb", sdk_stdio._open_stdin_diversion)
    try:
        wire_out, release_out = sdk_stdio._claim_fd(1, sys.stdout, "wb", sdk_stdio._open_stdout_diversion)
        try:
            stdin, stdout = streams(early, wire_in, wire_out)
            lowlevel = server._lowlevel_server
            async with sdk_stdio.stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        finally:
            if release_out is not None:
                release_out()
    finally:
        if release_in is not None:
            release_in()
