"""Fast tier: what kd-mcp remembers of the breakpoints it set, beside bl."""

from __future__ import annotations

from kdmcp.server.tools.run.bp_book import BreakpointBook, BreakpointNote


def test_the_book_forgets_what_bl_no_longer_lists():
    book = BreakpointBook()
    book.note("s1", 0, BreakpointNote(kind="code", expression="nt!X", since_seq=3, one_shot=True))
    book.note("s1", 1, BreakpointNote(kind="deferred", expression="d!E", since_seq=3))
    book.keep_only("s1", {1})
    assert book.get("s1", 0) is None and book.get("s1", 1) is not None and book.get("s2", 1) is None
