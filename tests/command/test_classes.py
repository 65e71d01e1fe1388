"""kdmcp/command/classes.py: docs/security.md's class table is the classes and profiles the code has.

One source of truth: the table is checked against ``CommandClass`` and ``PROFILE_ALLOWS``.
"""

from __future__ import annotations

import re
from pathlib import Path

from kdmcp.command import PROFILE_ALLOWS, CommandClass

_DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"
_ROW = re.compile(
    r"^\| `(?P<cls>[a-z_]+)` \|.*\| (?P<ro>allow|deny) \| (?P<std>allow|deny) \| (?P<full>allow|deny) \|$"
)


def test_the_class_table_matches_the_profiles() -> None:
    rows = {m.group("cls"): m for line in _DOC.read_text().splitlines() if (m := _ROW.match(line))}
    assert set(rows) == {c.value for c in CommandClass}
    for value, row in rows.items():
        cls = CommandClass(value)
        for profile, column in (("read_only", "ro"), ("standard", "std"), ("full", "full")):
            assert (cls in PROFILE_ALLOWS[profile]) == (row.group(column) == "allow"), (value, profile)  # type: ignore[index]
