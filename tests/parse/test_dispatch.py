"""``kdmcp.parse.dispatch``: the one door, ``parse(command, output)``, and ``route``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdmcp.parse import StackRecord, kind_of, parse, route
from kdmcp.parse.events import parse_events
from kdmcp.parse.memory import parse_memory
from kdmcp.parse.modules import parse_modules
from kdmcp.parse.processes import parse_processes
from kdmcp.parse.registers import parse_registers
from kdmcp.parse.stack import parse_stack
from kdmcp.parse.threads import parse_threads
from tests.parse.samples.corpus import Corpus
from tests.tiers import examples


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("k", "stack"),
        ("kb 100", "stack"),
        ("kn20", "stack"),
        ("k = @rsp @rip 20", "stack"),
        ("~*kb", "stack"),
        ("~3 kv", "stack"),
        ("~*e kb", "stack"),
        ("lmDvmSecondDriver", "modules"),
        ("lm k", "modules"),
        ("dd /c1 x L2", "memory"),
        ("dD x", "memory"),
        ("dqs rsp", "memory"),
        ("kd", "memory"),
        ("!db 1000", "memory"),
        ("dt nt!_EPROCESS", "type_dump"),
        ("dx @$curthread", "data_model"),
        ("dv /t", "locals"),
        ("~0s", "registers"),
        ("r rip", "registers"),
        ("rM 0x04", "registers"),
        (".cxr 0x1234", "registers"),
        ("g", "events"),
        ("gu", "events"),
        ("p", "events"),
        ("t 3", "events"),
        (".breakin", "events"),
        ("", "events"),
        ("|", "processes"),
        ("!process 0 0", "processes"),
        ("~", "threads"),
        ("~*", "threads"),
        ("!ready", "threads"),
        ("!analyze -v", "analysis"),
        ("bl", "breakpoints"),
        ("vertarget", "target"),
        (".exr -1", "exception_record"),
        ("!error 5", "error_code"),
        ("? 1+1", "expression"),
        ("x nt!Ke*", "symbols"),
        ("ln rip", "symbols"),
        (".sympath", "symbol_path"),
        (".reload /f", "symbol_load"),
        ("!irp 1234", "object"),
        ("!kdexts.pool 1234", "object"),
    ],
)
def test_route(command: str, kind: str) -> None:
    parser = route(command)
    assert parser is not None, command
    name = getattr(parser, "func", parser).__name__  # partial(parse_stack, per_thread=...) for ~*k
    expected = {
        "stack": "parse_stack",
        "modules": "parse_modules",
        "memory": "parse_memory",
        "type_dump": "parse_type_dump",
        "data_model": "parse_data_model",
        "locals": "parse_locals",
        "registers": "parse_registers",
        "events": ("_run_control", "_parse_unprompted"),
        "processes": "parse_processes",
        "threads": "parse_threads",
        "analysis": "parse_analysis",
        "breakpoints": "parse_breakpoints",
        "target": "parse_target",
        "exception_record": "parse_exception_record",
        "error_code": "parse_error_code",
        "expression": "parse_expression",
        "symbols": "parse_symbols",
        "symbol_path": "parse_symbol_path",
        "symbol_load": "parse_symbol_load",
        "object": "parse_object",
    }[kind]
    assert name in expected if isinstance(expected, tuple) else name == expected


@pytest.mark.parametrize("command", [".echo hi", "as x y", ".load foo", "!unknownext", "~0f", "~*e", "~*e ;", "~*e s"])
def test_unrouted_commands_are_text(command: str) -> None:
    assert route(command) is None
    assert parse(command, "whatever").kind == "text"


# Every selector form kd documents, on a stack command: "Thread Syntax" (~. ~# ~* ~Number ~~[TID]
# ~[Expression]; blanks after "~" read too), "Process Syntax" (|. |# |* |Number |~[PID]
# |[Expression]), "System Syntax" (||. ||# ||* ||ddd, ||[Expression] for a processor), prefixes
# stacked, and "~Thread e CommandString". The parser reads them with the one command reader
# (kdmcp.command.lexing.read_selectors), as the policy, the engine and the simulator do.
_THREAD_FORMS = ["~.", "~#", "~*", "~3", "~ 3", "~12", "~~[1a4]", "~[@$t0]", "~ *", "~ #"]
_PROCESS_FORMS = ["|.", "|#", "|*", "|1", "|~[1a4]", "|[@$t0]", "||.", "||#", "||*", "||0", "||[@$t0]"]
_EXECUTE_FORMS = ["~*e ", "~ * e ", "~3e ", "~3 e ", "~~[1a4]e ", "~e ", "~*E "]
_STACK_FORMS = sorted(
    {f"{sel}{gap}k" for sel in _THREAD_FORMS + _PROCESS_FORMS for gap in ("", " ")}
    | {f"{sel}kb" for sel in _EXECUTE_FORMS}
    | {"|1 ~2 k", "||0 |1 ~2 kb", "|~[1a4] ~~[2b8] kv", "~*e k; r", "~*e ~3 k", "k; ~0s"}
)
_STACK = (
    " # Child-SP          RetAddr               Call Site\n"
    "00 fffff800`62c3a1e0 fffff800`62a05c20     nt!KeBugCheckEx\n"
    "01 fffff800`62c3a1e8 fffff800`62a05c28     nt!KiPageFault+0x260\n"
)


@pytest.mark.parametrize("command", _STACK_FORMS)
def test_a_selector_prefixed_stack_is_a_stack(command: str) -> None:
    parser = route(command)
    assert getattr(parser, "func", parser) is parse_stack, command
    record = parse(command, _STACK)
    assert isinstance(record, StackRecord) and len(record.frames) == 2, command


@pytest.mark.parametrize(
    ("command", "per_thread"),
    [("~*k", True), ("~ * kb", True), ("~*e kb", True), ("|1 ~* k", True), ("~* |1 k", True),
     ("~3 k", False), ("~.k", False), ("|*k", False), ("||*k", False), ("~*e ~3 k", False), ("~3e ~*k", True)],
)
def test_all_threads_split_the_stack_by_thread(command: str, per_thread: bool) -> None:
    """``~*`` is "All threads in the process" (Thread Syntax): the last thread selector decides."""
    parser = route(command)
    assert getattr(parser, "func", parser) is parse_stack
    assert getattr(parser, "keywords", {}).get("per_thread", False) is per_thread


@pytest.mark.parametrize(
    ("command", "parser"),
    [
        # a selector alone lists what it selects
        *((sel, parse_threads) for sel in ["~", "~*", "~.", "~#", "~3", "~ 3", "~~[1a4]", "~[@$t0]", "|1 ~"]),
        *((sel, parse_processes) for sel in ["|", "||", "|*", "|.", "|1", "|~[1a4]", "|[@$t0]", "||0", "~2 |"]),
        # "~s (Set Current Thread)" / "~s (Change Current Processor)": the new context's registers
        *((f"{sel}s", parse_registers) for sel in ["~0", "~ 0", "~~[1a4]", "~[@$t0]", "~#", "|1 ~2"]),
        # "|s (Set Current Process)", "||s (Set Current System)"
        *((f"{sel}s", parse_events) for sel in ["|1", "|~[1a4]", "||0", "||1", "~2 |1"]),
        # the command behind the prefixes chooses, as it would alone
        ("~ 3 lm", parse_modules), ("|~[1a4] lm", parse_modules), ("~*e !process 0 0", parse_processes),
        ("~*e!process 0 0", parse_processes), ("~2e r; k", parse_registers), ("~0s; k", parse_registers),
        ("|1 ~2 r rip", parse_registers), ("~[@$t0] dq @rsp", parse_memory),
    ],
)
def test_what_a_selector_runs_chooses_the_family(command: str, parser: object) -> None:
    routed = route(command)
    assert getattr(routed, "func", routed) is parser, command


def _connect_06(c: Corpus) -> None:
    r = c.blocks("connect/06.txt")[0].record
    assert r.events[1].kind == "dump_open"
    assert r.events[2].name == "User Mini Dump File with Full Memory"
    assert (r.target.os, r.target.build, r.target.arch) == ("Windows Vista", 6000, "x86")
    assert r.target.process_uptime == "0 days 0:00:26.000"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "connect/06.txt": _connect_06,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)


# ``kind_of``: ``parse(...).kind`` without the record where the family parser can tell (kd_command's
# text-only result reads nothing else), exact on every block of the corpus and on mangled output.
REGISTER_LINES = [
    "rax=0000000000000000 rbx=fffff80062f25180 rcx=0000000000000001",
    " r8=0000000000000000  r9=0000000000000000 r10=0000000000000000",
    "iopl=0         nv up ei pl zr na po nc",
    "cs=0010  ss=0018  ds=002b  es=002b  fs=0053  gs=002b             efl=00000246",
    "nt!DbgBreakPointWithStatus:",
    "fffff800`62a05c20 cc              int     3",
    "00000000 ???????????????",
    "eax=00000000 ebx=7ffdf000",
    "ErrCode = 00000000",
    "Last set context:",
    "Bad register error in 'r foo'",
    "^ Syntax error in 'r $$'",
    "xmm0=0 0 0 0",
    " pc=00007ffea80e30f4  psr=60000000 -ZC- EL0",
    "",
]
REGISTER_COMMANDS = ["r", "r rip", "rM 0x04", "rX", "~0s", "~1s", ".trap ffff8a0f`1c2d3e4f", ".cxr 0x1234", ".ecxr"]


def test_kind_of_is_the_parsed_kind_on_every_corpus_block():
    corpus = Corpus()
    checked = 0
    for name in corpus.names():
        for block in corpus.blocks(name):
            parsed = parse(block.command, block.output).kind
            assert kind_of(block.command, block.output) == parsed, (name, block.command)
            checked += 1
        command = corpus.entries[name].get("command")
        if command:  # bare output: the index's command, over the whole sample, and as each register command
            text = corpus.text(name)
            for each in (command, *REGISTER_COMMANDS):
                assert kind_of(each, text) == parse(each, text).kind, (name, each)
    assert checked > 300


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(REGISTER_COMMANDS),
       st.lists(st.one_of(st.sampled_from(REGISTER_LINES), st.text(max_size=40)), max_size=12),
       st.sampled_from(["\n", "\r\n"]))
def test_kind_of_is_the_parsed_kind_on_mangled_register_output(command: str, lines: list[str], eol: str):
    text = eol.join(lines)
    assert kind_of(command, text) == parse(command, text).kind
