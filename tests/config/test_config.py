"""The server config: where it is found, strict validation with dotted key names, secrets wrapped."""

from __future__ import annotations

import os
import traceback
from pathlib import Path

import platformdirs
import pytest

from kdmcp.config import ENV_CONFIG, Config, LoadedConfig, Timeouts, default_config_path, load_config
from kdmcp.errors import ConfigError, KdMcpError
from kdmcp.secret import Secret

CANARY = "c4n4ry0000001.c4n4ry0000002.c4n4ry0000003.c4n4ry0000004"
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def load(path: Path | str | None, **kwargs: object) -> LoadedConfig:
    kwargs.setdefault("env", {})
    kwargs.setdefault("default_path", Path("/nonexistent/kd-mcp/config.yaml"))
    return load_config(None if path is None else str(path), **kwargs)  # type: ignore[arg-type]


def config_error(tmp_path: Path, text: str) -> str:
    path = write(tmp_path / "config.yaml", text)
    with pytest.raises(ConfigError) as info:
        load(path)
    exc = info.value
    assert exc.category == "config"
    assert str(path) in exc.message
    rendered = "".join(traceback.format_exception(exc)) + repr(exc.__context__) + repr(exc.__cause__)
    assert CANARY not in rendered
    assert "c4n4ry00000" not in rendered
    return exc.message


# --------------------------------------------------------------------------- where


def test_defaults_without_a_file() -> None:
    loaded = load(None)
    assert loaded.path is None
    assert loaded.source == "none"
    config = loaded.config
    assert config == Config()
    assert config.timeouts == Timeouts(startup=30, command=60, break_in=10, continue_wait_sec=5.0, stop=10)
    assert config.inline_output_bytes == 64 * 1024
    assert config.max_sessions == 4
    assert config.console_backend == "auto"
    assert config.state_file is None
    assert config.state_file_max_age_hours == 24
    assert config.state_file_max_age_s == 24 * 3600
    assert config.connections == {}
    assert (config.debuggers.kd, config.debuggers.cdb, config.debuggers.windbg) == (None, None, None)
    assert config.symbol_path is None


def test_argument_beats_env_beats_default(tmp_path: Path) -> None:
    arg = write(tmp_path / "arg.yaml", "max_sessions: 1\n")
    env_file = write(tmp_path / "env.yaml", "max_sessions: 2\n")
    default = write(tmp_path / "default.yaml", "max_sessions: 3\n")
    env = {ENV_CONFIG: str(env_file)}
    assert load(arg, env=env, default_path=default).config.max_sessions == 1
    from_env = load(None, env=env, default_path=default)
    assert (from_env.config.max_sessions, from_env.source, from_env.path) == (2, "env", env_file)
    from_default = load(None, env={ENV_CONFIG: " "}, default_path=default)
    assert (from_default.config.max_sessions, from_default.source) == (3, "default")
    assert load(None, env={}, default_path=tmp_path / "missing.yaml").source == "none"


def test_env_none_means_os_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "c.yaml", "max_sessions: 7\n")
    monkeypatch.setenv(ENV_CONFIG, str(path))
    assert load_config(None).config.max_sessions == 7


def test_default_path_is_platformdirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_config_path() == Path(platformdirs.user_config_dir("kd-mcp")) / "config.yaml"
    monkeypatch.setattr(platformdirs, "user_config_dir", lambda appname: str(tmp_path))
    monkeypatch.delenv(ENV_CONFIG, raising=False)
    assert load_config(None).source == "none"
    write(tmp_path / "config.yaml", "max_sessions: 5\n")
    loaded = load_config(None)
    assert (loaded.source, loaded.config.max_sessions) == ("default", 5)


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match=r"from \$KDMCP_CONFIG\): not found"):
        load(None, env={ENV_CONFIG: str(tmp_path / "missing.yaml")})


def test_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        load(tmp_path)


