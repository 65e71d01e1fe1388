"""The HTTP listener's limits: idle and slow connections are cut, clients cannot hog it.

The listener runs in-process on 127.0.0.1 (uvicorn in a thread, stopped after each test) with
small limits, so each bound is checked in about a second. Clients here are raw sockets: a
slowloris is easiest to write by hand.
"""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kdmcp.config import Config
from kdmcp.secret import Secret
from kdmcp.server import KdMcpApp, ServerOptions, build_server
from kdmcp.server.clients import ClientRegistry, ListenerClient
from kdmcp.server.listener import ListenerLimits, deadline_protocol, http_server
from kdmcp.server.registry import all_tools

pytestmark = pytest.mark.process  # listens on loopback (tests/tiers.py)

TOKEN_A = "t0kenAl1ce-0123456789abcdef"
TOKEN_B = "t0kenB0b-fedcba9876543210xx"
BOUND_S = 10.0  # no test waits longer than this for anything
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}).encode()


@contextmanager
def listening(limits: ListenerLimits) -> Iterator[int]:
    """A listener on 127.0.0.1:<free port> for alice and bob; yields the port, stops it after."""
    clients = ClientRegistry([ListenerClient("alice", Secret(TOKEN_A), all_tools(), "standard"),
                              ListenerClient("bob", Secret(TOKEN_B), all_tools(), "standard")])
    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, clients=clients))
    server = http_server(build_server(app), "127.0.0.1", 0, limits)
    started = threading.Event()
    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets=sockets)
        started.set()

    server.startup = startup  # type: ignore[method-assign]
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    try:
        assert started.wait(BOUND_S), "the listener did not start"
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(BOUND_S)
        app.shutdown()
    assert not thread.is_alive(), "the listener did not stop"


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND_S)
    return sock


def request(port: int, token: str | None, body: bytes = INITIALIZE, *, content_length: int | None = None) -> bytes:
    headers = [b"POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}".encode(), b"Content-Type: application/json",
               b"Accept: application/json, text/event-stream",
               b"Content-Length: " + str(len(body) if content_length is None else content_length).encode()]
    if token is not None:
        headers.append(b"Authorization: Bearer " + token.encode())
    return b"\r\n".join(headers) + b"\r\n\r\n" + body


def status_of(sock: socket.socket) -> int:
    """The status code of the response arriving on ``sock`` (reads the status line only)."""
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"closed before a status line: {data!r}"
        data += chunk
    return int(data.split(b" ", 2)[1])


def response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and (Content-Length) body of the next response."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"closed before the headers ended: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(4096)
        assert chunk
        body += chunk
    return int(lines[0].split(" ", 2)[1]), headers, body[:length]


def closed_within(sock: socket.socket, bound: float, trickle: bytes = b"") -> float:
    """Seconds until the server closes ``sock`` (sending ``trickle`` one byte per 50 ms meanwhile)."""
    t0 = time.monotonic()
    sent = 0
    while time.monotonic() - t0 < bound:
        if sent < len(trickle):
            try:
                sock.send(trickle[sent:sent + 1])
            except OSError:
                return time.monotonic() - t0  # reset by the server: closed
            sent += 1
        ready, _, _ = select.select([sock], [], [], 0.05)
        if ready:
            try:
                if sock.recv(65536) == b"":
                    return time.monotonic() - t0
            except ConnectionResetError:
                return time.monotonic() - t0
    pytest.fail(f"still open after {bound} s ({sent} bytes trickled)")


FAST = ListenerLimits(request_timeout_s=0.5, keep_alive_s=1, max_connections=16, max_requests_per_client=4)


def test_an_idle_connection_is_closed() -> None:
    with listening(FAST) as port, connect(port) as sock:
        assert 0.3 < closed_within(sock, BOUND_S) < 0.5 + 2.0


def test_a_slowloris_sending_headers_a_byte_at_a_time_is_cut_off() -> None:
    head = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Pad: yyyy\r\n" * 200
    with listening(FAST) as port, connect(port) as sock:
        assert closed_within(sock, BOUND_S, trickle=head) < 0.5 + 2.0


