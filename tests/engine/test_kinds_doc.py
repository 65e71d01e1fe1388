"""docs/targets.md's table of kinds is the engine's table (kdmcp/engine/kinds.py), row for row."""

from __future__ import annotations

import typing
from pathlib import Path

from kdmcp.engine.kinds import KINDS, SessionKind, kind_rows

DOC = Path(__file__).resolve().parents[2] / "docs" / "targets.md"


def test_every_kind_has_rules() -> None:
    assert list(KINDS) == list(typing.get_args(SessionKind))


def test_the_docs_table_is_the_kinds_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("| kind | the target |", 1)[1].split("\n\n", 1)[0]
    rows = [tuple(cell.strip() for cell in line.strip().strip("|").split(" | "))
            for line in table.splitlines()[2:] if line.startswith("|")]
    assert rows == kind_rows()
