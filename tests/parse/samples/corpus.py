"""The real-transcript corpus in ``fixtures/corpus/``, read once per test run.

The samples are byte-exact copies of published kd/cdb/WinDbg output, kept in the repository
(``fixtures/corpus/README.md`` gives their provenance, ``index.json`` each sample's source,
command, debugger and architecture) so that a clean clone runs every test. A missing sample
is an error, never a skip.

Test modules parametrize by sample *name* (``NAMES``, a ``CHECKS`` table's keys): collection
reads ``index.json`` once and parses nothing; a sample's transcript is parsed on first use and
kept for the run.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from kdmcp.parse import Block, parse_transcript

REPO_ROOT = Path(__file__).resolve().parents[3]
CORPUS_DIR = REPO_ROOT / "fixtures" / "corpus"
# in the repository, so a missing index.json fails collection instead of skipping the samples
INDEX: list[dict[str, Any]] = json.loads((CORPUS_DIR / "index.json").read_text(encoding="utf-8"))
NAMES: list[str] = sorted(e["file"] for e in INDEX)
ENTRIES: dict[str, dict[str, Any]] = {e["file"]: e for e in INDEX}


class Corpus:
    """Read-only access to the corpus samples and their parsed blocks (cached)."""

    def __init__(self, root: Path = CORPUS_DIR) -> None:
        self.root = root
        self.index = INDEX if root == CORPUS_DIR else json.loads((root / "index.json").read_text(encoding="utf-8"))

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


@cache
def _text(root: Path, name: str) -> str:
    return (root / name).read_bytes().decode("utf-8", errors="replace")


@cache
def _blocks(root: Path, name: str) -> list[Block]:
    return parse_transcript(_text(root, name))


def event_kinds(record: Any) -> list[str]:
    """The ``kind`` of each event of an ``EventsRecord``, in order."""
    return [e.kind for e in record.events]
