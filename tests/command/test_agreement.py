"""The one reader's three users agree: the policy sees what the simulator runs, and the engine's
run effect says "resumes" exactly where the simulator lets the target run.

Lines are generated from every form the reader knows (``;`` lists, ``.block``, ``.if``/``.else``,
``j``, ``.for``, ``.while``, ``.foreach /s``, ``~*e``, ``.echo`` quoting, breakpoint command
strings) around ordinary and go-class commands, plus the whole bypass corpus; each is run by
an in-process simulated kd and cdb (see tests/sim/test_interpreter.py).

No one module is under test here but the package's promise (kdmcp/command/__init__.py): the
policy, the engine and the simulator read a line the same way.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdmcp.command import PROFILES, CommandClass, RunEffect, check, classify, run_effect
from kdmcp.sim.console_io import _Exit
from tests.command.corpus import BYPASS, ORDINARY
from tests.sim.test_interpreter import Recording
from tests.tiers import examples

_ATOMS = ["r", "k", "lm", ".echo hi", '.echo "a; b"', "? 1", "g", "gh", "gu", "p", "bl", "r $t0 = 1", "!process 0 0"]
_CONDITIONS = ["0", "1", "@$t0 == 0", "2 > 1"]
# The simulator stops a loop after MAX_LOOP (100 000) iterations; 100 000 runs of one body add
# no command the first runs did not (at a bound of 2 every corpus line ran the same commands
# and ended in the same state), and cost seconds (".while (1) { .loadby evil nt }": 3-7 s).
# The generated loops run at most twice; the corpus's finite loops, a few times.
_LOOP_BOUND = 100


def _lines() -> st.SearchStrategy[str]:
    atom = st.sampled_from(_ATOMS)
    cond = st.sampled_from(_CONDITIONS)
    words = st.lists(st.sampled_from(["r", "k", "g", "lm"]), min_size=1, max_size=3).map(" ".join)

    def wrap(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map(lambda p: f"{p[0]}; {p[1]}"),
            inner.map(lambda x: f".block {{ {x} }}"),
            st.tuples(cond, inner, inner).map(lambda p: f".if ({p[0]}) {{ {p[1]} }} .else {{ {p[2]} }}"),
            st.tuples(cond, atom, atom).map(lambda p: f"j {p[0]} '{p[1]}';'{p[2]}'"),
            inner.map(lambda x: f".for (r $t0 = 0; @$t0 < 2; r $t0 = @$t0 + 1) {{ {x} }}"),
            words.map(lambda w: f'.foreach /s (v "{w}") {{ v }}'),
            atom.map(lambda x: f"~*e {x}"),
            atom.map(lambda x: f'.echo x"; {x}; "'),
            atom.map(lambda x: f'bp nt!NtClose "{x}"'),
        )

    return st.recursive(atom, wrap, max_leaves=6)


def _run(flavor: str, line: str) -> Iterator[Recording]:
    dbg = Recording(flavor)
    dbg.interpreter.max_loop = _LOOP_BOUND
    try:
        try:
            dbg.line(line)
        except _Exit:
            dbg.state = "exited"  # type: ignore[assignment] ("q": the debugger quit)
        yield dbg
    finally:
        dbg.close()


def _agree(line: str) -> None:
    effect = run_effect(line)
    findings = classify(line)
    pieces = {f.piece for f in findings}
    # Blind: the policy says it cannot see what follows -- an unknown piece, or an alias named like
    # a command word (output_control: kd would rewrite later words with it); both are refused by
    # every profile but "full".
    blind = any(f.command_class in (CommandClass.UNKNOWN, CommandClass.OUTPUT_CONTROL) for f in findings)
    for flavor in ("kd", "cdb"):
        for dbg in _run(flavor, line):
            # Every command the simulator ran is one the policy classified -- or the policy
            # said it cannot see it (unknown: denied by every profile but "full").
            missing = [c for c in dbg.ran if c.strip() not in pieces]
            assert not missing or blind, (flavor, line, missing, sorted(pieces))
            # The target runs only where the engine expects it (no marker sent, no false timeout).
            if dbg.state == "exited":
                assert effect is RunEffect.ENDS, (flavor, line, effect)
            elif dbg.state != "broken":
                assert effect in (RunEffect.RESUMES, RunEffect.REBOOTS, RunEffect.ENDS), (flavor, line, dbg.state)
            if effect is RunEffect.IMMEDIATE:
                assert dbg.state == "broken", (flavor, line)
    # The verdict is a function of the findings: "full" allows everything the reader reads.
    assert check(line, "full").allowed


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_lines())
def test_generated_lines_agree(line: str) -> None:
    _agree(line)


# Lines with a line break are refused before any reader sees them (engine/commands.validate).
# In the process tier though it starts no process (tests/tiers.py): 623 lines, nearly each one
# through a simulated kd that builds its whole kernel first (25-30 ms a line, about 20 s in all,
# half of the fast tier's test time). The fast tier keeps the generated lines above,
# every form the reader knows, and the forms below.
@pytest.mark.process
@pytest.mark.parametrize("line", [c for c in [c for c, _ in BYPASS] + ORDINARY if "\n" not in c and "\r" not in c])
def test_corpus_lines_agree(line: str) -> None:
    _agree(line)


@pytest.mark.parametrize("line", [".block { g }", "j 1 'g';'r'", ".if (1) { gh }", '.foreach /s (x "g") {x}'])
def test_the_forms_that_hid_a_go_are_go_class(line: str) -> None:
    assert run_effect(line) is RunEffect.RESUMES
    for dbg in _run("kd", line):
        assert dbg.state == "running"
    assert all(check(line, p).allowed for p in PROFILES if p != "read_only")
