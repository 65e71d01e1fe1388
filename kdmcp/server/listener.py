"""The Streamable HTTP listener: bearer tokens, loopback by default, DNS-rebinding protection.

Serving a kernel debugger over HTTP serves root on the guest. So the listener refuses to start
without a token, binds loopback unless told otherwise (and then says so loudly), checks the
``Host``/``Origin`` headers (DNS rebinding), caps request bodies, and answers 401 to any
request whose bearer token is missing or wrong before the MCP layer sees it.

It also bounds what one connection or one client can hold (``ListenerLimits``). uvicorn (0.54,
h11) times out only the idle gap *after* a response: a connection that never sends a request,
or sends its headers a byte at a time (slowloris), stayed open forever. So the whole request —
line, headers and body — must arrive within ``request_timeout_s`` of the connection opening
or of the previous response ending (``deadline_protocol``); connections beyond
``max_connections`` are answered 503, and requests beyond ``max_requests_per_client`` in
flight for one client (one token) 429, so one client cannot take every slot from the others.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import h11
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ConfigDict, Field
from uvicorn.protocols.http.h11_impl import H11Protocol

from kdmcp.errors import ConfigError
from kdmcp.server.clients import ClientRegistry
from kdmcp.server.mcp_server import KdMcpServer
from kdmcp.validation import LazyModel

if TYPE_CHECKING:
    import uvicorn

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_REQUEST_BYTES = 1024 * 1024
MCP_PATH = "/mcp"


class ListenerLimits(LazyModel):
    """How long a request may take to arrive, and how many connections and requests are served.

    The defaults suit MCP clients on loopback or behind ``ssh -L``: a tool call is one small
    POST (sent at once), a session adds one long-lived GET stream, and a client rarely runs more
    than a few tools at a time. Answering may take as long as it takes (a ``!analyze`` or an SSE
    stream): only *receiving* the request is timed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Request line, headers and body, from connect (or the previous response's end): 10 s is
    # forever for a client on loopback, and short enough that 64 slowloris sockets free up fast.
    request_timeout_s: float = Field(default=10.0, gt=0)
    # Idle between two requests on one connection (uvicorn's keep-alive timer; whole seconds).
    keep_alive_s: int = Field(default=5, ge=1)
    # Connections served at once; the next one is answered 503 (uvicorn's limit_concurrency).
    max_connections: int = Field(default=64, ge=1)
    # Requests in flight for one client (token); the next is answered 429.
    max_requests_per_client: int = Field(default=8, ge=1)
    # Request line plus headers (h11's own default, stated): larger is a 400.
    max_header_bytes: int = Field(default=16 * 1024, ge=1024)
    # On shutdown, how long open responses (SSE streams) may finish before they are cut.
    shutdown_grace_s: int = Field(default=5, ge=0)


async def _json_response(send: Send, status: int, body: dict[str, str], headers: list[tuple[bytes, bytes]]) -> None:
    data = json.dumps(body).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers],
    })
    await send({"type": "http.response.body", "body": data})


class BearerAuth:
    """ASGI middleware: 401 unless ``Authorization: Bearer <token>`` names a known client; 429 when
    that client already has ``max_requests_per_client`` requests in flight."""

    def __init__(self, app: ASGIApp, clients: ClientRegistry, max_requests_per_client: int = 8) -> None:
        self.app = app
        self.clients = clients
        self.max_requests_per_client = max_requests_per_client
        # Touched only on the server's one event loop, with no await between read and write.
        self._in_flight: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        client = self.clients.match_headers(headers)
        if client is None:
            await _json_response(send, 401, {"error": "unauthorized", "message": "a valid bearer token is required"},
                                 [(b"www-authenticate", b'Bearer realm="kd-mcp"')])
            return
        active = self._in_flight.get(client.name, 0)
        if active >= self.max_requests_per_client:
            await _json_response(send, 429, {
                "error": "too_many_requests",
                "message": f"client {client.name!r} already has {active} requests in progress, the most one "
                           "client may have; retry when one of them has finished",
            }, [(b"retry-after", b"1")])
            return
        self._in_flight[client.name] = active + 1
        try:
            await self.app(scope, receive, send)
        finally:
            left = self._in_flight[client.name] - 1
            if left:
                self._in_flight[client.name] = left
            else:
                del self._in_flight[client.name]


_TIMEOUT_BODY = json.dumps({"error": "request_timeout", "message": "the request did not arrive in time"}).encode()
# Written raw: h11 cannot send a response to a request it has not finished receiving.
_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    + f"content-length: {len(_TIMEOUT_BODY)}\r\n\r\n".encode()
    + _TIMEOUT_BODY
)


