"""The Streamable HTTP listener: bearer tokens, loopback by default, DNS-rebinding protection.

Serving a kernel debugger over HTTP serves root on the guest. So the listener refuses to start
without a token, binds loopback unless told otherwise (and then says so loudly), checks the
``Host``/``Origin`` headers (DNS rebinding), caps request bodies, and answers 401 to any
request whose bearer token is missing or wrong before the MCP layer sees it.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from kdmcp.errors import ConfigError
from kdmcp.server.app import KdMcpApp
from kdmcp.server.clients import ClientRegistry
from kdmcp.server.tools import build_server

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_REQUEST_BYTES = 1024 * 1024
MCP_PATH = "/mcp"


class BearerAuth:
    """ASGI middleware: 401 unless ``Authorization: Bearer <token>`` names a known client."""

    def __init__(self, app: ASGIApp, clients: ClientRegistry) -> None:
        self.app = app
        self.clients = clients

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.clients.match_headers(headers) is None:
            body = json.dumps({"error": "unauthorized", "message": "a valid bearer token is required"}).encode()
            await send({
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="kd-mcp"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            })
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


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


def build_http_app(app: KdMcpApp, host: str, port: int) -> ASGIApp:
    """The MCP Streamable HTTP app behind bearer-token auth."""
    clients = app.options.clients
    if clients is None:
        raise ConfigError("the HTTP listener needs clients (tokens)")
    server = build_server(app)
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
    return BearerAuth(inner, clients)


def serve_http(app: KdMcpApp, listen: str, allow_remote_bind: bool) -> int:
    """Run the listener until interrupted; refuse unsafe starts with a clear message."""
    import uvicorn

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
    http_app = build_http_app(app, host, port)
    config = uvicorn.Config(http_app, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    original_startup = server.startup

    async def startup(sockets: Any = None) -> None:
        await original_startup(sockets=sockets)
        if server.started:
            bound = [s.getsockname() for srv in server.servers for s in srv.sockets]
            actual = bound[0][1] if bound else port
            sys.stderr.write(f"kd-mcp: listening on http://{host}:{actual}{MCP_PATH}\n")
            sys.stderr.flush()

    server.startup = startup  # type: ignore[method-assign]
    server.run()
    return 0
