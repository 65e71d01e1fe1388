"""The tools that start every other kind of target, and sharing a session with a person.

``start_from_state``/``start_kd`` (``kdnet.py``) start KDNET sessions; this module starts the rest
through the same bounded start (``starting.py`` around ``KdMcpApp.start_session``): a dump through
kd or cdb as its header says, a process attached or launched under cdb, the local kernel, a
debugging server joined. ``share_session`` turns a live session into a debugging server a
person's WinDbg can join; the server is bound to this machine, listed by ``list_sessions``,
ended with the session.

What the debugger does that this relies on: ``.server tcp:port=N`` / ``npipe:pipe=P`` at the
prompt "creates a debugging server" and prints "Server started. Client can connect with any of
these command lines"; a client joins with ``-remote tcp:server=H,port=N`` /
``npipe:server=H,pipe=P``; the server ends when its debugger does.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from typing import Annotated, Literal

from pydantic import Field

from kdmcp import parse as parsing
from kdmcp.argvalues import check_path, remote_connection_parts
from kdmcp.dump_header import dump_kind
from kdmcp.dump_roots import inside_roots
from kdmcp.engine import DumpTarget, LocalKernelTarget, ProcessTarget, RemoteTarget, SessionState
from kdmcp.engine.launch import argv_value
from kdmcp.errors import DebuggerError, InvalidArgument, KdMcpError, PolicyDenied
from kdmcp.server import models
from kdmcp.server.app import KdMcpApp
from kdmcp.server.args import SessionId, Timeout
from kdmcp.server.call import Call
from kdmcp.server.registry import connects, starts, tool
from kdmcp.server.tools.sessions.process_tree import refuse_own_process
from kdmcp.server.tools.sessions.shares import Shares, shared
from kdmcp.server.tools.sessions.starting import started, waiting

__all__ = ["attach_local_kernel", "attach_process", "join_remote", "launch", "open_dump", "share_session"]

@tool("session", starts("Open a crash dump"))
def open_dump(
    call: Call,
    path: Annotated[str, Field(min_length=1, max_length=4096)],
    timeout_s: Timeout = None,
) -> models.DumpResult:
    """Open a crash dump and summarise it."""
    waiting(call, "opening the dump", timeout_s)
    path = os.path.abspath(argv_value("path", path, check_path))
    if call.app.options.config.dump_roots:
        path = inside_roots(path, call.app.options.config.dump_roots)
    kernel = dump_kind(path)
    session, result = call.app.start_session(DumpTarget(path=path, kernel=kernel), initial_break=False,
                                             timeout_s=timeout_s, cancel=call.cancel, owner=call.owner)
    # The summary is read from the debugger's own answers: vertarget, .bugcheck (kernel) or
    # .exr -1 (user: the exception the dump stored), lm.
    summary = models.DumpSummary()
    for command in ("vertarget", ".bugcheck" if kernel else ".exr -1", "lm"):
        try:
            out = session.execute(command)
        except KdMcpError:
            continue  # the summary is what could be read; the session is open either way
        record = parsing.parse(out.command, out.output)
        if isinstance(record, parsing.TargetRecord):
            summary.os, summary.build_lab = record.version_line, record.build_lab
            summary.arch, summary.processors = record.arch, record.processors
        elif isinstance(record, parsing.ModulesRecord) and record.modules:
            summary.modules = len(record.modules)
        elif kernel and isinstance(record, parsing.AnalysisRecord) and record.bugcheck is not None:
            summary.bugcheck = record.bugcheck.model_dump(mode="json", exclude_none=True,
                                                          exclude_defaults=True) or None
        elif not kernel and isinstance(record, parsing.ExceptionRecordRecord) and record.code is not None:
            summary.exception = {name: value for name, value in (("code", record.code),
                                                                 ("description", record.description),
                                                                 ("address", record.address),
                                                                 ("symbol", record.symbol)) if value is not None}
    return call.app.served_start(session, result, models.DumpResult, dump=summary)


@tool("session", starts("Attach to a process"))
def attach_process(
    call: Call,
    pid: Annotated[int, Field(ge=0, le=0xFFFFFFFF)],
    noninvasive: Annotated[bool, Field(description='-pv: read only')] = False,
    timeout_s: Timeout = None,
) -> models.StartResult:
    """Attach cdb to a process (policy full or allow_attach); stop_kd detaches."""
    waiting(call, "attaching", timeout_s)
    _require_power(call.app, call.owner, "attach_process", "allow_attach", "debugs a process of this host")
    refuse_own_process(pid, (info.pid for info in call.app.manager.all_infos() if info.pid is not None))
    return started(call, ProcessTarget(pid=pid, noninvasive=noninvasive), initial_break=True, timeout_s=timeout_s)


@tool("session", connects("Launch a program under cdb"))
def launch(
    call: Call,
    command_line: Annotated[list[Annotated[str, Field(max_length=4096)]],
                            Field(min_length=1, max_length=64)],
    initial_break: Annotated[bool, Field()] = True,
    timeout_s: Timeout = None,
) -> models.StartResult:
    """Start a program under cdb (stop_kd ends it)."""
    waiting(call, "launching", timeout_s)
    _require_power(call.app, call.owner, "launch", "allow_launch", "runs a program on this host")
    return started(call, ProcessTarget(command_line=list(command_line)), initial_break=initial_break,
                   timeout_s=timeout_s)


@tool("session", starts("Debug this machine's kernel"))
def attach_local_kernel(call: Call, timeout_s: Timeout = None) -> models.StartResult:
    """kd -kl: this machine's kernel (policy full or allow_local_kernel)."""
    waiting(call, "starting kd -kl", timeout_s)
    _require_power(call.app, call.owner, "attach_local_kernel", "allow_local_kernel",
                   "reads and writes this host's kernel memory")
    return started(call, LocalKernelTarget(), initial_break=False, timeout_s=timeout_s)


