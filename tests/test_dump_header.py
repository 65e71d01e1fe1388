"""The header sniff and the truncation check, on the fixture dumps and cut copies of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kdmcp.dump_header import DumpFileError, dump_kind, truncation

DUMPS = Path(__file__).resolve().parent.parent / "fixtures" / "dumps"


@pytest.mark.parametrize("dump", sorted(DUMPS.glob("*.dmp")), ids=lambda p: p.name)
def test_every_fixture_dump_is_whole(dump: Path) -> None:
    assert dump_kind(str(dump)) is (dump.name == "kernel-header-only.dmp")
    assert truncation(str(dump)) is None


@pytest.mark.parametrize(("name", "keep", "says"), [
    ("null_read_av.dmp", 3000, "stream 1 (type 4) ends at"),
    ("null_read_av.dmp", 100, "the stream directory ends at"),
    ("null_read_av.dmp", 20, "less than the minidump header"),
    ("kernel-header-only.dmp", 4000, "less than the 0x2000-byte kernel dump header"),
])
def test_a_cut_copy_is_truncated(tmp_path: Path, name: str, keep: int, says: str) -> None:
    cut = tmp_path / name
    cut.write_bytes((DUMPS / name).read_bytes()[:keep])
    assert says in (truncation(str(cut)) or "")


def test_required_dump_space_beyond_the_file_is_truncated(tmp_path: Path) -> None:
    header = bytearray((DUMPS / "kernel-header-only.dmp").read_bytes())
    header[0xFA0:0xFA8] = (1 << 30).to_bytes(8, "little")
    (tmp_path / "k.dmp").write_bytes(header)
    assert "RequiredDumpSpace" in (truncation(str(tmp_path / "k.dmp")) or "")


def test_not_a_dump_and_missing_files_say_which(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("AKIAEXAMPLE")
    with pytest.raises(DumpFileError) as refused:
        dump_kind(str(tmp_path / "notes.txt"))
    assert refused.value.reason == "not_a_dump" and "AKIA" not in refused.value.message
    with pytest.raises(DumpFileError) as missing:
        dump_kind(str(tmp_path / "gone.dmp"))
    assert missing.value.reason == "unreadable" and missing.value.file_problem
