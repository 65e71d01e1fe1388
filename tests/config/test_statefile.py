"""The winrm-kd-session-v1 state file: resolution, validation, warnings, writing — and the key never shows."""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
import traceback
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from kdmcp.errors import InvalidArgument, KdMcpError, StateFileError
from kdmcp.secret import Secret
from kdmcp.statefile import (
    DEFAULT_MAX_AGE_S,
    ENV_KEY,
    ENV_STATE_FILE,
    SCHEMA,
    KdSessionState,
    check_kdnet_key,
    default_state_path,
    load_state,
    read_key_interactively,
    resolve_state_path,
    write_state,
)

# Four 13-character base-36 words: a well-formed key that is easy to spot if it leaks.
CANARY = "c4n4ry0000001.c4n4ry0000002.c4n4ry0000003.c4n4ry0000004"
CANARY_WORDS = CANARY.split(".")
NOW = 1_800_000_000.0
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")


def good_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "schema": SCHEMA,
        "guest_host": "192.168.56.10",
        "host_ip": "192.168.56.1",
        "port": 50000,
        "key": CANARY,
        "created_by": "winrm-mcp",
        "created_at_unix": NOW - 60,
    }
    fields.update(overrides)
    return {k: v for k, v in fields.items() if v is not _DROP}


_DROP = object()


def write_json(path: Path, **overrides: Any) -> Path:
    path.write_text(json.dumps(good_fields(**overrides)))
    path.chmod(0o600)
    return path


def leak_text(exc: BaseException) -> str:
    """Everything an exception can render: message, repr, traceback, and every chained exception."""
    parts = [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    seen: BaseException | None = exc
    while seen is not None:
        parts += [str(seen), repr(seen), repr(seen.args)]
        seen = seen.__cause__ or seen.__context__
    return "\n".join(parts)


def assert_no_key(text: str, key: str = CANARY) -> None:
    assert key not in text
    for word in key.split("."):
        if len(word) >= 6:
            assert word not in text


def expect_error(path: Path | str, caplog: pytest.LogCaptureFixture, key: str = CANARY, **kwargs: Any) -> str:
    """Load, expect StateFileError, check the key is nowhere; return the message."""
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StateFileError) as info:
        load_state(str(path), now=NOW, env={}, **kwargs)
    exc = info.value
    assert exc.category == "state_file"
    assert_no_key(leak_text(exc), key)
    assert_no_key(caplog.text, key)
    assert str(path) in exc.message
    return exc.message


# --------------------------------------------------------------------------- happy path


def test_loads_json_and_wraps_the_key(tmp_path: Path) -> None:
    path = write_json(tmp_path / "kd-session.json")
    loaded = load_state(str(path), now=NOW, env={})
    assert loaded.path == path
    assert loaded.source == "argument"
    assert loaded.warnings == []
    state = loaded.state
    assert (state.guest_host, state.host_ip, state.port) == ("192.168.56.10", "192.168.56.1", 50000)
    assert isinstance(state.key, Secret)
    assert state.key.reveal() == CANARY
    assert state.created_by == "winrm-mcp"
    for rendering in (repr(loaded), str(loaded), state.model_dump_json(), repr(state.model_dump()), f"{state.key}"):
        assert_no_key(rendering)


def test_loads_yaml_and_ignores_unknown_fields(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"schema: {SCHEMA}\nguest_host: g\nhost_ip: 10.0.0.1\nport: 50001\nkey: {CANARY}\nfuture_field: [1, 2]\n"
    )
    path.chmod(0o600)
    state = load_state(path, now=NOW, env={}).state
    assert state.port == 50001
    assert state.created_at_unix is None
    assert not hasattr(state, "future_field")


@pytest.mark.parametrize(
    ("encoding", "bom"), [("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")]
)
def test_powershell_encodings_are_read(tmp_path: Path, encoding: str, bom: bytes) -> None:
    """Windows PowerShell 5.1 writes UTF-8 with a BOM or UTF-16 (Out-File)."""
    path = tmp_path / "s.json"
    path.write_bytes(bom + json.dumps(good_fields()).encode(encoding))
    path.chmod(0o600)
    assert load_state(path, now=NOW, env={}).state.key.reveal() == CANARY


