"""Debugging servers and remote clients in the simulator (kdmcp/sim/remoting.py,
kdmcp/sim/remote_client.py): a server and its clients as separate processes on pipes, on
loopback or an AF_UNIX socket, every wait bounded, every process stopped.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import stat
import uuid
from collections.abc import Iterator

import pexpect
import pytest
from pexpect.popen_spawn import PopenSpawn

from kdmcp.sim.remoting import pipe_path
from tests.sim.test_cli import KDNET, T, reap, sim_pipes

pytestmark = pytest.mark.process  # starts processes and listeners (tests/tiers.py)

_PORT_RE = re.compile(rb"tcp:Port=(\d+),Server=")
_CONNECTED_RE = r"\\[^ ]+ \(tcp 127\.0\.0\.1:\d+\) connected at \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\r\n"


@pytest.fixture
def children() -> Iterator[list[PopenSpawn]]:
    started: list[PopenSpawn] = []
    yield started
    for child in started:
        reap(child)


def _port_range() -> str:
    """A port the system just had free, and a few after it (the server takes the first free)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"{port}:{min(port + 20, 65535)}"


def _started(child: PopenSpawn) -> int:
    """The port a "Server started" listing names."""
    child.expect(_PORT_RE)
    assert child.match is not None
    return int(child.match.group(1))


def _serve(children: list[PopenSpawn], *args: str) -> tuple[PopenSpawn, int]:
    kd = sim_pipes("kd", "-server", f"tcp:port={_port_range()}", "-b", *KDNET, *args)
    children.append(kd)
    port = _started(kd)
    kd.expect_exact("0: kd> ")
    return kd, port


def _join(children: list[PopenSpawn], connection: str, flavor: str = "kd") -> PopenSpawn:
    client = sim_pipes(flavor, "-remote", connection)
    children.append(client)
    return client


def test_server_at_start_mirrors_commands_both_ways(children):
    server, port = _serve(children)
    client = _join(children, f"tcp:server=127.0.0.1,port={port}")
    client.expect(_CONNECTED_RE)
    client.expect_exact("0: kd> ")  # joined at a prompt: the server sends it one
    server.expect(_CONNECTED_RE)  # "0:000> wenwaz2016\pear (tcp 127.0.0.1:63141) connected at ..."

    client.sendline(".echo from the client")
    client.expect_exact("from the client\r\n0: kd> ")
    # the server's console shows who typed it, the command and its output
    server.expect(r"\[[^\]]+\\[^\]]+\] 0: kd> \.echo from the client\r\nfrom the client\r\n0: kd> ")

    server.sendline(".echo from the server")
    server.expect_exact("from the server\r\n0: kd> ")
    # the client sees the command (no tag: the server's own) and its output, and no new prompt
    client.expect_exact(".echo from the server\r\nfrom the server\r\n")

    client.sendline(".servers")
    client.expect_exact(f"0 - Debugger Server - tcp:Port={port}\r\n0: kd> ")


def test_remote_exit_leaves_the_server_running(children):
    server, port = _serve(children)
    client = _join(children, f"tcp:server=localhost,port={port}")
    client.expect_exact("0: kd> ")
    server.expect_exact(" connected at ")
    client.sendline(".remote_exit")
    client.expect(pexpect.EOF)
    assert client.wait() == 0
    server.expect(r"\(tcp 127\.0\.0\.1:\d+\) disconnected at ")
    server.sendline(".echo still here")
    server.expect_exact("still here\r\n0: kd> ")


def test_ctrl_b_leaves_q_at_a_client_is_refused_and_qq_ends_the_session(children):
    server, port = _serve(children)
    first = _join(children, f"tcp:server=127.0.0.1,port={port}")
    first.expect_exact("0: kd> ")
    first.sendline("\x02")  # Ctrl+B then Enter: this client quits, the session goes on
    first.expect(pexpect.EOF)
    assert first.wait() == 0
    server.expect_exact(" disconnected at ")

    second = _join(children, f"tcp:server=127.0.0.1,port={port}")
    second.expect_exact("0: kd> ")
    # "During remote debugging, the q command has no effect" (q, qq (Quit)); dbgeng's words
    second.sendline("q")
    second.expect_exact(
        "Exit a remote client with Ctrl-b<enter>.\r\nIf you really want the server to quit use 'qq'.\r\n0: kd> "
    )
    second.sendline("qq")  # "but the qq command ends the debugging server"
    second.expect_exact("quit:\r\n")
    server.expect_exact("quit:\r\n")
    server.expect(pexpect.EOF)
    assert server.wait() == 0
    # the client is left with no target: the no-target prompt, until it is told to leave
    second.expect_exact("?:???> ")
    second.sendline("r")
    second.expect_exact("?:???> ")
    second.sendline("q")
    second.expect(pexpect.EOF)
    assert second.wait() == 0


