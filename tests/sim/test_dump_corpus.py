"""The triage corpus: N distinct dumps from the vendored ones, buckets that differ, a few bad files."""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from kdmcp.sim.debugger import SimDebugger
from kdmcp.sim.dump_corpus import BAD_KINDS, CLASSES, CorpusEntry, build_corpus, main
from kdmcp.sim.dump_files import dump_kind, open_error
from kdmcp.sim.minidump_target import MinidumpTarget
from kdmcp.sim.options import parse_args
from kdmcp.sim.scenario import builtin
from tests.sim.dump_debugger import DUMPS, run

BUCKET = re.compile(r"^FAILURE_BUCKET_ID:  (\S+)$", re.M)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _answers(path: Path, *commands: str) -> list[str]:
    """What the simulated ``cdb -z path`` prints for each command (its own command path, in this process)."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    sim = SimDebugger(parse_args(["cdb", "-z", str(path)]), builtin("default_cdb"), in_r, out_w)
    try:
        sim.dump = MinidumpTarget(str(path))
        sim.thread = sim.dump.event_index
        return [run(sim, c) for c in commands]
    finally:
        for fd in (in_r, in_w, out_r, out_w, sim._wake_r, sim._wake_w):
            os.close(fd)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[CorpusEntry]]:
    root = tmp_path_factory.mktemp("corpus")
    return root, build_corpus(root, 120, seed=7)


def test_every_file_has_its_own_hash(corpus: tuple[Path, list[CorpusEntry]]) -> None:
    root, entries = corpus
    assert sorted(p.name for p in root.iterdir()) == [e.name for e in entries]
    assert len({_sha(root / e.name) for e in entries}) == len(entries) == 120


def test_the_mix(corpus: tuple[Path, list[CorpusEntry]]) -> None:
    _root, entries = corpus
    kinds = Counter(e.kind for e in entries)
    assert kinds["bad"] == max(len(BAD_KINDS), 120 // 25)
    assert kinds["kernel"] > 0 and kinds["user"] > kinds["kernel"]
    assert {e.bad for e in entries if e.kind == "bad"} == set(BAD_KINDS)
    assert sum(e.bad == "empty" for e in entries) == 1  # two empty files would share a hash
    assert {e.source for e in entries if e.kind == "user"} == {
        p.name for p in DUMPS.glob("*.dmp") if p.name != "kernel-header-only.dmp"
    }


def test_same_seed_same_bytes_other_seed_other_corpus(tmp_path: Path) -> None:
    a, b, c = (build_corpus(tmp_path / d, 30, seed=s) for d, s in (("a", 1), ("b", 1), ("c", 2)))
    assert a == b
    assert all(_sha(tmp_path / "a" / e.name) == _sha(tmp_path / "b" / e.name) for e in a)
    assert [_sha(tmp_path / "a" / e.name) for e in a] != [_sha(tmp_path / "c" / e.name) for e in c]


def test_buckets_differ_as_the_simulated_cdb_reports_them(corpus: tuple[Path, list[CorpusEntry]]) -> None:
    """Each varied copy's ``.exr -1`` names the class and module it was given, and ``!analyze -v``
    puts the copies into many buckets, none the original's alone."""
    root, entries = corpus
    buckets: Counter[str] = Counter()
    codes = {c.label: c.code for c in CLASSES}
    for e in entries:
        if e.kind != "user":
            continue
        exr, analysis = _answers(root / e.name, ".exr -1", "!analyze -v")
        found = BUCKET.search(analysis)
        assert found is not None, analysis
        buckets[found.group(1)] += 1
        if e.exception is None:  # the dump taken without a crash
            assert exr == "Last event was not an exception\n"
            continue
        assert f"ExceptionCode: {codes[e.exception]:08x}" in exr
        module = (e.module or "").rsplit(".", 1)[0].replace("-", "_")
        assert f"({module}+0x" in exr, (e, exr)
    assert len(buckets) >= 20
    original = BUCKET.search(_answers(DUMPS / "null_read_av.dmp", "!analyze -v")[0])
    assert original is not None and buckets[original.group(1)] < sum(buckets.values()) // 4


def test_a_varied_copy_keeps_its_stack(corpus: tuple[Path, list[CorpusEntry]]) -> None:
    """Only the exception record and the time change: the stack k walks is the original's."""
    root, entries = corpus
    copy = next(e for e in entries if e.source == "null_read_av.dmp" and e.exception is not None)
    assert _answers(root / copy.name, "k") == _answers(DUMPS / "null_read_av.dmp", "k")


def test_bad_files_fail_as_the_debugger_fails_them(corpus: tuple[Path, list[CorpusEntry]]) -> None:
    root, entries = corpus
    for e in entries:
        path = str(root / e.name)
        if e.bad == "truncated":
            assert dump_kind(path) == "user"
            with pytest.raises(Exception):  # noqa: B017 -- the simulator takes any reader failure as "invalid data"
                MinidumpTarget(path)
        elif e.bad in ("not_a_dump", "empty"):
            assert dump_kind(path) is None
            assert "Could not match Dump File signature" in (open_error(path) or "")
        elif e.kind == "kernel":
            assert dump_kind(path) == "kernel"


def test_bad_count_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bad must be"):
        build_corpus(tmp_path, 3, bad=4)
    assert all(e.kind != "bad" for e in build_corpus(tmp_path / "small", 9))  # bad files from 10 on


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "c"), "40", "--seed", "3", "--bad", "4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"40 files in {tmp_path / 'c'}: ") and "4 bad" in out
    assert len(list((tmp_path / "c").iterdir())) == 40