def test_a_slow_body_is_cut_off() -> None:
    with listening(FAST) as port, connect(port) as sock:
        sock.sendall(request(port, TOKEN_A, b"", content_length=len(INITIALIZE)))
        assert closed_within(sock, BOUND_S, trickle=INITIALIZE) < 0.5 + 2.0


def test_an_idle_keep_alive_connection_is_closed() -> None:
    with listening(FAST) as port, connect(port) as sock:
        sock.sendall(request(port, None))
        assert status_of(sock) == 401
        assert closed_within(sock, BOUND_S) < 1 + 2.0


def test_a_prompt_client_is_served() -> None:
    with listening(FAST) as port, connect(port) as sock:
        sock.sendall(request(port, TOKEN_A))
        assert status_of(sock) == 200


async def slow_answer(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app that takes 1.5 s to answer: three times the request deadline below."""
    assert scope["type"] == "http"
    while (await receive()).get("more_body"):
        pass
    await asyncio.sleep(1.5)  # the behaviour under test: a slow answer, not a wait to settle
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def test_a_slow_answer_is_not_cut_by_the_request_deadline() -> None:
    """The deadline covers receiving the request, not answering it (a !analyze, an SSE stream)."""
    import uvicorn

    config = uvicorn.Config(slow_answer, host="127.0.0.1", port=0, log_config=None, lifespan="off",
                            http=deadline_protocol(0.5), timeout_keep_alive=1)
    server = uvicorn.Server(config)
    started = threading.Event()
    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets=sockets)
        started.set()

    server.startup = startup  # type: ignore[method-assign]
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    try:
        assert started.wait(BOUND_S)
        port = server.servers[0].sockets[0].getsockname()[1]
        with connect(port) as sock:
            for _ in range(2):  # twice on one connection: the deadline re-arms after each answer
                sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                status, _, body = response(sock)
                assert (status, body) == (200, b"ok")
    finally:
        server.should_exit = True
        thread.join(BOUND_S)
    assert not thread.is_alive()


def hold(port: int, token: str) -> socket.socket:
    """A request that has passed auth and waits for a body that never comes: one in flight."""
    sock = connect(port)
    sock.sendall(request(port, token, b"", content_length=len(INITIALIZE)))
    return sock


def first_status(port: int, token: str, want: int) -> tuple[int, dict[str, str], bytes]:
    """Send requests until one answers ``want`` (the held ones register asynchronously), within a bound."""
    deadline = time.monotonic() + BOUND_S
    last: tuple[int, dict[str, str], bytes] = (0, {}, b"")
    while time.monotonic() < deadline:
        with connect(port) as sock:
            sock.sendall(request(port, token))
            last = response(sock)
        if last[0] == want:
            return last
    pytest.fail(f"never answered {want}; last {last[0]}")


def test_one_client_cannot_hold_more_than_its_share() -> None:
    limits = ListenerLimits(request_timeout_s=5.0, keep_alive_s=1, max_connections=16, max_requests_per_client=2)
    with listening(limits) as port:
        held = [hold(port, TOKEN_A) for _ in range(2)]
        try:
            _, headers, body = first_status(port, TOKEN_A, 429)
            assert headers.get("retry-after") == "1"
            message = json.loads(body)
            assert message["error"] == "too_many_requests" and "2 requests in progress" in message["message"]
            # Another client is still served.
            with connect(port) as sock:
                sock.sendall(request(port, TOKEN_B))
                assert status_of(sock) == 200
        finally:
            for sock in held:
                sock.close()
        # Once alice's held requests end, she is served again.
        first_status(port, TOKEN_A, 200)


def test_the_global_connection_cap_answers_503() -> None:
    limits = ListenerLimits(request_timeout_s=5.0, keep_alive_s=1, max_connections=3, max_requests_per_client=8)
    with listening(limits) as port:
        idle = [connect(port) for _ in range(3)]
        try:
            status, _, _ = first_status(port, TOKEN_B, 503)
            assert status == 503
        finally:
            for sock in idle:
                sock.close()
        first_status(port, TOKEN_B, 200)


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        ListenerLimits(request_timeout_s=0)
    with pytest.raises(ValueError):
        ListenerLimits(max_requests_per_client=0)
