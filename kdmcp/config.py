"""The server's one YAML config file: debugger paths, timeouts, limits, named KDNET connections.

Found at ``--config PATH``, else ``$KDMCP_CONFIG``, else ``platformdirs.user_config_dir("kd-mcp")/
config.yaml`` if that exists, else every setting takes its default. A path given explicitly
(option or environment) must exist; the per-user file is optional.

Validation is strict (``extra="forbid"``, no ``"60"`` → 60 or ``yes`` → 1 coercion) because a
misspelt key that is silently ignored is a timeout the user thinks they changed. Every error
names the key by its dotted path (``timeouts.command: Input should be greater than 0``) and is
raised as ``ConfigError``; no message quotes a value, so KDNET keys in ``connections`` stay out
of them.
"""

from __future__ import annotations

import ntpath
import os
import re
import stat
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from kdmcp.argvalues import check_host, check_path, check_symbol_path
from kdmcp.config_paths import ENV_CONFIG, default_config_path, named_path
from kdmcp.errors import ConfigError
from kdmcp.regular_file import others_can_read
from kdmcp.statefile import KdnetKey
from kdmcp.validation import LazyModel, validation_problems
from kdmcp.yaml_document import read_yaml_document

__all__ = [
    "ENV_CONFIG",
    "Config",
    "ConfigSource",
    "ConsoleBackendName",
    "DebuggerPaths",
    "KdnetConnection",
    "LoadedConfig",
    "Timeouts",
    "default_config_path",
    "load_config",
]


ConsoleBackendName = Literal["auto", "pexpect", "pipe", "wexpect"]
ConfigSource = Literal["argument", "env", "default", "none"]

# A connection name is typed by people and agents as a tool argument: keep it plain.
_CONNECTION_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_SECTIONS = ("debuggers", "timeouts", "connections", "triage")


class _Section(LazyModel):
    """Common settings: unknown keys are errors, no type coercion, inputs never quoted in errors."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        arbitrary_types_allowed=True,
        hide_input_in_errors=True,
    )


class DebuggerPaths(_Section):
    """Explicit executables; unset means "discover it" (``kdmcp.discovery``), a bare name is looked up on PATH."""

    kd: str | None = None
    cdb: str | None = None
    windbg: str | None = None

    @field_validator("kd", "cdb", "windbg")
    @classmethod
    def _plain_executable(cls, value: str | None) -> str | None:
        """Each is argv[0] of a debugger: no quotes or control characters (``kdmcp.argvalues``)."""
        return None if value is None else check_path(value)


class Timeouts(_Section):
    """Seconds. Defaults suit a KDNET guest on a LAN with symbols on a symbol server."""

    startup: float = Field(default=30.0, gt=0)  # debugger start to first prompt or "running"
    command: float = Field(default=60.0, gt=0)  # one immediate command (!analyze can be slow)
    break_in: float = Field(default=10.0, gt=0)  # Ctrl+Break to the break banner and prompt
    continue_wait_sec: float = Field(default=5.0, ge=0)  # resume_for_winrm: watch after `g`
    stop: float = Field(default=10.0, gt=0)  # resume + quit before the process is killed


# A Dask scheduler's address as distributed takes it: a scheme, a host and a port (the port is
# not optional: distributed raises "missing port number" from a thread it then leaves running,
# and the process never exits), or an inproc:// name.
SCHEDULER_ADDRESS = re.compile(r"(?:tcp|tls|ucx)://(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):\d{1,5}|inproc://[A-Za-z0-9._:/-]+")
MAX_TRIAGE_JOBS = 64  # debuggers at once in a local triage run (the config's and --jobs' bound)


class TriageSettings(_Section):
    """Fleet triage (docs/triage.md): where it runs and where the tool keeps its records."""

    # A Dask scheduler (tcp://host:8786): triage_dumps and `kd-mcp triage` run there instead of locally
    # (docs/triage-cluster.md); a CLI --scheduler wins.
    scheduler: str | None = None
    # Debuggers at once in a local run (default: the cores, at most max_sessions, bounded by memory).
    jobs: int | None = Field(default=None, ge=1, le=MAX_TRIAGE_JOBS)
    # Where triage_dumps writes its JSONL files (default: the user state directory's triage/).
    records_dir: str | None = None
    # Seconds per dump for the whole read set (!analyze -v with a cold symbol cache takes tens of
    # seconds); a debugger past it is killed and the dump recorded as debugger_timeout.
    timeout_s: float = Field(default=300.0, gt=0)

    @field_validator("scheduler")
    @classmethod
    def _plain_address(cls, value: str | None) -> str | None:
        """A scheduler address: ``tcp://host:port`` (or tls://, ucx://, inproc://), one token."""
        if value is not None and not SCHEDULER_ADDRESS.fullmatch(value):
            raise ValueError("triage.scheduler must be an address such as tcp://host:8786")
        return value


