"""stdio without worker threads: JSON-RPC lines read and written on the event loop (POSIX pipes).

The SDK's ``stdio_server`` reads stdin and writes stdout through ``anyio.wrap_file``: every line
read is a hop to a worker thread and back, every message written two (``write``, ``flush``) —
three thread hops per tool call on top of the one the call's own work takes (``call.invoke``),
each a wake-up of another thread (~0.1 ms on the 2-core machine the benches run on, more when
the cores are busy; docs/performance.md, "Over MCP: one kd_command r"). Where stdin and stdout
are pipes or sockets on POSIX — how an MCP client starts a server — they are read and written
here by the event loop itself (``connect_read_pipe`` / ``connect_write_pipe``): no thread.

Everything else is the SDK's transport's: the same newline-delimited UTF-8 JSON (an undecodable
byte replaced, a line that is not a JSON-RPC message handed to the server as the exception the
SDK's reader hands it), the same context-carrying streams, and the same claim of the standard
descriptors: while serving, fd 0 reads the null device and fd 1 writes to stderr, so a child
(a debugger) or a stray ``print`` cannot read the client's requests or tear its answers; both
are put back on exit. Anywhere else (Windows, a terminal, a regular file) the SDK's transport
serves (``usable``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage

# A line may be as long as the client makes it (the SDK's reader has no bound either); the
# reader's buffer is bounded only so that a line without end cannot take all memory.
LINE_LIMIT = 1 << 30


def _pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def usable() -> bool:
    """Whether this transport can serve: POSIX, stdin and stdout pipes or sockets (a terminal is
    left to the SDK: a non-blocking terminal would outlive the server in the shell)."""
    return sys.platform != "win32" and _pipe_or_socket(0) and _pipe_or_socket(1)


class _Claim:
    """fd 0 and 1 moved aside for the server's life: the wire on private duplicates, fd 0 on the
    null device, fd 1 on stderr (as the SDK's ``stdio_server`` does)."""

    def __init__(self) -> None:
        self.stdin = os.dup(0)
        self.stdout = os.dup(1)
        os.set_inheritable(self.stdin, False)
        os.set_inheritable(self.stdout, False)
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        os.dup2(2, 1)

    def release(self) -> None:
        """The wire back on fd 0 and 1, blocking as it was given (the loop made it non-blocking)."""
        for private, fd in ((self.stdin, 0), (self.stdout, 1)):
            with contextlib.suppress(OSError):
                os.set_blocking(private, True)
                os.dup2(private, fd)
            with contextlib.suppress(OSError):
                os.close(private)


def _message(line: bytes) -> SessionMessage | Exception:
    try:
        text = line.decode("utf-8", errors="replace")
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False))
    except Exception as exc:  # the SDK's reader hands the server the exception, and reads on
        return exc


@asynccontextmanager
async def loop_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` over the process's stdin and stdout, served by the loop;
    fd 0 and 1 claimed meanwhile (``_Claim``)."""
    claim = _Claim()
    try:
        async with loop_streams(claim.stdin, claim.stdout) as streams:
            yield streams
    finally:
        claim.release()


@asynccontextmanager
async def loop_streams(stdin_fd: int, stdout_fd: int) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` of JSON-RPC lines read from ``stdin_fd`` and written to
    ``stdout_fd`` (pipes or sockets) by the event loop; the streams end at end of input."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
    # closefd=False: the descriptors are the caller's (the claim's) to close
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(stdin_fd, "rb", buffering=0, closefd=False))
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(stdout_fd, "wb", buffering=0, closefd=False))
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)

    read_stream_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_stream_reader = create_context_streams[SessionMessage](0)

    async def stdin_reader() -> None:
        async with read_stream_writer:
            while line := await reader.readline():  # b"": end of input
                await read_stream_writer.send(_message(line))

    async def stdout_writer() -> None:
        async with write_stream_reader:
            async for session_message in write_stream_reader:
                json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                writer.write(json.encode("utf-8") + b"\n")
                await writer.drain()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stdin_reader)
            tg.start_soon(stdout_writer)
            yield read_stream, write_stream
    finally:
        read_transport.close()
        write_transport.close()
