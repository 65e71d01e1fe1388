"""What to debug and how to start the debugger for it: one argv per mode.

Modes map to kd/cdb command lines: KDNET (``kd -k net:port=N,key=K[,target=H]``), local
kernel (``kd -kl``), a crash dump (``kd -z`` for kernel dumps, ``cdb -z`` for user dumps), a
process (``cdb -p PID`` or ``cdb app.exe args``) and joining a debugging server
(``-remote tcp:server=H,port=N``). The KDNET key is a ``Secret``: the real argv has it, the
``display`` form shown to users and logs has ``key=***``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kdmcp.errors import InvalidArgument
from kdmcp.secret import Secret, redact

Flavor = Literal["kd", "cdb"]


class _Target(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")


class KdnetTarget(_Target):
    """A guest kernel over KDNET, as configured by ``bcdedit /dbgsettings net`` or kdnet.exe."""

    mode: Literal["kdnet"] = "kdnet"
    port: int = Field(ge=1, le=65535)
    key: Secret
    host: str | None = None  # target= : the guest's address, when the host has several NICs

    @field_validator("key")
    @classmethod
    def _key_not_empty(cls, key: Secret) -> Secret:
        if not key.reveal():
            raise ValueError("the KDNET key is empty")
        return key


class LocalKernelTarget(_Target):
    mode: Literal["local"] = "local"


class DumpTarget(_Target):
    mode: Literal["dump"] = "dump"
    path: str = Field(min_length=1)
    kernel: bool = True


class ProcessTarget(_Target):
    """A user-mode process: attach to ``pid`` or launch ``command_line``."""

    mode: Literal["process"] = "process"
    pid: int | None = Field(default=None, ge=0)
    command_line: Sequence[str] | None = None
    noninvasive: bool = False


class RemoteTarget(_Target):
    """Join a session served by ``windbg/kd/cdb -server`` (``tcp:server=H,port=N`` …)."""

    mode: Literal["remote"] = "remote"
    connection: str = Field(min_length=1)
    kernel: bool = True


Target = KdnetTarget | LocalKernelTarget | DumpTarget | ProcessTarget | RemoteTarget


@dataclass(frozen=True)
class LaunchPlan:
    """The argv to run, a redacted rendering of it, and what kind of session results."""

    argv: list[str]
    display: str
    flavor: Flavor
    live_kernel: bool  # a running guest: leave it resumed, never frozen, when we stop
    secrets: tuple[Secret, ...]
    # Whether startup ends at a prompt (initial break, dumps, processes) rather than with
    # the target running (KDNET without -b).
    stops_at_start: bool = True


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
    args: list[str] = list(debugger)
    secrets: tuple[Secret, ...] = ()
    if symbol_path:
        args += ["-y", symbol_path]
    if isinstance(target, KdnetTarget):
        spec = f"net:port={target.port},key={target.key.reveal()}"
        if target.host:
            spec += f",target={target.host}"
        if initial_break:
            args.append("-b")
        args += ["-k", spec]
        secrets = (target.key,)
    elif isinstance(target, LocalKernelTarget):
        args.append("-kl")
    elif isinstance(target, DumpTarget):
        args += ["-z", target.path]
    elif isinstance(target, RemoteTarget):
        args += ["-remote", target.connection]
    elif target.pid is not None:
        args += (["-pv"] if target.noninvasive else []) + ["-p", str(target.pid)]
    elif target.command_line:
        # Everything after the executable belongs to the debuggee: options go first.
        args += [*extra_args, *target.command_line]
        extra_args = ()
    else:
        raise InvalidArgument("a process target needs a pid or a command line")
    args += list(extra_args)
    display = " ".join(_quote(a) for a in args)
    return LaunchPlan(
        argv=args,
        display=redact(display, secrets),
        flavor=flavor_for(target),
        live_kernel=isinstance(target, KdnetTarget),
        secrets=secrets,
        stops_at_start=initial_break or not isinstance(target, KdnetTarget),
    )


def simulator_command(flavor: Flavor, scenario: str | None = None) -> list[str]:
    """The argv prefix that runs ``kdmcp.sim`` as ``flavor`` (scenario options go first)."""
    prefix = [sys.executable, "-m", "kdmcp.sim", flavor]
    if scenario:
        prefix += ["--scenario", scenario]
    return prefix


def _quote(arg: str) -> str:
    return f'"{arg}"' if (" " in arg or not arg) else arg
