"""No prompt shape leaves a session busy for ever (issue 29, item 2), through the real engine.

``DebuggerSession`` runs against an in-process fake console (no process: fast tier) that answers
every line the way kd does on a pipe or a console, ending each answer with a prompt the test
chooses. A prompt of a shape nothing in kd-mcp knows either is learned at once (pipes: the same
text stands before the command's marker and alone at the end), or, where kd echoes input and the
marker stands alone, ends the command at its timeout with what was printed and a clear error --
and the session is usable again, its next command answered at once.
"""

from __future__ import annotations

import pytest

from kdmcp.console import BackendName, SpawnSpec
from kdmcp.console.base import OutputQueue
from kdmcp.engine import DebuggerSession, SessionConfig, SessionState, build_plan, simulator_command
from kdmcp.errors import CommandTimeout
from tests.conftest import kdnet

# Shapes no pattern in kdmcp/parse/prompt.py knows (a form a future kd could print).
UNKNOWN = "kd[1]> "


class FakeKd:
    """A console whose debugger answers each line: ``.echo X`` with X, anything else with one
    output line; every answer ends with ``self.prompt``. ``echo``: input comes back first, as on
    a pty or a Windows console."""

    def __init__(self, prompt: str, *, echo: bool, first_prompt: str = "0: kd> ") -> None:
        self.prompt = prompt
        self._echo = echo
        self._out = OutputQueue()
        self._pending = b""
        self._alive = True
        self._out.put(b"Microsoft (R) Windows Debugger Version 10.0.26100.1 AMD64\r\n"
                      b"Kernel Debugger connection established.\r\nSystem Uptime: 0 days 0:00:01.000\r\n"
                      b"Break instruction exception - code 80000003 (first chance)\r\n"
                      b"nt!DbgBreakPointWithStatus:\r\nfffff800`62a05c20 cc              int     3\r\n"
                      + first_prompt.encode())

    # The Console protocol
    pid = 4242

    @property
    def echoes_input(self) -> bool:
        return self._echo

    def read(self, max_bytes: int, timeout: float) -> bytes:
        return self._out.read(max_bytes, timeout, what="fake kd")

    def wait_readable(self, timeout: float) -> bool:
        return self._out.wait_readable(timeout)

    def write(self, data: bytes) -> None:
        self._pending += data
        while b"\n" in self._pending:
            line, self._pending = self._pending.split(b"\n", 1)
            answer = (line + b"\r\n") if self._echo else b""
            text = line.strip()
            if text in (b"q", b"qq") or text.startswith(b"\x02"):
                self._alive = False
                self._out.put(answer + b"quit:\r\n")
                self._out.put_eof()
                return
            if text.startswith(b".echo "):
                answer += text[len(b".echo "):] + b"\r\n"
            else:
                answer += b"answer to " + text + b"\r\n"
            self._out.put(answer + self.prompt.encode())

    def interrupt(self) -> None:
        self._out.put(b"Break instruction exception - code 80000003 (first chance)\r\n" + self.prompt.encode())

    def is_alive(self) -> bool:
        return self._alive

    def input_pending(self) -> int | None:
        return 0  # every line is answered as it is written: nothing waits unread

    def exit_status(self) -> int | None:
        return None if self._alive else 0

    def terminate(self, force: bool = False) -> None:
        self._alive = False
        self._out.put_eof()

    def wait(self, timeout: float) -> int | None:
        return self.exit_status()

    def close(self) -> None:
        self._out.close()


def _session(kd: FakeKd) -> DebuggerSession:
    def factory(spec: SpawnSpec, backend: BackendName) -> FakeKd:
        return kd

    plan = build_plan(simulator_command("kd", None), kdnet(), initial_break=True)
    session = DebuggerSession("fake", plan, SessionConfig(backend="pipe", command_timeout=0.5),
                              console_factory=factory)  # type: ignore[arg-type]
    session.start(5.0)
    assert session.state == SessionState.broken
    return session


@pytest.fixture
def sessions():
    made: list[DebuggerSession] = []
    yield lambda kd: made.append(_session(kd)) or made[-1]
    for s in made:
        s.stop(timeout=2.0)
        s.store.close()


def test_known_prompt_forms_complete_commands(sessions):
    for prompt in ("0: kd> ", "kd> ", "lkd> ", "1: kd:x86> ", "0:000> ", "0:000:x86> ", "3:2:005> ",
                   "?:???> ", "[HOST\\alice] 0:001> "):
        s = sessions(FakeKd(prompt, echo=False, first_prompt=prompt))
        r = s.execute("lm")
        assert r.output.strip() == "answer to lm", prompt
        assert r.prompt is not None and r.prompt.text == prompt and s.state == SessionState.broken


def test_no_target_prompt_is_a_prompt_of_its_own_mode(sessions):
    s = sessions(FakeKd("?:???> ", echo=True))
    r = s.execute("version")
    assert r.prompt is not None and r.prompt.mode == "no_target"


def test_an_unknown_prompt_on_pipes_is_learned_from_the_marker_line(sessions):
    kd = FakeKd(UNKNOWN, echo=False)
    s = sessions(kd)
    r = s.execute("lm")  # kd: "answer to lm\r\nkd[1]> " then "kd[1]> KDMCP...\r\nkd[1]> "
    assert r.output.strip() == "answer to lm"
    assert r.prompt is not None and r.prompt.text == UNKNOWN and r.prompt.mode == "unknown"
    assert s.execute("r").output.strip() == "answer to r"


def test_an_unknown_prompt_on_a_console_ends_the_command_at_its_timeout_and_the_session_stays_usable(sessions):
    kd = FakeKd(UNKNOWN, echo=True)
    s = sessions(kd)
    with pytest.raises(CommandTimeout) as info:
        s.execute("lm")
    err = info.value
    assert "no known prompt" in str(err) and UNKNOWN in str(err)
    assert "answer to lm" in (err.partial_output or "")
    assert s.state == SessionState.broken  # usable: not busy
    r = s.execute("r", timeout=5.0)  # the shape is known now: answered at once
    assert r.output.strip() == "answer to r" and r.prompt is not None and r.prompt.text == UNKNOWN


def test_a_prompt_glued_to_output_without_a_line_end_completes_the_command(sessions):
    kd = FakeKd("0: kd> ", echo=False)
    s = sessions(kd)
    original = kd.write

    def no_line_end(data: bytes) -> None:  # ".printf" output has no line end: the prompt follows it
        if data.startswith(b".printf"):
            kd._out.put(b"abc0: kd> ")
            data = data.split(b"\n", 1)[1]
        original(data)

    kd.write = no_line_end  # type: ignore[method-assign]
    r = s.execute('.printf "abc"')
    assert r.output == "abc" and s.state == SessionState.broken
