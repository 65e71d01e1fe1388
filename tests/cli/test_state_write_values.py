"""``kd-mcp state write`` refuses the hosts and addresses the server would refuse to read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from kdmcp.cli import main

KEY = "1.2.3.4"


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--host-ip", "notanip", "host_ip: must be an IP address"),
    ("--host-ip", "10.0.0.1,port=1", "host_ip: must be an IP address"),
    ("--guest-host", "127.0.0.2,key=9.9.9.9", "guest_host: must be a host name"),
    ("--guest-host", "-b", "guest_host: must be a host name"),
])
def test_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                 option: str, value: str, said: str) -> None:
    monkeypatch.setenv("KDMCP_KDNET_KEY", KEY)
    path = tmp_path / "kd-session.json"
    args = {"--guest-host": "10.0.0.5", "--host-ip": "10.0.0.1", option: value}
    code = main(["state", "write", "--path", str(path), "--port", "50000",
                 *(f"{name}={item}" for name, item in args.items())])
    err = capsys.readouterr().err
    assert code == 2
    assert f"kd-mcp: error: invalid_argument: {said}" in err
    assert "Traceback" not in err
    assert not path.exists()


def test_a_good_state_still_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KDMCP_KDNET_KEY", KEY)
    path = tmp_path / "kd-session.json"
    assert main(["state", "write", "--path", str(path), "--guest-host", "lab-vm", "--host-ip", "10.0.0.1",
                 "--port", "50000"]) == 0
    assert path.exists()
