"""The run family's process-tier fixture: a simulated kernel, and what its policy is asked."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kdmcp.server.app import KdMcpApp
from kdmcp.server.call import Call
from kdmcp.server.tools.sessions.kdnet import start_kd
from tests.server.helpers import CANARY_KEY, make_app


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[KdMcpApp, str, list[str]]]:
    """A simulated kernel broken in, and the lines the policy is asked about, in order."""
    app = make_app()
    lines: list[str] = []
    enforce = app.enforce_policy

    def counted(command: str, owner: str | None, session_id: str | None = None) -> None:
        lines.append(command)
        enforce(command, owner, session_id)

    try:
        sid = start_kd(Call(app, None), 50000, CANARY_KEY, None, None, True, 20.0).session_id
        monkeypatch.setattr(app, "enforce_policy", counted)
        yield app, sid, lines
    finally:
        app.shutdown()
