"""The ``winrm-kd-session-v1`` state file: how to reach a guest that was set up for KDNET.

A WinRM companion server runs ``configure_kdnet`` on the guest (``bcdedit /dbgsettings net
hostip:H port:N key:K``) and writes what the host's kd.exe needs into this file::

    {"schema": "winrm-kd-session-v1", "guest_host": "10.0.0.5", "host_ip": "10.0.0.1",
     "port": 50000, "key": "1a2b3c.4d5e6f.7g8h9i.0jklmn",
     "created_by": "winrm-mcp", "created_at_unix": 1767225600}

It is read as YAML (JSON is YAML) on every call, never cached: the companion may rotate the
key between two sessions, and a stale key makes kd wait forever without saying why.

The key is wrapped in a ``Secret`` as soon as it is read. Messages name the defect and the
file, never the key: a format error says which word is wrong and how, not what it holds, and
a YAML syntax error gives line and column without the offending line (PyYAML's own message
quotes it).

Reading a YAML document safely (the config file does it too) is :mod:`kdmcp.yaml_document`'s.
"""

from __future__ import annotations

import contextlib
import getpass as _getpass
import json
import math
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import platformdirs
from pydantic import BeforeValidator, ConfigDict, Field, PlainSerializer, ValidationError, field_validator

from kdmcp.argvalues import check_host, check_ip_address, check_kdnet_key, check_port
from kdmcp.errors import InvalidArgument, StateFileError
from kdmcp.regular_file import others_can_read
from kdmcp.secret import Secret
from kdmcp.validation import LazyModel, validation_problems
from kdmcp.yaml_document import KEYLIKE_RE, read_yaml_document

__all__ = [
    "DEFAULT_MAX_AGE_S",
    "ENV_KEY",
    "ENV_STATE_FILE",
    "SCHEMA",
    "WINDOWS_DEFAULT_PATH",
    "KdSessionState",
    "KdnetKey",
    "LoadedState",
    "StateSource",
    "check_kdnet_key",
    "default_state_path",
    "load_state",
    "read_key_interactively",
    "resolve_state_path",
    "write_state",
]

SCHEMA: Final = "winrm-kd-session-v1"
ENV_STATE_FILE = "KDMCP_STATE_FILE"
ENV_KEY = "KDMCP_KDNET_KEY"
# Where the companion writes by default on the Windows host it shares with kd.exe.
WINDOWS_DEFAULT_PATH = r"C:\mcp-state\kd-session.json"
STATE_FILE_NAME = "kd-session.json"
DEFAULT_MAX_AGE_S = 24 * 3600.0
# Ephemeral range: bcdedit's documented range for KDNET ports is 49152-65535.
KDNET_PORT_RANGE = (49152, 65535)
# A clock a few minutes off between guest-side companion and host is normal.
FUTURE_SLACK_S = 300.0

StateSource = Literal["argument", "config", "env", "default"]
_SOURCE_WORDS: dict[StateSource, str] = {
    "argument": "from the tool argument",
    "config": "from state_file in the config",
    "env": f"from ${ENV_STATE_FILE}",
    "default": "the default location",
}


def _to_kdnet_key(value: object) -> Secret:
    """Pydantic hook: accept a ``Secret`` or a plain string, check the format, return a ``Secret``."""
    if isinstance(value, Secret):
        return Secret(check_kdnet_key(value.reveal()))
    if isinstance(value, str):
        return Secret(check_kdnet_key(value))
    raise ValueError(f"must be a string, not {_kind(value)}")


# A KDNET key inside a pydantic model: validated, wrapped, and "***" in JSON dumps.
KdnetKey = Annotated[
    Secret,
    BeforeValidator(_to_kdnet_key),
    PlainSerializer(str, return_type=str, when_used="json"),
]


