"""``kdmcp.parse.target``: ``vertarget``, ``version``, ``.time``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_version_bare_build_lab_line() -> None:
    # cdb 10.0.19041 version in a rust-lang CI log (x86_64-pc-windows-msvc)
    out = (
        "Windows 10 Version 17763 MP (8 procs) Free x64\n"
        "Product: Server, suite: TerminalServer DataCenter SingleUserTS\n"
        "17763.1.amd64fre.rs5_release.180914-1434\n"
        "Machine Name:\n"
    )
    assert parse("version", out).build_lab == "17763.1.amd64fre.rs5_release.180914-1434"


def test_version_extension_search_path_is_one_value() -> None:
    # cdb 10.0.22000 version in a rust-lang CI log (i686-pc-windows-msvc)
    path = "C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x86\\WINXP;C:\\Windows\\system32"
    out = (
        "Windows 10 Version 17763 MP (8 procs) Free x86 compatible\n"
        f"Extension DLL search Path:\n    {path}\n"
        "Extension DLL chain:\n"
        "    ext: image 10.0.22000.194, API 1.0.0, \n"
    )
    r = parse("version", out)
    assert "C" not in r.details
    assert r.details["Extension DLL search Path"] == path
    assert r.details["ext"] == "image 10.0.22000.194, API 1.0.0,"


def _misc_04(c: Corpus) -> None:
    r = c.record("misc/04.txt", "version")
    assert r.kind == "target"
    assert (r.os, r.build, r.service_pack, r.arch) == ("Windows 7", 7601, "Service Pack 1", "x64")
    assert r.kernel is False and r.processors == 1 and r.multiprocessor is False
    assert r.product == "WinNt" and r.suite == "SingleUserTS"
    assert r.debugger_version == "10.0.10586.567"
    assert r.process_uptime == "0 days 0:50:52.286"
    assert r.uptime_seconds == 1 * 3600 + 50 * 60 + 3.438
    assert r.details["kernelbase.dll version"].startswith("6.1.7601.17514")


def _misc_09(c: Corpus) -> None:
    r = c.record("misc/09.txt", "vertarget")
    assert (r.os, r.build, r.kernel, r.processors, r.build_type, r.arch) == (
        "Windows 10",
        9926,
        True,
        4,
        "Free",
        "x64",
    )
    assert r.kernel_base == "0xfffff8018d283000"
    assert r.loaded_module_list == "0xfffff8018d58aef0"
    assert r.build_lab == "9926.0.amd64fre.fbl_awesome1501.150119-1648"
    assert r.machine_name == ""
    assert r.uptime == "0 days 01:31:58.931"


def _misc_14(c: Corpus) -> None:
    r = c.record("misc/14.txt", ".time")
    assert r.debug_session_time == "Mon Apr 07 19:10:50 2003"
    assert r.uptime_seconds == 4 * 86400 + 4 * 3600 + 53 * 60 + 56.461
    assert r.kernel_time == "0 days 0:00:00.015" and r.user_time == "0 days 0:00:00.015"


def _misc_15(c: Corpus) -> None:
    r = c.record("misc/15.txt", "vertarget")
    assert (r.os, r.build, r.processors, r.arch) == ("Windows XP", 2505, 1, "x86")
    assert r.kernel_base == "0x804d0000" and r.loaded_module_list == "0x80548748"
    assert r.uptime == "0 days 0:04:53"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "misc/04.txt": _misc_04,
    "misc/09.txt": _misc_09,
    "misc/14.txt": _misc_14,
    "misc/15.txt": _misc_15,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
