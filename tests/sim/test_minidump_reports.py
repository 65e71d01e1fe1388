"""``kdmcp.sim.minidump_reports``: ``vertarget``, ``.lastevent`` and ``!analyze -v`` of every real
minidump in ``fixtures/dumps/``, each figure read back by ``kdmcp.parse`` and held to what the
``minidump`` package (PyPI, MIT) reads from the same file.

One figure is read from the file's bytes instead: the package's ``MinidumpHeader`` reads a
"Reserved" ULONG the header does not have, so its ``TimeDateStamp`` is the low half of Flags;
the header's own TimeDateStamp (offset 20) is the one a process's create time precedes.
"""

from __future__ import annotations

import datetime as dt
import struct
from pathlib import Path, PureWindowsPath
from typing import Any

import pytest

from kdmcp.parse import parse
from kdmcp.sim.debugger import SimDebugger
from kdmcp.sim.minidump_context import DumpContexts
from kdmcp.sim.minidump_reports import analysis, last_event, vertarget
from kdmcp.sim.minidump_target import MinidumpTarget, is_minidump
from tests.sim.dump_debugger import package as _package
from tests.sim.dump_debugger import run

DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "dumps"
NAMES = sorted(p.name for p in DUMPS.glob("*.dmp") if is_minidump(str(p)))


def _stamp(name: str) -> int:
    """MINIDUMP_HEADER.TimeDateStamp, at offset 20 (after Signature, Version, NumberOfStreams,
    StreamDirectoryRva, CheckSum)."""
    return int(struct.unpack_from("<I", (DUMPS / name).read_bytes(), 20)[0])


def test_six_real_minidumps_are_checked() -> None:
    assert len(NAMES) == 6


@pytest.mark.parametrize("name", NAMES)
def test_vertarget_reports_the_dumps_system(name: str) -> None:
    pkg = _package(name)
    info = pkg.sysinfo
    target = MinidumpTarget(str(DUMPS / name))
    r = parse("vertarget", vertarget(target))
    assert r.kind == "target"
    assert (r.build, r.processors, r.kernel) == (int(info.BuildNumber), int(info.NumberOfProcessors), False)
    assert r.arch == ("x64" if info.ProcessorArchitecture.name == "AMD64" else "x86")
    assert r.service_pack == (info.CSDVersion or None)
    assert r.multiprocessor == (info.NumberOfProcessors > 1)
    assert r.product == "WinNt"  # every one is VER_NT_WORKSTATION
    assert ("SingleUserTS" in (r.suite or "")) == bool(info.SuiteMask & 0x100)
    # the session time is the header's, printed in UTC; no boot time in a minidump
    when = dt.datetime.fromtimestamp(_stamp(name), tz=dt.timezone.utc)
    assert r.debug_session_time == f"{when:%a %b} {when.day:2d} {when:%H:%M:%S}.000 {when.year} (UTC + 0:00)"
    assert r.uptime == "not available"
    up = _stamp(name) - int(pkg.misc_info.ProcessCreateTime)
    assert up >= 0
    assert r.process_uptime == (f"0 days 0:00:{up:02d}.000" if up else "not available")
    # the load banner prints the same block
    assert vertarget(target) in target.banner("", None)


def test_vertarget_gives_the_build_lab_only_from_a_dump_that_stores_one() -> None:
    labs = {name: parse("vertarget", vertarget(MinidumpTarget(str(DUMPS / name)))).build_lab for name in NAMES}
    assert labs["thread_name_list.dmp"] == "17763.1.x86fre.rs5_release.180914-1434"
    assert labs["tiny-exe-fastfail.dmp"] == "19041.1.amd64fre.vb_release.191206-1406"
    assert labs["null_read_av.dmp"] is None and labs["minidump2.dmp"] is None  # MINIDUMP_MISC_INFO_2/1


def test_vertarget_of_the_windows_7_dump_is_not_the_canned_windows_10() -> None:
    text = vertarget(MinidumpTarget(str(DUMPS / "null_read_av.dmp")))
    assert text.startswith("Windows 7 Version 7600 MP (16 procs) Free x86 compatible\n")
    assert "Kernel base" not in text and "x64" not in text
    xp = vertarget(MinidumpTarget(str(DUMPS / "minidump2.dmp")))
    assert xp.startswith("Windows XP Version 2600 (Service Pack 2) UP Free x86 compatible\n")


@pytest.mark.parametrize("name", NAMES)
def test_lastevent_names_the_stored_exception_and_its_thread(name: str) -> None:
    pkg = _package(name)
    target = MinidumpTarget(str(DUMPS / name))
    text = last_event(target)
    r = parse(".lastevent", text)
    assert r.kind == "exception_record" and r.debugger_time
    if pkg.exception is None:
        assert r.code is None and text.startswith("Last event: <no event>\n")
        return
    exc = pkg.exception.exception_records[0]
    assert r.thread == f"{pkg.misc_info.ProcessId:x}.{exc.ThreadId:x}"
    assert int(r.code or "", 16) == exc.ExceptionRecord.ExceptionCode_raw
    assert "(first/second chance not available)\n  debugger time: " in text


