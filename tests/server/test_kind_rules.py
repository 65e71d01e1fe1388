"""``kdmcp.server.kind_rules.refuse_for_kind``: which actions each kind of target refuses, and why.

Fake sessions carry only what the rules read (the plan's kind, flavor and noninvasive flag,
the prompt's mode, the session's id and state), so every kind is checked in microseconds.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import cast

import pytest

from kdmcp.engine import DebuggerSession, SessionState
from kdmcp.engine.kinds import KINDS, SessionKind
from kdmcp.errors import InvalidArgument
from kdmcp.server.kind_rules import Action, refuse_for_kind

ACTIONS: tuple[Action, ...] = typing.get_args(Action)
ALL_KINDS: tuple[SessionKind, ...] = typing.get_args(SessionKind)


@dataclass
class FakePlan:
    kind: SessionKind
    flavor: str = "cdb"
    noninvasive: bool = False


@dataclass
class FakePrompt:
    mode: str  # "user" or "kernel", as kdmcp.parse reads "0:000> " / "0: kd> "


@dataclass
class FakeSession:
    plan: FakePlan
    prompt: FakePrompt | None = None
    session_id: str = "s9"
    state: SessionState = field(default=SessionState.broken)


def session(
    kind: SessionKind, *, flavor: str | None = None, mode: str | None = None, noninvasive: bool = False
) -> DebuggerSession:
    flavor = flavor or ("kd" if KINDS[kind].kernel and kind != "remote" else "cdb")
    return cast(DebuggerSession, FakeSession(FakePlan(kind, flavor, noninvasive), FakePrompt(mode) if mode else None))


def refusal(target: DebuggerSession, action: Action) -> str | None:
    try:
        refuse_for_kind(target, action)
    except InvalidArgument as exc:
        assert exc.session_id == "s9" and exc.state == SessionState.broken  # the error says which session
        return exc.message
    return None


# What may be done on each kind (True: allowed). A remote client's kernel-ness is its server's,
# read from its prompt: here a kernel server ("0: kd> ").
ALLOWED: dict[SessionKind, dict[Action, bool]] = {
    kind: dict(zip(("run", "break_in", "breakpoint", "resume_for_winrm", "processes", "kernel"), allowed, strict=True))
    for kind, allowed in {
        "kdnet": (True, True, True, True, True, True),
        "kernel_dump": (False, False, False, False, True, True),
        "user_dump": (False, False, False, False, False, False),
        "process": (True, True, True, False, False, False),
        "launched": (True, True, True, False, False, False),
        "local_kernel": (False, False, False, False, True, True),
        "remote": (True, True, True, False, True, True),
    }.items()
}


def test_the_table_covers_every_kind_and_action() -> None:
    assert set(ALLOWED) == set(ALL_KINDS)
    assert all(set(actions) == set(ACTIONS) for actions in ALLOWED.values())


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("action", ACTIONS)
def test_what_each_kind_allows(kind: SessionKind, action: Action) -> None:
    mode = ("kernel" if KINDS[kind].kernel else "user") if kind != "remote" else "kernel"
    said = refusal(session(kind, mode=mode), action)
    assert (said is None) == ALLOWED[kind][action], said


@pytest.mark.parametrize("kind", ["kernel_dump", "user_dump", "local_kernel"])
@pytest.mark.parametrize("action", ["run", "break_in", "resume_for_winrm"])
def test_a_target_that_never_runs_says_so(kind: SessionKind, action: Action) -> None:
    said = refusal(session(kind), action)
    assert said == (
        f"{KINDS[kind].title} never runs: there is nothing to break into or resume"
        + (" (kd -kl reads the live machine without stopping it)" if kind == "local_kernel" else "")
    )


@pytest.mark.parametrize("kind", ["process", "launched", "remote"])
def test_resume_for_winrm_is_for_a_kdnet_guest_only(kind: SessionKind) -> None:
    said = refusal(session(kind, mode="user"), "resume_for_winrm")
    assert said is not None and "KDNET guest" in said and KINDS[kind].title in said and "continue_go" in said


@pytest.mark.parametrize("kind", ["user_dump", "process", "launched"])
def test_processes_is_refused_in_user_mode_with_what_to_use(kind: SessionKind) -> None:
    said = refusal(session(kind), "processes")
    assert said is not None and "!process" in said and "user mode" in said and "'|'" in said and "'~'" in said


@pytest.mark.parametrize("kind", ["user_dump", "process", "launched"])
def test_a_kernel_object_read_is_refused_in_user_mode_with_what_to_use(kind: SessionKind) -> None:
    said = refusal(session(kind), "kernel")
    assert said is not None and "kernel objects" in said and "user mode" in said and "kd_command" in said


def test_a_remote_session_follows_its_servers_prompt() -> None:
    assert refusal(session("remote", mode="kernel"), "processes") is None  # a kd -server
    assert refusal(session("remote", mode="user"), "processes") is not None  # a cdb -server
    # before any prompt, the debugger we started stands in: kd joins kernels, cdb processes
    assert refusal(session("remote", flavor="kd"), "processes") is None
    assert refusal(session("remote", flavor="cdb"), "processes") is not None


def test_the_prompt_of_a_local_kernel_does_not_make_it_user_mode() -> None:
    assert refusal(session("local_kernel", mode="kernel"), "processes") is None


@pytest.mark.parametrize("kind", ["kernel_dump", "user_dump", "local_kernel"])
def test_a_breakpoint_on_a_target_that_never_runs_says_why(kind: SessionKind) -> None:
    said = refusal(session(kind), "breakpoint")
    assert said == f"{KINDS[kind].title} never runs: a breakpoint set on it could never be hit"


@pytest.mark.parametrize("action", ["run", "break_in", "breakpoint"])
def test_a_noninvasive_attach_cannot_run_the_process(action: Action) -> None:
    # "the debugger cannot control the target, so commands like g (Go) do not work"
    # (Noninvasive Debugging (User Mode), Debugging Tools for Windows)
    said = refusal(session("process", noninvasive=True), action)
    assert said is not None and "noninvasive" in said


def test_a_noninvasive_attach_can_still_be_read() -> None:
    assert refusal(session("process", noninvasive=True), "processes") is not None  # user mode, as any process
    assert refusal(session("process", noninvasive=False), "run") is None
