"""The debugging servers this server's sessions opened (``share_session``): who owns each, where it listens.

Kept so that ``list_sessions`` shows a session's server, ``stop_kd`` says it closed it, and
``join_remote`` refuses a client's attempt to join a server that shares another client's
session (the HTTP listener keeps clients' sessions apart; a share must not undo that).
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass

from kdmcp.argvalues import remote_connection_parts
from kdmcp.engine import SessionState
from kdmcp.server.app import KdMcpApp

_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


@dataclass(frozen=True)
class Share:
    session_id: str
    owner: str | None
    connection: str  # what a client passes to -remote: tcp:server=H,port=N or npipe:...
    listener: str  # where it listens, as shown to people
    kernel: bool

    def endpoint(self) -> tuple[str, str]:
        """``(transport, port or pipe)``: what identifies the server on this machine."""
        transport, params = remote_connection_parts(self.connection)
        return transport, params["port" if transport == "tcp" else "pipe"].lower()


class Shares:
    """Thread-safe: tool calls of several clients run in worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_session: dict[str, Share] = {}

    def add(self, session_id: str, owner: str | None, connection: str, listener: str, kernel: bool) -> Share:
        share = Share(session_id, owner, connection, listener, kernel)
        with self._lock:
            self._by_session[session_id] = share
        return share

    def of(self, session_id: str) -> Share | None:
        with self._lock:
            return self._by_session.get(session_id)

    def remove(self, session_id: str) -> Share | None:
        with self._lock:
            return self._by_session.pop(session_id, None)

    def find(self, transport: str, params: dict[str, str]) -> Share | None:
        """The share a ``-remote`` connection names, if it names one of ours on this machine."""
        host = params.get("server", "").lower()
        if host not in _LOCAL_HOSTS and host != socket.gethostname().lower():
            return None
        wanted = (transport, params.get("port" if transport == "tcp" else "pipe", "").lower())
        with self._lock:
            return next((share for share in self._by_session.values() if share.endpoint() == wanted), None)


def shared(app: KdMcpApp, session_id: str) -> str | None:
    """The connection of the session's debugging server while it is open: the server lives in
    the debugger's process, so a session that ended (even on its own) shares nothing."""
    share = app.state_of(Shares).of(session_id)
    session = app.manager.session_of(session_id)
    if share is None or session is None or session.state == SessionState.exited:
        return None
    return share.connection
