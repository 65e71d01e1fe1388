"""kd -kl readiness (kdmcp/local_kernel.py): the Windows probes replaced by fakes."""

from __future__ import annotations

from kdmcp.local_kernel import ENABLE_STEPS, readiness


def test_not_windows_says_so() -> None:
    [problem] = readiness(windows=False)
    assert "not Windows" in problem


def test_elevated_with_debugging_enabled_is_ready() -> None:
    assert readiness(windows=True, is_admin=lambda: True, debugging_enabled=lambda: True) == []


def test_each_missing_requirement_names_its_fix() -> None:
    problems = readiness(windows=True, is_admin=lambda: False, debugging_enabled=lambda: False)
    assert len(problems) == 2
    assert "administrator" in problems[0]
    assert ENABLE_STEPS in problems[1] and "bcdedit /debug on" in problems[1]


def test_an_unanswered_probe_is_not_taken_for_ready() -> None:
    [problem] = readiness(windows=True, is_admin=lambda: True, debugging_enabled=lambda: None)
    assert "could not ask" in problem