def test_dot_server_at_the_prompt_then_endsrv_refuses_new_clients(children):
    kd = sim_pipes("kd", "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    kd.sendline(f".server tcp:port={_port_range()}")
    kd.expect_exact("Server started.  Client can connect with any of these command lines\r\n")
    port = _started(kd)
    kd.expect_exact("0: kd> ")
    client = _join(children, f"tcp:server=127.0.0.1,port={port}")
    client.expect_exact("0: kd> ")

    kd.sendline(".endsrv 0")
    kd.expect_exact("Server told to exit.  Actual exit may be delayed until\r\nthe next connection attempt.\r\n")
    kd.expect_exact("0: kd> ")
    kd.sendline(".servers")
    kd.expect_exact("No active servers\r\n0: kd> ")
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=T):
        pass
    # "It will not cut off any clients that are currently attached through the server."
    client.sendline(".echo attached")
    client.expect_exact("attached\r\n0: kd> ")


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads Linux's socket table")
def test_the_listener_is_bound_to_loopback_only(children):
    _, port = _serve(children)
    with open("/proc/net/tcp", encoding="ascii") as table:
        rows = [line.split() for line in table.readlines()[1:]]
    listening = [row[1] for row in rows if row[3] == "0A" and int(row[1].split(":")[1], 16) == port]
    assert listening == [f"0100007F:{port:04X}"]  # 127.0.0.1 only, never 0.0.0.0


def test_a_port_in_use_and_a_bad_transport_fail_and_the_session_goes_on(children):
    kd = sim_pipes("kd", "-b", *KDNET)
    children.append(kd)
    kd.expect_exact("0: kd> ")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        kd.sendline(f".server tcp:port={taken.getsockname()[1]}")
        kd.expect_exact('Unable to start server, Win32 error 0n10048\r\n    "Only one usage of each socket address')
        kd.expect_exact("0: kd> ")
    kd.sendline(".server tcp:prot=5")
    kd.expect_exact('Unable to start server, Win32 error 0n87\r\n    "The parameter is incorrect."\r\n0: kd> ')
    kd.sendline(".echo alive")
    kd.expect_exact("alive\r\n0: kd> ")


def test_a_named_pipe_is_an_owner_only_unix_socket(children):
    name = f"kdmcp-test-{uuid.uuid4().hex[:12]}"
    cdb = sim_pipes("cdb", "-server", f"npipe:pipe={name}", "-p", "4242")
    children.append(cdb)
    cdb.expect_exact(f"0: <debugger> -remote npipe:Pipe={name},Server=")
    cdb.expect_exact("0:002> ")
    path = pipe_path(name)
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    client = _join(children, f"npipe:server=localhost,pipe={name}", flavor="cdb")
    client.expect(r"\(npipe [^)]+\) connected at ")
    client.expect_exact("0:002> ")
    client.sendline("qq")
    client.expect_exact("?:???> ")
    client.sendline("q")
    client.expect(pexpect.EOF)
    cdb.expect(pexpect.EOF)
    assert cdb.wait() == 0
    assert not os.path.exists(path)  # the server removed its socket file


def test_a_refused_connection_prints_kds_error_and_exits(children):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    client = _join(children, f"tcp:server=127.0.0.1,port={port}")
    client.expect_exact('DebugConnect failed, Win32 error 0n10061\r\n    "No connection could be made because')
    client.expect(pexpect.EOF)
    assert client.wait() == 0x8007274D & 0xFF  # the HRESULT, as POSIX keeps its low byte


def test_ctrl_c_at_a_client_breaks_into_a_running_target(children):
    server, port = _serve(children)
    client = _join(children, f"tcp:server=127.0.0.1,port={port}")
    client.expect_exact("0: kd> ")
    client.sendline("g")
    server.expect_exact("] 0: kd> g\r\n")  # the server ran it: the target runs
    client.kill(signal.SIGINT)
    for side in (server, client):  # a stop prompts everyone
        side.expect_exact("Break instruction exception - code 80000003 (first chance)\r\n")
        side.expect_exact("0: kd> ")
