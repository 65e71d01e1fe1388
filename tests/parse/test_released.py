"""The released evaluation sets score >= 99 % with their own rules, and nothing crashes (issue 29).

The scorer (``tests/parse/released_scorer.py``) implements ``set1/README.md``'s label conventions
and ``set2/CHECKS.md`` without kdmcp; ``scripts/score_released.py`` hands it kdmcp's two doors
and prints the figures this test asserts. The checks we think wrong are listed in
``fixtures/released/DISAGREEMENTS.md``; they count as misses here.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from tests.parse.released_scorer import REPO_ROOT_SCRIPTS, SetScore, check, hex_eq, sym_eq


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_released", REPO_ROOT_SCRIPTS / "score_released.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scores() -> list[SetScore]:
    return list(_script().scores())


@pytest.mark.parametrize("name", ["set1", "set2"])
def test_set_scores_at_least_99_percent_without_a_crash(scores: list[SetScore], name: str) -> None:
    score = next(s for s in scores if s.name == name)
    print(score.line())
    assert score.crashes == []
    misses = [f"{m.file} {m.key}" for m in score.misses]
    assert score.percent >= 99.0, misses


def test_every_sample_is_scored(scores: list[SetScore]) -> None:
    assert [(s.name, s.samples) for s in scores] == [("set1", 69), ("set2", 58)]
    assert sum(s.points for s in scores) == 233 + 292


# The scorer's rules themselves, on values CHECKS.md names (a rule that passed everything would
# leave the figures above meaningless).


def test_hex_rule_drops_backticks_prefix_and_zeros() -> None:
    assert hex_eq("00007ff6`7762b890", "0x7ff67762b890")
    assert hex_eq("FFFFCFE7F3F9FE28", "0xffffcfe7f3f9fe28")
    assert not hex_eq("10", "0x11") and not hex_eq("0n10", "0xa")


def test_sym_rule_canonicalises_offsets() -> None:
    assert sym_eq("ntdll!RtlDebugAllocateHeap+0x3f", "ntdll!RtlDebugAllocateHeap+0x000000000000003f")
    assert not sym_eq("nt!Foo+0x3f", "nt!Foo+0x40")


def test_checks_fail_on_a_wrong_record() -> None:
    record = {"kind": "breakpoints", "breakpoints": [{"id": 0, "enabled": True, "address": "0x10"}]}
    assert check("breakpoints_count", 1, record)
    assert check("breakpoint_0", {"id": 0, "enabled": True, "address": "00000010"}, record)
    assert not check("breakpoint_0", {"enabled": False}, record)
    assert not check("breakpoint_1", {"id": 1}, record)
    entry = {"kind": "object", "entries": [{"handle": "0x01f0", "type": "Event"}]}
    assert check("handle_0", {"handle": "01f0", "type": "event"}, entry)
    assert not check("handle_0", {"handle": "01f1"}, entry)
    with pytest.raises(KeyError):
        check("no_such_key", 1, record)