@pytest.mark.parametrize("text", ["", "# only comments\n", "---\n"])
def test_empty_file_gives_defaults(tmp_path: Path, text: str) -> None:
    loaded = load(write(tmp_path / "c.yaml", text))
    assert loaded.config == Config()
    assert loaded.source == "argument"


def test_null_sections_are_defaults(tmp_path: Path) -> None:
    config = load(write(tmp_path / "c.yaml", "timeouts:\ndebuggers:\nconnections:\n")).config
    assert config == Config()


# --------------------------------------------------------------------------- validation


def test_full_config(tmp_path: Path) -> None:
    text = f"""
debuggers:
  kd: 'C:\\Debuggers\\x64\\kd.exe'
  cdb: cdb.exe
  windbg: tools/windbg.exe
symbol_path: 'srv*C:\\symbols*https://msdl.microsoft.com/download/symbols'
console_backend: pipe
timeouts: {{startup: 5, command: 1.5, break_in: 2, continue_wait_sec: 0, stop: 3}}
inline_output_bytes: 1024
max_sessions: 2
state_file: state/kd-session.json
state_file_max_age_hours: 0.5
connections:
  lab-vm: {{port: 50000, key: {CANARY}, target_host: 10.0.0.5}}
  other_1: {{port: 50001, key: 1.2.3.4}}
"""
    config = load(write(tmp_path / "c.yaml", text)).config
    assert config.debuggers.kd == "C:\\Debuggers\\x64\\kd.exe"  # Windows-absolute stays as is anywhere
    assert config.debuggers.cdb == "cdb.exe"  # a bare name is for PATH lookup
    assert config.debuggers.windbg == str(tmp_path / "tools" / "windbg.exe")
    assert config.state_file == str(tmp_path / "state" / "kd-session.json")
    assert config.console_backend == "pipe"
    assert config.timeouts.command == 1.5
    assert config.timeouts.continue_wait_sec == 0
    assert config.state_file_max_age_s == 1800
    lab = config.connections["lab-vm"]
    assert (lab.port, lab.target_host) == (50000, "10.0.0.5")
    assert isinstance(lab.key, Secret)
    assert lab.key.reveal() == CANARY
    assert config.connections["other_1"].target_host is None
    for rendering in (repr(config), str(config), config.model_dump_json(), repr(config.model_dump())):
        assert CANARY not in rendering


