"""``kdmcp.engine.kinds``: the one table of target kinds, the plans that name a kind, and how
``DebuggerSession.stop`` leaves each kind, driven through a scripted console (no process).

The fake console plays the debugger's side of the quit commands the table relies on: it
prints a prompt when broken in (Ctrl+C), prints nothing after ``g`` (the target runs), and
ends when it reads ``q``, ``qd``, ``.remote_exit`` or Ctrl+B then Enter ("CTRL+B, then
ENTER: exits the debugger"). Every wait in it is bounded.
"""

from __future__ import annotations

import threading
import typing

import pytest

from kdmcp.console import BackendName, ConsoleClosed, SpawnSpec
from kdmcp.engine import (
    DebuggerSession,
    DumpTarget,
    LocalKernelTarget,
    ProcessTarget,
    RemoteTarget,
    SessionConfig,
    SessionState,
    build_plan,
)
from kdmcp.engine.kinds import KINDS, NONINVASIVE_QUIT, KindRules, SessionKind, kind_rows
from kdmcp.engine.launch import LaunchPlan, Target
from tests.conftest import kdnet

CDB = ["cdb.exe"]
KD = ["kd.exe"]
ALL_KINDS = set(typing.get_args(SessionKind))

# What each kind is, as the issue names it (issue 14, "list_sessions shows each session's kind").
RUNS = {
    "kdnet": True,
    "kernel_dump": False,
    "user_dump": False,
    "process": True,
    "launched": True,
    "local_kernel": False,
    "remote": True,
}
KERNEL = {
    "kdnet": True,
    "kernel_dump": True,
    "user_dump": False,
    "process": False,
    "launched": False,
    "local_kernel": True,
    "remote": True,
}
QUIT = {
    "kdnet": "",
    "kernel_dump": "q",
    "user_dump": "q",
    "process": "qd",
    "launched": "q",
    "local_kernel": "q",
    "remote": ".remote_exit",
}


# ------------------------------------------------------------------------- the table


def test_every_kind_has_rules_and_nothing_else_does() -> None:
    assert set(KINDS) == ALL_KINDS
    assert all(isinstance(rules, KindRules) and rules.title and rules.quit_says for rules in KINDS.values())


@pytest.mark.parametrize("kind", sorted(ALL_KINDS))
def test_the_rules_of_each_kind(kind: SessionKind) -> None:
    rules = KINDS[kind]
    assert (rules.runs, rules.kernel, rules.quit_command) == (RUNS[kind], KERNEL[kind], QUIT[kind])
    # Only a frozen guest is resumed before quitting, only an attached process is broken into
    # (qd needs a prompt); a target that never runs has neither.
    assert rules.resume_before_quit == (kind == "kdnet")
    assert rules.break_before_quit == (kind == "process")


def test_the_quit_words_say_what_was_left() -> None:
    assert KINDS["kernel_dump"].quit_says == KINDS["user_dump"].quit_says == "closed the dump"
    assert KINDS["process"].quit_says == "detached: the process runs on"
    assert KINDS["launched"].quit_says == "terminated the launched process"
    assert "goes on" in KINDS["remote"].quit_says
    assert NONINVASIVE_QUIT == ("q", "detached (noninvasive): the process runs on")


def test_kind_rows_list_the_table_in_order() -> None:
    assert [row[0] for row in kind_rows()] == [f"`{kind}`" for kind in KINDS]
    assert [row[3] for row in kind_rows()] == ["yes" if r.runs else "no" for r in KINDS.values()]


# ------------------------------------------------------------------------- the plans


