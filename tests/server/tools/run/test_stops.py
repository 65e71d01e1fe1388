"""Process tier: the stepping tools on the simulated kernel, called as their functions — the
policy checks each line they run once (a go-class line too)."""

from __future__ import annotations

import pytest

from kdmcp.server.call import Call
from kdmcp.server.tools.run.stops import location, run_to, step

pytestmark = pytest.mark.process

LOCATION = ["u @$ip L1", "? @$thread", "? @$proc"]


def test_the_policy_checks_each_line_once(checked):
    app, sid, lines = checked
    assert run_to(Call(app, None), "nt!NtCreateFile", 20.0, sid).outcome == "hit"
    assert lines == ["? nt!NtCreateFile", "g nt!NtCreateFile", *LOCATION]
    lines.clear()
    assert step(Call(app, None), "over", 2, 20.0, sid).location is not None
    assert lines == ["p 2", *LOCATION]
    lines.clear()
    step(Call(app, None), "out", 1, 20.0, sid)
    assert lines == ["gu", *LOCATION]
    lines.clear()
    assert location(Call(app, None), sid).location.symbol
    assert lines == LOCATION
