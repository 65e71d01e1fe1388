"""``kdmcp.sim.minidump_target``: the simulated ``cdb -z`` reports what a real minidump holds.

Every dump in ``fixtures/dumps/`` is held to the figures its README gives (read there with the
``minidump`` package: architecture, OS build, module and thread counts, the exception's code,
address and thread), and what the simulated cdb prints of it (``lm``, ``~``, ``.exr -1``) is
read back by the project's own parser to the same figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kdmcp.parse import parse
from kdmcp.sim.minidump_target import MemoryView, MinidumpTarget, is_minidump

DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "dumps"

# the README's table: arch, OS build, modules, threads, (code, address, thread id) or None
FIGURES = {
    "null_read_av.dmp": ("x86", 7600, 26, 2, (0xC0000005, 0x0090A6CD, 1192)),
    "stack_exhaustion.dmp": ("x86", 7600, 26, 2, (0xC00000FD, 0x00DEA637, 5744)),
    "thread_name_list.dmp": ("x86", 17763, 17, 6, (0xC0000005, 0x004015FD, 10976)),
    "minidump2.dmp": ("x86", 2600, 13, 2, (0xC0000005, 0x0040429E, 3060)),
    "tiny-exe-fastfail.dmp": ("x64", 19042, 21, 4, (0xC0000409, 0x00007FF75355AF42, 24440)),
    "tiny-exe-with-cet-xsave.dmp": ("x64", 22000, 25, 1, None),
}


def test_every_vendored_dump_is_in_the_table_and_the_readme() -> None:
    # every minidump; kernel-header-only.dmp is the project's own kernel-header fixture
    assert sorted(p.name for p in DUMPS.glob("*.dmp") if is_minidump(str(p))) == sorted(FIGURES)
    readme = (DUMPS / "README.md").read_text(encoding="utf-8")
    assert "BSD 3-Clause" in readme
    for name in FIGURES:
        assert f"| `{name}` |" in readme, name


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_the_target_reads_the_readmes_figures(name: str) -> None:
    arch, build, modules, threads, exception = FIGURES[name]
    dump = MinidumpTarget(str(DUMPS / name))
    assert is_minidump(str(DUMPS / name))
    assert ("x64" if dump.x64 else "x86", dump.build) == (arch, build)
    assert (len(dump.modules), len(dump.threads)) == (modules, threads)
    if exception is None:
        assert dump.exception is None
        assert dump.exception_record() == "Last event was not an exception\n"
        assert "exception of interest" not in dump.banner("", None)
    else:
        code, _, tid = exception
        record = dump.exception.ExceptionRecord
        assert (record.ExceptionCode_raw, record.ExceptionAddress, dump.exception.ThreadId) == exception
        assert dump.threads[dump.event_index].tid == tid
        assert f"({dump.pid:x}.{tid:x}): " in dump.banner("", None)
        assert f" - code {code:08x} (first/second chance not available)\n" in dump.banner("", None)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_what_cdb_prints_parses_back_to_the_same_figures(name: str) -> None:
    """``lm``, ``~`` and ``.exr -1`` as the simulated cdb prints them, read by ``kdmcp.parse``."""
    _, _, modules, threads, exception = FIGURES[name]
    dump = MinidumpTarget(str(DUMPS / name))
    lm = parse("lm", dump.lm())
    assert lm.kind == "modules" and len(lm.modules) == modules
    assert [int(m.start, 16) for m in lm.modules] == sorted(m.base for m in dump.modules)
    assert all(m.symbol_status == "deferred" for m in lm.modules)
    listing = parse("~", dump.thread_list(dump.event_index))
    assert listing.kind == "threads" and len(listing.threads) == threads
    assert [int(t.thread_id, 16) for t in listing.threads] == [t.tid for t in dump.threads]
    assert [t.current for t in listing.threads] == [t.index == dump.event_index for t in dump.threads]
    exr = parse(".exr -1", dump.exception_record())
    if exception is None:
        assert exr.kind != "exception_record"
        return
    code, address, _ = exception
    assert exr.kind == "exception_record"
    assert (int(exr.code, 16), int(exr.address, 16)) == (code, address)


def test_an_access_violation_says_what_was_accessed() -> None:
    # minidump2.dmp: a write to 0x45 (ExceptionInformation [1, 0x45])
    text = MinidumpTarget(str(DUMPS / "minidump2.dmp")).exception_record()
    assert text.endswith("   Parameter[0]: 00000001\n   Parameter[1]: 00000045\nAttempt to write to address 00000045\n")
    assert text.startswith("ExceptionAddress: 0040429e (test_app+0x0000429e)\n")
    r = parse(".exr -1", text)
    assert (r.access, r.access_address) == ("write", "0x00000045")


def test_x64_addresses_keep_cdbs_backtick_in_lm_and_none_in_exr() -> None:
    dump = MinidumpTarget(str(DUMPS / "tiny-exe-fastfail.dmp"))
    assert dump.lm().startswith("start             end                 module name\n")
    assert "`" in dump.lm().splitlines()[1]
    assert dump.exception_record().startswith("ExceptionAddress: 00007ff75355af42 (")


def test_a_file_that_is_no_minidump_is_not_read_as_one(tmp_path: Path) -> None:
    kernel = tmp_path / "MEMORY.DMP"
    kernel.write_bytes(b"PAGEDU64")
    assert not is_minidump(str(kernel)) and not is_minidump(str(tmp_path / "missing.dmp"))


def _package_bytes(name: str, address: int, size: int) -> bytes:
    """The bytes the ``minidump`` package's own reader returns at ``address``."""
    import logging

    from minidump.minidumpfile import MinidumpFile

    logging.disable(logging.CRITICAL)  # its PEB-parsing traceback on small dumps
    try:
        dump = MinidumpFile.parse_bytes((DUMPS / name).read_bytes())
    finally:
        logging.disable(logging.NOTSET)
    return bytes(dump.get_reader().read(address, size))


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_db_and_dq_show_the_bytes_the_dump_holds(name: str) -> None:
    """At the start of each memory range the dump holds, ``db`` (through the parser) shows the
    package reader's bytes, and ``dq`` the same bytes as little-endian quadwords."""
    dump = MinidumpTarget(str(DUMPS / name))
    view = MemoryView(dump)
    assert dump.ranges
    for start, end, _ in dump.ranges[:4]:
        n = min(32, end - start)
        expected = _package_bytes(name, start, n)
        record = parse(f"db {start:x} L{n:x}", view.display(f"db {start:x} L{n:x}"))
        shown = bytes(int(v, 16) for row in record.rows for v in row.values)
        assert shown == expected
        if n >= 16:
            quads = parse(f"dq {start:x} L2", view.display(f"dq {start:x} L2")).rows[0].values
            assert [int(q, 16) for q in quads] == [int.from_bytes(expected[i : i + 8], "little") for i in (0, 8)]


