"""The simulator runs a line from the one reader's tree, as kd does (fast: in process, no child).

A :class:`SimDebugger` writes to /dev/null and is driven one line at a time; what it ran is
recorded by wrapping its ``execute``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from functools import cache

import pytest

from kdmcp.sim import scenario as scenario_mod
from kdmcp.sim.console_io import _Exit
from kdmcp.sim.debugger import SimDebugger
from kdmcp.sim.interpreter import EvalError, evaluate
from kdmcp.sim.options import SimOptions
from kdmcp.sim.session_log import SessionLog


@cache
def _scenario(name: str) -> scenario_mod.Scenario:
    return scenario_mod.builtin(name)  # type: ignore[arg-type]


class Recording(SimDebugger):
    """A simulated debugger that remembers every command it ran and what it printed."""

    def __init__(self, flavor: str = "kd") -> None:
        mode = "kdnet" if flavor == "kd" else "attach"
        opts = SimOptions(flavor=flavor, mode=mode, port=50000, key="1.2.3.4")  # type: ignore[arg-type]
        sc = _scenario("default_kd" if flavor == "kd" else "default_cdb")
        self._null = os.open(os.devnull, os.O_WRONLY)
        super().__init__(opts, sc, in_fd=self._null, out_fd=self._null)
        self._logs = tempfile.mkdtemp(prefix="kdmcp-sim-logs-")  # a line's .logopen c:\x.log lands here
        self.log = SessionLog(self._logs)
        self.ran: list[str] = []
        self.printed: list[str] = []
        self.state = "broken"

    def execute(self, command: str) -> None:
        self.ran.append(command)
        super().execute(command)

    def out(self, text: str) -> None:
        if not (self._in_command and not self.outmask & 1) and self._captured is None:
            self.printed.append(text)
        super().out(text)

    def line(self, text: str) -> None:
        self._drive(self.interpreter.run_line(text))

    def start_server(self, spec: str) -> None:
        """``.server`` opens no listener here: this debugger lives in the fast tier (tests/tiers.py);
        real servers are tests/sim/test_remoting.py's."""
        self.out(f"Server started with '{spec}'\n")

    def close(self) -> None:
        """Every descriptor the debugger opened (its wake-up pipe) and ours (/dev/null)."""
        self._outbuf.clear()
        self.log.close()  # a line's .logopen
        shutil.rmtree(self._logs, ignore_errors=True)
        for fd in (self._null, self._wake_r, self._wake_w):
            os.close(fd)


@pytest.fixture
def kd() -> Iterator[Recording]:
    dbg = Recording("kd")
    yield dbg
    dbg.close()


@pytest.fixture
def cdb() -> Iterator[Recording]:
    dbg = Recording("cdb")
    yield dbg
    dbg.close()


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("r; k", ["r", "k"]),
        (".block { r; k }; lm", ["r", "k", "lm"]),
        (".if (1) { r } .else { k }", ["r"]),
        (".if (0) { r } .elsif (2 > 1) { k } .else { lm }", ["k"]),
        ("j 0 'r';'k'", ["k"]),
        ("j (1 == 1) r; k", ["r"]),
        ('.foreach /s (v "r k lm") { v }', ["r", "k", "lm"]),
        ('.foreach /pS 1 /s (v "r k lm") { v }', ["k", "lm"]),
        (".for (r $t0 = 0; @$t0 < 3; r $t0 = @$t0 + 1) { k }", ["r $t0 = 0", *["k", "r $t0 = @$t0 + 1"] * 3]),
        ("r $t1 = 2; .while (@$t1) { r $t1 = @$t1 - 1 }", ["r $t1 = 2", "r $t1 = @$t1 - 1", "r $t1 = @$t1 - 1"]),
        ('.echo x"; lm; "', ['.echo x"', "lm", '"']),
        ('.echo "a; b"; k', ['.echo "a; b"', "k"]),
    ],
)
def test_lines_run_as_kd_reads_them(kd: Recording, line: str, ran: list[str]) -> None:
    kd.line(line)
    assert kd.ran == ran
    assert kd.state == "broken"


