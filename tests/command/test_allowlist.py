"""kdmcp/command/allowlist.py: looking commands up on the table, and what a refusal says.

Also the property the issue asks for: generated lines around on- and off-table commands, each
run by an in-process simulated kd (which reads lines through the same reader) -- every command
the simulator runs is on the table, or the policy refuses the line under ``standard``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdmcp.command import DEFAULT_NETWORK_ROOTS, check
from kdmcp.command.allowlist import entry_for, path_list_refusal, refusal, table_counts
from tests.sim.test_interpreter import Recording
from tests.tiers import examples

ROOTS = DEFAULT_NETWORK_ROOTS


@pytest.mark.parametrize(
    "piece",
    ["k", "kbn 20", "lmDvmmydrv", "dd@rsp", "dps @rsp L10", "pa(nt!NtCreateFile)", "ta@$ra", "pc(1)", "#mov @rip",
     "!analyze -v", "!analyze /v", "!ext.analyze -v", "!kdexts.process 0 0", ".reload /f nt", ".sympath+ c:\\sym",
     "? @rax + 8", "$$ note", "* note", "~3 kb", "!sym noisy", ".settings list", "dt -r2 nt!_EPROCESS", "x /t nt!Ke*"],
)  # fmt: skip
def test_on_the_table(piece: str) -> None:
    assert refusal(piece, ROOTS) is None


@pytest.mark.parametrize(
    ("piece", "why"),
    [
        ("frobnicate", "not a command"),
        ("!chkimg -mmw c:\\x 1 nt", "option '-mmw'"),
        ("!chkimg /mmw c:\\x 1 nt", "option '/mmw'"),
        ("!analyze /xmf c:\\x.xml", "option '/xmf'"),
        ("!evil.analyze -v", "extension DLL 'evil'"),
        ("!notreal", "not an extension"),
        (".extmatch /e evil x", "option '/e'"),
        (".pcmd -s g", "option '-s'"),
        ("n 8", "takes no such argument"),
        (".sympath \\??\\GLOBALROOT\\Device\\Mup\\h\\s", "NT-namespace"),
        (".symfix \\\\?\\UNC\\h\\s", "NT-namespace"),
        (".sympath relative\\dir", "not a local drive path"),
        ("lmvm nt \"x\"", "quoted string"),
        ("!sym x", "takes no such argument"),
        ("dd \\x", "not expression"),
    ],
)
def test_off_the_table(piece: str, why: str) -> None:
    problem = refusal(piece, ROOTS)
    assert problem is not None and why in problem, problem


def test_a_configured_root_is_a_path_a_command_may_name() -> None:
    roots = (*ROOTS, "\\\\symbols\\team")
    assert path_list_refusal("srv*c:\\cache*\\\\symbols\\team\\x", roots) is None
    assert path_list_refusal("srv*c:\\cache*\\\\symbols\\teamx", roots) is not None
    assert path_list_refusal("cache*\\??\\GLOBALROOT\\Device\\Mup\\symbols\\team", roots) is not None


def test_selectors_are_looked_through() -> None:
    found = entry_for("~*e k")
    assert not isinstance(found, str)


def test_counts() -> None:
    counts = table_counts()
    assert counts["entries"] > 200 and counts["extensions"] > 100 and counts["options"] > 200


# ------------------------------------------------------------------ the property

_ON = ["k", "kb", "r", "lm", "dd @rsp", "? 1", ".echo hi", "!process 0 0", "bl", "u @rip", "g", "p", "x nt!*"]
_OFF = ["frob", "!chkimg -mmw c:\\x 1 nt", "!analyze /xmf c:\\x", "n 8", ".extmatch /e x y", "!notreal",
        ".sympath \\??\\GLOBALROOT\\Device\\Mup\\h\\s", "a @rip", ".sleep 1", "lm -zz", "dt -q x"]  # fmt: skip


def _lines() -> st.SearchStrategy[str]:
    atom = st.sampled_from(_ON + _OFF)

    def wrap(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map(lambda p: f"{p[0]}; {p[1]}"),
            inner.map(lambda x: f".block {{ {x} }}"),
            st.tuples(inner, inner).map(lambda p: f".if (1) {{ {p[0]} }} .else {{ {p[1]} }}"),
            st.tuples(atom, atom).map(lambda p: f"j 1 '{p[0]}';'{p[1]}'"),
            atom.map(lambda x: f"~*e {x}"),
            atom.map(lambda x: f'.echo x"; {x}; "'),
        )

    return st.recursive(atom, wrap, max_leaves=4)


def _ran(line: str) -> Iterator[list[str]]:
    dbg = Recording("cdb")
    dbg.interpreter.max_loop = 3
    try:
        dbg.line(line)
        yield list(dbg.ran)
    finally:
        dbg.close()


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_lines())
def test_what_the_simulator_runs_is_on_the_table_or_refused(line: str) -> None:
    if check(line, "standard").allowed:
        for ran in _ran(line):
            off = [c for c in ran if refusal(c, ROOTS) is not None]
            assert not off, (line, off)


# ------------------------------------------------------------------ run effects from the same table


def test_every_entry_that_runs_the_target_has_that_effect_glued_or_not() -> None:
    from kdmcp.command import RunEffect, run_effect
    from kdmcp.command.known import TABLE
    from kdmcp.command.tables import leaf_effect

    for entry in TABLE:
        for name in entry.names:
            if entry.effect is RunEffect.IMMEDIATE or not name.isalpha():
                continue
            for form in (name, f"{name}(1)", f"{name}@$ra", f"{name} 1"):
                assert leaf_effect(form) is entry.effect, form
                assert run_effect(f".block {{ {form} }}") is entry.effect, form


@pytest.mark.parametrize(
    "line", ["pa(nt!NtCreateFile)", "ta@$ra", "pc(1)", ".pcmd -s g", '.pcmd -s "r; g"', "aS foo g; .block { foo }"]
)
def test_hidden_run_effects_are_seen(line: str) -> None:
    from kdmcp.command import RunEffect, run_effect

    assert run_effect(line) is RunEffect.RESUMES
