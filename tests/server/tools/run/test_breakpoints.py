"""Fast tier: the breakpoint tools' argument checks and what bl does not say; the policy's one
check of each line they run (process tier, on the simulated kernel)."""

from __future__ import annotations

import pytest

from kdmcp.errors import InvalidArgument
from kdmcp.server.call import Call
from kdmcp.server.tools.run.breakpoints import _CONDITIONAL_RE, _check_strings, clear_breakpoints, set_breakpoint


@pytest.mark.parametrize(("condition", "command", "process"), [
    ('a"b', None, None), (None, 'k"; .shell x; "', None), ("x\ny", None, None), (None, "r\rk", None),
    ("{x}", None, None), (None, "{.echo a", None), (None, None, "zz"), (None, None, "1234 5678"), (" ", None, None),
])
def test_strings_that_would_leave_kds_quoted_string_are_refused(condition, command, process):
    with pytest.raises(InvalidArgument):
        _check_strings(condition, command, process)


def test_good_strings_pass():
    _check_strings("@rcx==0 and poi(@rdx)!=0", ".if (1) {r rax}; gc", "ffffe70f`2d1d2080")
    _check_strings(None, None, "0xffffe70f2d1d2080")


def test_a_condition_is_read_back_from_kds_conditional_form():
    m = _CONDITIONAL_RE.fullmatch(".if (@rcx==0) {r rcx; k} .else {gc}")
    assert m is not None and m["cond"] == "@rcx==0" and m["cmd"] == "r rcx; k"
    assert _CONDITIONAL_RE.fullmatch("r rcx; gc") is None


@pytest.mark.process
def test_the_policy_checks_each_line_once_the_breakpoint_line_before_bl(checked):
    app, sid, lines = checked
    set_breakpoint(Call(app, None), "nt!NtCreateFile", session_id=sid)
    assert lines == ["bp nt!NtCreateFile", "bl", "bl"]  # the line first: a denied one runs no bl
    lines.clear()
    clear_breakpoints(Call(app, None), all=True, session_id=sid)
    assert lines == ["bc *", "bl", "bl"]
