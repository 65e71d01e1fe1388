"""The corpus as data: each index and its folder agree file for file, every sample names its
source (and, for the family samples, its licence), and every sample is checked by exactly one
parser test module."""

from __future__ import annotations

import importlib
from pathlib import Path

from tests.parse.samples.corpus import CORPUS_DIR, FAMILIES, FAMILIES_DIR, FAMILY_INDEX, MIRROR_INDEX, NAMES

PARSE_TESTS = Path(__file__).resolve().parents[1]

# The families the typed tools stand on (issue 17), each with at least five published samples.
REQUIRED_FAMILIES = (
    "breakpoints",
    "dx",
    "exceptions",
    "handles",
    "heap",
    "io_objects",
    "kernel_state",
    "modules",
    "pool",
    "pte",
    "threads",
    "types_symbols",
)
MIN_SAMPLES = 5


def test_the_mirror_holds_exactly_the_indexed_samples_with_their_attribution() -> None:
    """index.json and fixtures/corpus (outside families/) agree file for file, and the README names
    each sample's source."""
    on_disk = sorted(
        p.relative_to(CORPUS_DIR).as_posix()
        for p in CORPUS_DIR.rglob("*")
        if p.is_file() and FAMILIES_DIR not in p.parents
    )
    mirror = sorted(e["file"] for e in MIRROR_INDEX)
    assert on_disk == sorted([*mirror, "README.md", "index.json"])
    assert len(mirror) == 139
    readme = (CORPUS_DIR / "README.md").read_text(encoding="utf-8")
    for entry in MIRROR_INDEX:
        assert entry["source"], entry["file"]
        assert f"| `{entry['file']}` | {entry['source']} |" in readme, entry["file"]


def test_each_family_folder_holds_exactly_its_indexed_samples_with_source_and_licence() -> None:
    on_disk = sorted(
        p.relative_to(CORPUS_DIR).as_posix()
        for p in FAMILIES_DIR.rglob("*")
        if p.is_file() and p.name not in ("index.json", "README.md")
    )
    assert on_disk == sorted(e["file"] for e in FAMILY_INDEX)
    for entry in FAMILY_INDEX:
        for key in ("source", "licence", "command", "debugger", "arch", "mode"):
            assert isinstance(entry.get(key), str) and entry[key].strip(), (entry["file"], key)
        assert entry["debugger"] in ("kd", "cdb", "windbg", "ntsd"), entry["file"]
        assert entry["arch"] in ("x86", "x64", "arm64", "unknown"), entry["file"]
        assert entry["mode"] in ("kernel", "user"), entry["file"]


def test_every_required_family_has_enough_samples_and_the_readme_names_it() -> None:
    assert sorted(FAMILIES) == sorted(REQUIRED_FAMILIES)
    readme = (FAMILIES_DIR / "README.md").read_text(encoding="utf-8")
    for family in FAMILIES:
        count = sum(1 for e in FAMILY_INDEX if e["family"] == family)
        assert count >= MIN_SAMPLES, (family, count)
        assert f"`{family}/`" in readme, family


def test_no_family_sample_repeats_a_mirrored_one() -> None:
    """The family samples are new material: none is (a part of) a shared-corpus sample."""
    mirrored = [(CORPUS_DIR / e["file"]).read_bytes() for e in MIRROR_INDEX]
    for entry in FAMILY_INDEX:
        body = (CORPUS_DIR / entry["file"]).read_bytes().strip()
        assert not any(body in m for m in mirrored), entry["file"]


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
