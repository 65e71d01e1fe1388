"""``kd -remote`` / ``cdb -remote``: the simulator's debugging client, a thin relay.

A real debugging client runs no target of its own: what it shows comes from the server, what
is typed goes there. So this process copies the server's bytes to stdout and stdin's lines to
the server (the wire protocol is in :mod:`kdmcp.sim.remoting`'s docstring), in one
``select`` over the socket, stdin and a self-pipe woken by SIGINT, as the debugger's console
does (:mod:`kdmcp.sim.console_io`). What a client does itself:

- Ctrl+C (SIGINT, or a 0x03 byte typed on a pipe): a break-in request to the server.
- ``.remote_exit [FinalCommands]``: "exits the debugging client but does not end the
  debugging session ... These commands are passed to the debugging server and the
  connection is then broken" (.remote_exit); the client exits 0.
- Ctrl+B then Enter: "To exit from one debugging client without terminating the server ...
  use the CTRL+B key" (Controlling a Remote Debugging Session); exit 0.
- ``q`` goes to the server like any other line, and the server refuses it from a client
  ("During remote debugging, the q command has no effect, but the qq command ends the
  debugging server", q, qq (Quit)); ``qq`` ends the server, and the session.
- end of stdin: the client leaves (the server's session goes on).

When the server ends (its ``q``, a client's ``qq``, or it dies), the client is a debugger with
no target: it shows the no-target prompt ``?:???> `` (the prompt a real client showed after its
server ended, issue 29; the form is the one cdb front ends expect, "(?:\\d+|\\?):(?:\\d+|\\?\\?\\?)"
in BugId's prompt pattern), and again after each line typed, which has nothing to run on
(reconstructed); ``q``, ``qq``, ``.remote_exit``, Ctrl+B or the end of input then end it.

A connection that fails prints dbgeng's error and exits with its HRESULT, as kd.exe does
("DebugConnect failed, Win32 error 0n10060" is what a timed-out connect prints), truncated by
POSIX to its low byte.

Line ends: the server sends ``\\r\\n``; under a pty the terminal adds the ``\\r`` itself, so
the client writes bare ``\\n`` there, as the debugger's own console does.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import select
import signal
import socket
from dataclasses import dataclass

from kdmcp.sim.options import option_pairs
from kdmcp.sim.remoting import BREAK_BYTE, machine_identity, pipe_path

__all__ = ["NO_TARGET_PROMPT", "ConnectError", "RemoteSpec", "parse_remote", "run"]

NO_TARGET_PROMPT = "?:???> "  # a debugger with no process or thread

# Win32 errors as dbgeng formats them: "<status>\n    \"<text>\"".
_REFUSED = (
    0x8007274D,
    'Win32 error 0n10061\n    "No connection could be made because the target machine actively refused it."',
)
_NO_HOST = (0x80072AF9, 'Win32 error 0n11001\n    "No such host is known."')
_NO_PIPE = (0x80070002, 'Win32 error 0n2\n    "The system cannot find the file specified."')
_BAD_PARAMETER = (0x80070057, 'Win32 error 0n87\n    "The parameter is incorrect."')


class ConnectError(Exception):
    """A connection dbgeng could not make: its HRESULT and the status text kd prints."""

    def __init__(self, failure: tuple[int, str]) -> None:
        super().__init__(failure[1])
        self.hresult, self.text = failure


@dataclass(frozen=True)
class RemoteSpec:
    """``tcp:server=H,port=N`` or ``npipe:server=H,pipe=P`` (Activating a Debugging Client)."""

    kind: str
    server: str
    port: int = 0
    pipe: str = ""


def parse_remote(spec: str) -> RemoteSpec:
    protocol, _, rest = spec.strip().partition(":")
    params = dict(option_pairs(rest))
    kind = protocol.strip().lower()
    server = params.get("server", "")
    if kind == "tcp" and server and params.get("port", "").isdigit() and 0 < int(params["port"]) < 65536:
        return RemoteSpec("tcp", server, port=int(params["port"]))
    if kind == "npipe" and server and params.get("pipe"):
        return RemoteSpec("npipe", server, pipe=params["pipe"])
    raise ConnectError(_BAD_PARAMETER)


def _local(server: str) -> bool:
    """Whether ``server`` names this machine: the simulator's servers exist only here."""
    name = server.strip("\\").lower()
    if name in ("localhost", ".", socket.gethostname().split(".")[0].lower(), socket.gethostname().lower()):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def connect(spec: RemoteSpec, timeout: float = 10.0) -> socket.socket:
    """Open the connection, or raise :class:`ConnectError` with kd's words."""
    if not _local(spec.server):
        raise ConnectError(_NO_HOST)  # nothing off this machine is ever reached
    if spec.kind == "tcp":
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        address: str | tuple[str, int] = ("127.0.0.1", spec.port)
        failure = _REFUSED
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address, failure = pipe_path(spec.pipe), _NO_PIPE
    sock.settimeout(timeout)
    try:
        sock.connect(address)
    except OSError:
        sock.close()
        raise ConnectError(failure) from None
    sock.settimeout(None)
    return sock


