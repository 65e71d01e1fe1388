"""The one list of event kinds (``EventKind``) and docs/results.md's table of them agree."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from kdmcp.engine.events import EventKind

DOC = Path(__file__).resolve().parents[2] / "docs" / "results.md"


def test_the_event_kinds_table_lists_every_kind_once_in_order():
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### Event kinds") : text.index("### Why the text block")]
    documented = re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE)
    assert documented == list(get_args(EventKind))
