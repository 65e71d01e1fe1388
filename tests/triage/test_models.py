"""The records' one lists, held to docs/triage.md: every record field and failure category is described there."""

from __future__ import annotations

import re
from pathlib import Path

from kdmcp.triage.models import FAILURE_CATEGORIES, RETRIED_CATEGORIES, DumpRecord, TriageSpec

DOC = (Path(__file__).resolve().parents[2] / "docs" / "triage.md").read_text(encoding="utf-8")


def test_every_record_field_is_in_the_doc() -> None:
    assert [name for name in DumpRecord.model_fields if f"`{name}`" not in DOC] == []


def test_every_failure_category_is_in_the_doc_with_what_a_rerun_does() -> None:
    rows = dict(re.findall(r"^\| `([a-z_]+)` \|.*\| (retries it|keeps it) \|$", DOC, re.MULTILINE))
    assert rows == {c: "retries it" if c in RETRIED_CATEGORIES else "keeps it" for c in FAILURE_CATEGORIES}
    assert set(FAILURE_CATEGORIES) > RETRIED_CATEGORIES


def test_a_spec_is_frozen_and_bounded() -> None:
    spec = TriageSpec(debuggers={"kd": ["kd.exe"]})
    assert spec.timeout_s == 300.0 and spec.frames == 8 and spec.analyze
    assert hash(spec.model_dump_json())