class _Relay:
    """The client's one loop: socket -> stdout, stdin -> socket, SIGINT -> a break request."""

    def __init__(self, sock: socket.socket, in_fd: int, out_fd: int) -> None:
        self.sock = sock
        self.in_fd, self.out_fd = in_fd, out_fd
        self.tty = os.isatty(out_fd)
        self.pending = b""  # stdin's unfinished line
        self.carry = b""  # a "\r" that may be the start of the next chunk's "\r\n"
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self.breaks = 0

    def run(self) -> int:
        signal.signal(signal.SIGINT, self._on_sigint)
        signal.set_wakeup_fd(self._wake_w)
        self.sock.sendall(machine_identity().encode("utf-8", errors="replace") + b"\n")
        stdin_open = True
        while True:
            if self.breaks:
                self.sock.sendall(BREAK_BYTE * self.breaks)
                self.breaks = 0
            fds = [self.sock.fileno(), self._wake_r] + ([self.in_fd] if stdin_open else [])
            ready, _, _ = select.select(fds, [], [])
            if self._wake_r in ready:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self._wake_r, 4096):
                        pass
            if self.sock.fileno() in ready:
                try:
                    data = self.sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self._write(b"", final=True)
                    return self._orphaned(stdin_open)  # the server ended the session
                self._write(data)
            if stdin_open and self.in_fd in ready:
                data = os.read(self.in_fd, 65536)
                if not data:
                    return 0  # end of input: this client leaves, the session goes on
                leave = self._typed(data)
                if leave is not None:
                    return leave

    def _orphaned(self, stdin_open: bool) -> int:
        """No server any more: the no-target prompt, until the client is told to leave."""
        pending = self.pending
        while stdin_open:
            self._write(NO_TARGET_PROMPT.encode())
            while b"\n" not in pending:
                ready, _, _ = select.select([self.in_fd, self._wake_r], [], [])
                if self._wake_r in ready:
                    with contextlib.suppress(BlockingIOError):
                        while os.read(self._wake_r, 4096):
                            pass
                if self.in_fd in ready:
                    data = os.read(self.in_fd, 65536)
                    if not data:
                        return 0
                    pending += data
            line, _, pending = pending.partition(b"\n")
            word = line.strip().decode("utf-8", errors="replace").lower().split(" ", 1)[0]
            if word in ("q", "qq", ".remote_exit") or "\x02" in word:
                return 0
        return 0

    def _on_sigint(self, signum: int, frame: object) -> None:
        del signum, frame
        self.breaks += 1

    def _typed(self, data: bytes) -> int | None:
        """Forward complete lines; the client's own keys and commands act here."""
        self.breaks += data.count(BREAK_BYTE)
        self.pending += data.replace(BREAK_BYTE, b"")
        *lines, self.pending = self.pending.split(b"\n")
        out = bytearray()
        for raw in lines:
            line = raw.rstrip(b"\r")
            if b"\x02" in line:  # Ctrl+B then Enter: this client quits
                self.sock.sendall(bytes(out))
                return 0
            words = line.decode("utf-8", errors="replace").strip()
            if words.lower().split(" ", 1)[0] == ".remote_exit":
                final = words[len(".remote_exit") :].strip()
                self.sock.sendall(bytes(out) + (final.encode("utf-8") + b"\n" if final else b""))
                return 0
            out += line + b"\n"
        if self.breaks:
            out = bytearray(BREAK_BYTE * self.breaks) + out  # a break goes ahead of queued lines
            self.breaks = 0
        if out:
            self.sock.sendall(bytes(out))
        return None

    def _write(self, data: bytes, *, final: bool = False) -> None:
        if self.tty:
            data = self.carry + data
            self.carry = b""
            if data.endswith(b"\r") and not final:
                data, self.carry = data[:-1], b"\r"
            data = data.replace(b"\r\n", b"\n")
        view = memoryview(data)
        while view:
            n = os.write(self.out_fd, view)
            view = view[n:]


def run(remote: str, in_fd: int = 0, out_fd: int = 1) -> int:
    """Join the server ``remote`` names and relay until one side leaves."""
    try:
        sock = connect(parse_remote(remote))
    except ConnectError as exc:
        os.write(
            out_fd,
            f"DebugConnect failed, {exc.text}\n".replace("\n", "\r\n" if not os.isatty(out_fd) else "\n").encode(),
        )
        return exc.hresult & 0xFF
    try:
        return _Relay(sock, in_fd, out_fd).run()
    except (BrokenPipeError, ConnectionResetError):
        return 0  # the server went away while we wrote to it
    finally:
        sock.close()