def deadline_protocol(request_timeout_s: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, plus a deadline for receiving each request in full.

    Armed when the connection opens and when a response ends; disarmed once h11 has the whole
    request (``their_state`` leaves IDLE/SEND_BODY). Bytes arriving do not re-arm it, which is
    what cuts a slowloris off: the bound is on the request, not on the gap between two bytes.
    """

    class DeadlineH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if not self._receiving():
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self._receiving():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _receiving(self) -> bool:
            return self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(request_timeout_s, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or not self._receiving():
                return
            if self.cycle is None or not self.cycle.response_started:
                self.transport.write(_REQUEST_TIMEOUT)
            log.warning("closing a connection from %s: the request did not arrive within %g s",
                        self.client, request_timeout_s)
            self.transport.close()

    return DeadlineH11Protocol


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) → (host, port)."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit() or not host:
        raise ConfigError(f"--listen wants HOST:PORT, not {value!r}")
    port = int(port_text)
    if not 0 <= port < 65536:
        raise ConfigError(f"--listen port {port} is not in 0-65535 (0: any free port)")
    return host.strip("[]"), port


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_http_app(server: KdMcpServer, host: str, port: int, limits: ListenerLimits | None = None) -> ASGIApp:
    """The MCP Streamable HTTP app of ``server`` (``kdmcp.server.build_server``) behind bearer-token
    auth and the per-client request cap."""
    limits = limits or ListenerLimits()
    clients = server.app.options.clients
    if clients is None:
        raise ConfigError("the HTTP listener needs clients (tokens)")
    names = {host, "localhost", "127.0.0.1", "[::1]"} if is_loopback(host) else {host}
    # Port 0 binds any free port, unknown until then: accept any port on the allowed names
    # (the names are what stops DNS rebinding).
    shown_port = "*" if port == 0 else str(port)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{shown_port}" for name in sorted(names)],
        allowed_origins=[f"http://{name}:{shown_port}" for name in sorted(names)],
    )
    inner = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=MAX_REQUEST_BYTES,
        transport_security=security,
        host=host,
    )
    return BearerAuth(inner, clients, limits.max_requests_per_client)


def http_server(served: KdMcpServer, host: str, port: int, limits: ListenerLimits | None = None) -> uvicorn.Server:
    """The uvicorn server for ``served`` with ``limits`` applied, not yet running."""
    import uvicorn

    limits = limits or ListenerLimits()
    config = uvicorn.Config(
        build_http_app(served, host, port, limits),
        host=host,
        port=port,
        log_level="warning",
        # None: uvicorn's own dictConfig would give its loggers handlers that bypass the
        # redacting filter kd-mcp puts on the root logger (kdmcp.server.logs).
        log_config=None,
        lifespan="on",
        http=deadline_protocol(limits.request_timeout_s),
        timeout_keep_alive=limits.keep_alive_s,
        # uvicorn answers 503 once connections >= limit, counting the new one: +1 serves N.
        limit_concurrency=limits.max_connections + 1,
        h11_max_incomplete_event_size=limits.max_header_bytes,
        timeout_graceful_shutdown=limits.shutdown_grace_s,
    )
    return uvicorn.Server(config)


def serve_http(served: KdMcpServer, listen: str, allow_remote_bind: bool, limits: ListenerLimits | None = None) -> int:
    """Run the listener until interrupted; refuse unsafe starts with a clear message."""
    host, port = parse_listen(listen)
    if not is_loopback(host):
        if not allow_remote_bind:
            raise ConfigError(
                f"refusing to listen on {host}: not a loopback address. Prefer loopback plus `ssh -L` "
                "(docs/remote-listener.md); --allow-remote-bind overrides this."
            )
        sys.stderr.write(
            f"kd-mcp: WARNING: listening on {host}:{port}, reachable from other machines. Anyone with a "
            "token controls the debugger (and the guest). Use TLS in front of it.\n"
        )
    listening = bind_socket(host, port)
    server = http_server(served, host, port, limits)

    original_startup = server.startup

    async def startup(sockets: Any = None) -> None:
        await original_startup(sockets=sockets)
        if server.started:
            bound = [s.getsockname() for srv in server.servers for s in srv.sockets]
            actual = bound[0][1] if bound else port
            sys.stderr.write(f"kd-mcp: listening on http://{host}:{actual}{MCP_PATH}\n")
            sys.stderr.flush()

    server.startup = startup  # type: ignore[method-assign]
    try:
        server.run(sockets=[listening])
    finally:
        listening.close()
    return 0


def bind_socket(host: str, port: int) -> socket.socket:
    """The listening socket, bound before uvicorn starts.

    Left to uvicorn, a port in use is a logged ``[Errno 98] error while attempting to bind`` and
    a bare exit; bound here it is one ``OSError`` saying which address, which the CLI reports as
    one error line.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    if sys.platform != "win32":  # on Windows SO_REUSEADDR would let us share a port in use
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror or exc}"
                      " (another kd-mcp, or another server, holds it)") from None
    return sock