@tool("session", connects("Join a debugging server"))
def join_remote(
    call: Call,
    connection: Annotated[str, Field(description='tcp:server=H,port=N',
                                     min_length=1, max_length=512)],
    timeout_s: Timeout = None,
) -> models.StartResult:
    """Join a kd/cdb/windbg -server session."""
    waiting(call, "joining", timeout_s)
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
    # Never a server that shares another client's session: the listener keeps clients apart.
    share = call.app.state_of(Shares).find(transport, params)
    if share is not None and shared(call.app, share.session_id) is None:
        share = None  # its debugger is gone, and its server with it
    if share is not None and share.owner != call.owner:
        raise PolicyDenied("connection: that debugging server shares another client's session")
    kernel = share.kernel if share is not None else True
    return started(call, RemoteTarget(connection=connection, kernel=kernel), initial_break=False,
                   timeout_s=timeout_s)


@tool("session", connects("Share a session with a person"))
def share_session(call: Call, session_id: SessionId = None) -> models.ShareResult:
    """Let a person's WinDbg join (.server)."""
    app, owner = call.app, call.owner
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


Power = Literal["allow_launch", "allow_share", "allow_attach", "allow_local_kernel"]


def _require_power(app: KdMcpApp, owner: str | None, tool: str, name: Power, does: str) -> None:
    """The one rule of the tools that act on this host beyond any debugger command (``launch``,
    ``share_session``, ``attach_process``, ``attach_local_kernel``): the caller's policy is full,
    or standard with the config switch ``name`` on. A listener client is never given a power by
    a switch (the config is the stdio client's): its own policy in the token file must be full."""
    profile = app.profile_for(owner)
    listener = app.options.clients is not None
    if profile == "full" or (profile == "standard" and not listener and getattr(app.options.config, name)):
        return
    how = ("a token-file entry with policy: full" if listener
           else f"the full policy, or standard with {name}: true in the config")
    raise PolicyDenied(f"{tool} {does}: it needs {how} (this caller's policy is {profile}; docs/security.md)")


def _free_loopback_port() -> int:
    """A TCP port free on 127.0.0.1 now (the debugger binds it next; a lost race fails the .server)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port