PLANS: list[tuple[str, list[str], Target, SessionKind, str, bool]] = [
    ("kdnet", KD, kdnet(50001), "kdnet", "KDNET port 50001", False),
    ("kernel dump", KD, DumpTarget(path="/d/memory.dmp", kernel=True), "kernel_dump", "/d/memory.dmp", True),
    ("user dump", CDB, DumpTarget(path="/d/app.dmp", kernel=False), "user_dump", "/d/app.dmp", True),
    ("attach", CDB, ProcessTarget(pid=4242), "process", "pid 4242", True),
    ("noninvasive", CDB, ProcessTarget(pid=7, noninvasive=True), "process", "pid 7 (noninvasive)", True),
    ("launch", CDB, ProcessTarget(command_line=["C:\\app.exe", "-x"]), "launched", "C:\\app.exe -x", True),
    ("local kernel", KD, LocalKernelTarget(), "local_kernel", "the local kernel", True),
    (
        "remote",
        CDB,
        RemoteTarget(connection="tcp:server=127.0.0.1,port=5005"),
        "remote",
        "tcp:server=127.0.0.1,port=5005",
        False,  # the server's target may run: a join is done when the server announces it
    ),
]


@pytest.mark.parametrize(
    ("debugger", "target", "kind", "attached_to", "stops"), [p[1:] for p in PLANS], ids=[p[0] for p in PLANS]
)
def test_build_plan_names_the_kind(
    debugger: list[str], target: Target, kind: SessionKind, attached_to: str, stops: bool
) -> None:
    plan = build_plan(debugger, target, initial_break=kind != "kdnet")
    assert plan.kind == kind and plan.attached_to == attached_to
    assert plan.noninvasive == ("noninvasive" in attached_to)
    assert plan.stops_at_start == stops
    assert plan.live_kernel == (kind == "kdnet")


def test_the_plans_cover_every_kind() -> None:
    assert {p[3] for p in PLANS} == ALL_KINDS


def test_the_kdnet_key_never_reaches_attached_to() -> None:
    plan = build_plan(KD, kdnet(50002), initial_break=True)
    assert plan.attached_to == "KDNET port 50002" and plan.stops_at_start


def test_a_launch_without_the_initial_break_runs_from_the_start() -> None:
    # cdb: "-g ignores the initial breakpoint in the target application"
    plan = build_plan(CDB, ProcessTarget(command_line=["C:\\app.exe"]), initial_break=False)
    assert "-g" in plan.argv and not plan.stops_at_start and plan.kind == "launched"
    assert plan.argv.index("-g") < plan.argv.index("C:\\app.exe")  # options before the debuggee


def test_a_noninvasive_attach_is_cdb_pv() -> None:
    plan = build_plan(CDB, ProcessTarget(pid=9, noninvasive=True), initial_break=True)
    assert plan.argv[-3:] == ["-pv", "-p", "9"]


# ------------------------------------------------------------------------- stop, per kind


class ScriptedDebugger:
    """A ``Console`` playing kd/cdb's answers to what ``stop`` sends (see the module docstring)."""

    def __init__(self, prompt: bytes, banner: bytes) -> None:
        self.prompt = prompt
        self.written: list[bytes] = []
        self.interrupts = 0
        self._cond = threading.Condition()
        self._out = bytearray(banner)
        self._closed = False
        self._code: int | None = None
        self._pending = b""

    # -- what the test looks at

    @property
    def lines(self) -> list[bytes]:
        return b"".join(self.written).split(b"\n")[:-1]

    # -- Console

    @property
    def pid(self) -> int:
        return 4242

    @property
    def echoes_input(self) -> bool:
        return False

    def read(self, max_bytes: int, timeout: float) -> bytes:
        with self._cond:
            self._cond.wait_for(lambda: self._out or self._closed, timeout)
            if not self._out and self._closed:
                raise ConsoleClosed
            data = bytes(self._out[:max_bytes])
            del self._out[:max_bytes]
            return data

    def wait_readable(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: bool(self._out) or self._closed, timeout)

    def write(self, data: bytes) -> None:
        with self._cond:
            self.written.append(data)
            self._pending += data
            while b"\n" in self._pending:
                line, _, self._pending = self._pending.partition(b"\n")
                self._answer(line)
            self._cond.notify_all()

    def _answer(self, line: bytes) -> None:
        if line in (b"q", b"qd", b".remote_exit", b"\x02"):
            self._end(0)
        elif line.startswith(b".echo "):
            self._out += line[len(b".echo ") :] + b"\r\n" + self.prompt
        elif line != b"g":  # after g the target runs: nothing is printed until it stops
            self._out += self.prompt

    def _end(self, code: int) -> None:
        self._closed, self._code = True, code

    def input_pending(self) -> int:
        return 0  # every line is answered as it is written

    def interrupt(self) -> None:
        with self._cond:
            self.interrupts += 1
            self._out += b"Break instruction exception - code 80000003 (first chance)\r\n" + self.prompt
            self._cond.notify_all()

    def is_alive(self) -> bool:
        return not self._closed

    def exit_status(self) -> int | None:
        return self._code

    def terminate(self, force: bool = False) -> None:
        with self._cond:
            self._end(-9 if force else -15)
            self._cond.notify_all()

    def wait(self, timeout: float) -> int | None:
        with self._cond:
            self._cond.wait_for(lambda: self._closed, timeout)
            return self._code

    def close(self) -> None:
        pass


