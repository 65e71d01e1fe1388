"""The bypass corpus (corpus.py) against the policy: every attack denied, ordinary debugging allowed.

A bypass entry names the class the line must be found to hold, not the class the verdict
reports: the verdict names the worst denied finding (``.outmask- 1; .shell x`` is reported
as host_exec), so the expected class is looked for among all the line's findings.
"""

from __future__ import annotations

import pytest

from kdmcp.command import CommandClass, Profile, check
from tests.command.corpus import ANY, BYPASS, ORDINARY

_ID_WIDTH = 48  # characters of a command shown in a test id

# The classes the corpus expects the policy to tell apart (values of CommandClass).
EXPECTED_CLASSES = {
    "host_exec",
    "code_load",
    "file_write",
    "host_file_read",
    "network_path",
    "settings_change",
    "output_control",
    "session_ending",
}

DENYING_PROFILES: tuple[Profile, ...] = ("standard", "read_only")


def _case_id(index: int, command: str) -> str:
    """``042:.block{.shell whoami}``: the index and the command, cut (pytest escapes the rest)."""
    shown = command if len(command) <= _ID_WIDTH else command[: _ID_WIDTH - 3] + "..."
    return f"{index:03d}:{shown}"


@pytest.mark.parametrize(
    ("command", "expected"),
    [pytest.param(command, expected, id=_case_id(i, command)) for i, (command, expected) in enumerate(BYPASS)],
)
def test_bypass_is_denied(command: str, expected: str) -> None:
    for profile in DENYING_PROFILES:
        verdict = check(command, profile)
        assert not verdict.allowed, (profile, verdict.message, verdict.findings)
    if expected != ANY:
        verdict = check(command, "standard")
        found = {f.command_class.value for f in verdict.findings}
        assert expected in found, (verdict.message, verdict.findings)


@pytest.mark.parametrize("command", [pytest.param(c, id=_case_id(i, c)) for i, c in enumerate(ORDINARY)])
def test_ordinary_is_allowed(command: str) -> None:
    for profile in ("standard", "full"):
        verdict = check(command, profile)
        assert verdict.allowed, (profile, verdict.message)


def test_corpus_size_and_shape() -> None:
    commands = [command for command, _ in BYPASS]
    assert len(BYPASS) >= 250
    assert len(ORDINARY) >= 60
    assert len(set(commands)) == len(commands), "duplicate bypass entries"
    assert len(set(ORDINARY)) == len(ORDINARY), "duplicate ordinary entries"
    assert not set(commands) & set(ORDINARY)


def test_corpus_covers_every_class() -> None:
    expected = {cls for _, cls in BYPASS}
    assert expected - {ANY} == EXPECTED_CLASSES


def test_expected_classes_are_policy_classes() -> None:
    """A typo in the corpus would otherwise read as a missing finding."""
    assert {c.value for c in CommandClass} >= EXPECTED_CLASSES
