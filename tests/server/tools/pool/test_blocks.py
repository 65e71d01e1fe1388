"""``kdmcp.server.tools.pool.blocks`` without a debugger: tag encoding and matching, and kd's own
``!pool`` / ``!poolfind`` / ``!poolused`` answers read from the corpus."""

from __future__ import annotations

import pytest

from kdmcp.server.tools.pool.blocks import (
    kd_tag,
    read_pool,
    read_poolfind,
    read_poolused,
    tag_matches,
    tag_value,
)
from kdmcp.server.tools.pool.models import PoolFindResult, PoolResult, PoolUsageResult
from tests.parse.samples.corpus import Corpus

CORPUS = Corpus()

# --------------------------------------------------------------------------- tags


@pytest.mark.parametrize(
    ("tag", "value"),
    [("Irp", 0x20707249), ("Irp ", 0x20707249), ("Proc", 0x636F7250), ("amda", 0x61646D61), ("Mm", 0x20206D4D)],
)
def test_a_tag_value_is_its_blank_padded_bytes_little_endian(tag, value):
    # "!poolfind" docs example rows and the Windows 11 header "for tag 0x61646d61 (amda)" (families/pool/07)
    assert tag_value(tag) == value


@pytest.mark.parametrize(
    ("tag", "value_form", "sent", "filtered"),
    [
        ("Proc", True, "Proc", False),  # four characters: a TagString as it is
        ("Irp", True, "0x20707249", False),  # short: its TagValue (a blank cannot be sent)
        ("Mm*", True, "Mm*", False),  # "Unless an asterisk is used …": a pattern as it is
        ("Ir?", True, "Ir??", True),  # short with ?: padded with ?, then filtered to "Ir? "
        ("0x12", True, "0x32317830", False),  # a tag kd would read as a TagValue: sent as one
        ("0x1?", True, "?x1?", True),  # ... and with a ?, a pattern kd reads as a TagString, filtered
        ("Irp", False, "Irp?", True),  # !poolused takes no TagValue: padded with ?, filtered
        ("Proc", False, "Proc", False),
        ("0x12", False, "0x12", False),
    ],
)
def test_what_goes_on_kds_command_line_for_a_tag(tag, value_form, sent, filtered):
    assert kd_tag(tag, value_form=value_form) == (sent, filtered)


@pytest.mark.parametrize(
    ("tag", "pattern", "hit"),
    [
        ("Irp", "Irp", True),
        ("Irp ", "Irp", True),
        ("Irpx", "Irp", False),
        ("irp", "Irp", False),
        ("Irp", "Ir?", True),
        ("Irpx", "Ir?", False),
        ("Proc", "Pr*", True),
        ("Pr", "Pr*", True),
        ("Proc", "*c", True),
        ("Proc", "P?oc", True),
        ("Pr[c", "Pr[c", True),
        ("Prxc", "Pr[c", False),
    ],
)
def test_a_tag_matches_as_kd_matches_it(tag, pattern, hit):
    assert tag_matches(tag, pattern) is hit


# --------------------------------------------------------------------------- !pool / !poolfind / !poolused read


def test_pool_gives_the_block_holding_the_address_and_its_neighbours():
    # families/pool/11 (x86): "*85246428 size: 200 previous size: b8 (Allocated) *Hack", "Owning component"
    got = PoolResult.model_validate({**_served(), **read_pool(CORPUS.record("families/pool/11.txt"), "85246430")})
    assert got.in_pool and got.address == "0x85246430" and got.region == "Nonpaged pool"
    assert got.block is not None and (got.block.address, got.block.tag, got.block.size) == (
        "0x85246428",
        "Hack",
        "0x200",
    )
    assert got.block.state == "Allocated" and got.block.description == "Unknown (update pooltag.txt)"
    assert got.offset == "0x8"
    assert got.previous is not None and (got.previous.tag, got.previous.state) == ("NbtD", "Allocated")
    assert got.next is not None and (got.next.address, got.next.tag) == ("0x85246628", "ReTa")
    assert (got.page_blocks, got.page_free) == (25, 5)
    assert PoolResult.text_lines(got.model_dump(exclude_defaults=True)) == [
        "page: 25 blocks, 5 free; previous NbtD Allocated, next ReTa Allocated"
    ]


