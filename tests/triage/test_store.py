"""The JSONL store: append and flush per record, dedupe by hash, resume, a torn last line from a kill."""

from __future__ import annotations

from pathlib import Path

import pytest

from kdmcp.errors import InvalidArgument
from kdmcp.triage.store import ResultStore
from tests.triage.helpers import record


def test_records_are_appended_one_line_each_and_read_back(tmp_path: Path) -> None:
    store = ResultStore(str(tmp_path / "out" / "run.jsonl"))
    assert store.add(record("a.dmp", "1" * 64)) and store.add(record("b.dmp", "2" * 64))
    lines = (tmp_path / "out" / "run.jsonl").read_text().splitlines()
    assert len(lines) == 2 and '"name":"a.dmp"' in lines[0]
    assert [r.name for r in store.records()] == ["a.dmp", "b.dmp"]
    assert store.done() == {"1" * 64, "2" * 64} and len(store) == 2


def test_a_hash_already_there_is_not_written_again(tmp_path: Path) -> None:
    store = ResultStore(str(tmp_path / "run.jsonl"))
    assert store.add(record("a.dmp", "1" * 64))
    assert not store.add(record("copy-of-a.dmp", "1" * 64))
    assert [r.name for r in store.records()] == ["a.dmp"]


def test_a_new_store_on_the_same_file_resumes(tmp_path: Path) -> None:
    path = str(tmp_path / "run.jsonl")
    ResultStore(path).add(record("a.dmp", "1" * 64))
    again = ResultStore(path)
    assert again.done() == {"1" * 64}
    assert not again.add(record("a.dmp", "1" * 64))
    assert again.add(record("b.dmp", "2" * 64))
    assert len(list(ResultStore(path).records())) == 2


def test_a_torn_last_line_is_dropped_and_cut_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    ResultStore(str(path)).add(record("a.dmp", "1" * 64))
    whole = record("b.dmp", "2" * 64).model_dump_json()
    with open(path, "a") as f:
        f.write(whole[: len(whole) // 2])  # the kill came mid-write
    store = ResultStore(str(path))
    assert store.done() == {"1" * 64} and store.dropped == 1
    assert store.add(record("b.dmp", "2" * 64))
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(line.startswith("{") and line.endswith("}") for line in lines)
    assert [r.name for r in ResultStore(str(path)).records()] == ["a.dmp", "b.dmp"]


def test_a_bad_line_in_the_middle_is_skipped_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(record("a.dmp", "1" * 64).model_dump_json() + "\nnot json\n"
                    + record("b.dmp", "2" * 64).model_dump_json() + "\n")
    store = ResultStore(str(path))
    assert store.done() == {"1" * 64, "2" * 64} and store.dropped == 1
    assert len(path.read_text().splitlines()) == 3


def test_a_failure_a_rerun_retries_is_not_done_and_is_forgotten_alone(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    first = ResultStore(str(path))
    first.add(record("ok.dmp", "1" * 64))
    first.add(record("slow.dmp", "2" * 64, "failed:debugger_timeout", status="failed", category="debugger_timeout"))
    first.add(record("junk.dmp", "3" * 64, "failed:not_a_dump", status="failed", category="not_a_dump"))
    assert not first.add(record("slow-again.dmp", "2" * 64))  # in one run, still one record a hash
    again = ResultStore(str(path))
    assert again.done() == {"1" * 64, "3" * 64} and "2" * 64 in again and len(again) == 3
    assert again.forget(["2" * 64, "3" * 64, "4" * 64]) == 1  # only the retried failure goes
    assert [r.name for r in again.records()] == ["ok.dmp", "junk.dmp"] and "2" * 64 not in again
    assert again.add(record("slow.dmp", "2" * 64))
    assert [r.name for r in ResultStore(str(path)).records()] == ["ok.dmp", "junk.dmp", "slow.dmp"]
    assert [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]  # the rewrite left nothing beside it


def test_a_file_that_is_no_records_file_is_refused_untouched(tmp_path: Path) -> None:
    for name, content in (("notes.txt", b"my notes, no newline at the end"), ("crash.dmp", b"MDMP\x93\xa7\n\x00")):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(InvalidArgument, match="not a triage records file"):
            ResultStore(str(path))
        assert path.read_bytes() == content
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert ResultStore(str(tmp_path / "empty.jsonl")).done() == set()
