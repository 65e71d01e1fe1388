"""kdmcp/command/command_strings.py: the command strings inside one command (breakpoints', events',
steps', the prompt's, ``!for_each_*``'s, aliases', ``dx``'s ``ExecuteCommand``) are checked on their own.

Each test names the kd behaviour it relies on.
"""

from __future__ import annotations

import pytest

from tests.command.helpers import (
    EXECUTION,
    HOST_EXEC,
    MEMORY_WRITE,
    READ,
    SESSION_ENDING,
    UNKNOWN,
    classes,
    pieces,
)


def test_nested_quotes_in_breakpoint_strings_use_documented_escapes() -> None:
    """``bp x "j (c) '.echo \\"hi\\"'; 'g'"`` (the documented form) is understood."""
    assert classes("bp x \"j (poi(x)=0) '.echo \\\"hi\\\"'; 'g'\"") == {READ, EXECUTION}


def test_breakpoint_strings_and_conditions() -> None:
    assert classes('bp /w "@$curthread.Id == 4" nt!NtCreateFile') == {EXECUTION, READ}
    assert MEMORY_WRITE in classes('bp /w "@$x = 4" nt!NtCreateFile')
    assert pieces('ba e1 fffff800`12345678 "r rax=1"', MEMORY_WRITE) == ["r rax=1"]
    assert UNKNOWN in classes("bp nt!Foo !!dir")


def test_event_command_strings() -> None:
    assert pieces('sxe -c "k; g" -c2 "eb @rsp 1" av', MEMORY_WRITE) == ["eb @rsp 1"]
    assert pieces("sxe -c r ld", READ)[-1] == "r"
    assert classes("sx") == {READ}


def test_step_command_strings() -> None:
    """``p [Count] ["Command"]`` runs Command after the step."""
    assert pieces('p 2 "k; eb @rsp 1"', MEMORY_WRITE) == ["eb @rsp 1"]


def test_prompt_and_browse_commands() -> None:
    assert pieces('.pcmd -s "g"', EXECUTION) == ["g"]
    assert pieces(".browse g", EXECUTION) == ["g"]


def test_for_each_extensions() -> None:
    assert classes("!for_each_module .echo hi") == {READ}
    assert pieces('!for_each_module "g"', EXECUTION) == ["g"]
    assert UNKNOWN in classes("!for_each_module .echo @#ModuleName")


def test_single_word_alias_definitions_are_classified_by_their_value() -> None:
    assert classes("aS va lm") == {READ}
    assert classes('aS va "k"') == {READ}
    assert EXECUTION in classes("aS va g")
    assert SESSION_ENDING in classes("aS kb q")
    assert classes("as /x base nt") == {READ}


def test_multi_word_alias_definitions_are_unknown() -> None:
    """An alias is pasted in wherever its name appears later, so only single words are safe."""
    assert UNKNOWN in classes('aS x "lm m nt"')
    assert HOST_EXEC in classes('aS x ".shell dir"')
    assert HOST_EXEC in classes("as x k; .shell dir")  # as takes the rest of the line
    assert UNKNOWN in classes("as /c x k")  # holds command output


def test_dx_reads() -> None:
    assert classes("dx @$curprocess.Modules.Select(m => m.Name)") == {READ}


def test_dx_execute_command_literal_is_classified() -> None:
    assert classes('dx Debugger.Utility.Control.ExecuteCommand("k")') == {READ}
    assert pieces('dx Debugger.Utility.Control.ExecuteCommand("g")', EXECUTION) == ["g"]
    # dx is not documented to keep a quoted ';', so the line splits there (and the rest is checked).
    assert {UNKNOWN, EXECUTION} <= classes('dx Debugger.Utility.Control.ExecuteCommand("k; g")')
    assert pieces('dx -r1 Debugger.Utility.Control.ExecuteCommand("!\\x21dir")', HOST_EXEC) == ["!!dir"]


def test_dx_non_literal_control_use_is_unknown() -> None:
    for command in (
        "dx Debugger.Utility.Control.ExecuteCommand(@$cmd)",
        'dx Debugger.Utility.Control.ExecuteCommand("k" + "")',
        "dx @$ctl = Debugger.Utility.Control",
        'dx Debugger.Utility["Control"]',
        'dx Debugger.Utility.Control.ExecuteCommand("k',  # never closes
    ):
        assert UNKNOWN in classes(command), command


# ------------------------------------------------------------------ issue 28: aliases cannot change meaning


@pytest.mark.parametrize(
    "line",
    ["aS .echo r", "as .echo r", "aS ${/v:.echo} r", "aS lm g", "aS k gh", "aS x 1", "aS analyze g", "aS ext g",
     "aS KDMCP0A1B2C3D4E5F6A7BN1 x", "aS kdmcpX x", "aS dead 1", "aS !sym x", "aS ~ x", ".block { aS .echo r }",
     'bp nt!NtClose "aS .echo r"', "aS va -mmw", "aS va /xmf"],
)  # fmt: skip
def test_alias_definitions_that_could_change_a_later_line_are_refused(line: str) -> None:
    """The engine's ".echo <marker>" line, command words, extension names, numbers, options."""
    from kdmcp.command import check

    assert not check(line, "standard").allowed
    assert not check(line, "read_only").allowed


def test_plain_alias_definitions_stay_allowed() -> None:
    from kdmcp.command import check

    for line in ("aS va lm", "aS myAlias nt", "as AliasName c:\\dir\\name.txt", "aS Short usersrv!Name"):
        assert check(line, "standard").allowed, line
