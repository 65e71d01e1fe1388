"""Every source of an argv value refuses the same injections, and names the field it came in.

Sources: the state file (``guest_host``, ``host_ip``, ``port``, ``key``), the config (named
connections, ``symbol_path``, ``debuggers.*``) and the ``start_kd`` / ``start_from_state``
tools. No refused value may start a debugger.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kdmcp.config import load_config
from kdmcp.errors import ConfigError, InvalidArgument, StateFileError
from kdmcp.server.call import Call
from kdmcp.server.tools.sessions.kdnet import start_kd
from kdmcp.statefile import SCHEMA, load_state
from tests.config.test_argvalues import INJECTIONS
from tests.server.helpers import in_memory, make_app, result_data

pytestmark = pytest.mark.anyio
KEY = "1.2.3.4"


def state_file(tmp_path: Path, **fields: Any) -> Path:
    doc: dict[str, Any] = {"schema": SCHEMA, "guest_host": "10.0.0.5", "host_ip": "10.0.0.1", "port": 50000,
                           "key": KEY}
    doc.update(fields)
    path = tmp_path / "kd-session.json"
    path.write_text(json.dumps(doc))
    path.chmod(0o600)
    return path


def state_error(path: Path) -> str:
    with pytest.raises(StateFileError) as info:
        load_state(str(path), env={})
    return info.value.message


# Stripped by the state file reader before they are checked: harmless at either end.
_STRIPPED = ("10.0.0.5\r",)


@pytest.mark.parametrize("value", [v for v in INJECTIONS if v not in _STRIPPED])
def test_state_file_guest_host(tmp_path: Path, value: str) -> None:
    assert "guest_host: must be a host name" in state_error(state_file(tmp_path, guest_host=value))


@pytest.mark.parametrize("value", [*[v for v in INJECTIONS if v not in _STRIPPED], "notanip", "guest"])
def test_state_file_host_ip(tmp_path: Path, value: str) -> None:
    assert "host_ip: must be an IP address" in state_error(state_file(tmp_path, host_ip=value))


@pytest.mark.parametrize("value", ["1,key=x", "50000;q", "-1", True, 70000])
def test_state_file_port(tmp_path: Path, value: object) -> None:
    assert "port: must be an integer from 1 to 65535" in state_error(state_file(tmp_path, port=value))


@pytest.mark.parametrize("value", ["1.2.3.4,target=10.0.0.9", "1.2.3.4;q", "-1.2.3.4", '"1.2.3.4"', "1.2.3.4\nq"])
def test_state_file_key(tmp_path: Path, value: str) -> None:
    assert "key: must be four dot-separated base-36 words" in state_error(state_file(tmp_path, key=value))


def test_state_file_good_hosts_still_load(tmp_path: Path) -> None:
    loaded = load_state(str(state_file(tmp_path, guest_host="lab-vm.example", host_ip="fe80::1")), env={})
    assert (loaded.state.guest_host, loaded.state.host_ip) == ("lab-vm.example", "fe80::1")


def config_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(ConfigError) as info:
        load_config(str(path), env={})
    return info.value.message


@pytest.mark.parametrize("value", INJECTIONS)
def test_config_connection_target_host(tmp_path: Path, value: str) -> None:
    text = f"connections:\n  lab: {{port: 50000, key: '{KEY}', target_host: {json.dumps(value)}}}\n"
    assert "connections.lab.target_host: must be a host name" in config_error(tmp_path, text)


@pytest.mark.parametrize("value", ["-c .shell calc", "srv*C:\\sym\n.shell calc", 'srv*"C:\\sym"'])
def test_config_symbol_path(tmp_path: Path, value: str) -> None:
    assert "symbol_path: " in config_error(tmp_path, f"symbol_path: {json.dumps(value)}\n")


@pytest.mark.parametrize("value", ["kd.exe\n-c", '"C:\\kd.exe"', "-kd"])
def test_config_debugger_paths(tmp_path: Path, value: str) -> None:
    assert "debuggers.kd: " in config_error(tmp_path, f"debuggers:\n  kd: {json.dumps(value)}\n")


@pytest.mark.parametrize("value", ["-b", "-remote", "10.0.0.5]", "[::1]", "::1]:5"])
def test_start_kd_target_host(value: str) -> None:
    """Values the tool schema's pattern lets through still never reach kd."""
    app = make_app()
    try:
        with pytest.raises(InvalidArgument, match=r"^target_host: must be a host name"):
            start_kd(Call(app, None), 50000, KEY, value, None, True, 5.0)
        assert app.manager.all_infos() == []
    finally:
        app.shutdown()


def test_start_kd_named_connection_with_a_bad_override(tmp_path: Path) -> None:
    app = make_app(connections={"lab": {"port": 50000, "key": KEY}})
    try:
        with pytest.raises(InvalidArgument, match=r"^target_host: "):
            start_kd(Call(app, None), None, None, "-b", "lab", True, 5.0)
        assert app.manager.all_infos() == []
    finally:
        app.shutdown()


async def test_start_kd_tool_answers_invalid_argument() -> None:
    app = make_app()
    async with in_memory(app) as client:
        result = await client.call_tool("start_kd", {"port": 50000, "key": KEY, "target_host": "-b"})
    data = result_data(result)
    assert result.is_error and data["category"] == "invalid_argument", data
    assert "target_host" in data["message"]


async def test_start_from_state_tool_refuses_a_smuggled_guest_host(tmp_path: Path) -> None:
    path = state_file(tmp_path, guest_host="127.0.0.2,key=9.9.9.9,port=1")
    app = make_app()
    async with in_memory(app) as client:
        result = await client.call_tool("start_from_state", {"state_file": str(path), "use_target_host": True})
        listed = await client.call_tool("list_sessions", {})
    data = result_data(result)
    assert result.is_error and data["category"] == "state_file", data
    assert "guest_host: must be a host name" in data["message"]
    assert (listed.structured_content or {}).get("sessions", []) == []  # empty lists are left out