def test_memory_the_dump_lacks_reads_as_question_marks_and_names_resolve_to_modules() -> None:
    dump = MinidumpTarget(str(DUMPS / "null_read_av.dmp"))
    view = MemoryView(dump)
    # crashme's image header is not in this small dump: cdb shows unreadable cells
    assert view.display("dd crashme L4") == "00900000  ???????? ???????? ???????? ????????\n"
    assert view.display("db crashme L2") == "00900000  ?? ??" + " " * 42 + "  ??\n"
    assert view.display("dd esp") == "Couldn't resolve error at 'esp'\n"  # no register context given
    regs = MemoryView(dump, {"esp": 0x0037F8CC})  # the exception context's esp, inside the stack
    assert regs.display("dd @esp L1") == regs.display("dd 37f8cc L1") != "0037f8cc  ????????\n"
    # the faulting instruction's bytes 8b 00 (mov eax,dword ptr [eax]), then c3 (ret), c7 ...
    assert view.display("dd 0x0090a6cd L1") == "0090a6cd  c7c3008b\n"


def test_the_process_list_names_the_dumps_image() -> None:
    r = parse("|", MinidumpTarget(str(DUMPS / "null_read_av.dmp")).process_list())
    (p,) = r.processes
    assert (p.cid, p.image) == ("0x10d4", "D:\\crashme\\Debug\\crashme.exe")
    assert (p.current, p.details["how"]) == (True, "examine")


def test_da_and_du_read_strings_from_the_dump_and_question_marks_where_it_has_none() -> None:
    dump = MinidumpTarget(str(DUMPS / "null_read_av.dmp"))
    view = MemoryView(dump)
    # ntdll's export-name bytes the dump keeps beside the thread's pc, and a path on thread 1's stack
    assert _package_bytes("null_read_av.dmp", 0x772CF7E8, 10) == b"wcsncpy_s\0"
    da = parse("da 772cf7e8", view.display("da 772cf7e8"))
    assert (da.unit, [r.text for r in da.rows]) == ("ascii", ["wcsncpy_s"])
    path = _package_bytes("null_read_av.dmp", 0x75F720, 64).decode("utf-16-le").split("\0")[0]
    du = parse("du 75f720", view.display("du 75f720"))
    assert du.unit == "unicode" and "".join(r.text for r in du.rows) == path == "C:\\Windows\\system32\\tzres.dll"
    assert view.display("du 75f720") == '0075f720  "C:\\Windows\\system32\\tzres.dll"\n'
    # absent memory: 32 "?" a line, never a terminator; "L" bounds the count
    assert view.display("da 0 L40") == '00000000  "' + "?" * 32 + '"\n00000020  "' + "?" * 32 + '"\n'
    assert len(view.display("da crashme").splitlines()) == 12
    assert view.display("du nosuch") == "Couldn't resolve error at 'nosuch'\n"