def test_pool_of_a_free_block_and_of_a_page_edge():
    # families/pool/08: the block holding the address is Free, the only one in the walk
    free = read_pool(CORPUS.record("families/pool/08.txt"), "ffffbd06d46e0000")
    assert free["block"].state == "Free" and free["previous"] is None and free["next"] is None
    assert free["block"].tag == ">.g." and free["page_free"] == 1
    # families/pool/03: the first block of the page holds it; the next one is Free
    first = read_pool(CORPUS.record("families/pool/03.txt"), "ffffe2809abee000")
    assert first["block"].binary == "nt!mm" and first["offset"] == "0x0" and first["next"].state == "Free"


@pytest.mark.parametrize("name", ["families/pool/04.txt", "families/pool/05.txt"])
def test_an_address_in_no_pool_is_an_answer_with_kds_checks(name):
    got = PoolResult.model_validate({**_served(), **read_pool(CORPUS.record(name), "x")})
    assert not got.in_pool and got.block is None and got.region == "Unknown"
    assert got.warnings[-1].endswith("could not be read. It may be a freed, invalid or paged out page")
    assert PoolResult.text_lines(got.model_dump(exclude_defaults=True)) == [f"not in pool: {got.address}"]


def test_poolfind_rows_and_the_filter_for_a_wider_pattern():
    record = CORPUS.record("families/pool/07.txt")
    rows = read_poolfind(record, "amda", filtered=False)
    assert len(rows) == len(record.pool_blocks) > 20 and rows[0].size == "0x18f0"
    assert {r.pool_type for r in rows} == {"Nonpaged pool"} and {r.tag for r in rows} == {"amda"}
    assert read_poolfind(record, "amd", filtered=True) == []  # "amd " is not "amda"
    data = {**_served(), "tag": "amda", "pool": "nonpaged", "found": len(rows), "blocks": rows[:2], "output": ""}
    lines = PoolFindResult.text_lines(PoolFindResult.model_validate(data).model_dump(exclude_defaults=True))
    assert lines[0] == f"found {len(rows)} blocks with tag 'amda' in nonpaged pool (first 2 listed)"
    assert lines[1] == "0xffffda0ff9791000 amda    0x18f0 Nonpaged pool" and len(lines) == 3


def test_poolused_rows_total_and_the_top_rows_when_the_table_is_hidden():
    record = CORPUS.record("families/pool/06.txt")
    rows, total = read_poolused(record, None, filtered=False)
    assert [r.tag for r in rows][:3] == ["amda", "IoWI", "EtwB"] and rows[0].nonpaged_bytes == 1938325232
    assert total is None  # the author kept the top rows only: no TOTAL line
    assert read_poolused(record, "DAL", filtered=True)[0] == []  # "DAL " matches neither DAL2 nor DAL3
    data = {**_served(), "sort": "nonpaged", "tags": len(rows), "rows": rows[:2], "output": ""}
    lines = PoolUsageResult.text_lines(PoolUsageResult.model_validate(data).model_dump(exclude_defaults=True))
    assert lines[0] == "top 2 of 8 tags by nonpaged bytes (all: read_output output_id=s1:0-10)"
    assert lines[2].startswith(" amda   5768754   1938325232         32         9360  UNKNOWN pooltag 'amda'")
    old, _ = read_poolused(CORPUS.output_record("families/pool/02.txt"), "Ggb", filtered=True)
    assert [(r.tag, r.paged_bytes) for r in old] == [("Ggb", 828384)]


def _served() -> dict[str, object]:
    """The fields every served result has (typed.serve fills them from the session)."""
    return {
        "session_id": "s1",
        "state": "broken",
        "elapsed_ms": 1.0,
        "command": "c",
        "output": "o",
        "output_id": "s1:0-10",
        "output_bytes": 10,
    }