def _kind(value: object) -> str:
    """A value's type in YAML words, for messages that must not quote the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class KdSessionState(LazyModel):
    """One ``winrm-kd-session-v1`` record. Unknown fields are ignored (the companion may add some)."""

    # hide_input_in_errors: a ValidationError raised by direct construction must not quote the key.
    model_config = ConfigDict(
        frozen=True,
        arbitrary_types_allowed=True,
        extra="ignore",
        populate_by_name=True,
        hide_input_in_errors=True,
    )

    # "schema" would shadow a BaseModel attribute, hence the alias.
    schema_name: Literal["winrm-kd-session-v1"] = Field(default=SCHEMA, alias="schema")
    guest_host: str
    host_ip: str
    port: int
    key: KdnetKey
    created_by: str | None = None
    created_at_unix: float | None = None

    @field_validator("guest_host", "host_ip", mode="before")
    @classmethod
    def _host_present(cls, value: object) -> str:
        if not isinstance(value, str):
            raise ValueError(f"must be a string, not {_kind(value)}")
        if not value.strip():
            raise ValueError("is empty")
        return value.strip()

    # guest_host becomes kd's target= (which kd splits at ',' and '='); host_ip is what the guest's
    # bcdedit hostip: was given, an address. kdmcp.argvalues holds the rules for every source.
    @field_validator("guest_host")
    @classmethod
    def _guest_is_a_host(cls, value: str) -> str:
        return check_host(value)

    @field_validator("host_ip")
    @classmethod
    def _host_ip_is_an_address(cls, value: str) -> str:
        return check_ip_address(value)

    @field_validator("port", mode="before")
    @classmethod
    def _port_in_range(cls, value: object) -> int:
        # YAML "port: 5e4" or "port: '50000'" is a mistake we report rather than coerce.
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be an integer from 1 to 65535, not {_kind(value)}")
        return check_port(value)

    @field_validator("created_by", mode="before")
    @classmethod
    def _created_by_text(cls, value: object) -> object:
        if value is not None and not isinstance(value, str):
            raise ValueError(f"must be a string, not {_kind(value)}")
        return value

    @field_validator("created_at_unix", mode="before")
    @classmethod
    def _created_at_number(cls, value: object) -> object:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError("must be a non-negative number of seconds since 1970 (Unix time)")
        return float(value)

    def to_document(self) -> dict[str, Any]:
        """The record as written to disk, key revealed: only ``write_state`` should call this."""
        doc: dict[str, Any] = {
            "schema": self.schema_name,
            "guest_host": self.guest_host,
            "host_ip": self.host_ip,
            "port": self.port,
            "key": self.key.reveal(),
        }
        if self.created_by is not None:
            doc["created_by"] = self.created_by
        if self.created_at_unix is not None:
            at = self.created_at_unix
            doc["created_at_unix"] = int(at) if at.is_integer() else at
        return doc


@dataclass(frozen=True)
class LoadedState:
    """A validated state file, where it came from, and what is worth telling the user about it."""

    state: KdSessionState
    path: Path
    source: StateSource
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Path resolution


def default_state_path(platform: str | None = None) -> Path:
    """The companion's default location.

    On Windows ``C:\\mcp-state\\kd-session.json`` (where the companion writes it). Elsewhere, where
    no companion runs but tests, the simulator or a copied file may, it is
    ``platformdirs.user_state_dir("kd-mcp")/kd-session.json`` (``~/.local/state/kd-mcp/`` on Linux,
    ``~/Library/Application Support/kd-mcp/`` on macOS).
    """
    if (platform or sys.platform) == "win32":
        return Path(WINDOWS_DEFAULT_PATH)
    return Path(platformdirs.user_state_dir("kd-mcp")) / STATE_FILE_NAME


def resolve_state_path(
    path_arg: str | os.PathLike[str] | None,
    config_path: str | os.PathLike[str] | None,
    *,
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
) -> tuple[Path, StateSource]:
    """Pick the state file: tool argument, else config, else ``$KDMCP_STATE_FILE``, else the default.

    An empty string counts as "not given" (MCP clients often send ``""`` for an omitted argument).
    ``~`` is expanded; relative paths stay relative to the working directory.
    """
    environ = os.environ if env is None else env
    candidates: list[tuple[str | os.PathLike[str] | None, StateSource]] = [
        (path_arg, "argument"),
        (config_path, "config"),
        (environ.get(ENV_STATE_FILE), "env"),
    ]
    for value, source in candidates:
        if value is not None and str(value).strip():
            return Path(os.path.expanduser(str(value).strip())), source
    return default_state_path(platform), "default"


# ---------------------------------------------------------------------------------------------
# Reading


def load_state(
    path_arg: str | os.PathLike[str] | None = None,
    config_path: str | os.PathLike[str] | None = None,
    max_age_s: float | None = DEFAULT_MAX_AGE_S,
    *,
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
    now: float | None = None,
) -> LoadedState:
    """Resolve, read and validate the state file; raise ``StateFileError`` naming the defect.

    Called afresh for every connect: nothing is cached. ``max_age_s=None`` switches the age
    warning off; ``env``, ``platform`` and ``now`` are injectable for tests.
    """
    path, source = resolve_state_path(path_arg, config_path, env=env, platform=platform)
    where = f"state file {path} ({_SOURCE_WORDS[source]})"
    hint = (
        "; run configure_kdnet on the guest through the WinRM companion, or name the file: the "
        f"tool's state_file argument, state_file in the config, or ${ENV_STATE_FILE}"
    )
    data = read_yaml_document(path, where, StateFileError, not_found_hint=hint)
    if not isinstance(data, dict):
        raise StateFileError(f"{where}: must be a mapping of fields, not {_kind(data)}")

    schema = data.get("schema")
    if schema is None:
        raise StateFileError(f"{where}: schema is missing; expected {SCHEMA!r}")
    if schema != SCHEMA:
        shown = repr(schema) if isinstance(schema, str) and len(schema) <= 40 else _kind(schema)
        raise StateFileError(f"{where}: schema is {KEYLIKE_RE.sub('***', shown)}, expected {SCHEMA!r}")

    # Wrap the key before pydantic sees it, so no error record ever holds it in the clear.
    fields = dict(data)
    if isinstance(fields.get("key"), str):
        fields["key"] = Secret(fields["key"])
    defects: list[str] | None = None
    try:
        state = KdSessionState.model_validate(fields)
    except ValidationError as exc:
        defects = validation_problems(exc, top="(document)")
    if defects is not None:
        raise StateFileError(f"{where}: " + "; ".join(defects))

    warnings = _warnings(state, path, max_age_s, time.time() if now is None else now)
    return LoadedState(state=state, path=path, source=source, warnings=warnings)


def _warnings(state: KdSessionState, path: Path, max_age_s: float | None, now: float) -> list[str]:
    """Things that do not stop a connect but explain a failed one."""
    warnings: list[str] = []
    low, high = KDNET_PORT_RANGE
    if not low <= state.port <= high:
        warnings.append(
            f"port {state.port} is outside {low}-{high}, the range Microsoft documents for KDNET ports; "
            "check the guest's bcdedit /dbgsettings"
        )
    try:
        st = path.stat()
    except OSError:  # removed or rotated since we read it: the age check falls back to created_at
        st = None
    if max_age_s is not None:
        if state.created_at_unix is not None:
            created, basis = state.created_at_unix, "created_at_unix"
        elif st is not None:
            created, basis = st.st_mtime, "file modification time"
        else:
            created, basis = None, ""
        if created is not None:
            age = now - created
            if age > max_age_s:
                warnings.append(
                    f"state file is {_hours(age)} old (by {basis}), older than {_hours(max_age_s)}: "
                    "the guest may have been reconfigured or the key rotated since"
                )
            elif age < -FUTURE_SLACK_S:
                warnings.append(f"{basis} lies {_hours(-age)} in the future: the guest's and host's clocks disagree")
    if os.name == "posix" and st is not None and others_can_read(st.st_mode):
        warnings.append(
            f"state file is readable by other users (mode {stat.S_IMODE(st.st_mode):04o}) and holds the "
            f"KDNET key: chmod 600 {path}"
        )
    return warnings


def _hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.0f} days"


# ---------------------------------------------------------------------------------------------
# Writing


def write_state(path: str | os.PathLike[str], state: KdSessionState) -> Path:
    """Write ``state`` atomically, readable by its owner only; return the path written.

    A temporary file in the target directory is written, fsynced and renamed over the target
    (``os.replace``), so a reader sees the old file or the new one, never half of one. On POSIX
    the file is 0o600 and each parent directory we create is 0o700; on Windows both inherit the
    directory's ACL (the companion's ``C:\\mcp-state`` should grant only its user).
    """
    target = Path(os.path.expanduser(os.fspath(path)))
    data = (json.dumps(state.to_document(), indent=2) + "\n").encode("utf-8")
    tmp_name: str | None = None
    problem: str | None = None
    try:
        _make_private_dirs(target.parent)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            if os.name == "posix":
                os.fchmod(fh.fileno(), 0o600)  # mkstemp already does; the umask cannot widen it
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
        tmp_name = None
        _fsync_dir(target.parent)
    except OSError as exc:
        problem = exc.strerror or type(exc).__name__
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
    if problem is not None:
        raise StateFileError(f"state file {target}: cannot be written: {problem}")
    return target


def _make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and any missing ancestors as 0o700 (``mkdir(parents=True)`` would
    create the ancestors with default permissions); existing directories are left as they are."""
    missing: list[Path] = []
    current = directory
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable (POSIX; Windows cannot open a directory for fsync)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_key_interactively(
    *,
    env: Mapping[str, str] | None = None,
    prompt: str = "KDNET key: ",
    getpass: Callable[[str], str] = _getpass.getpass,
) -> Secret:
    """The key for ``kd-mcp state write``: from ``$KDMCP_KDNET_KEY``, else typed at a hidden prompt.

    Never from argv: a command line is visible to every user in the process list and lands in
    shell history. Raises ``InvalidArgument`` (without the key) when it is malformed or empty.
    """
    environ = os.environ if env is None else env
    value = environ.get(ENV_KEY, "").strip()
    source = f"${ENV_KEY}"
    if not value:
        value = getpass(prompt).strip()
        source = "the typed key"
    if not value:
        raise InvalidArgument(f"no KDNET key given: set {ENV_KEY} or type it at the prompt")
    problem: str | None = None
    try:
        value = check_kdnet_key(value)
    except ValueError as exc:
        problem = str(exc)
    if problem is not None:
        raise InvalidArgument(f"{source}: {problem}")
    return Secret(value)
