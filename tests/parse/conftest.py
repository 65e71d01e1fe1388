"""Shared fixtures for the parser tests: the real-transcript corpus in ``fixtures/corpus/``.

The samples are byte-exact copies of published kd/cdb/WinDbg output, kept in the repository
(``fixtures/corpus/README.md`` gives their provenance) so that a clean clone runs every test.
A missing sample is an error, never a skip.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from kdmcp.parse import Block, parse_transcript

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS_DIR = REPO_ROOT / "fixtures" / "corpus"


class Corpus:
    """Read-only access to the corpus samples and their parsed blocks (cached)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.index: list[dict[str, Any]] = json.loads((root / "index.json").read_text(encoding="utf-8"))

    def text(self, name: str) -> str:
        return (self.root / name).read_bytes().decode("utf-8", errors="replace")

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
def _blocks(root: Path, name: str) -> list[Block]:
    text = (root / name).read_bytes().decode("utf-8", errors="replace")
    return parse_transcript(text)


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    return Corpus(CORPUS_DIR)  # a missing index.json raises: the tests fail, they do not skip


@pytest.fixture(scope="session")
def bench_parse() -> Any:
    """``scripts/bench_parse.py`` as a module: its synthesised large outputs and ``measure``."""
    script = REPO_ROOT / "scripts" / "bench_parse.py"
    spec = importlib.util.spec_from_file_location("bench_parse", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
