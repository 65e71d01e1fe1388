"""The command policy as the tools enforce it (the classifier itself: tests/command)."""

from __future__ import annotations

import pytest

from kdmcp.errors import ConfigError
from tests.server.helpers import CANARY_KEY, in_memory, make_app, result_data

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so one session under the standard profile serves every test that only reads it."""
    return "asyncio"


async def _start(client):
    started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
    assert not started.is_error, started.structured_content
    return started.structured_content


@pytest.fixture(scope="module")
async def standard(anyio_backend):
    """A client on a default-config server (profile ``standard``) with one session, broken in.

    Shared: each test that uses it leaves the session broken in, as it found it.
    """
    async with in_memory(make_app()) as client:
        await _start(client)
        yield client


DENIED_UNDER_STANDARD = [
    (".shell dir", "host_exec"),
    ("!!dir", "host_exec"),
    ("r; .ShElL calc", "host_exec"),
    ('bp nt!NtCreateFile ".shell calc"', "host_exec"),
    (".block { .block { .load evil } }", "code_load"),
    ("$$>a< c:\\x.txt", "code_load"),
    ('dx Debugger.Utility.Control.ExecuteCommand(".shell")', "host_exec"),
    (".writemem c:\\x 0 10", "file_write"),
    (".detach", "session_ending"),
    (".readmem c:\\secret.bin fffff800`62a05c20 L100", "host_file_read"),
    (".sympath+ \\\\attacker\\share", "network_path"),
    (".sympath symsrv*evil.dll*c:\\sym", "code_load"),
    ("dx Debugger.Settings.Debug.Advanced.SkipMissing = true", "settings_change"),
    (".outmask- 1", "output_control"),
    ('.echo x"; .load \\\\h\\s\\e.dll; "', "code_load"),
    ('aS x ".shell"; ${x}', None),
]


@pytest.mark.parametrize(("command", "klass"), DENIED_UNDER_STANDARD)
async def test_standard_denies_host_code_file_and_session_commands(standard, command, klass):
    result = await standard.call_tool("kd_command", {"command": command})
    data = result_data(result)
    assert result.is_error and data["category"] == "policy_denied", data
    assert "denied by profile 'standard'" in data["message"]
    if klass:
        assert klass in data["message"]
    ok = await standard.call_tool("kd_command", {"command": "r; k"})
    assert not ok.is_error


async def test_read_only_allows_reads_only():
    async with in_memory(make_app(policy="read_only")) as client:
        started = await _start(client)
        assert "-noshell" in started["command_line"]
        assert not (await client.call_tool("kd_command", {"command": "lm"})).is_error
        assert not (await client.call_tool("backtrace", {})).is_error
        for tool, args in [("kd_command", {"command": "eb fffff800`62a05c20 90"}),
                           ("kd_command", {"command": "g"}), ("continue_go", {}), ("resume_for_winrm", {})]:
            result = await client.call_tool(tool, args)
            assert result.is_error and result_data(result)["category"] == "policy_denied", (tool, args)
        stopped = await client.call_tool("stop_kd", {})  # ending one's own session is always allowed
        assert not stopped.is_error


async def test_full_allows_everything_and_drops_noshell():
    async with in_memory(make_app(policy="full")) as client:
        started = await _start(client)
        assert "-noshell" not in started["command_line"]
        result = await client.call_tool("kd_command", {"command": ".shell echo hi"})
        assert not result.is_error  # the simulator answers with a syntax error; the policy let it through


async def test_configured_network_roots_let_exactly_those_shares_through():
    """Teams keep symbols on a share: ``network_roots`` allows it, every other share stays denied."""
    async with in_memory(make_app(network_roots=["\\\\symbols\\team"])) as client:
        await _start(client)
        allowed = await client.call_tool("kd_command", {"command": ".sympath+ \\\\symbols\\team\\x64"})
        assert not allowed.is_error, allowed.structured_content
        for command in (".sympath+ \\\\symbols\\teamx", ".sympath+ \\\\symbols\\team\\..\\..\\evil\\s",
                        ".srcpath \\\\evil\\src"):
            denied = await client.call_tool("kd_command", {"command": command})
            assert denied.is_error and "network_path" in result_data(denied)["message"], command


async def test_set_symbol_path_refuses_nt_namespace_network_paths():
    """set_symbol_path sends .sympath through the policy: \\??\\GLOBALROOT and \\Device\\ spellings are denied."""
    async with in_memory(make_app()) as client:
        await _start(client)
        for path in ("\\??\\GLOBALROOT\\Device\\Mup\\h\\s", "\\Device\\LanmanRedirector\\h\\s",
                     "srv*\\??\\GLOBALROOT\\??\\UNC\\h\\s*https://msdl.microsoft.com/download/symbols"):
            denied = await client.call_tool("set_symbol_path", {"path": path})
            assert denied.is_error and "network_path" in result_data(denied)["message"], path
        allowed = await client.call_tool("set_symbol_path", {"path": "c:\\symbols"})
        assert not allowed.is_error, allowed.structured_content


async def test_config_allow_commands_extends_the_allowlist():
    """``allow_commands`` puts a command and its listed options on the allowlist; nothing else."""
    async with in_memory(make_app(allow_commands=["!ndiskd.netreport -v"], policy="read_only")) as client:
        await _start(client)
        allowed = await client.call_tool("kd_command", {"command": "!ndiskd.netreport /v"})
        assert not allowed.is_error, allowed.structured_content
        denied = await client.call_tool("kd_command", {"command": "!ndiskd.netreport -x"})
        assert denied.is_error and "unknown" in result_data(denied)["message"]
    with pytest.raises(ConfigError, match="classed host_exec"):
        make_app(allow_commands=[".shell"])


@pytest.mark.parametrize("command", [".block { g }", "j 1 'g';'r'", ".if (1) { gh }", '.foreach /s (x "g") {x}'])
async def test_a_hidden_go_is_allowed_and_returns_running_confirmed(standard, command):
    """Through the tool: not ``timeout`` + ``busy`` while the guest runs (the engine sent no marker)."""
    result = await standard.call_tool("kd_command", {"command": command, "timeout_s": 5})
    assert not result.is_error, result.structured_content
    assert result.structured_content["state"] == "running", result.structured_content
    broke = await standard.call_tool("break_in", {})
    assert not broke.is_error and broke.structured_content["state"] == "broken"