class KdnetConnection(_Section):
    """A named KDNET target, so callers can say ``connect lab-vm`` instead of passing the key."""

    port: int = Field(ge=1, le=65535)
    key: KdnetKey
    target_host: str | None = None  # kd's target=: the guest, when the host has several NICs

    @field_validator("target_host")
    @classmethod
    def _target_is_a_host(cls, value: str | None) -> str | None:
        """kd splits ``-k net:...,target=H`` at ',' and '=': only a host name or an address goes there."""
        return None if value is None else check_host(value)


# "\\server\share[\dir...]" or "http(s)://host[:port]/path": one location, nothing else in it.
_NETWORK_ROOT_RE = re.compile(
    r"(?:\\\\[A-Za-z0-9._-]+\\[A-Za-z0-9.$_-]+(?:\\[A-Za-z0-9.$_ -]+)*|https?://[A-Za-z0-9.-]+(?::\d+)?(?:/[A-Za-z0-9._~%-]+)*)/?"
)


# "!ndiskd.netreport -v", ".mycmd", "mycmd /f" (kdmcp.command.allowlist.config_entries reads them).
_ALLOW_COMMAND_RE = re.compile(
    r"(?:!(?:[A-Za-z_]\w*\.)?[A-Za-z_]\w*|\.[A-Za-z_]\w*|[A-Za-z_]\w*)(?:\s+[-/][A-Za-z?][\w?]*)*\s*", re.ASCII
)


class Config(_Section):
    """The whole file. Every key is optional."""

    debuggers: DebuggerPaths = Field(default_factory=DebuggerPaths)
    symbol_path: str | None = None
    console_backend: ConsoleBackendName = "auto"
    timeouts: Timeouts = Field(default_factory=Timeouts)
    inline_output_bytes: int = Field(default=64 * 1024, ge=1)
    max_sessions: int = Field(default=4, ge=1)
    # The HTTP listener's clients come and go; their sessions do not end with a connection. One
    # that no call has used for this long is stopped (a KDNET guest resumed first); 0: never.
    idle_stop_minutes: float = Field(default=120.0, ge=0)
    # The command policy for the stdio client (listener clients carry their own): see docs/security.md.
    policy: Literal["read_only", "standard", "full"] = "standard"
    # Powers a tool has beyond any command, off under "standard" unless switched on here (full
    # has them): launch runs a program on the host; share_session opens a debugging server.
    allow_launch: bool = False
    allow_share: bool = False
    # Starting a debugger on a process or the kernel of this host (attach_process, attach_local_kernel).
    allow_attach: bool = False
    allow_local_kernel: bool = False
    # Under "standard", ask the person (MCP elicitation) before refusing a command only "full" may run.
    ask: bool = True
    # The directories open_dump may open (none: any path); relative to this file's directory.
    dump_roots: list[str] = Field(default_factory=list)
    # Network locations a command's paths may name besides the Microsoft symbol server:
    # the team's symbol and source shares (\\server\share\...) and servers (https://...).
    network_roots: list[str] = Field(default_factory=list)
    # Commands added to the command policy's allowlist: "!ndiskd.netreport", ".mycmd -v".
    # Each must be a command kd-mcp does not know (it is then a read, under read_only too).
    allow_commands: list[str] = Field(default_factory=list)
    state_file: str | None = None
    state_file_max_age_hours: float = Field(default=24.0, gt=0)
    connections: dict[str, KdnetConnection] = Field(default_factory=dict)
    triage: TriageSettings = Field(default_factory=TriageSettings)

    @model_validator(mode="before")
    @classmethod
    def _empty_sections_are_defaults(cls, data: Any) -> Any:
        """``timeouts:`` with every child commented out is YAML null: read it as "all defaults"."""
        if isinstance(data, dict):
            return {k: ({} if v is None and k in _SECTIONS else v) for k, v in data.items()}
        return data

    @field_validator("network_roots")
    @classmethod
    def _roots_are_shares_or_servers(cls, value: list[str]) -> list[str]:
        """A root is a UNC share or an http(s) URL, with no quotes, blanks, ';' or '*' to smuggle in more."""
        for root in value:
            if not _NETWORK_ROOT_RE.fullmatch(root) or ".." in re.split(r"[\\/]", root):
                raise ValueError(
                    f"network root {root!r} must be a share (\\\\server\\share[\\dir]) or a URL (https://host/path)"
                )
        return value

    @field_validator("allow_commands")
    @classmethod
    def _command_names_and_options(cls, value: list[str]) -> list[str]:
        """Each entry a command name and its options; the server refuses one kd-mcp already classes (``.shell``)."""
        for spec in value:
            if not _ALLOW_COMMAND_RE.fullmatch(spec):
                raise ValueError(f"allow_commands entry {spec!r} must be a command name and its options (-x, /x)")
        return value

    @field_validator("dump_roots")
    @classmethod
    def _plain_roots(cls, value: list[str]) -> list[str]:
        """Directories, each a plain path (``kdmcp.argvalues``: no quotes or control characters)."""
        return [check_path(root) for root in value]

    @field_validator("symbol_path")
    @classmethod
    def _plain_symbol_path(cls, value: str | None) -> str | None:
        """Passed to ``-y``: no leading '-', quotes or control characters (``kdmcp.argvalues``)."""
        return None if value is None else check_symbol_path(value)

    @field_validator("connections")
    @classmethod
    def _plain_names(cls, connections: dict[str, KdnetConnection]) -> dict[str, KdnetConnection]:
        for name in connections:
            if not _CONNECTION_NAME_RE.fullmatch(name):
                raise ValueError(
                    f"connection name {name!r} must be 1-64 letters, digits, '_', '-' or '.', starting with a letter "
                    "or digit"
                )
        return connections

    @property
    def state_file_max_age_s(self) -> float:
        """The age limit as ``load_state`` takes it."""
        return self.state_file_max_age_hours * 3600.0


