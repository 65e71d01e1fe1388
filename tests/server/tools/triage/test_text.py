"""The summary in words: the tool's text block and the CLI's notes, right for 0, 1 and many (fast tier)."""

from __future__ import annotations

from kdmcp.server.tools.triage.text import summary_notes, summary_text
from kdmcp.triage import buckets
from tests.triage.helpers import record, small_run


def test_the_text_lists_buckets_largest_first_then_the_failures_and_the_file() -> None:
    text = summary_text(buckets.summarise(small_run(), "/out/run.jsonl"))
    assert text.splitlines() == [
        "[7 dumps: 6 in 2 buckets]",
        "5 A (2 stacks): a0.dmp, a1.dmp, a2.dmp +2",
        "1 B: b.dmp", "  0xc0000005 Access violation; app!Parse+0x12",
        "failed: 1 truncated",
        "records: /out/run.jsonl",
    ]
    assert summary_text(buckets.summarise([], "/r.jsonl"), "tr1:0-0").endswith("records: /r.jsonl (read_output "
                                                                                "output_id=tr1:0-0)")


def test_one_and_none_read_right() -> None:
    one = buckets.summarise([record("a.dmp", "1" * 64)], "/r.jsonl", done_before=1, same_content=1)
    one.not_done = 1
    assert summary_text(one).splitlines()[0] == "[1 dump: 1 in 1 bucket, 1 done before]"
    assert summary_notes(one)[:2] == ["1 dump not done (cancelled): the same records file resumes",
                                      "1 file repeats another's content (one record a content)"]
    assert summary_text(buckets.summarise([], "/r.jsonl")) == "[0 dumps: 0 in 0 buckets]\nrecords: /r.jsonl"
    many = buckets.summarise([record(f"{n}.dmp", f"{n:064x}", f"K{n}" + "x" * 90) for n in range(60)], "/r.jsonl")
    assert many.more_buckets > 1 and f"+{many.more_buckets} smaller buckets (" in summary_text(many)
    assert many.more_dumps > 1
