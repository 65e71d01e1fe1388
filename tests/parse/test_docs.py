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
