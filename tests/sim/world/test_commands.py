"""Every command the issue names answers on the default target from the world, without kd's
syntax error, and the project's parser turns it into its typed record where a record kind
exists (issue 13, acceptance line 2). Run through the simulated kd's prompt path, in order:
breakpoints set before they are listed, a step after the break-in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kdmcp.parse import parse, route
from kdmcp.sim.world.registry import COMMANDS
from tests.sim.world.test_consistency import Kd

CLIENT = "ffffe70f`2e61b080"  # notmyfault64.exe (the canned !analyze's STACK_COMMAND)
CLIENT_THREAD = "ffffe70f`2d53a080"
IRP = "ffffe70f`2ed94d70"
# issue 13, Build item 2, in an order a person would type them
ITEM_2 = [
    "k",
    "kb",
    "kv",
    "kp",
    "kn",
    "kL",
    "kc",
    "r",
    "r rip",
    "lm",
    "lmv",
    "lm m nt",
    "lmvm nt",
    "lmvm myfault",
    "!process 0 0",
    f"!process {CLIENT} 7",
    "!thread",
    f"!thread {CLIENT_THREAD}",
    "~1s",
    "k",
    "~0s",
    f".process /r /p {CLIENT}",
    ".process",
    f".thread {CLIENT_THREAD}",
    "k",
    ".thread",
    ".process 0",
    "!handle 0 f 4",
    "!pool ffffe70f`28a7d040",
    "!poolfind Proc",
    "!poolused 2 Proc",
    "!pte nt",
    "!vm",
    "!locks",
    "!irql",
    "!pcr",
    "!idt",
    "!running",
    "!running -i",
    "!stacks",
    "!drvobj myfault 2",
    "!devobj \\Device\\Myfault",
    "!devstack \\Device\\Myfault",
    f"!irp {IRP}",
    "db nt!NtCreateFile",
    "dw nt!NtCreateFile",
    "dd nt!NtCreateFile",
    "dq nt!NtCreateFile",
    "dps @rsp",
    "dqs @rsp",
    "da nt!NtBuildLabEx",
    "du poi(poi(nt!PsLoadedModuleList)+58+8)",
    "eb nt!NtCreateFile+8 90",
    "u",
    "uf nt!DbgBreakPointWithStatus",
    "x nt!NtCreate*",
    "ln nt!NtCreateFile",
    "dt nt!_EPROCESS",
    "dt nt!_EPROCESS ffffe70f`28a7d040",
    "dx @$curprocess",
    "dx @$cursession.Processes",
    "? nt!NtCreateFile+0x10",
    ".formats 1c",
    "bp nt!NtCreateFile",
    "bu myfault+0x1e00",
    "ba e1 nt!NtReadFile",
    "bl",
    "bd 0",
    "be 0",
    "bc 1",
    "bl",
    "p",
    "t",
    "pt",
    "gu",
    ".reload",
    ".sympath",
    "!analyze -v",
    "vertarget",
    "version",
    ".lastevent",
]


@pytest.fixture(scope="module")
def answers() -> Iterator[list[tuple[str, str]]]:
    kd = Kd()
    yield [(line, kd(line)) for line in ITEM_2]
    kd.close()


def test_every_named_command_answers_without_a_syntax_error(answers: list[tuple[str, str]]) -> None:
    bad = [(line, out[:200]) for line, out in answers if "Syntax error" in out or "No export" in out]
    assert bad == []


def test_the_parser_gives_each_its_typed_record(answers: list[tuple[str, str]]) -> None:
    untyped = []
    for line, out in answers:
        if route(line) is not None and out.strip() and parse(line, out).kind == "text":
            untyped.append((line, out[:200]))
    assert untyped == []


def test_the_world_answers_them_not_a_canned_response(answers: list[tuple[str, str]]) -> None:
    from kdmcp.sim.scenario import builtin

    canned = builtin("default_kd").responses
    assert [line for line, _ in answers if line in canned] == []
    names = {line.split()[0].lower() for line, _ in answers}
    for name in names - {"~1s", "~0s", "g"}:  # ~Ns is the debugger's built-in
        assert any(name.startswith(c) for c in COMMANDS), name
