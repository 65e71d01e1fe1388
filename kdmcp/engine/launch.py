"""What to debug and how to start the debugger for it: one argv per mode.

Modes map to kd/cdb command lines: KDNET (``kd -k net:port=N,key=K[,target=H]``), local
kernel (``kd -kl``), a crash dump (``kd -z`` for kernel dumps, ``cdb -z`` for user dumps), a
process (``cdb -p PID`` or ``cdb app.exe args``) and joining a debugging server
(``-remote tcp:server=H,port=N``). The KDNET key is a ``Secret``: the real argv has it, the
``display`` form shown to users and logs has ``key=***``.

Every value is checked by ``kdmcp.argvalues`` twice: when a target model is built, and again
in ``build_plan``, the one door to an argv (``model_copy(update=...)`` skips validators, and
the symbol path, extra flags and debugger prefix arrive as plain arguments).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import ConfigDict, Field, ValidationError, field_validator

from kdmcp.argvalues import (
    ArgvValueError,
    check_argument,
    check_command_line,
    check_host,
    check_kdnet_key,
    check_option,
    check_path,
    check_port,
    check_remote_connection,
    check_symbol_path,
    require,
)
from kdmcp.engine.kinds import SessionKind
from kdmcp.errors import InvalidArgument
from kdmcp.secret import Secret, redact
from kdmcp.validation import LazyModel

T = TypeVar("T")
R = TypeVar("R")

Flavor = Literal["kd", "cdb"]


class _Target(LazyModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")


class KdnetTarget(_Target):
    """A guest kernel over KDNET, as configured by ``bcdedit /dbgsettings net`` or kdnet.exe."""

    mode: Literal["kdnet"] = "kdnet"
    port: int = Field(ge=1, le=65535)
    key: Secret
    host: str | None = None  # target= : the guest's address, when the host has several NICs

    @field_validator("key")
    @classmethod
    def _key_well_formed(cls, key: Secret) -> Secret:
        if not key.reveal():
            raise ValueError("the KDNET key is empty")
        return Secret(check_kdnet_key(key.reveal()))

    @field_validator("host")
    @classmethod
    def _host_is_a_host(cls, host: str | None) -> str | None:
        return None if host is None else check_host(host)


class LocalKernelTarget(_Target):
    mode: Literal["local"] = "local"


class DumpTarget(_Target):
    mode: Literal["dump"] = "dump"
    path: str = Field(min_length=1)
    kernel: bool = True

    @field_validator("path")
    @classmethod
    def _plain_path(cls, path: str) -> str:
        return check_path(path)


class ProcessTarget(_Target):
    """A user-mode process: attach to ``pid`` or launch ``command_line``."""

    mode: Literal["process"] = "process"
    pid: int | None = Field(default=None, ge=0)
    command_line: Sequence[str] | None = None
    noninvasive: bool = False

    @field_validator("command_line")
    @classmethod
    def _plain_command_line(cls, command_line: Sequence[str] | None) -> Sequence[str] | None:
        return None if command_line is None else check_command_line(command_line)


class RemoteTarget(_Target):
    """Join a session served by ``windbg/kd/cdb -server`` (``tcp:server=H,port=N`` …)."""

    mode: Literal["remote"] = "remote"
    connection: str = Field(min_length=1)
    kernel: bool = True

    @field_validator("connection")
    @classmethod
    def _known_connection(cls, connection: str) -> str:
        return check_remote_connection(connection)


Target = KdnetTarget | LocalKernelTarget | DumpTarget | ProcessTarget | RemoteTarget


@dataclass(frozen=True)
class LaunchPlan:
    """The argv to run, a redacted rendering of it, and what kind of session results."""

    argv: list[str]
    display: str
    flavor: Flavor
    secrets: tuple[Secret, ...]
    # Whether startup ends at a prompt (initial break, dumps, processes) rather than with
    # the target running (KDNET without -b, a launch with -g).
    stops_at_start: bool = True
    kind: SessionKind = "kdnet"
    attached_to: str = ""  # what the session debugs, as list_sessions shows it
    noninvasive: bool = False  # cdb -pv: quit with q, which leaves the process running

    @property
    def live_kernel(self) -> bool:
        """A running guest: left resumed, never frozen, when the session stops (``kinds.KINDS``)."""
        return self.kind == "kdnet"


def argv_value(field: str, value: T, check: Callable[[T], R]) -> R:
    """``check(value)`` or ``InvalidArgument("<field>: <problem>")``: how callers refuse argv values."""
    try:
        return require(field, value, check)
    except ArgvValueError as exc:
        raise InvalidArgument(str(exc)) from None


def kdnet_target(port: int, key: Secret, host: str | None, *, host_field: str = "target_host") -> KdnetTarget:
    """A ``KdnetTarget`` from a caller's values, refused as ``InvalidArgument`` naming the field.

    Tool arguments arrive as plain values; a pydantic error would say "Value error, ..."
    without saying which argument was wrong.
    """
    checked_host = None if host is None else argv_value(host_field, host, check_host)
    argv_value("port", port, check_port)
    argv_value("key", key.reveal(), check_kdnet_key)
    try:
        return KdnetTarget(port=port, key=key, host=checked_host)
    except ValidationError as exc:  # the checks above are the model's: this is only a backstop
        raise InvalidArgument("; ".join(err["msg"] for err in exc.errors(include_input=False))) from None


def flavor_for(target: Target) -> Flavor:
    if isinstance(target, (KdnetTarget, LocalKernelTarget)):
        return "kd"
    if isinstance(target, (DumpTarget, RemoteTarget)):
        return "kd" if target.kernel else "cdb"
    return "cdb"


def build_plan(
    debugger: Sequence[str],
    target: Target,
    *,
    symbol_path: str | None = None,
    initial_break: bool = False,
    extra_args: Sequence[str] = (),
) -> LaunchPlan:
    """Build the argv for ``target``; ``debugger`` is the executable's argv prefix.

    ``debugger`` is a list so the simulator (``python -m kdmcp.sim kd``) and a real
    ``C:\\...\\kd.exe`` go through the same code.
    """
    if not debugger:
        raise InvalidArgument("no debugger executable given")
    for n, part in enumerate(debugger):
        argv_value(f"debugger argv[{n}]", part, check_path if n == 0 else check_argument)
    for n, flag in enumerate(extra_args):
        argv_value(f"extra argument {n}", flag, check_option)
    args: list[str] = list(debugger)
    secrets: tuple[Secret, ...] = ()
    kind: SessionKind
    stops_at_start = True
    if symbol_path:
        args += ["-y", argv_value("symbol_path", symbol_path, check_symbol_path)]
    if isinstance(target, KdnetTarget):
        port = argv_value("port", target.port, check_port)
        key = argv_value("key", target.key.reveal(), check_kdnet_key)
        spec = f"net:port={port},key={key}"
        if target.host:
            spec += f",target={argv_value('target_host', target.host, check_host)}"
        if initial_break:
            args.append("-b")
        args += ["-k", spec]
        secrets = (target.key,)
        kind, attached_to = "kdnet", f"KDNET port {port}" + (f" (guest {target.host})" if target.host else "")
        stops_at_start = initial_break
    elif isinstance(target, LocalKernelTarget):
        args.append("-kl")
        kind, attached_to = "local_kernel", "the local kernel"
    elif isinstance(target, DumpTarget):
        path = argv_value("dump path", target.path, check_path)
        args += ["-z", path]
        kind, attached_to = ("kernel_dump" if target.kernel else "user_dump"), path
    elif isinstance(target, RemoteTarget):
        connection = argv_value("remote connection", target.connection, check_remote_connection)
        args += ["-remote", connection]
        kind, attached_to = "remote", connection
        # The server's target may be running: then no prompt comes until its next stop, and the
        # join is done when the server announces us ("... connected at ...").
        stops_at_start = False
    elif target.pid is not None:
        args += (["-pv"] if target.noninvasive else []) + ["-p", str(int(target.pid))]
        kind, attached_to = "process", f"pid {int(target.pid)}" + (" (noninvasive)" if target.noninvasive else "")
    elif target.command_line:
        command_line = argv_value("command_line", target.command_line, check_command_line)
        # cdb stops at the loader's initial breakpoint unless -g: "-g ignores the initial breakpoint".
        if not initial_break:
            args.append("-g")
            stops_at_start = False
        # Everything after the executable belongs to the debuggee: options go first.
        args += [*extra_args, *command_line]
        extra_args = ()
        kind, attached_to = "launched", " ".join(_quote(a) for a in command_line)
    else:
        raise InvalidArgument("a process target needs a pid or a command line")
    args += list(extra_args)
    display = " ".join(_quote(a) for a in args)
    return LaunchPlan(
        argv=args,
        display=redact(display, secrets),
        flavor=flavor_for(target),
        secrets=secrets,
        stops_at_start=stops_at_start,
        kind=kind,
        attached_to=redact(attached_to, secrets),
        noninvasive=isinstance(target, ProcessTarget) and target.noninvasive,
    )


def simulator_command(flavor: Flavor, scenario: str | None = None) -> list[str]:
    """The argv prefix that runs ``kdmcp.sim`` as ``flavor`` (scenario options go first)."""
    prefix = [sys.executable, "-m", "kdmcp.sim", flavor]
    if scenario:
        prefix += ["--scenario", argv_value("scenario", scenario, check_path)]
    return prefix


def _quote(arg: str) -> str:
    return f'"{arg}"' if (" " in arg or not arg) else arg
