"""Debugging servers (``-server`` / ``.server``) and their clients, on the local machine only.

kd and cdb turn their session into a *debugging server*: clients (``kd -remote``, ``cdb
-remote``) join it, see what it prints and type into it. The rules this module plays
("Controlling a Remote Debugging Session", learn.microsoft.com):

- "Whenever one user enters a command, all users will see the command itself and its output.
  If this command was issued from a debugging client, all other users will see an
  identification, preceding the command, of which user issued the command. Commands issued
  from the debugging server do not have this prefix." The simulator's identification is the
  ``[MACHINE\\user] `` tag the prompt reader already knows (:mod:`kdmcp.parse.prompt`), then
  the prompt and the command, on a line of their own: ``[LAB\\ana] 0: kd> r rip``.
- "After a command is executed by one user, other users who are connected through KD or CDB
  will not see a new command prompt": the prompt after a line goes to the server's console and
  to the client that typed the line; a stop of the target (a break-in, a breakpoint) prompts
  everyone.
- "any user can enter a command at any time, and the engine will execute these commands in
  the order they were received" -- one queue of lines, kept in :class:`~kdmcp.sim.console_io.ConsoleIO`.
- "Whenever a new debugging client connects to the session, all other users will see a
  message": ``wenwaz2016\\pear (tcp 127.0.0.1:63141) connected at Wed Dec 19 06:23:07 2018``
  (a published cdb transcript, wu-wenxiang/Training-Debug-Windows-Public); the page says
  nothing shows at a disconnect, current debuggers print the same line with ``disconnected
  at``, and so does the simulator.
- "Terminating a server will prevent any future clients from attaching to it. It will not cut
  off any clients that are currently attached through the server." (.endsrv): ``.endsrv``
  closes the listener and leaves its clients connected.

Everything listens on the local machine only: TCP on 127.0.0.1, and a named pipe
(``npipe:pipe=NAME``) becomes an AF_UNIX socket in an owner-only directory,
:func:`pipe_path`.

Wire protocol between this server and the simulator's client (:mod:`kdmcp.sim.remote_client`):

- client -> server: the first line is the client's identity, ``MACHINE\\user`` (a dbgeng
  client names itself to the server the same way); then console input lines ending in
  ``\\n``; a 0x03 byte anywhere is Ctrl+C -- a break-in request -- and never part of a line
  (the engine never sends control characters inside a command line).
- server -> client: the console output exactly as kd writes it on Windows, ``\\r\\n`` line ends.
- Either side ends the session by closing its end.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import socket
import tempfile
import time
from dataclasses import dataclass, field
from typing import Literal

from kdmcp.sim.options import option_pairs

__all__ = [
    "BREAK_BYTE",
    "Peer",
    "Remoting",
    "ServerError",
    "Transport",
    "machine_identity",
    "parse_transport",
    "pipe_path",
]

BREAK_BYTE = b"\x03"
MAX_IDENTITY = 200  # a hello line longer than this is not a client of ours
_BAD_PARAMETER = 'Win32 error 0n87\n    "The parameter is incorrect."'
# WSAEADDRINUSE, as FormatStatus shows it.
_ADDRESS_IN_USE = (
    'Win32 error 0n10048\n    "Only one usage of each socket address '
    '(protocol/network address/port) is normally permitted."'
)
_PIPE_BUSY = 'Win32 error 0n231\n    "All pipe instances are busy."'


class ServerError(Exception):
    """A server that could not start; the text is kd's, after "Unable to start server, "."""


@dataclass(frozen=True)
class Transport:
    """One ``tcp:port=N[:M]`` or ``npipe:pipe=NAME`` server option string."""

    kind: Literal["tcp", "npipe"]
    first_port: int = 0
    last_port: int = 0
    pipe: str = ""
    password: bool = False


def parse_transport(spec: str) -> Transport:
    """Read a ``.server`` / ``-server`` option string (Activating a Debugging Server):
    ``tcp:port=Socket[,hidden][,password=P][,ipversion=6][,IcfEnable]`` -- Socket may be a range
    ``51:60`` -- and ``npipe:pipe=PipeName[,hidden][,password=P][,IcfEnable]``. ``clicon``, COM,
    SSL and SPIPE servers are not simulated: they fail as a bad parameter does."""
    protocol, colon, rest = spec.strip().partition(":")
    if not colon:
        raise ServerError(_BAD_PARAMETER)
    pairs = option_pairs(rest)
    params = dict(pairs)
    if "" in params or len(params) != len(pairs):  # a part with no name, or a name twice
        raise ServerError(_BAD_PARAMETER)
    password = bool(params.pop("password", ""))
    for flag in ("hidden", "icfenable", "ipversion"):
        params.pop(flag, None)
    kind = protocol.strip().lower()
    if kind == "tcp" and set(params) == {"port"}:
        low, _, high = params["port"].partition(":")
        if not low.isdigit() or (high and not high.isdigit()):
            raise ServerError(_BAD_PARAMETER)
        first, last = int(low), int(high or low)
        if not 1 <= first <= last <= 65535:
            raise ServerError(_BAD_PARAMETER)
        return Transport("tcp", first_port=first, last_port=last, password=password)
    # "PipeName must not contain spaces or quotation marks" (.server)
    pipe = params.get("pipe", "")
    if kind == "npipe" and set(params) == {"pipe"} and pipe and not any(c in pipe for c in ' "/\\'):
        return Transport("npipe", pipe=pipe, password=password)
    raise ServerError(_BAD_PARAMETER)


