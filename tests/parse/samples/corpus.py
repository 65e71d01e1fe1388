"""The real-transcript corpus in ``fixtures/corpus/``, read once per test run.

The samples are byte-exact copies of published kd/cdb/WinDbg output, kept in the repository so
that a clean clone runs every test; a missing sample is an error, never a skip. Two sets:

- the mirror of the shared corpus (``fixtures/corpus/<category>/``, ``index.json``: each sample's
  source, command, debugger and architecture; ``README.md`` its provenance);
- the family samples (``fixtures/corpus/families/<family>/``, one ``index.json`` per family with
  source and licence), collected for the families the typed tools stand on. Their names carry the
  folder (``families/heap/01.txt``), so both sets share one namespace.

Test modules parametrize by sample *name* (``NAMES``, a ``CHECKS`` table's keys): collection
reads ``index.json`` once and parses nothing; a sample's transcript is parsed on first use and
kept for the run.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from kdmcp.parse import Block, parse, parse_transcript

REPO_ROOT = Path(__file__).resolve().parents[3]
CORPUS_DIR = REPO_ROOT / "fixtures" / "corpus"
# in the repository, so a missing index.json fails collection instead of skipping the samples
MIRROR_INDEX: list[dict[str, Any]] = json.loads((CORPUS_DIR / "index.json").read_text(encoding="utf-8"))
FAMILIES_DIR = CORPUS_DIR / "families"
FAMILIES: list[str] = sorted(p.parent.name for p in FAMILIES_DIR.glob("*/index.json"))


def _family_index(family: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((FAMILIES_DIR / family / "index.json").read_text(encoding="utf-8"))
    return [
        {**e, "file": f"families/{family}/{e['file']}", "category": f"families/{family}", "family": family}
        for e in entries
    ]


FAMILY_INDEX: list[dict[str, Any]] = [e for family in FAMILIES for e in _family_index(family)]
INDEX: list[dict[str, Any]] = MIRROR_INDEX + FAMILY_INDEX
NAMES: list[str] = sorted(e["file"] for e in INDEX)
ENTRIES: dict[str, dict[str, Any]] = {e["file"]: e for e in INDEX}


class Corpus:
    """Read-only access to the corpus samples and their parsed blocks (cached)."""

    def __init__(self, root: Path = CORPUS_DIR) -> None:
        self.root = root
        self.index = INDEX if root == CORPUS_DIR else json.loads((root / "index.json").read_text(encoding="utf-8"))
        self.entries = {e["file"]: e for e in self.index}

    def text(self, name: str) -> str:
        return _text(self.root, name)

    def names(self, category: str | None = None) -> list[str]:
        return sorted(e["file"] for e in self.index if category is None or e["category"] == category)

    def blocks(self, name: str) -> list[Block]:
        return _blocks(self.root, name)

    def block(self, name: str, command: str | None = None, nth: int = 0) -> Block:
        """The ``nth`` block whose command equals ``command`` (default: the first block)."""
        found = [b for b in self.blocks(name) if command is None or b.command == command]
        assert len(found) > nth, f"{name}: no block #{nth} for command {command!r}"
        return found[nth]

    def record(self, name: str, command: str | None = None, nth: int = 0) -> Any:
        """The parsed record of ``block(name, command, nth)``; typed ``Any`` for brevity in checks."""
        return self.block(name, command, nth).record

    def output_record(self, name: str) -> Any:
        """``parse(command, text)`` of a sample that is bare output (the author kept no prompt
        line): the command is the index's."""
        command = self.entries[name]["command"]
        assert command, f"{name}: the index names no command"
        return _parsed(self.root, name, command)


@cache
def _text(root: Path, name: str) -> str:
    return (root / name).read_bytes().decode("utf-8", errors="replace")


@cache
def _blocks(root: Path, name: str) -> list[Block]:
    return parse_transcript(_text(root, name))


@cache
def _parsed(root: Path, name: str, command: str) -> Any:
    return parse(command, _text(root, name))


def event_kinds(record: Any) -> list[str]:
    """The ``kind`` of each event of an ``EventsRecord``, in order."""
    return [e.kind for e in record.events]