def _module_at(pkg: Any, address: int) -> Any:
    return next(m for m in pkg.modules.modules if m.baseaddress <= address < m.baseaddress + m.size)


@pytest.mark.parametrize("name", NAMES)
def test_analyze_is_computed_from_the_dump(name: str) -> None:
    pkg = _package(name)
    target = MinidumpTarget(str(DUMPS / name))
    view = DumpContexts(target)
    r = parse("!analyze -v", analysis(target, view, target.event_index))
    assert r.kind == "analysis" and r.mode == "user"
    assert r.process_name == PureWindowsPath(pkg.modules.modules[0].name).name
    if pkg.exception is None:
        assert r.exception is None and "EXCEPTION_CODE_STR" not in r.fields
        return
    exc = pkg.exception.exception_records[0]
    record = exc.ExceptionRecord
    code, address = record.ExceptionCode_raw, int(record.ExceptionAddress)
    assert r.exception is not None
    assert (int(r.exception.code, 16), int(r.exception.address or "", 16)) == (code, address)
    params = [int(p) for p in record.ExceptionInformation[: record.NumberParameters]]
    assert [int(p, 16) for p in r.exception.parameters] == params
    assert int(r.fields["EXCEPTION_CODE_STR"], 16) == code
    assert int(r.fields["FAULTING_THREAD"], 16) == exc.ThreadId
    # the faulting module and module+offset, as ln names an address with no symbols
    module = _module_at(pkg, address)
    stem = PureWindowsPath(module.name).stem.replace("-", "_")
    assert r.module_name == stem
    assert r.image_name == PureWindowsPath(module.name).name
    assert r.symbol_name == f"{stem}+{address - module.baseaddress:x}"
    assert r.faulting_ip is not None and int(r.faulting_ip.address, 16) == address
    assert r.key_values["Failure.Exception.IP.Module"] == stem
    assert int(r.key_values["Failure.Exception.Code"], 16) == code
    assert r.failure_bucket_id and f"_{code:x}_{module.name.rsplit(chr(92), 1)[-1]}!" in r.failure_bucket_id
    assert r.failure_id_hash == r.key_values["Failure.Hash"]


@pytest.mark.parametrize("name", NAMES)
def test_analyze_stack_is_the_one_k_gives(name: str) -> None:
    """STACK_TEXT holds ``k``'s frames: after ``.ecxr`` on the event thread (STACK_COMMAND's
    ``~Ns; .ecxr ; kb``), or the current thread's own in a dump with no exception."""
    target = MinidumpTarget(str(DUMPS / name))
    view = DumpContexts(target)
    thread = target.event_index
    if target.exception is not None:
        view.answer(".ecxr", thread)
    k = parse("k", view.answer("k", thread)[0])  # type: ignore[index]
    r = parse("!analyze -v", analysis(target, view, thread))
    assert [(f.call_site, f.child_sp or f.child_ebp, f.return_address) for f in r.stack] == [
        (f.call_site, f.child_sp or f.child_ebp, f.return_address) for f in k.frames
    ]
    assert r.stack_command == (f"~{thread}s; .ecxr ; kb" if target.exception is not None else f"~{thread}s; kb")


def test_the_buckets_name_the_problem() -> None:
    buckets = {}
    for name in NAMES:
        target = MinidumpTarget(str(DUMPS / name))
        buckets[name] = parse(
            "!analyze -v", analysis(target, DumpContexts(target), target.event_index)
        ).failure_bucket_id
    assert buckets == {
        "minidump2.dmp": "NULL_POINTER_WRITE_c0000005_test_app.exe!Unknown",
        "null_read_av.dmp": "NULL_POINTER_READ_c0000005_crashme.exe!Unknown",
        "stack_exhaustion.dmp": "STACK_OVERFLOW_c00000fd_crashme.exe!Unknown",
        "thread_name_list.dmp": "INVALID_POINTER_READ_c0000005_allocer32.exe!Unknown",
        "tiny-exe-fastfail.dmp": "FAIL_FAST_FATAL_APP_EXIT_c0000409_tiny.exe!Unknown",
        "tiny-exe-with-cet-xsave.dmp": "APPLICATION_FAULT_ntdll.dll!Unknown",
    }


# ------------------------------------------------------------------ through the debugger




def test_the_debugger_answers_the_reports_from_the_dump(debugger: SimDebugger) -> None:
    vt = parse("vertarget", run(debugger, "vertarget"))
    assert (vt.os, vt.build, vt.arch, vt.processors) == ("Windows 7", 7600, "x86", 16)
    version = run(debugger, "version")
    assert version.startswith("Windows 7 Version 7600 MP (16 procs) Free x86 compatible\n")
    assert "User mini dump: " in version and "Microsoft (R) Windows Debugger Version" in version
    assert "@@COMMAND_LINE@@" not in version and "Windows 10" not in version
    le = parse(".lastevent", run(debugger, ".lastevent"))
    assert (le.thread, le.code) == ("10d4.4a8", "0xc0000005")
    a = parse("!analyze -v", run(debugger, "!analyze -v"))
    assert (a.module_name, a.symbol_name, a.process_name) == ("crashme", "crashme+a6cd", "crashme.exe")
    assert a.exception is not None and a.exception.access == "read"