def pipe_path(name: str) -> str:
    """Where the named pipe ``name`` lives on POSIX: an AF_UNIX socket in an owner-only folder."""
    return os.path.join(tempfile.gettempdir(), "kdmcp-sim-npipe", name)


def machine_identity() -> str:
    """``MACHINE\\user`` as a Windows debugger names its user."""
    return f"{socket.gethostname().split('.')[0]}\\{getpass.getuser()}"


@dataclass(eq=False)
class Listener:
    """One active debugging server: its id (``.servers``, ``.endsrv``) and its socket."""

    id: int
    sock: socket.socket
    description: str  # "tcp:Port=5005" / "npipe:Pipe=name", as .servers lists it
    path: str | None = None  # the AF_UNIX socket file of a named pipe

    def close(self) -> None:
        self.sock.close()
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)


@dataclass(eq=False)
class Peer:
    """One connected client: who it is, and the bytes on their way in and out."""

    sock: socket.socket
    address: str  # "tcp 127.0.0.1:51234" / "npipe name"
    identity: str | None = None  # from the hello line; None until it arrives
    inbuf: bytearray = field(default_factory=bytearray)
    outbuf: bytearray = field(default_factory=bytearray)
    at_prompt: bool = False  # the last bytes it was sent are an unterminated prompt

    @property
    def who(self) -> str:
        """The connect line's name: ``LAB\\ana (tcp 127.0.0.1:51234)``."""
        return f"{self.identity} ({self.address})"


@dataclass
class Events:
    """What one look at the sockets found (the console acts on it, in this order)."""

    connected: list[Peer] = field(default_factory=list)
    lines: list[tuple[Peer, str]] = field(default_factory=list)
    interrupts: int = 0
    disconnected: list[Peer] = field(default_factory=list)


