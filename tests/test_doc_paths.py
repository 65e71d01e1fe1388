"""Every file of the project that README.md and docs/ name by path is there: a doc that names a
module moved or gone sends its reader nowhere (issue 27: the docs describe the code as it is)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATH = re.compile(r"\b(?:kdmcp|tests|scripts|config|fixtures)/[A-Za-z0-9_/.-]+\.(?:py|txt|yaml|json|md|mjs)\b")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_a_doc_names_exists(doc: Path):
    named = sorted(set(PATH.findall(doc.read_text(encoding="utf-8"))))
    assert [p for p in named if not (ROOT / p).exists()] == []
