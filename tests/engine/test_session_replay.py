"""Published session logs, replayed through ``SessionMachine`` in any chunking (issue 29, item 5).

The logs (fixtures/sessions/, sources.json says where each was published) are consoles as people
and CI jobs recorded them: cdb launches, attaches and dumps, kd sessions with bugchecks, reboots and
module-load stops, .logopen logs. facts.json holds what a reader of each log sees in it: every prompt
and the command typed after it, what each stop was, how many module loads and exceptions there were
and which stopped the target, what is the target's own output (DbgPrint) and what is not, and where
the session ends, and how many events of each kind of item 1 it shows (``present``; ``missed``: those
the machine cannot know, and why). ``session_replay.replay`` feeds a log as kd-mcp would have seen
it; every fact must hold whole, split at every line, and under any chunking hypothesis draws. The
per-kind table in fixtures/sessions/README.md is rendered from the facts and the replays
(``python -m tests.engine.session_replay``) and checked here.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.session_replay import (
    KINDS,
    SESSIONS,
    Replay,
    Step,
    kind_table,
    load_facts,
    recognised,
    replay,
    steps_of,
)
from tests.tiers import examples

FACTS = load_facts()
NAMES = sorted(FACTS)
_LOGS = {name: (SESSIONS / name).read_bytes() for name in NAMES}
_STEPS = {name: steps_of(FACTS[name]) for name in NAMES}


def _check(name: str, r: Replay) -> None:
    facts: dict[str, Any] = FACTS[name]
    steps: list[Step] = _STEPS[name]
    # every prompt of the log is seen as the prompt it is, and the session is stopped at it
    assert r.prompts == [s.prompt for s in steps], name
    assert all(state == "broken" for state in r.states), (name, r.states)
    # every command completes exactly at the prompt after it, never earlier
    assert r.early == [], name
    finished = [i for i, s in enumerate(steps[:-1]) if s.kind == "immediate"]
    assert r.completed == finished, name
    # every run line's commands end at their marker, where the target's output starts
    assert r.run_lines == [index for index, _ in facts.get("run_lines", [])], name
    events = [e for e in r.events if e.kind != "dbgprint"]
    assert dict(Counter(e.kind for e in events)) == facts["counts"], name
    sequence = [e.kind for e in events if e.kind not in ("module_load", "module_unload", "exception")]
    assert sequence == facts["sequence"], name
    assert [e.kind for e in events if e.stopped] == facts["stopped"], name
    if "exceptions" in facts:
        got = [{"code": e.code, "first_chance": e.first_chance, "stopped": e.stopped}
               for e in events if e.kind == "exception"]
        assert got == facts["exceptions"], name
    for module, base, end in facts.get("modules", []):
        assert any((e.module, e.base, e.module_end) == (module, base, end) for e in events), (name, module)
    if "module_unloads" in facts:
        got_unloads = [[e.module, e.base, e.stopped] for e in events if e.kind == "module_unload"]
        assert got_unloads == facts["module_unloads"], name
    # each kind of item 1: every event the log shows is recognised, but those it cannot be told from
    got = recognised(r, facts)
    for kind in KINDS:
        assert got[kind] == facts["present"].get(kind, 0) - (kind in facts.get("missed", {})), (name, kind)
    if "bugchecks" in facts:
        assert [e.code for e in events if e.kind == "bugcheck"] == facts["bugchecks"], name
    notes = [e.note for e in events if e.kind == "connected" and e.note]
    assert len(notes) == facts.get("rearm_notes", 0) and all("re-arm" in n for n in notes), name
    dbgprint = r.dbgprint()
    for text in facts.get("dbgprint_has", []):
        assert text in dbgprint, (name, text)
    for text in facts.get("dbgprint_lacks", []):
        assert text not in dbgprint, (name, text)
    assert r.final_state == facts["final_state"], name


@pytest.mark.parametrize("name", NAMES)
def test_each_log_whole(name):
    _check(name, replay(_LOGS[name], _STEPS[name], lambda d: [d]))


@pytest.mark.parametrize("name", NAMES)
def test_each_log_line_by_line(name):
    _check(name, replay(_LOGS[name], _STEPS[name], lambda d: d.splitlines(keepends=True)))


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_every_fact_holds_under_any_chunking(data, name):
    def split(chunk: bytes) -> list[bytes]:
        if len(chunk) < 2:
            return [chunk]
        cuts = sorted(data.draw(st.sets(st.integers(1, len(chunk) - 1), max_size=min(40, len(chunk) - 1))))
        return [chunk[a:b] for a, b in itertools.pairwise([0, *cuts, len(chunk)]) if b > a]

    _check(name, replay(_LOGS[name], _STEPS[name], split))


def test_the_logs_are_real_and_attributed():
    import json

    sources = json.loads((SESSIONS / "sources.json").read_text(encoding="utf-8"))
    assert sorted(s["file"] for s in sources) == NAMES and len(NAMES) >= 20
    for source in sources:
        assert source["repository"].startswith("github.com/") and len(source["commit"]) == 40, source
        assert source["path"] and source["licence"], source


# No published session the searches found shows this kind (fixtures/sessions/README.md says what
# was searched); the machine's reading of it is tested on documented forms in test_machine_events.py.
NOT_FOUND = {"thread_exit"}


def test_every_event_kind_of_issue_29_appears_in_some_log():
    replays = {name: replay(_LOGS[name], _STEPS[name], lambda d: [d]) for name in NAMES}
    present = {kind: sum(FACTS[name]["present"].get(kind, 0) for name in NAMES) for kind in KINDS}
    got = {kind: sum(recognised(replays[name], FACTS[name])[kind] for name in NAMES) for kind in KINDS}
    assert {kind for kind, n in present.items() if n == 0} == NOT_FOUND
    assert all(got[kind] > 0 for kind in KINDS if kind not in NOT_FOUND), got
    seen: Counter[str] = Counter(e.kind for r in replays.values() for e in r.events)
    for kind in ("dbgprint", "break_in", "breakpoint", "step", "connected", "exited"):
        assert seen[kind], kind


def test_the_readme_table_is_the_facts():
    replays = {name: replay(_LOGS[name], _STEPS[name], lambda d: [d]) for name in NAMES}
    readme = (SESSIONS / "README.md").read_text(encoding="utf-8")
    assert kind_table(FACTS, replays) in readme
