"""kdmcp/command/known.py: the allowlist table itself -- every entry cites a real kd page, names compile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kdmcp.command.allowlist import table_counts
from kdmcp.command.grammar import DOCS, Entry
from kdmcp.command.known import EXTENSIONS, LETTERS, METAS, TABLE

_PAGES_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "commands" / "kd_doc_pages.txt"
PAGES = {line.strip() for line in _PAGES_FILE.read_text().splitlines() if line.strip() and not line.startswith("#")}


@pytest.mark.parametrize("entry", TABLE, ids=[e.names[0] for e in TABLE])
def test_every_entry_cites_a_kd_documentation_page(entry: Entry) -> None:
    assert entry.doc in PAGES, entry.doc
    assert entry.url == DOCS + entry.doc


def test_names_and_options_compile_and_do_not_repeat() -> None:
    for entry in LETTERS:
        for name in entry.names:
            re.compile(name)
    for entry in TABLE:
        for option in entry.option_forms():
            re.compile(option.rstrip("="))
    metas = [n.lower() for e in METAS for n in e.names]
    extensions = [n.lower() for e in EXTENSIONS for n in e.names]
    assert len(set(metas)) == len(metas)
    assert len(set(extensions)) == len(extensions)


def test_extension_options_are_listed_in_both_spellings() -> None:
    """EngExtCpp parses '/x' like '-x': the table lists (and accepts) both."""
    for entry in EXTENSIONS:
        forms = set(entry.option_forms())
        for option in entry.options:
            assert "/" + option[1:] in forms and "-" + option[1:] in forms


def test_docs_state_the_table_size() -> None:
    """docs/security.md's figures are the table's (one source of truth)."""
    counts = table_counts()
    text = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    figure = (
        f"{counts['entries']} entries ({counts['commands']} command names, {counts['extensions']} of them "
        f"extensions) and {counts['options']} option forms"
    )
    assert figure in text, figure
