"""Finding the dumps: files, directories (*.dmp), patterns, a limit, dump_roots (fast tier: files only)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kdmcp.errors import InvalidArgument, PolicyDenied
from kdmcp.triage import finding
from kdmcp.triage.finding import find_dumps


def _tree(root: Path) -> None:
    for name in ("a.dmp", "b.DMP", "notes.txt", "sub/c.dmp", "sub/deeper/d.dmp", "sub/e.mdmp"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"MDMP")


def test_a_directory_gives_its_dmp_files_sorted_named_relative_to_it(tmp_path: Path) -> None:
    _tree(tmp_path / "d")
    found = find_dumps([str(tmp_path / "d")])
    assert [f.name for f in found] == ["a.dmp", "b.DMP", os.path.join("sub", "c.dmp"),
                                       os.path.join("sub", "deeper", "d.dmp")]
    assert all(os.path.isabs(f.path) for f in found)


def test_glob_limit_patterns_and_files_as_given(tmp_path: Path) -> None:
    _tree(tmp_path / "d")
    assert [f.name for f in find_dumps([str(tmp_path / "d")], glob="*.mdmp")] == [os.path.join("sub", "e.mdmp")]
    assert len(find_dumps([str(tmp_path / "d")], limit=2)) == 2
    pattern = find_dumps([str(tmp_path / "d" / "**" / "*.mdmp")])
    assert [f.name for f in pattern] == [os.path.join("sub", "e.mdmp")]
    assert [f.name for f in find_dumps([str(tmp_path / "d" / "notes.txt")])] == ["notes.txt"]


def test_each_file_once(tmp_path: Path) -> None:
    _tree(tmp_path / "d")
    twice = find_dumps([str(tmp_path / "d" / "a.dmp"), str(tmp_path / "d")])
    assert len(twice) == 4 and twice[0].name == "a.dmp"


def test_a_missing_path_is_an_argument_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument) as missing:
        find_dumps([str(tmp_path / "nowhere")])
    assert missing.value.file_problem and "no such file or directory" in missing.value.message


def test_dump_roots_refuse_paths_outside_and_skip_links_out(tmp_path: Path) -> None:
    _tree(tmp_path / "root")
    _tree(tmp_path / "outside")
    (tmp_path / "root" / "link.dmp").symlink_to(tmp_path / "outside" / "a.dmp")
    roots = [str(tmp_path / "root")]
    found = find_dumps([str(tmp_path / "root")], roots=roots)
    assert "link.dmp" not in [f.name for f in found] and len(found) == 4
    for refused in (str(tmp_path / "outside"), str(tmp_path / "outside" / "a.dmp"), str(tmp_path / "outside" / "*.dmp"),
                    str(tmp_path / "nowhere")):
        with pytest.raises(PolicyDenied):
            find_dumps([refused], roots=roots)


def test_a_walk_past_max_visited_entries_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path / "d")
    monkeypatch.setattr(finding, "MAX_VISITED", 5)
    with pytest.raises(InvalidArgument) as wide:
        find_dumps([str(tmp_path / "d")])
    assert "more than 5 files under" in wide.value.message
    with pytest.raises(InvalidArgument) as pattern:  # glob itself has no bound: /**/*.dmp would walk the disk
        find_dumps([str(tmp_path / "d" / "**" / "*.dmp")])
    assert "more than 5 files under" in pattern.value.message
    assert len(find_dumps([str(tmp_path / "d" / "*.dmp")])) <= 5  # no ** : one level, as glob walks it
