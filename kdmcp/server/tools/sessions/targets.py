"""The tools that start every other kind of target, and sharing a session with a person.

``start_from_state``/``start_kd`` (app.py) start KDNET sessions; this module starts the rest
through the same bounded start (``KdMcpApp.start_session``): a dump through kd or cdb as its
header says, a process attached or launched under cdb, the local kernel, a debugging server
joined. ``share_session`` turns a live session into a debugging server a person's WinDbg can
join; the server is bound to this machine, listed by ``list_sessions``, ended with the session.

What the debugger does that this relies on: ``.server tcp:port=N`` / ``npipe:pipe=P`` at the
prompt "creates a debugging server" and prints "Server started. Client can connect with any of
these command lines"; a client joins with ``-remote tcp:server=H,port=N`` /
``npipe:server=H,pipe=P``; the server ends when its debugger does.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Sequence
from typing import Literal

from kdmcp import parse as parsing
from kdmcp.argvalues import check_path, remote_connection_parts
from kdmcp.engine import DumpTarget, LocalKernelTarget, ProcessTarget, RemoteTarget, SessionState
from kdmcp.engine.launch import argv_value
from kdmcp.errors import DebuggerError, InvalidArgument, KdMcpError, PolicyDenied
from kdmcp.regular_file import FileRefused, read_regular_file
from kdmcp.server import models
from kdmcp.server.app import KdMcpApp
from kdmcp.server.tools.sessions.shares import Shares, shared

__all__ = ["SIGNATURES", "attach_local_kernel", "attach_process", "dump_kind", "join_remote", "launch",
           "open_dump", "share_session"]

# The first bytes of a dump file: what kd and cdb themselves check before opening one.
# DUMP_HEADER64 starts "PAGE" "DU64", DUMP_HEADER32 "PAGE" "DUMP"; MINIDUMP_HEADER "MDMP".
SIGNATURES: dict[bytes, bool] = {b"PAGEDU64": True, b"PAGEDUMP": True, b"MDMP": False}  # -> kernel?


def dump_kind(path: str) -> bool:
    """Whether the file at ``path`` is a kernel dump (True) or a user minidump (False), by its header."""
    try:
        head = read_regular_file(path, 8, head=True)
    except FileNotFoundError:
        raise InvalidArgument(f"path: no such file: {path}") from None
    except (FileRefused, OSError) as exc:
        raise InvalidArgument(f"path: cannot be read: {exc}") from None
    for signature, kernel in SIGNATURES.items():
        if head.startswith(signature):
            return kernel
    raise InvalidArgument(f"path: not a Windows crash dump (it starts {head[:8]!r}; a kernel dump starts "
                          "PAGEDU64 or PAGEDUMP, a user minidump MDMP)")


def open_dump(app: KdMcpApp, path: str, timeout_s: float | None, cancel: threading.Event | None,
              *, owner: str | None) -> models.DumpResult:
    """Open a crash dump with kd (kernel) or cdb (user), then summarise it from the debugger's answers."""
    path = os.path.abspath(argv_value("path", path, check_path))
    kernel = dump_kind(path)
    session, result = app.start_session(DumpTarget(path=path, kernel=kernel), initial_break=False,
                                        timeout_s=timeout_s, cancel=cancel, owner=owner)
    summary = models.DumpSummary()
    for command in ("vertarget", ".bugcheck" if kernel else ".exr -1", "lm"):
        try:
            out = session.execute(command)
        except KdMcpError:
            continue  # the summary is what could be read; the session is open either way
        record = parsing.parse(out.command, out.output)
        fields = (record.model_dump(mode="json", exclude={"raw", "command"}, exclude_none=True, exclude_defaults=True)
                  if record else {})
        if command == "vertarget":
            summary.os, summary.build_lab = fields.get("version_line"), fields.get("build_lab")
            summary.arch, summary.processors = fields.get("arch"), fields.get("processors")
        elif command == "lm" and "modules" in fields:
            summary.modules = len(fields["modules"])
        elif kernel and fields.get("bugcheck"):
            summary.bugcheck = fields["bugcheck"]
        elif not kernel and "code" in fields:
            summary.exception = {k: fields[k] for k in ("code", "description", "address", "symbol") if k in fields}
    return app.served_start(session, result, models.DumpResult, dump=summary)


def attach_process(app: KdMcpApp, pid: int, noninvasive: bool, timeout_s: float | None,
                   cancel: threading.Event | None, *, owner: str | None) -> models.StartResult:
    """cdb -p PID (-pv: noninvasive): the process stops at the attach break."""
    return app.start(ProcessTarget(pid=pid, noninvasive=noninvasive), initial_break=True, timeout_s=timeout_s,
                     cancel=cancel, owner=owner)


def launch(app: KdMcpApp, command_line: Sequence[str], initial_break: bool, timeout_s: float | None,
           cancel: threading.Event | None, *, owner: str | None) -> models.StartResult:
    """cdb app.exe args: runs a program on this host, so the caller's policy must allow it."""
    _require_power(app, owner, "launch", "allow_launch", "runs a program on this host")
    return app.start(ProcessTarget(command_line=list(command_line)), initial_break=initial_break,
                     timeout_s=timeout_s, cancel=cancel, owner=owner)


