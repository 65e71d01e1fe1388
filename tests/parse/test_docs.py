"""Every ``python`` snippet in ``docs/parsing.md`` runs, so the docs cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "parsing.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL) if DOC.is_file() else []


@pytest.mark.parametrize("snippet", SNIPPETS or [""], ids=lambda s: s.split("\n", 1)[0][:40])
def test_doc_snippet_runs(snippet: str) -> None:
    assert SNIPPETS, f"no python snippet found in {DOC}"
    exec(compile(snippet, str(DOC), "exec"), {})


def test_the_family_table_counts_each_folder_and_every_family_has_its_section() -> None:
    """docs/parsing.md lists every family folder with its sample count, and says under its own
    heading what its record holds and what does not parse."""
    from tests.parse.samples.corpus import FAMILIES, FAMILY_INDEX

    text = DOC.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)/` \| [^|]+ \| (\d+) \|", text, re.MULTILINE))
    counts = {f: str(sum(1 for e in FAMILY_INDEX if e["family"] == f)) for f in FAMILIES}
    assert rows == counts
    for family in FAMILIES:
        section = text.split(f"### `{family}/`\n", 1)
        assert len(section) == 2, family
        assert "Does not parse:" in section[1].split("\n### ", 1)[0], family
