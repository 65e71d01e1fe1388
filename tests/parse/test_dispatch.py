"""``kdmcp.parse.dispatch``: the one door, ``parse(command, output)``, and ``route``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse, route
from tests.parse.samples.corpus import Corpus


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
        "events": ("parse_events", "_parse_unprompted"),
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


@pytest.mark.parametrize("command", [".echo hi", "as x y", ".load foo", "!unknownext", "~0f"])
def test_unrouted_commands_are_text(command: str) -> None:
    assert route(command) is None
    assert parse(command, "whatever").kind == "text"


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