def test_key_surrounding_blanks_are_stripped_and_uppercase_accepted(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json", key=f"  {CANARY.upper()}\n")
    assert load_state(path, now=NOW, env={}).state.key.reveal() == CANARY.upper()


def test_state_is_reread_on_every_call(tmp_path: Path) -> None:
    """The companion may rotate the key: nothing is cached."""
    path = write_json(tmp_path / "s.json")
    assert load_state(path, now=NOW, env={}).state.key.reveal() == CANARY
    write_json(path, key="1.2.3.4", port=50005)
    again = load_state(path, now=NOW, env={}).state
    assert again.key.reveal() == "1.2.3.4"
    assert again.port == 50005


# --------------------------------------------------------------------------- path resolution


def test_resolution_order(tmp_path: Path) -> None:
    env = {ENV_STATE_FILE: str(tmp_path / "env.json")}
    assert resolve_state_path("arg.json", "cfg.json", env=env) == (Path("arg.json"), "argument")
    assert resolve_state_path(None, "cfg.json", env=env) == (Path("cfg.json"), "config")
    assert resolve_state_path(None, None, env=env) == (tmp_path / "env.json", "env")
    assert resolve_state_path(None, None, env={}, platform="linux")[1] == "default"


def test_empty_strings_count_as_not_given() -> None:
    env = {ENV_STATE_FILE: "  "}
    assert resolve_state_path("", "  ", env=env, platform="win32") == (Path(r"C:\mcp-state\kd-session.json"), "default")


def test_tilde_is_expanded() -> None:
    path, _ = resolve_state_path("~/kd-session.json", None, env={})
    assert path == Path.home() / "kd-session.json"


def test_default_paths() -> None:
    assert str(default_state_path("win32")) == r"C:\mcp-state\kd-session.json"
    assert default_state_path("linux") == Path(platformdirs.user_state_dir("kd-mcp")) / "kd-session.json"


def test_each_source_is_reported_by_load_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_json(tmp_path / "s.json")
    assert load_state(None, str(path), now=NOW, env={}).source == "config"
    assert load_state(None, None, now=NOW, env={ENV_STATE_FILE: str(path)}).source == "env"
    monkeypatch.setenv(ENV_STATE_FILE, str(path))  # env=None means os.environ
    assert load_state(now=NOW).source == "env"
    monkeypatch.setattr(platformdirs, "user_state_dir", lambda appname: str(tmp_path))
    path.rename(tmp_path / "kd-session.json")
    loaded = load_state(now=NOW, env={}, platform="linux")
    assert (loaded.source, loaded.path) == ("default", tmp_path / "kd-session.json")


# --------------------------------------------------------------------------- errors


def test_missing_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    message = expect_error(tmp_path / "nope.json", caplog)
    assert "not found" in message
    assert "configure_kdnet" in message
    assert "from the tool argument" in message


def test_missing_file_names_its_source(tmp_path: Path) -> None:
    with pytest.raises(StateFileError, match=r"from \$KDMCP_STATE_FILE\): not found"):
        load_state(env={ENV_STATE_FILE: str(tmp_path / "x.json")})
    with pytest.raises(StateFileError, match=r"from state_file in the config\): not found"):
        load_state(None, str(tmp_path / "x.json"), env={})


def test_directory(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert "is a directory" in expect_error(tmp_path, caplog)


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads mode 000 files")
def test_unreadable_file_real_permissions(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write_json(tmp_path / "s.json")
    path.chmod(0)
    try:
        assert "permission denied" in expect_error(path, caplog)
    finally:
        path.chmod(0o600)


def test_unreadable_file(tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated, so it also runs as root (root reads mode-000 files)."""
    path = write_json(tmp_path / "s.json")

    real_open = os.open

    def denied(name: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(name) == str(path):
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    assert "cannot be read: permission denied" in expect_error(path, caplog)


def test_other_os_error(tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_json(tmp_path / "s.json")

    real_open = os.open

    def broken(name: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(name) == str(path):
            raise OSError(5, "Input/output error", str(name))
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", broken)
    assert "cannot be read: Input/output error" in expect_error(path, caplog)


@pytest.mark.parametrize(
    "text",
    [
        f"schema: {SCHEMA}\nkey: {CANARY}: oops\n",  # mapping values not allowed, on the key's line
        f'schema: {SCHEMA}\nkey: "{CANARY}\n',  # unterminated quote starting at the key
        f'{{"schema": "{SCHEMA}", "key": {CANARY}, }}}}',  # broken JSON
        f"schema: {SCHEMA}\nkey: {CANARY}\n\tport: 1\n",  # tab
        f"schema: {SCHEMA}\nkey: !!python/object {CANARY}\n",  # unsafe tag
    ],
)
def test_bad_yaml_reports_position_not_content(tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    message = expect_error(path, caplog)
    assert "not valid YAML" in message
    assert "line" in message


def test_control_character(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(f"schema: {SCHEMA}\nkey: {CANARY}\x07\n")
    assert "control character YAML does not allow, at character" in expect_error(path, caplog)


def test_not_utf8(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(json.dumps(good_fields()).encode() + b"\xff\xfe\xfa")
    assert "is not UTF-8 text" in expect_error(path, caplog)


def test_too_large(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(good_fields(created_by="x" * 70_000)))
    assert "larger than 64 KiB" in expect_error(path, caplog)


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([CANARY, SCHEMA], "must be a mapping of fields, not a list"),
        (CANARY, "must be a mapping of fields, not a string"),
        (None, "must be a mapping of fields, not null"),
    ],
)
def test_not_a_mapping(tmp_path: Path, caplog: pytest.LogCaptureFixture, document: object, expected: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(document))
    assert expected in expect_error(path, caplog)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (_DROP, "schema is missing; expected 'winrm-kd-session-v1'"),
        ("winrm-kd-session-v2", "schema is 'winrm-kd-session-v2', expected 'winrm-kd-session-v1'"),
        (1, "schema is an integer, expected"),
        ("abcdef.1.2.3", "schema is '***', expected"),  # a key pasted into the wrong field is masked
        (CANARY, "schema is a string, expected"),
        ("x" * 100, "schema is a string, expected"),
    ],
)
def test_wrong_or_missing_schema(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, schema: object, expected: str
) -> None:
    path = write_json(tmp_path / "s.json", schema=schema)
    assert expected in expect_error(path, caplog)


@pytest.mark.parametrize(
    ("port", "expected"),
    [
        ("50000", "port: must be an integer from 1 to 65535, not a string"),
        (50000.0, "port: must be an integer from 1 to 65535, not a number"),
        (True, "port: must be an integer from 1 to 65535, not a boolean"),
        (0, "port: must be an integer from 1 to 65535, not 0"),
        (65536, "port: must be an integer from 1 to 65535, not 65536"),
        (-1, "not -1"),
        (None, "not null"),
        (_DROP, "port: is required"),
    ],
)
def test_bad_port(tmp_path: Path, caplog: pytest.LogCaptureFixture, port: object, expected: str) -> None:
    path = write_json(tmp_path / "s.json", port=port)
    assert expected in expect_error(path, caplog)


BAD_KEYS = [
    (".".join(CANARY_WORDS[:3]), "found 3 words"),
    (CANARY + ".c4n4ry0000005", "found 5 words"),
    ("c4n4ry0000001..c4n4ry0000003.c4n4ry0000004", "word 2 is empty"),
    ("c4n4ry0000001.c4n4ry00000002.c4n4ry0000003.c4n4ry0000004", "word 2 has 14 characters"),
    ("c4n4ry0000001.c4n4ry0000002.c4n4ry-000003.c4n4ry0000004", "word 3 has a character outside 0-9 and a-z"),
    ("c4n4ry0000001 c4n4ry0000002 c4n4ry0000003 c4n4ry0000004", "found 1 word"),
    ("", "found 1 word"),
]


@pytest.mark.parametrize(("key", "expected"), BAD_KEYS)
def test_malformed_key(tmp_path: Path, caplog: pytest.LogCaptureFixture, key: str, expected: str) -> None:
    path = write_json(tmp_path / "s.json", key=key)
    message = expect_error(path, caplog, key=key or CANARY)
    assert "key: must be four dot-separated base-36 words of 1-13 characters" in message
    assert expected in message


@pytest.mark.parametrize(("key", "expected"), [(12345, "not an integer"), (None, "not null"), (_DROP, "is required")])
def test_key_not_a_string(tmp_path: Path, caplog: pytest.LogCaptureFixture, key: object, expected: str) -> None:
    path = write_json(tmp_path / "s.json", key=key)
    assert expected in expect_error(path, caplog)


@pytest.mark.parametrize("field", ["guest_host", "host_ip"])
@pytest.mark.parametrize(("value", "expected"), [("", "is empty"), ("   ", "is empty"), (_DROP, "is required")])
def test_empty_or_missing_hosts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, field: str, value: object, expected: str
) -> None:
    path = write_json(tmp_path / "s.json", **{field: value})
    assert f"{field}: {expected}" in expect_error(path, caplog)


def test_bad_optional_fields(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write_json(tmp_path / "s.json", created_at_unix="yesterday", created_by=7)
    message = expect_error(path, caplog)
    assert "created_at_unix: must be a non-negative number" in message
    assert "created_by: must be a string, not an integer" in message


def test_all_defects_reported_at_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write_json(tmp_path / "s.json", port=0, key="a.b", guest_host="", host_ip=_DROP)
    message = expect_error(path, caplog)
    for part in ("guest_host: is empty", "host_ip: is required", "port: must be", "key: must be"):
        assert part in message


def test_direct_construction_does_not_quote_the_key() -> None:
    bad = ".".join(CANARY_WORDS[:3])
    with pytest.raises(ValueError, match="found 3 words") as info:
        KdSessionState(guest_host="g", host_ip="10.0.0.1", port=50000, key=bad)  # type: ignore[arg-type]
    assert_no_key(leak_text(info.value), bad)


def test_check_kdnet_key() -> None:
    assert check_kdnet_key(" 1.2.3.4 ") == "1.2.3.4"
    assert check_kdnet_key("zzzzzzzzzzzzz.0.a.Z") == "zzzzzzzzzzzzz.0.a.Z"
    with pytest.raises(ValueError, match="word 4 is empty"):
        check_kdnet_key("1.2.3.")


# --------------------------------------------------------------------------- warnings


def test_port_outside_kdnet_range_is_a_warning(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json", port=5000)
    loaded = load_state(path, now=NOW, env={})
    assert loaded.state.port == 5000
    assert any("port 5000 is outside 49152-65535" in w for w in loaded.warnings)
    for port in (49152, 65535):
        assert load_state(write_json(path, port=port), now=NOW, env={}).warnings == []


def test_old_file_by_created_at(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json", created_at_unix=NOW - DEFAULT_MAX_AGE_S - 1)
    [warning] = load_state(path, now=NOW, env={}).warnings
    assert "by created_at_unix" in warning
    assert "older than 24.0 h" in warning
    assert load_state(path, max_age_s=None, now=NOW, env={}).warnings == []
    assert load_state(path, max_age_s=DEFAULT_MAX_AGE_S + 10, now=NOW, env={}).warnings == []


def test_old_file_by_mtime(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json", created_at_unix=_DROP)
    os.utime(path, (NOW - 3 * 86400, NOW - 3 * 86400))
    [warning] = load_state(path, max_age_s=3600, now=NOW, env={}).warnings
    assert "3 days old (by file modification time)" in warning
    os.utime(path, (NOW - 60, NOW - 60))
    assert load_state(path, max_age_s=3600, now=NOW, env={}).warnings == []


def test_created_in_the_future_warns_about_clocks(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json", created_at_unix=NOW + 3600)
    [warning] = load_state(path, now=NOW, env={}).warnings
    assert "in the future" in warning
    assert load_state(write_json(path, created_at_unix=NOW + 60), now=NOW, env={}).warnings == []


@posix_only
def test_readable_by_others_warns(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json")
    for mode in (0o644, 0o640, 0o604):
        path.chmod(mode)
        [warning] = load_state(path, now=NOW, env={}).warnings
        assert f"mode {mode:04o}" in warning
        assert "chmod 600" in warning
    path.chmod(0o600)
    assert load_state(path, now=NOW, env={}).warnings == []


def test_warnings_never_hold_the_key(tmp_path: Path) -> None:
    path = write_json(tmp_path / "s.json", port=1, created_at_unix=0)
    path.chmod(0o644)
    loaded = load_state(path, now=NOW, env={})
    assert len(loaded.warnings) >= 2
    assert_no_key("\n".join(loaded.warnings))


# --------------------------------------------------------------------------- writing


def make_state(key: str = CANARY) -> KdSessionState:
    return KdSessionState(
        guest_host="192.168.56.10",
        host_ip="192.168.56.1",
        port=50000,
        key=Secret(key),
        created_by="test",
        created_at_unix=NOW,
    )


def test_write_then_load_round_trip(tmp_path: Path) -> None:
    path = write_state(tmp_path / "kd-session.json", make_state())
    document = json.loads(path.read_text())
    assert document == {
        "schema": SCHEMA,
        "guest_host": "192.168.56.10",
        "host_ip": "192.168.56.1",
        "port": 50000,
        "key": CANARY,
        "created_by": "test",
        "created_at_unix": int(NOW),
    }
    loaded = load_state(path, now=NOW, env={})
    assert loaded.state == make_state()
    assert loaded.warnings == []


@posix_only
def test_write_is_owner_only_and_creates_private_parents(tmp_path: Path) -> None:
    old_umask = os.umask(0o002)  # permissive, as on many desktops
    try:
        path = write_state(tmp_path / "a" / "b" / "kd-session.json", make_state())
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700


def test_write_replaces_atomically_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = write_json(tmp_path / "kd-session.json", key="1.2.3.4")
    write_state(path, make_state())
    assert load_state(path, now=NOW, env={}).state.key.reveal() == CANARY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kd-session.json"]


def test_write_failure_is_reported_without_key_and_cleans_up(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StateFileError, match="cannot be written") as info:
        write_state(blocker / "kd-session.json", make_state())
    assert_no_key(leak_text(info.value))

    target = tmp_path / "dir"
    target.mkdir()
    (target / "kd-session.json").mkdir()  # os.replace onto a directory fails
    with pytest.raises(StateFileError) as info:
        write_state(target / "kd-session.json", make_state())
    assert_no_key(leak_text(info.value))
    assert [p.name for p in target.iterdir()] == ["kd-session.json"]


def test_write_accepts_a_plain_string_key_too(tmp_path: Path) -> None:
    state = KdSessionState(guest_host="g", host_ip="10.0.0.1", port=50000, key="1.2.3.4")  # type: ignore[arg-type]
    path = write_state(str(tmp_path / "s.json"), state)
    assert json.loads(path.read_text())["key"] == "1.2.3.4"
    assert "created_at_unix" not in json.loads(path.read_text())


# --------------------------------------------------------------------------- interactive key


def test_key_from_environment_first() -> None:
    def no_prompt(prompt: str) -> str:
        raise AssertionError("must not prompt")

    key = read_key_interactively(env={ENV_KEY: f" {CANARY} "}, getpass=no_prompt)
    assert key.reveal() == CANARY


def test_key_from_prompt() -> None:
    prompts: list[str] = []

    def typed(prompt: str) -> str:
        prompts.append(prompt)
        return CANARY + "\n"

    assert read_key_interactively(env={}, getpass=typed).reveal() == CANARY
    assert prompts == ["KDNET key: "]


@pytest.mark.parametrize("source", ["env", "prompt"])
@pytest.mark.parametrize(("key", "expected"), BAD_KEYS[:-1])
def test_bad_interactive_key_is_not_echoed(source: str, key: str, expected: str) -> None:
    env = {ENV_KEY: key} if source == "env" else {}
    with pytest.raises(InvalidArgument, match=expected) as info:
        read_key_interactively(env=env, getpass=lambda prompt: key)
    assert_no_key(leak_text(info.value), key)


def test_no_key_at_all() -> None:
    with pytest.raises(InvalidArgument, match="no KDNET key given"):
        read_key_interactively(env={}, getpass=lambda prompt: "")


def test_errors_are_kdmcp_errors() -> None:
    assert issubclass(StateFileError, KdMcpError)
    assert StateFileError("x").category == "state_file"


def test_windows_default_is_used_on_windows(tmp_path: Path) -> None:
    with pytest.raises(StateFileError, match=r"C:\\mcp-state\\kd-session.json \(the default location\): not found"):
        load_state(env={}, platform="win32")
    assert sys.platform != "win32" or default_state_path() == Path(r"C:\mcp-state\kd-session.json")
