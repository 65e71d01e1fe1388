"""``.bugcheck`` (kdmcp/sim/world/cmd_bugcheck.py): the code and four parameters, as kd prints them
(``Bugcheck code 00000139`` / ``Arguments 00000000`0000001d ffffb88f`1487ec30 ...``), read back by
the project's parser (``parse_bugcheck``) into the same figures ``!analyze -v`` gives."""

from __future__ import annotations

from kdmcp.parse import parse
from kdmcp.sim.world import build
from kdmcp.sim.world.cmd_report import D1_ARGS, crash
from kdmcp.sim.world.commands import answer
from kdmcp.sim.world.registry import COMMANDS


def test_bugcheck_is_a_kd_command_of_the_world() -> None:
    assert set(COMMANDS[".bugcheck"]) == {"kernel"}


def test_the_d1_crash_prints_its_code_and_arguments() -> None:
    world = build()
    crash(world)
    text = answer(world, ".bugcheck")
    assert text == (
        "Bugcheck code 000000D1\nArguments ffffb28d`4aaa8010 00000000`00000002 00000000`00000000 fffff800`60da1981\n"
    )
    r = parse(".bugcheck", text)
    assert r.kind == "analysis" and r.bugcheck is not None
    assert r.bugcheck.code == "0xd1"
    assert [int(a, 16) for a in r.bugcheck.args] == list(D1_ARGS)
    # the same code and arguments as the analysis of the same world
    analysis = parse("!analyze -v", answer(world, "!analyze -v") or "")
    assert analysis.bugcheck is not None
    assert (analysis.bugcheck.code, [int(a, 16) for a in analysis.bugcheck.args]) == ("0xd1", list(D1_ARGS))


def test_a_live_target_in_no_bugcheck_prints_zeros() -> None:
    text = answer(build(), ".bugcheck")
    assert text == "Bugcheck code 00000000\nArguments " + " ".join(["00000000`00000000"] * 4) + "\n"


def test_bugcheck_takes_no_arguments() -> None:
    assert answer(build(), ".bugcheck 1") is None  # the debugger's syntax error
