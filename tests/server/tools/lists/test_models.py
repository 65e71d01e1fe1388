"""walk_list's and handles' text blocks (fast tier): one line per row, the marks a row carries,
and kd's output left to output_id -- never the rows' JSON again."""

from __future__ import annotations

from kdmcp.server.tools.lists.models import HandlesResult, WalkListResult


def test_a_walks_text_says_why_it_stopped_and_marks_each_entry() -> None:
    data = {
        "head": "0x1000", "link_offset": "0x448", "stopped": "complete", "round_trips": 4,
        "bad_head_blink": "0x9999",
        "entries": [
            {"index": 0, "entry": "0x2000", "fields": {"ImageFileName": "System"}},
            {"index": 1, "entry": "0x3000", "bad_blink": "0x7777"},
        ],
    }  # fmt: skip
    assert WalkListResult.text_lines(data) == [
        "2 entries from 0x1000 (link +0x448), stopped: complete, 4 kd commands",
        "head Blink 0x9999 is not the last node",
        "   0 0x2000 ImageFileName=System",
        "   1 0x3000 bad Blink 0x7777",
    ]
    cut = {"head": "0x1000", "link_offset": "0x0", "stopped": "limit", "next": "0x4000", "round_trips": 3,
           "entries": [{"index": 0, "entry": "0x4100", "unreadable": True}]}  # fmt: skip
    assert WalkListResult.text_lines(cut) == [
        "1 entry from 0x1000 (link +0x0), stopped: limit at 0x4000, 3 kd commands",
        "   0 0x4100 unreadable",
    ]


def test_a_handle_tables_text_is_a_line_a_row_with_the_total_and_where_kds_output_is() -> None:
    data = {
        "output_id": "s1:10-20", "total": 2651, "process": "0xffffe70f28a7d040", "image": "System",
        "handles": [
            {"handle": "0x0004", "type": "Event", "access": "0x001f0003", "object": "0xffffe70f38000240",
             "name": "ShellReadyEvent"},
            {"handle": "0x0028", "type": "Event", "access": "0x001f0003", "object": "0xffffe70f38001440",
             "flags": ["Inherit"], "process": "0xffffe70f28a7d040"},
        ],
    }  # fmt: skip
    assert HandlesResult.text_lines(data) == [
        "2 of 2651 handles of 0xffffe70f28a7d040 System; kd's output: read_output output_id=s1:10-20",
        "0x0004 Event 0x001f0003 0xffffe70f38000240 ShellReadyEvent",
        "0x0028 Event 0x001f0003 0xffffe70f38001440 (Inherit) in 0xffffe70f28a7d040",
    ]