CONNECTED = b"Kernel Debugger connection established.\r\n"


def _session(
    plan: LaunchPlan,
    prompt: bytes,
    banner: bytes = b"",
    *,
    broken: bool = True,
) -> tuple[DebuggerSession, ScriptedDebugger]:
    """A started session on a scripted debugger: at its first prompt, or (``broken=False``) running."""
    console = ScriptedDebugger(prompt, banner + (prompt if broken else b""))

    def factory(spec: SpawnSpec, backend: BackendName) -> ScriptedDebugger:
        return console

    session = DebuggerSession("t1", plan, SessionConfig(stop_timeout=6.0, break_timeout=2.0), factory)
    session.start(5.0)
    return session, console


def _stop(session: DebuggerSession) -> list[str]:
    try:
        result = session.stop()
    finally:
        session.store.close()
    assert result.state == SessionState.exited and result.exit_code == 0, result
    assert "terminated" not in result.actions and "killed" not in result.actions  # it quit by itself
    return list(result.actions)


@pytest.mark.parametrize(
    ("target", "debugger", "says"),
    [
        (DumpTarget(path="/d/app.dmp", kernel=False), CDB, "sent q (closed the dump)"),
        (ProcessTarget(command_line=["C:\\app.exe"]), CDB, "sent q (terminated the launched process)"),
    ],
    ids=["user_dump", "launched"],
)
def test_a_broken_in_user_target_is_quit_with_its_command(target: Target, debugger: list[str], says: str) -> None:
    session, console = _session(build_plan(debugger, target, initial_break=True), b"0:000> ", b"")
    assert session.state == SessionState.broken
    assert _stop(session) == [says]
    assert console.lines == [says.split()[1].encode()] and console.interrupts == 0


def test_a_kernel_dump_and_the_local_kernel_are_quit_with_q() -> None:
    for target, says in (
        (DumpTarget(path="/d/memory.dmp", kernel=True), "sent q (closed the dump)"),
        (LocalKernelTarget(), "sent q (ended local kernel debugging)"),
    ):
        prompt = b"lkd> " if isinstance(target, LocalKernelTarget) else b"0: kd> "
        session, console = _session(build_plan(KD, target), prompt, b"")
        assert _stop(session) == [says]
        assert console.lines == [b"q"]


def test_an_attached_broken_in_process_is_detached_with_qd() -> None:
    session, console = _session(build_plan(CDB, ProcessTarget(pid=4242), initial_break=True), b"0:002> ", b"")
    assert _stop(session) == ["sent qd (detached: the process runs on)"]
    assert console.lines == [b"qd"] and console.interrupts == 0


def test_an_attached_running_process_is_broken_into_then_detached() -> None:
    session, console = _session(build_plan(CDB, ProcessTarget(pid=4242), initial_break=True), b"0:002> ", b"")
    assert session.go("g").confirmed == "running"
    assert _stop(session) == ["broke in", "sent qd (detached: the process runs on)"]
    assert console.interrupts >= 1 and console.lines == [b"g", b"qd"]


