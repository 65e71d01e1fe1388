"""``kdmcp.server.tools.pool.logic`` without a debugger: tag encoding and matching, the ``!pte`` flag
letters decoded (the "!pte" docs' table, checked against the bits of each entry kd printed), and
kd's own ``!pool`` / ``!poolfind`` / ``!poolused`` / ``!pte`` answers read from the corpus."""

from __future__ import annotations

import pytest

from kdmcp import parse
from kdmcp.server.tools.pool.logic import (
    decode_pte_flags,
    kd_tag,
    read_pool,
    read_poolfind,
    read_poolused,
    read_pte,
    tag_matches,
    tag_value,
)
from kdmcp.server.tools.pool.models import PoolFindResult, PoolResult, PoolUsageResult, PteResult
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


# --------------------------------------------------------------------------- PTE flags


@pytest.mark.parametrize(
    ("flags", "names"),
    [
        ("---DA--KWEV", ["dirty", "accessed", "kernel", "writable", "executable", "valid"]),
        ("-G-DA--KW-V", ["global", "dirty", "accessed", "kernel", "writable", "no_execute", "valid"]),
        ("-GLDA--KWEV", ["global", "large_page", "dirty", "accessed", "kernel", "writable", "executable", "valid"]),
        ("---DA--UWEV", ["dirty", "accessed", "user", "writable", "executable", "valid"]),
        ("C-----TUR-V", ["copy_on_write", "write_through", "user", "read_only", "no_execute", "valid"]),
        ("-----N-KR-V", ["cache_disabled", "kernel", "read_only", "no_execute", "valid"]),
        ("---DA--UWV", ["dirty", "accessed", "user", "writable", "valid"]),  # no E column (families/pte/01)
        ("G-DA--KWV", ["global", "dirty", "accessed", "kernel", "writable", "valid"]),  # the docs' x86 example
        ("G--A--KRV", ["global", "accessed", "kernel", "read_only", "valid"]),
        ("-R--ADK--V", None),  # ARM64 (families/pte/10): not the docs' table
        ("-WX-ADK-LV", None),
        ("--", None),
    ],
)
def test_pte_flag_letters_decode_by_the_docs_table(flags, names):
    assert decode_pte_flags(flags) == names


# bit -> the name kd's letter stands for ("!pte" docs: 0x1 V, 0x2 W, 0x4 U, 0x20 A, 0x40 D, 0x100 G;
# bit 63 is the no-execute bit of x64 and PAE entries, which E shows clear)
_BITS = {0x1: "valid", 0x2: "writable", 0x4: "user", 0x20: "accessed", 0x40: "dirty", 0x100: "global"}
_X64 = [
    "families/pte/02.txt",
    "families/pte/03.txt",
    "families/pte/04.txt",
    "families/pte/05.txt",
    "families/pte/06.txt",
    "families/pte/09.txt",
]


@pytest.mark.parametrize("name", _X64)
def test_decoded_flags_agree_with_the_bits_of_each_entry(name):
    record = CORPUS.record(name)
    checked = 0
    for lv in record.pte_levels:
        if not lv.valid:
            continue
        names, value = decode_pte_flags(lv.flags), int(lv.contains, 16)
        assert names is not None
        for bit, flag in _BITS.items():
            assert (flag in names) == bool(value & bit), (name, lv.level, flag)
        assert ("kernel" in names) == (not value & 0x4) and ("read_only" in names) == (not value & 0x2)
        assert ("no_execute" in names) == bool(value >> 63)
        checked += 1
    assert checked >= 3


# --------------------------------------------------------------------------- !pte read


def test_a_valid_pte_gives_the_physical_address():
    # families/pte/03: PTE 80000001660FF963 -> pfn 1660ff; the address is page-aligned
    got = PteResult.model_validate({**_served(), **read_pte(CORPUS.record("families/pte/03.txt"), "x")})
    assert got.mapped and got.physical_address == "0x1660ff000" and got.page_size == "4K"
    assert [lv.level for lv in got.levels] == ["PXE", "PPE", "PDE", "PTE"]
    assert "global" in got.levels[3].flag_names and "no_execute" in got.levels[3].flag_names
    assert PteResult.text_lines(got.model_dump(exclude_defaults=True)) == [
        "physical 0x1660ff000 (4K page; PTE: global dirty accessed kernel writable no_execute valid)"
    ]


def test_a_large_page_gives_the_frame_kd_names_inside_it():
    # families/pte/08 (x86 PAE): "pfn 400 -GLDA--KWEV LARGE PAGE pfn 544" for VA 80544a3c
    got = read_pte(CORPUS.output_record("families/pte/08.txt"), "80544a3c")
    assert got["physical_address"] == "0x544a3c" and got["page_size"] == "2M" and got["mapped"]
    pde = got["levels"][0]
    assert pde.large_page and "large_page" in pde.flag_names and len(got["levels"]) == 2
    # ARM64 (families/pte/10, `!pte hal`): the large page's frame for fffff800df891000 is 9bc91
    hal = read_pte(CORPUS.record("families/pte/10.txt", "!pte hal"), "hal")
    assert hal["physical_address"] == "0x9bc91000" and hal["levels"][2].flag_names == []


def test_a_large_page_without_kds_frame_is_worked_out_from_the_entry():
    text = (
        "                                           VA fffff80062634567\n"
        "PXE at FFFFF67B3D9ECF80    PPE at FFFFF67B3D9F0008    PDE at FFFFF67B3E001898    PTE at FFFFF67C00313000\n"
        "contains 0000000004F09063  contains 0000000094C70063  contains 0000000002A000E3  contains 0000000000000000\n"
        "pfn 4f09      ---DA--KWEV  pfn 94c70     ---DA--KWEV  pfn 2a00      -GLDA--KWEV\n"
    )
    record = parse.parse("!pte fffff80062634567", text)
    assert not record.fields.get("large_page_pfn")
    record.pte_levels[2].large_page = True  # as kd marks it when it prints "LARGE PAGE pfn"
    got = read_pte(record, "fffff80062634567")
    assert got["physical_address"] == hex((0x2A00 + 0x34) * 0x1000 + 0x567) and got["page_size"] == "2M"


@pytest.mark.parametrize(
    ("name", "details"),
    [
        ("families/pte/02.txt", ["Page has been freed"]),
        ("families/pte/05.txt", ["Proto: FFFFC182CC1FFDF8"]),
        ("families/pte/06.txt", []),
    ],
)
def test_an_invalid_pte_is_not_mapped_and_says_what_it_holds(name, details):
    got = PteResult.model_validate({**_served(), **read_pte(CORPUS.record(name), "x")})
    assert not got.mapped and got.physical_address is None and got.levels[3].details == details
    assert PteResult.text_lines(got.model_dump(exclude_defaults=True)) == ["not mapped: PTE not valid"]


def test_levels_not_implemented_is_a_warning_not_levels():
    got = read_pte(CORPUS.record("families/pte/07.txt"), "fffff801`00000000")
    assert got["levels"] == [] and got["warnings"] == ["Levels not implemented for this platform"]
    assert "mapped" not in got


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
