"""``kdmcp.parse.datamodel``: ``dx``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.parse.samples.corpus import Corpus


def _memory_13(c: Corpus) -> None:
    assert c.block("memory/13.txt", "dx @$curprocess.COM").prompt.machine == "x86"
    r = c.record("memory/13.txt", "dx @$curprocess.COM.GlobalObjects")
    assert r.kind == "data_model"
    assert r.expression == "@$curprocess.COM.GlobalObjects"
    assert len(r.children) == 10
    assert (r.children[0].name, r.children[0].value, r.children[0].type) == ("[0x100]", "0x12f4fb0", "IUnknown *")


def _memory_14(c: Corpus) -> None:
    r = c.record("memory/14.txt", "dx -r1 @$curprocess.TTD.Events")
    assert len(r.children) == 17
    assert r.children[8].value == "Exception 0xC0000005 of type Hardware at PC: 0X52005400200045"


def _exceptions_errors_12(c: Corpus) -> None:
    r = c.record("exceptions_errors/12.txt", "dx -r1 Debugger.Sessions[0].Processes[1428].Threads")
    assert len(r.children) == 5
    assert r.children[0].value == "<Unable to get stack trace>" and r.children[0].links == ["Switch To"]
    assert r.children[2].value == "nt!KiSwapContext+0x76 (fffff806`4466a186)"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "memory/13.txt": _memory_13,
    "memory/14.txt": _memory_14,
    "exceptions_errors/12.txt": _exceptions_errors_12,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