def attach_local_kernel(app: KdMcpApp, timeout_s: float | None, cancel: threading.Event | None,
                        *, owner: str | None) -> models.StartResult:
    """kd -kl: this machine's own kernel (an elevated debugger and ``bcdedit /debug on``; doctor explains)."""
    return app.start(LocalKernelTarget(), initial_break=False, timeout_s=timeout_s, cancel=cancel, owner=owner)


def join_remote(app: KdMcpApp, connection: str, timeout_s: float | None, cancel: threading.Event | None,
                *, owner: str | None) -> models.StartResult:
    """Join a ``-server`` session as a debugging client; never one another client of ours shares."""
    transport, params = argv_value("connection", connection, remote_connection_parts)
    endpoint = "port" if transport == "tcp" else "pipe"
    if transport not in ("tcp", "npipe") or {"server", endpoint} - set(params):
        raise InvalidArgument("connection: give tcp:server=HOST,port=N or npipe:server=HOST,pipe=NAME")
    # What reaches the argv is rebuilt from the checked parts, never the caller's string:
    # tcp:server=H,port=N / npipe:server=H,pipe=P. No password=: it would sit in kd's command
    # line and every listing of it, where no secret may be.
    unknown = set(params) - {"server", endpoint}
    if unknown:
        raise InvalidArgument(f"connection: join_remote takes server and {endpoint} only, not "
                              f"{', '.join(sorted(unknown))}")
    connection = f"{transport}:server={params['server']},{endpoint}={params[endpoint]}"
    share = app.state_of(Shares).find(transport, params)
    if share is not None and shared(app, share.session_id) is None:
        share = None  # its debugger is gone, and its server with it
    if share is not None and share.owner != owner:
        raise PolicyDenied("connection: that debugging server shares another client's session")
    kernel = share.kernel if share is not None else True
    return app.start(RemoteTarget(connection=connection, kernel=kernel), initial_break=False, timeout_s=timeout_s,
                     cancel=cancel, owner=owner)


def share_session(app: KdMcpApp, session_id: str | None, *, owner: str | None) -> models.ShareResult:
    """Open a debugging server in the session's debugger, bound to this machine, and say how to join it."""
    t0 = time.monotonic()
    session = app.manager.get(session_id, owner=owner)
    sid = session.session_id
    if session.plan.kind == "remote":
        raise InvalidArgument("a debugging client cannot share its session: share it from the server's side",
                              session_id=sid)
    _require_power(app, owner, "share_session", "allow_share", "opens a debugging server")
    existing = app.state_of(Shares).of(sid)
    if existing is None:
        if session.state != SessionState.broken:
            raise InvalidArgument(f"the target is {session.state.value}: the debugger reads .server only at its "
                                  "prompt, so break_in first", session_id=sid, state=session.state)
        if os.name == "nt" and not app.options.simulate:
            # A named pipe is this machine's unless shared over SMB; kd's TCP server listens on every interface.
            pipe = f"kdmcp_{sid}_{secrets.token_hex(4)}"
            server, connection = f"npipe:pipe={pipe}", f"npipe:server={socket.gethostname()},pipe={pipe}"
            listener = f"named pipe \\\\.\\pipe\\{pipe}"
        else:
            port = _free_loopback_port()
            server, connection = f"tcp:port={port}", f"tcp:server=127.0.0.1,port={port}"
            listener = f"127.0.0.1:{port}"
        out = session.execute(f".server {server}")
        if "Server started" not in out.output:
            raise DebuggerError(f"the debugger did not start a server: {out.output.strip()[-300:]}", session_id=sid,
                                state=session.state)
        existing = app.state_of(Shares).add(sid, owner, connection, listener, session.plan.flavor == "kd")
    flavor = session.plan.flavor
    return models.ShareResult(
        session_id=sid, state=session.state, prompt=session.prompt.text if session.prompt else None,
        events=app.new_events(session), elapsed_ms=(time.monotonic() - t0) * 1000, connection=existing.connection,
        join=[f"windbg -remote {existing.connection}", f"{flavor} -remote {existing.connection}"],
        listener=existing.listener,
    )


def _require_power(app: KdMcpApp, owner: str | None, tool: str, name: Literal["allow_launch", "allow_share"],
                   does: str) -> None:
    """``launch`` and ``share_session`` need the full policy, or standard with their config switch ``name``."""
    profile = app.profile_for(owner)
    if profile == "full" or (profile == "standard" and getattr(app.options.config, name)):
        return
    raise PolicyDenied(f"{tool} {does}: it needs the full policy, or standard with {name}: true in the config "
                       f"(this caller's policy is {profile}; docs/security.md)")


def _free_loopback_port() -> int:
    """A TCP port free on 127.0.0.1 now (the debugger binds it next; a lost race fails the .server)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port