def test_a_noninvasive_attach_is_left_with_q() -> None:
    plan = build_plan(CDB, ProcessTarget(pid=4242, noninvasive=True), initial_break=True)
    session, console = _session(plan, b"0:000> ", b"")
    assert _stop(session) == ["sent q (detached (noninvasive): the process runs on)"]
    assert console.lines == [b"q"]


def test_a_broken_in_remote_client_leaves_with_remote_exit() -> None:
    plan = build_plan(CDB, RemoteTarget(connection="tcp:server=127.0.0.1,port=5005"))
    session, console = _session(plan, b"0:000> ", b"")
    assert _stop(session) == ["sent .remote_exit (left the server's session, which goes on)"]
    assert console.lines == [b".remote_exit"]  # never q: that would end the server's session


def test_a_running_remote_client_leaves_with_ctrl_b() -> None:
    plan = build_plan(CDB, RemoteTarget(connection="tcp:server=127.0.0.1,port=5005"))
    session, console = _session(plan, b"0:000> ", b"")
    session.go("g")
    assert _stop(session) == ["sent Ctrl+B (left the server's session, which goes on)"]
    assert console.lines == [b"g", b"\x02"] and console.interrupts == 0  # the server's target is not broken into


def test_a_broken_in_kdnet_guest_is_resumed_then_left_with_ctrl_b() -> None:
    session, console = _session(build_plan(KD, kdnet(), initial_break=True), b"0: kd> ", CONNECTED)
    assert session.state == SessionState.broken
    assert _stop(session) == ["resumed target (kd read the g)", "sent Ctrl+B (quit kd, the guest left running)"]
    assert console.lines == [b"g", b"\x02"]


class FrozenDebugger(ScriptedDebugger):
    """A debugger stopped (SIGSTOP) at its prompt: it reads nothing and says nothing until killed."""

    frozen = False

    def write(self, data: bytes) -> None:
        if not self.frozen:
            super().write(data)
            return
        with self._cond:
            self.written.append(data)
            self._pending += data

    def input_pending(self) -> int:
        return len(self._pending)


def _frozen_kd() -> tuple[DebuggerSession, FrozenDebugger]:
    """A KDNET session at its break whose kd then freezes."""
    console = FrozenDebugger(b"0: kd> ", CONNECTED + b"0: kd> ")
    session = DebuggerSession("t1", build_plan(KD, kdnet(), initial_break=True),
                              SessionConfig(stop_timeout=3.0, break_timeout=1.0), lambda spec, backend: console)
    session.start(5.0)
    console.frozen = True
    return session, console


def test_stop_on_a_frozen_kd_claims_nothing_it_did_not_see() -> None:
    """The issue's case: stop_kd on a SIGSTOPped kd said "the guest left running" though kd never read the g."""
    session, _ = _frozen_kd()
    try:
        result = session.stop()
    finally:
        session.store.close()
    text = " ".join(result.actions)
    assert "left running" not in text and "resumed target" not in text, result
    assert result.actions[0].startswith("sent g, unread by kd") and "killed" not in result.actions
    assert result.actions[1:] == ["sent Ctrl+B (no answer)", "terminated", result.left]
    assert "unknown" in result.left and "break in" in result.left and "check the guest" in result.left


def test_a_running_kdnet_guest_is_left_with_ctrl_b_alone() -> None:
    session, console = _session(build_plan(KD, kdnet(), initial_break=False), b"0: kd> ", CONNECTED, broken=False)
    assert session.state == SessionState.running
    assert _stop(session) == ["sent Ctrl+B (quit kd, the guest left running)"]
    assert console.lines == [b"\x02"] and console.interrupts == 0


def test_a_go_a_frozen_kd_never_reads_is_not_called_running() -> None:
    """continue_go / resume_for_winrm: kd prints nothing when the target resumes, and nothing
    when it is frozen either; "running" needs kd to have read the g."""
    session, console = _frozen_kd()
    try:
        assert session.go("g").confirmed == "unread"
    finally:
        console.terminate(force=True)
        session.stop()
        session.store.close()
