"""``kdmcp.sim.dump_files``: which files are dumps (by header), what the debugger says of one that
is not, and the synthesised kernel-dump header fixture, read back field by field with ``struct``."""

from __future__ import annotations

import datetime as dt
import struct
from pathlib import Path

import pytest

import kdmcp.sim.world.commands  # noqa: F401  (the command table, with the world)
from kdmcp.parse import parse
from kdmcp.sim.dump_files import HEADER64_SIZE, dump_kind, kernel_header, open_error
from kdmcp.sim.world.build import build
from kdmcp.sim.world.cmd_report import D1_ARGS, crash
from kdmcp.sim.world.commands import answer

DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "dumps"
FIXTURE = DUMPS / "kernel-header-only.dmp"


@pytest.mark.parametrize(
    ("head", "kind"),
    [(b"PAGEDU64", "kernel"), (b"PAGEDUMP", "kernel"), (b"MDMP\x93\xa7", "user"), (b"PAGE", None),
     (b"MZ\x90\x00", None), (b"", None)],
)  # fmt: skip
def test_the_header_says_the_kind(tmp_path: Path, head: bytes, kind: str | None) -> None:
    path = tmp_path / "x.dmp"
    path.write_bytes(head + bytes(64))
    assert dump_kind(str(path)) == kind
    error = open_error(str(path))
    if kind is None:
        # dbgeng's dump.cpp / Microsoft's DumpChk page, word for word
        assert error == (
            f"\nLoading Dump File [{path}]\n"
            "Could not match Dump File signature - invalid file format\n"
            f"Could not open dump file [{path}], HRESULT 0x80004002\n"
            '    "No such interface supported"\n'
        )
    else:
        assert error is None


def test_a_missing_file_is_no_dump_and_not_this_error(tmp_path: Path) -> None:
    assert dump_kind(str(tmp_path / "none.dmp")) is None
    assert open_error(str(tmp_path / "none.dmp")) is None  # the debugger's Win32 error 0n2 instead


def test_the_vendored_dumps_are_of_their_kinds() -> None:
    kinds = {p.name: dump_kind(str(p)) for p in DUMPS.glob("*.dmp")}
    assert kinds.pop("kernel-header-only.dmp") == "kernel"
    assert set(kinds.values()) == {"user"} and len(kinds) == 6


def test_the_fixture_is_what_the_world_writes() -> None:
    world = build(0, 4)
    crash(world)  # the D1 bugcheck the header records
    assert FIXTURE.read_bytes() == kernel_header(world)


def test_a_world_in_no_d1_bugcheck_has_no_header() -> None:
    with pytest.raises(ValueError, match="D1 bugcheck"):
        kernel_header(build(0, 4))


def test_the_fixture_header_fields() -> None:
    """DUMP_HEADER64 (rekall's crashdump overlay; kdmp-parser's HEADER64), 8 KiB, the world's D1."""
    data = FIXTURE.read_bytes()
    assert len(data) == HEADER64_SIZE == 8192
    sig, valid, major, minor = struct.unpack_from("<4s4sII", data, 0)
    assert (sig, valid, major, minor) == (b"PAGE", b"DU64", 0xF, 19041)
    dtb, pfn, modules, processes = struct.unpack_from("<4Q", data, 0x10)
    assert (dtb, pfn, modules, processes) == (0x1AD002, 0, 0xFFFFF8006322A230, 0xFFFFF8006321E0F0)
    machine, cpus, code = struct.unpack_from("<III", data, 0x30)
    assert (machine, cpus, code) == (0x8664, 4, 0xD1)
    assert struct.unpack_from("<4Q", data, 0x40) == D1_ARGS
    assert data[0x80:0x88] == b"PAGEPAGE"  # KdDebuggerDataBlock: not modelled, the PAGE fill
    # the context: KeBugCheckEx's first instruction, its frame, rcx = the code
    rip, rsp, rcx = (struct.unpack_from("<Q", data, 0x348 + off)[0] for off in (0xF8, 0x98, 0x80))
    world = build(0, 4)
    assert rip == world.symbols.lookup("nt!KeBugCheckEx").address  # type: ignore[union-attr]
    assert (rsp, rcx) == (0xFFFFD48F77AF9698, 0xD1)
    assert struct.unpack_from("<IIQQ", data, 0xF00) == (0x80000003, 0, 0, rip)
    assert struct.unpack_from("<I", data, 0xF98) == (5,)  # a bitmap dump
    space, system_time = struct.unpack_from("<QQ", data, 0xFA0)
    when = dt.datetime(1601, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=system_time // 10)
    assert (space, when) == (HEADER64_SIZE, dt.datetime(2024, 3, 4, 10, 15, 42, 118000, tzinfo=dt.timezone.utc))
    assert struct.unpack_from("<Q", data, 0x1030) == (151_407 * 10_000,)  # SystemUpTime: 0:02:31.407
    assert struct.unpack_from("<II", data, 0x1040) == (1, 0x110)  # WinNt, TerminalServer | SingleUserTS


def test_the_fixture_agrees_with_what_kd_says_of_the_world() -> None:
    """The header's figures are the ones the simulated kd reports on ``kd -z`` of the world."""
    from kdmcp.sim.world.cmd_report import crash

    data = FIXTURE.read_bytes()
    world = build(0, 4)
    crash(world)
    bugcheck = parse(".bugcheck", answer(world, ".bugcheck") or "")
    assert bugcheck.bugcheck is not None
    assert int(bugcheck.bugcheck.code, 16) == struct.unpack_from("<I", data, 0x38)[0]
    assert [int(a, 16) for a in bugcheck.bugcheck.args] == list(struct.unpack_from("<4Q", data, 0x40))
    target = parse("vertarget", answer(world, "vertarget") or "")
    assert int((target.loaded_module_list or "").replace("`", ""), 16) == struct.unpack_from("<Q", data, 0x20)[0]
    assert target.processors == struct.unpack_from("<I", data, 0x34)[0]