@dataclass(frozen=True)
class LoadedConfig:
    """The validated config and the file it came from (``None``: no file, all defaults)."""

    config: Config
    path: Path | None
    source: ConfigSource = "none"
    warnings: list[str] = field(default_factory=list)


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    default_path: Path | None = None,
) -> LoadedConfig:
    """Find, read and validate the config; raise ``ConfigError`` naming the file and the bad key.

    Relative paths inside the file (``debuggers.*``, ``state_file``) are taken relative to the
    file's directory, so a config works whatever directory the server starts in.
    """
    environ = os.environ if env is None else env
    chosen: Path | None = None
    source: ConfigSource = "none"
    given = named_path(str(path) if path is not None else None)
    from_env = named_path(environ.get(ENV_CONFIG))
    if given is not None:
        chosen, source = given, "argument"
    elif from_env is not None:
        chosen, source = from_env, "env"
    else:
        candidate = default_config_path() if default_path is None else default_path
        if candidate.is_file():
            chosen, source = candidate, "default"
    if chosen is None:
        return LoadedConfig(config=Config(), path=None, source="none")

    label = f"config file {chosen}" + (f" (from ${ENV_CONFIG})" if source == "env" else "")
    data = read_yaml_document(chosen, label, ConfigError)
    if data is None:  # an empty file, or only comments
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{label}: must be a mapping of settings at the top level")
    problems: list[str] | None = None
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc, allowed_keys=_allowed_keys)
    # Raised outside the except block so the ValidationError is not chained onto ours.
    if problems is not None:
        raise ConfigError(f"{label}: " + "; ".join(problems))

    config = _anchor_paths(config, chosen.parent)
    return LoadedConfig(config=config, path=chosen, source=source, warnings=_warnings(config, chosen))


def _anchor_paths(config: Config, base: Path) -> Config:
    """Make relative file paths (debuggers, ``state_file``, ``dump_roots``) relative to the config's
    directory, and expand ``~``.

    A debugger given as a bare name (``kd.exe``) stays as is: discovery looks it up on PATH.
    ``C:\\...`` counts as absolute on every host, so a Windows config reads the same in tests.
    """

    def anchor(value: str | None, *, bare_is_command: bool) -> str | None:
        if value is None:
            return None
        expanded = os.path.expanduser(value)
        if os.path.isabs(expanded) or ntpath.isabs(expanded):
            return expanded
        if bare_is_command and not any(sep in expanded for sep in ("/", "\\")):
            return expanded
        return str(base / expanded)

    debuggers = config.debuggers.model_copy(
        update={name: anchor(getattr(config.debuggers, name), bare_is_command=True) for name in ("kd", "cdb", "windbg")}
    )
    roots = [anchor(root, bare_is_command=False) or root for root in config.dump_roots]
    triage = config.triage.model_copy(update={"records_dir": anchor(config.triage.records_dir, bare_is_command=False)})
    return config.model_copy(
        update={"debuggers": debuggers, "state_file": anchor(config.state_file, bare_is_command=False),
                "dump_roots": roots, "triage": triage}
    )


def _warnings(config: Config, path: Path) -> list[str]:
    """A config holding KDNET keys should be as private as the state file."""
    if not config.connections or os.name != "posix":
        return []
    try:
        mode = path.stat().st_mode
    except OSError:
        return []
    if others_can_read(mode):
        return [
            f"config file is readable by other users (mode {stat.S_IMODE(mode):04o}) and holds KDNET keys "
            f"in connections: chmod 600 {path}"
        ]
    return []


def _allowed_keys(loc: tuple[int | str, ...]) -> list[str]:
    """The field names of the section at ``loc`` (walking models and ``dict`` values)."""
    node: Any = Config
    for part in loc:
        if isinstance(node, type) and issubclass(node, BaseModel):
            info = node.model_fields.get(str(part))
            if info is None:
                return []
            node = _unwrap_optional(info.annotation)
        elif get_origin(node) is dict:
            node = get_args(node)[1]
        else:
            return []
    if isinstance(node, type) and issubclass(node, BaseModel):
        return list(node.model_fields)
    return []


def _unwrap_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation
