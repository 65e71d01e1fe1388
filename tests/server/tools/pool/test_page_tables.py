"""``kdmcp.server.tools.pool.page_tables`` without a debugger: the ``!pte`` flag letters decoded
(the "!pte" docs' table, checked against the bits of each entry kd printed), and kd's own
``!pte`` answers read from the corpus."""

from __future__ import annotations

import pytest

from kdmcp import parse
from kdmcp.server.tools.pool.models import PteResult
from kdmcp.server.tools.pool.page_tables import decode_pte_flags, read_pte
from tests.parse.samples.corpus import Corpus
from tests.server.tools.pool.test_blocks import _served

CORPUS = Corpus()

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
