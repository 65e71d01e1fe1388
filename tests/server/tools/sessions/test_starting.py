"""What every start tool does around the bounded start: its progress, and a client's cancel stopping the debugger."""

from __future__ import annotations

import threading

import pytest

from kdmcp.server.call import Call
from kdmcp.server.tools.sessions.starting import waiting
from tests.server.helpers import make_app


def test_a_start_reports_its_bound_the_timeout_else_the_configured_startup() -> None:
    app = make_app(timeouts={"startup": 42})
    call = Call(app, None)
    waiting(call, "joining", None)
    assert (call.progress_text, call.progress_total) == ("joining", 42)
    call = Call(app, None)
    waiting(call, "joining", 7.5)
    assert call.progress_total == 7.5


def test_a_start_cancelled_by_its_client_stops_the_debugger_it_waits_on(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    aborted: list[threading.Event] = []
    monkeypatch.setattr(app, "abort_start", aborted.append)
    call = Call(app, None)
    waiting(call, "attaching", None)
    assert aborted == []
    call.cancelled()
    assert aborted == [call.cancel] and call.cancel.is_set()
