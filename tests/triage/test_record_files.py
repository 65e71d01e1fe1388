"""The record files a server handed out: ids per owner, unknown to another client."""

from __future__ import annotations

import pytest

from kdmcp.errors import UnknownSession
from kdmcp.triage.record_files import RecordFiles


def test_ids_are_per_file_and_owner_and_other_owners_do_not_see_them() -> None:
    files = RecordFiles()
    first = files.add("/r/a.jsonl", None)
    assert first == "tr1" and files.add("/r/a.jsonl", None) == first
    theirs = files.add("/r/a.jsonl", "alice")
    assert theirs == "tr2" and files.path(theirs, "alice") == "/r/a.jsonl"
    assert files.path("s1", None) is None  # a session's id: not a record file
    with pytest.raises(UnknownSession):
        files.path(theirs, "bob")
