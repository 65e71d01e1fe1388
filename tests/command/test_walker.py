"""kdmcp/command/walker.py: the walk over the reader's tree — findings, ``{ }`` bodies, ``.if``,
loops, ``.foreach``, ``j`` branches, the depth limit and path lists.

Each test names the kd behaviour it relies on.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kdmcp.command import Finding, classify
from tests.command.helpers import (
    EXECUTION,
    HOST_EXEC,
    MEMORY_WRITE,
    NETWORK_PATH,
    READ,
    UNKNOWN,
    classes,
    pieces,
)


def test_findings_are_frozen_and_explained() -> None:
    findings = classify(".shell dir")
    assert findings == [Finding(piece=".shell dir", command_class=HOST_EXEC, reason=findings[0].reason)]
    assert "debugger host" in findings[0].reason
    with pytest.raises(ValidationError):
        findings[0].piece = "k"


def test_block_bodies_are_classified() -> None:
    assert pieces(".block { r; .block { k; g } }", EXECUTION) == ["g"]
    assert pieces(".block{r}", READ) == ["r", ".block{r}"]


def test_bare_braces_are_a_block() -> None:
    assert pieces("{ g }", EXECUTION) == ["g"]


def test_text_after_a_block_is_a_command() -> None:
    assert pieces(".block { r } g", EXECUTION) == ["g"]


def test_if_chain() -> None:
    command = ".if (@rax == 0) { k } .elsif (@rax == 1) { g } .else { eb @rsp 90 }"
    assert classes(command) == {READ, EXECUTION, MEMORY_WRITE}
    assert UNKNOWN in classes(".else { k }")
    assert UNKNOWN in classes(".if (1) k")


def test_loops() -> None:
    assert pieces(".while (@$t0 < 3) { g }", EXECUTION) == ["g"]
    assert pieces(".do { g } (@$t0 < 3)", EXECUTION) == ["g"]
    assert pieces(".for (r $t0 = 0; @$t0 < 3; r $t0 = @$t0 + 1) { g }", EXECUTION) == ["g"]
    assert pieces(".for (eb @rsp 1; 1; r) { k }", MEMORY_WRITE) == ["eb @rsp 1"]
    assert UNKNOWN in classes(".for (r; 1) { k }")


def test_condition_with_semicolon_is_unknown() -> None:
    assert UNKNOWN in classes(".if (1; r) { k }")


def test_foreach_from_a_string_substitutes_each_token() -> None:
    """kd pastes each token of InString where the variable stands in OutCommands."""
    assert classes('.foreach /s (c "k r") { c }') == {READ}
    assert classes('.foreach /s (c "k g") { c }') == {READ, EXECUTION}


def test_foreach_variable_from_output_or_file_is_unknown_when_used() -> None:
    assert classes(".foreach (m {lm1m}) { .echo found }") == {READ}
    assert UNKNOWN in classes(".foreach (m {lm1m}) { lm m m }")
    assert UNKNOWN in classes('.foreach /f (m "c:\\x.txt") { m }')
    assert pieces(".foreach (m {g}) { .echo x }", EXECUTION) == ["g"]


def test_j_branches() -> None:
    """``j Expression 'Command1' ; 'Command2'``; kd ignores what follows, we check it anyway."""
    assert classes("j (@rax == 0) 'k' ; 'r'") == {READ}
    assert pieces("j (@rax == 0) 'r; g' ; 'k'", EXECUTION) == ["g"]
    assert pieces("j @rax r ; g", EXECUTION) == ["g"]
    assert pieces("j 1 ''; 'r'; g", EXECUTION) == ["g"]
    assert UNKNOWN in classes("j 1 'r ; 'k'")


def test_depth_limit_is_unknown() -> None:
    command = ".block {" * 40 + " k " + "}" * 40
    assert UNKNOWN in classes(command)


def test_path_lists_are_not_commands() -> None:
    """``.sympath a;b`` takes the whole path list; elements that are not paths are checked."""
    assert classes(".sympath srv*c:\\sym*https://msdl.microsoft.com/download/symbols;c:\\other") == {READ}
    assert classes(".sympath srv*c:\\sym*https://msdl.microsoft.com/download/symbols;\\\\srv\\s") == {
        READ, NETWORK_PATH
    }
    assert pieces(".sympath c:\\sym; g", EXECUTION) == ["g"]
    assert "network" in classify(".sympath srv*")[0].reason