class Remoting:
    """The session's debugging servers and the clients connected through them."""

    def __init__(self) -> None:
        self.listeners: list[Listener] = []
        self.peers: list[Peer] = []
        self._next_id = 0

    @property
    def active(self) -> bool:
        """Whether anything listens or is connected (output is then mirrored)."""
        return bool(self.listeners or self.peers)

    # ---------------------------------------------------------- servers

    def start(self, spec: str) -> str:
        """Open a server; the text kd prints (raises :class:`ServerError`).

        "Server started.  Client can connect with any of these command lines" then every
        active server as ``0: <debugger> -remote tcp:Port=5005,Server=HOST`` (Remote
        Debugging Using KD, learn.microsoft.com)."""
        transport = parse_transport(spec)
        if transport.kind == "tcp":
            sock, port = _listen_tcp(transport.first_port, transport.last_port)
            description = f"tcp:Port={port}"
            path = None
        else:
            path = pipe_path(transport.pipe)
            sock = _listen_unix(path)
            description = f"npipe:Pipe={transport.pipe}"
        if transport.password:
            description += ",Password=*"
        sock.setblocking(False)
        self.listeners.append(Listener(self._next_id, sock, description, path))
        self._next_id += 1
        host = socket.gethostname().split(".")[0]
        lines = [f"{s.id}: <debugger> -remote {s.description},Server={host}\n" for s in self.listeners]
        return "Server started.  Client can connect with any of these command lines\n" + "".join(lines)

    def listing(self) -> str:
        """``.servers``: "0 - Debugger Server - tcp:Port=7" per server (.endsrv's example)."""
        if not self.listeners:
            return "No active servers\n"
        return "".join(f"{s.id} - Debugger Server - {s.description}\n" for s in self.listeners)

    def end(self, argument: str) -> str:
        """``.endsrv ServerID``: the listener closes; its clients stay (see the module doc).

        kd says "Server told to exit.  Actual exit may be delayed until\\nthe next connection
        attempt." (.endsrv); the simulator's listener closes at once."""
        text = argument.strip()
        try:
            wanted = int(text, 0)
        except ValueError:
            return f"Couldn't resolve error at '{text}'\n" if text else "Syntax error in '.endsrv'\n"
        for listener in self.listeners:
            if listener.id == wanted:
                listener.close()
                self.listeners.remove(listener)
                return "Server told to exit.  Actual exit may be delayed until\nthe next connection attempt.\n"
        return f"No server with ID {wanted}\n"

    # ----------------------------------------------------------- sockets

    def read_fds(self) -> list[int]:
        return [s.sock.fileno() for s in self.listeners] + [p.sock.fileno() for p in self.peers]

    def write_fds(self) -> list[int]:
        return [p.sock.fileno() for p in self.peers if p.outbuf]

    def service(self, readable: list[int], writable: list[int]) -> Events:
        """Accept, read and write whatever ``select`` said is ready."""
        events = Events()
        for listener in list(self.listeners):
            if listener.sock.fileno() in readable:
                self._accept(listener)
        for peer in list(self.peers):
            fd = peer.sock.fileno()
            if fd in writable:
                self._send(peer)
            if fd in readable and peer in self.peers:
                self._receive(peer, events)
        return events

    def _accept(self, listener: Listener) -> None:
        try:
            sock, address = listener.sock.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return
        sock.setblocking(False)
        where = f"tcp {address[0]}:{address[1]}" if listener.path is None else f"npipe {listener.description[11:]}"
        self.peers.append(Peer(sock, where))

    def _receive(self, peer: Peer, events: Events) -> None:
        try:
            data = peer.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.drop(peer)
            if peer.identity is not None:
                events.disconnected.append(peer)
            return
        events.interrupts += data.count(BREAK_BYTE)
        peer.inbuf += data.replace(BREAK_BYTE, b"")
        while b"\n" in peer.inbuf:
            raw, _, rest = bytes(peer.inbuf).partition(b"\n")
            peer.inbuf = bytearray(rest)
            line = raw.decode("utf-8", errors="replace").rstrip("\r")
            if peer.identity is None:
                peer.identity = line.strip()[:MAX_IDENTITY] or "?\\?"
                events.connected.append(peer)
            else:
                events.lines.append((peer, line))
        if peer.identity is None and len(peer.inbuf) > MAX_IDENTITY:
            self.drop(peer)  # not one of ours

    # ------------------------------------------------------------ output

    def queue(self, data: bytes, peers: list[Peer] | None = None, *, prompt: bool = False) -> None:
        """Queue console bytes for ``peers`` (every connected client when None); they leave at
        the console's next flush, or when ``select`` finds the client writable."""
        for peer in self.peers if peers is None else peers:
            if peer.identity is None or peer not in self.peers:
                continue  # not joined yet: it sees the session from its connect line on
            peer.outbuf += data
            peer.at_prompt = prompt

    def flush(self) -> None:
        for peer in list(self.peers):
            if peer.outbuf:
                self._send(peer)

    def _send(self, peer: Peer) -> None:
        try:
            sent = peer.sock.send(peer.outbuf)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.drop(peer)  # its reader sees the disconnect when it reads
            return
        del peer.outbuf[:sent]

    def drop(self, peer: Peer) -> None:
        if peer in self.peers:
            self.peers.remove(peer)
        peer.sock.close()

    def close(self, timeout: float = 1.0) -> None:
        """The debugger ends: the last output reaches each client (bounded), then all closes."""
        deadline = time.monotonic() + timeout
        for peer in list(self.peers):
            with contextlib.suppress(OSError):
                peer.sock.setblocking(True)
                peer.sock.settimeout(max(0.01, deadline - time.monotonic()))
                peer.sock.sendall(peer.outbuf)
            self.drop(peer)
        for listener in self.listeners:
            listener.close()
        self.listeners.clear()


def _listen_tcp(first: int, last: int) -> tuple[socket.socket, int]:
    """Listen on 127.0.0.1 at the first free port of ``first..last`` ("The debugger will check
    each port in this range to see if it is free", .server)."""
    for port in range(first, last + 1):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen(8)
        except OSError:
            sock.close()
            continue
        except BaseException:
            sock.close()  # never leak the socket, whatever stopped the listen
            raise
        return sock, port
    raise ServerError(_ADDRESS_IN_USE)


def _listen_unix(path: str) -> socket.socket:
    """A named pipe as an AF_UNIX socket; a name in use fails ("If you attempt to reuse a pipe
    name, you will receive an error message", .server), a stale file left by a killed
    debugger is replaced."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    if os.path.exists(path):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(path)  # nobody listens: a leftover
        else:
            raise ServerError(_PIPE_BUSY)
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        sock.listen(8)
    except OSError:
        sock.close()
        raise ServerError(_PIPE_BUSY) from None
    except BaseException:
        sock.close()
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return sock