def test_tilde_and_absolute_paths(tmp_path: Path) -> None:
    text = f"state_file: ~/s.json\ndebuggers:\n  kd: {tmp_path}/kd\n"
    config = load(write(tmp_path / "c.yaml", text)).config
    assert config.state_file == str(Path.home() / "s.json")
    assert config.debuggers.kd == f"{tmp_path}/kd"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("timeouts:\n  command: 0\n", "timeouts.command: Input should be greater than 0"),
        ("timeouts:\n  startup: -1\n", "timeouts.startup: Input should be greater than 0"),
        ("timeouts:\n  continue_wait_sec: -0.5\n", "timeouts.continue_wait_sec: Input should be greater than or equal"),
        ("timeouts:\n  command: '60'\n", "timeouts.command: Input should be a valid number"),
        ("max_sessions: 0\n", "max_sessions: Input should be greater than or equal to 1"),
        ("max_sessions: yes\n", "max_sessions: Input should be a valid integer"),
        ("max_sessions: 2.5\n", "max_sessions: Input should be a valid integer"),
        ("inline_output_bytes: 0\n", "inline_output_bytes: Input should be greater than or equal to 1"),
        ("state_file_max_age_hours: 0\n", "state_file_max_age_hours: Input should be greater than 0"),
        ("console_backend: conpty\n", "console_backend: Input should be 'auto', 'pexpect', 'pipe' or 'wexpect'"),
        ("symbol_path: 3\n", "symbol_path: Input should be a valid string"),
        ("debuggers: kd.exe\n", "debuggers: Input should be a valid dictionary"),
        ("timeouts: []\n", "timeouts: Input should be a valid dictionary"),
        ("triage:\n  scheduler: tcp://sched\n", "triage.scheduler must be an address such as tcp://host:8786"),
        ("triage:\n  jobs: 65\n", "triage.jobs: Input should be less than or equal to 64"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in config_error(tmp_path, text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bogus: 1\n", "bogus: is not a known key (expected one of: debuggers, symbol_path, console_backend"),
        ("timeouts:\n  comand: 3\n", "timeouts.comand: is not a known key (expected one of: startup, command,"),
        ("debuggers:\n  ntsd: x\n", "debuggers.ntsd: is not a known key (expected one of: kd, cdb, windbg)"),
        (
            f"connections:\n  lab:\n    port: 50000\n    key: {CANARY}\n    host: x\n",
            "connections.lab.host: is not a known key (expected one of: port, key, target_host)",
        ),
    ],
)
def test_unknown_keys_are_errors(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in config_error(tmp_path, text)


def test_several_errors_at_once(tmp_path: Path) -> None:
    message = config_error(tmp_path, "timeouts:\n  command: 0\n  stop: 0\nmax_sessions: 0\n")
    assert message.count(": Input should be") == 3


@pytest.mark.parametrize(
    ("connection", "expected"),
    [
        (f"{{port: 50000, key: {CANARY[:-14]}}}", "connections.lab.key: must be four dot-separated base-36 words"),
        (f"{{port: 50000, key: {CANARY}.zz}}", "connections.lab.key: must be four"),
        ("{port: 50000, key: 123}", "connections.lab.key: must be a string, not an integer"),
        ("{port: 50000}", "connections.lab.key: is required"),
        (f"{{key: {CANARY}}}", "connections.lab.port: is required"),
        (f"{{port: 0, key: {CANARY}}}", "connections.lab.port: Input should be greater than or equal to 1"),
        (f"{{port: 70000, key: {CANARY}}}", "connections.lab.port: Input should be less than or equal to 65535"),
        (f"{{port: '50000', key: {CANARY}}}", "connections.lab.port: Input should be a valid integer"),
    ],
)
def test_bad_connections(tmp_path: Path, connection: str, expected: str) -> None:
    assert expected in config_error(tmp_path, f"connections:\n  lab: {connection}\n")


def test_connection_names(tmp_path: Path) -> None:
    message = config_error(tmp_path, f"connections:\n  'bad name': {{port: 50000, key: {CANARY}}}\n")
    assert "connections: connection name 'bad name' must be 1-64 letters" in message
    message = config_error(tmp_path, f"connections:\n  5: {{port: 50000, key: {CANARY}}}\n")
    assert "connections.5: is not a valid name (names must be strings)" in message


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    assert "must be a mapping of settings" in config_error(tmp_path, f"- {CANARY}\n")


@pytest.mark.parametrize(
    "text",
    [
        f"connections:\n  lab: {{port: 50000, key: {CANARY}: x}}\n",
        f"connections:\n  lab:\n    key: {CANARY}\n   port: 1\n",
        f'connections:\n  lab:\n    key: "{CANARY}\n',
    ],
)
def test_bad_yaml_does_not_quote_the_file(tmp_path: Path, text: str) -> None:
    assert "not valid YAML" in config_error(tmp_path, text)


def test_model_is_frozen() -> None:
    config = Config()
    with pytest.raises(ValueError, match="frozen"):
        config.max_sessions = 9


def test_errors_are_kdmcp_errors() -> None:
    assert issubclass(ConfigError, KdMcpError)
    assert ConfigError("x").category == "config"


# --------------------------------------------------------------------------- warnings


@posix_only
def test_keys_in_a_readable_config_warn(tmp_path: Path) -> None:
    text = f"connections:\n  lab: {{port: 50000, key: {CANARY}}}\n"
    path = write(tmp_path / "c.yaml", text, mode=0o644)
    [warning] = load(path).warnings
    assert "readable by other users (mode 0644)" in warning
    assert CANARY not in warning
    path.chmod(0o600)
    assert load(path).warnings == []
    assert load(write(tmp_path / "nokeys.yaml", "max_sessions: 2\n", mode=0o644)).warnings == []
