"""The corpus as data: ``index.json`` and ``fixtures/corpus`` agree file for file, the README names
each sample's source, and every sample is checked by exactly one parser test module."""

from __future__ import annotations

import importlib
from pathlib import Path

from tests.parse.samples.corpus import CORPUS_DIR, INDEX, NAMES

PARSE_TESTS = Path(__file__).resolve().parents[1]


def test_the_folder_holds_exactly_the_indexed_samples_with_their_attribution() -> None:
    """index.json and fixtures/corpus agree file for file, and the README names each sample's source."""
    on_disk = sorted(p.relative_to(CORPUS_DIR).as_posix() for p in CORPUS_DIR.rglob("*") if p.is_file())
    assert on_disk == sorted([*NAMES, "README.md", "index.json"])
    assert len(NAMES) == 139
    readme = (CORPUS_DIR / "README.md").read_text(encoding="utf-8")
    for entry in INDEX:
        assert entry["source"], entry["file"]
        assert f"| `{entry['file']}` | {entry['source']} |" in readme, entry["file"]


def test_every_sample_has_exactly_one_check() -> None:
    """Each corpus sample is checked in the test module of the parser its command routes to
    (``CHECKS``, keyed by sample): one place per sample, none forgotten."""
    owners: dict[str, list[str]] = {}
    for path in sorted(PARSE_TESTS.rglob("test_*.py")):
        name = ".".join(path.relative_to(PARSE_TESTS.parents[1]).with_suffix("").parts)
        checks = getattr(importlib.import_module(name), "CHECKS", {})
        for sample in checks:
            owners.setdefault(sample, []).append(name)
    assert sorted(owners) == NAMES
    assert {s: o for s, o in owners.items() if len(o) > 1} == {}