@pytest.mark.parametrize("line", [".block { g }", "j 1 'g';'r'", ".if (1) { gh }", '.foreach /s (x "g") {x}', "r; g"])
def test_a_go_anywhere_in_the_line_runs_the_target(kd: Recording, line: str) -> None:
    kd.line(line)
    assert kd.state == "running"


def test_the_rest_of_a_line_runs_at_the_next_stop(kd: Recording) -> None:
    """ "any additional commands listed after the semicolon are executed immediately after
    the g command has completed" (g (Go))."""
    kd.line("g; .echo after")
    assert kd.state == "running"
    assert kd.ran == ["g"]
    kd.enter_broken()  # the target stops: the next prompt runs the rest of the line first
    kd.read_line = lambda: None  # type: ignore[method-assign] (then: end of input)
    with pytest.raises(_Exit):
        kd.prompt_and_execute()
    assert kd.ran == ["g", ".echo after"]
    assert "after\n" in kd.printed


def test_thread_each_runs_per_thread_and_refuses_execution_commands(cdb: Recording) -> None:
    """'~e' is user mode only and "cannot be used with execution commands" (~e)."""
    cdb.line("~*e r; g")
    assert cdb.ran == ["r", "r", "r"]
    assert cdb.state == "broken"
    assert sum("Syntax error in 'g'" in text for text in cdb.printed) == 3


def test_thread_each_is_user_mode_only(kd: Recording) -> None:
    kd.line("~*e r")
    assert kd.ran == []
    assert any("Syntax error" in text for text in kd.printed)


def test_outmask_hides_normal_output_until_restored(kd: Recording) -> None:
    """Bit 1 is normal output (.outmask); the engine's ``.echo`` marker is normal output."""
    kd.line(".outmask- 1; .echo hidden; .outmask /d; .echo shown")
    assert "hidden\n" not in kd.printed
    assert "shown\n" in kd.printed


def test_an_unresolvable_condition_ends_the_line(kd: Recording) -> None:
    kd.line(".if (poi(nt!x)) { r }; k")
    assert kd.ran == []
    assert any("Couldn't resolve error at" in text for text in kd.printed)


@pytest.mark.parametrize(
    ("line", "ran"),
    [
        ("r foo; k", ["r foo"]),  # "       ^ Bad register error in 'r foo'"
        ("r foo; g", ["r foo"]),  # the target never runs
        ("zz; r", ["zz"]),  # "       ^ Syntax error in 'zz'"
        (".catch { r foo; k }; lm", ["r foo", "lm"]),
        (".block { r foo; k }; lm", ["r foo"]),
    ],
)
def test_an_error_ends_the_line_but_a_catch_block(kd: Recording, line: str, ran: list[str]) -> None:
    """ "If a command within a .catch block generates an error, the error message is displayed, all
    remaining commands within the braces are ignored, and execution resumes with the first command
    after the closing brace. If .catch is not used, an error will terminate the entire debugger
    command program" (.catch)."""
    kd.line(line)
    assert kd.ran == ran and kd.state == "broken"
    assert any(" error in '" in text for text in kd.printed)


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", 1), ("10", 16), ("0n10", 10), ("0x10", 16), ("0y101", 5), ("0t17", 15), ("1 == 1", 1), ("2 > 3", 0),
     ("1 and 0", 0), ("(1 + 2) * 3", 9), ("fffff800`00000000", 0xFFFFF80000000000), ("not 0", 1), ("@$t3", 7)],
)
def test_masm_expressions(text: str, value: int) -> None:
    assert evaluate(text, {3: 7}) == value


@pytest.mark.parametrize("text", ["", "poi(x)", "1 +", "eax", "(1"])
def test_expressions_the_simulator_cannot_read(text: str) -> None:
    with pytest.raises(EvalError):
        evaluate(text, {})
