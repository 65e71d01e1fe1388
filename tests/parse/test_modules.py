"""``kdmcp.parse.modules``: ``lm`` in all its spellings.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus

LMV = """start             end                 module name
fffff803`0e61b000 fffff803`0f0b0000   nt         (pdb symbols)          c:\\symbols\\ntkrnlmp.pdb\\ABC1\\ntkrnlmp.pdb
    Loaded symbol image file: ntkrnlmp.exe
    Image path: ntkrnlmp.exe
    Image name: ntkrnlmp.exe
    Browse all global symbols  functions  data
    Image was built with /Brepro flag.
    Timestamp:        9BC5F6D1 (This is a reproducible build file hash, not a timestamp)
    CheckSum:         00A5C1E1
    ImageSize:        00A95000
    File version:     10.0.19041.1288
    Product version:  10.0.19041.1288
    File flags:       0 (Mask 3F)
    Translations:     0409.04b0
    Information from resource tables:
        CompanyName:      Microsoft Corporation
        ProductVersion:   10.0.19041.1288
        FileVersion:      10.0.19041.1288 (WinBuild.160101.0800)
        FileDescription:  NT Kernel & System
"""


def test_lmv_details() -> None:
    (m,) = parse("lmvm nt", LMV).modules
    assert m.symbol_status == "pdb symbols"
    assert m.file_version == "10.0.19041.1288" and m.product_version == "10.0.19041.1288"
    assert m.company_name == "Microsoft Corporation"
    assert m.file_description == "NT Kernel & System"
    assert m.checksum == "0x00a5c1e1"


def test_lm_k_and_export_symbols() -> None:
    out = (
        "start             end                 module name\n"
        "fffff800`0b200000 fffff800`0b2d8000   acpi       (deferred)             \n"
        "fffff800`0c000000 fffff800`0c010000   foo        (export symbols)       foo.sys\n"
    )
    r = parse("lm k", out)
    assert [(m.name, m.symbol_status) for m in r.modules] == [("acpi", "deferred"), ("foo", "export symbols")]


def test_lmf_image_paths() -> None:
    out = "fffff800`0b200000 fffff800`0b2d8000   acpi     \\SystemRoot\\System32\\drivers\\ACPI.sys\n"
    (m,) = parse("lmf", out).modules
    assert m.image_path == "\\SystemRoot\\System32\\drivers\\ACPI.sys" and m.symbol_status is None


def test_lm_t_stamps_go_to_timestamp() -> None:
    # lm t of a Windows 10 18362 kernel session, nmap/npcap issue 184
    out = (
        "start             end                 module name\n"
        "ffffd7c9`1fbe0000 ffffd7c9`1fc6c000   win32k    ***** Invalid (F9A3DAA3)\n"
        "fffff803`6c600000 fffff803`6d0b7000   nt        B785E389 (This is a reproducible build file hash, not a timestamp)\n"  # noqa: E501 - real output line, kept whole
        "fffff803`73ef0000 fffff803`73f04000   npcap     Wed Jun  3 11:37:54 2020 (5ED7EE02)\n"
    )
    r = parse("lm t", out)
    assert [(m.name, m.timestamp) for m in r.modules] == [
        ("win32k", "***** Invalid (F9A3DAA3)"),
        ("nt", "B785E389 (This is a reproducible build file hash, not a timestamp)"),
        ("npcap", "Wed Jun  3 11:37:54 2020 (5ED7EE02)"),
    ]
    assert all(m.image_path is None and m.symbol_file is None for m in r.modules)


def test_lm_t_with_a_second_column_keeps_both() -> None:
    # a stamp that is not the row's last column (lm t with n): the stamp, then the image name
    out = "fffff803`6c600000 fffff803`6d0b7000   nt       Wed Jun  3 11:37:54 2020 (5ED7EE02)   ntkrnlmp.exe\n"
    (m,) = parse("lm tn", out).modules
    assert (m.timestamp, m.image_name) == ("Wed Jun  3 11:37:54 2020 (5ED7EE02)", "ntkrnlmp.exe")


def test_statusless_lm_row_column_follows_the_options() -> None:
    # plain lm: a module with loaded symbols shows its symbol file and no status (lm page,
    # MS docs "lm m s*" example)
    plain = "start    end        module name\nfb008000 fb00ba80   serenum      e:\\mysymbols\\SereEnum.pdb\\.......\n"
    (m,) = parse("lm m s*", plain).modules
    assert (m.symbol_file, m.image_path) == ("e:\\mysymbols\\SereEnum.pdb\\.......", None)
    # lm ksmf: sort (sm) and full image path (f), a kernel session's class notes
    paths = "fffff801`0a010000 fffff801`0a0dc000   ACPI     \\SystemRoot\\System32\\drivers\\ACPI.sys\n"
    (m,) = parse("lm ksmf", paths).modules
    assert (m.image_path, m.symbol_file) == ("\\SystemRoot\\System32\\drivers\\ACPI.sys", None)
    # lm n: the image name (lm page: "n  Displays the image name")
    (m,) = parse("lm n", "fffff803`6c600000 fffff803`6d0b7000   nt       ntkrnlmp.exe\n").modules
    assert (m.image_name, m.symbol_file) == ("ntkrnlmp.exe", None)


def _modules_01(c: Corpus) -> None:
    r = c.record("modules/01.txt", "lmi")
    assert r.kind == "modules"
    assert [m.name for m in r.modules] == [
        "cmd", "kernel32", "USER32", "ntdll", "WINBRAND", "KERNELBASE", "LPK", "USP10", "msvcrt", "GDI32",
    ]  # fmt: skip
    nt = r.modules[3]
    assert (nt.start, nt.end) == ("0x0000000077590000", "0x0000000077739000")
    assert nt.symbol_status == "pdb symbols"
    assert nt.symbol_file == r"C:\Windows\SYSTEM32\ntdll.dll"
    assert r.modules[-1].symbol_status == "deferred"  # last line has no trailing padding


def _modules_02(c: Corpus) -> None:
    r = c.record("modules/02.txt", "lm m k*")
    assert [m.name for m in r.modules] == ["kernel32", "KERNELBASE"]
    assert r.modules[1].start == "0x000007fefd840000"


def _modules_03(c: Corpus) -> None:
    r = c.record("modules/03.txt", "lm")
    assert len(r.modules) == 17
    assert r.modules[0].name == "notepad" and r.modules[0].symbol_status == "pdb symbols"
    assert r.modules[0].symbol_file is not None and r.modules[0].symbol_file.endswith(r"notepad.pdb")
    assert sum(m.symbol_status == "deferred" for m in r.modules) == 15


def _modules_04(c: Corpus) -> None:
    r = c.record("modules/04.txt", "lmDvmSecondDriver")
    (m,) = r.modules
    assert m.name == "SecondDriver" and m.symbol_status == "deferred"
    assert m.image_path == r"\??\C:\Driver\SecondDriver\SecondDriver.sys"
    assert m.image_name == "SecondDriver.sys"
    assert m.timestamp == "Sat Jan 29 20:08:51 2022 (61F52043)"
    assert m.checksum == "0x0000eb8d"
    assert m.image_size == "0x00007000"
    assert m.details["Translations"].startswith("0000.04b0")


def _modules_05(c: Corpus) -> None:
    r = c.record("modules/05.txt", "lm v m tcpip")
    (m,) = r.modules
    assert m.symbol_status == "no symbols"
    assert m.loaded_image_file == "tcpip.sys"
    assert m.image_path == r"\SystemRoot\System32\drivers\tcpip.sys"
    assert r.warnings == ["Unable to enumerate user-mode unloaded modules, Win32 error 0n30"]
    assert c.block("modules/05.txt", "lm v m tcpip").prompt.processor == 0  # "0: Kd>" as published


def _modules_08(c: Corpus) -> None:
    (m,) = c.record("modules/08.txt", "lmvm nvlddmkm").modules
    assert m.marker == "T"
    assert m.symbol_status == "no symbols"
    assert m.image_path == r"\SystemRoot\system32\DRIVERS\nvlddmkm.sys"
    assert m.checksum == "0x00aa7491"


def _modules_09(c: Corpus) -> None:
    r = c.record("modules/09.txt", "lm")
    assert [m.name for m in r.modules] == ["FirstDriverSample", "nt"]
    assert [u.name for u in r.unloaded] == [
        "dump_storport.sys", "dump_storahci.sys", "dump_dumpfve.sys", "dam.sys", "WdBoot.sys", "hwpolicy.sys",
    ]  # fmt: skip
    assert r.unloaded[0].start == "0xfffff80062c80000"


def _family_01(c: Corpus) -> None:
    r = c.record("families/modules/01.txt", "lm")
    assert [(m.name, m.start, m.end) for m in r.modules] == [
        ("Prymes", "0x00400000", "0x0042d000"), ("KERNEL32", "0x77e80000", "0x77f35000"),
        ("ntdll", "0x77f80000", "0x77ffb000"),
    ]  # fmt: skip
    prymes, k32, nt = r.modules
    assert (prymes.marker, prymes.symbol_status, prymes.symbol_file) == ("C", "pdb symbols", "Prymes.pdb")
    assert (k32.marker, k32.symbol_status) == (None, "export symbols")
    assert k32.symbol_file == r"C:\WINNT\system32\KERNEL32.dll"
    assert (nt.symbol_status, nt.symbol_file) == ("export symbols", "ntdll.dll")


def _family_03(c: Corpus) -> None:
    r = c.record("families/modules/03.txt", "lm m s*")
    assert [m.name for m in r.modules] == ["sysaudio", "srv", "sr", "serial", "serenum", "swenum"]
    assert [m.symbol_status for m in r.modules] == ["deferred"] * 4 + [None, "deferred"]
    serenum = r.modules[4]
    assert (serenum.start, serenum.end) == ("0xfb008000", "0xfb00ba80")
    assert serenum.symbol_file == r"e:\mysymbols\SereEnum.pdb\......."
    assert [(u.name, u.start, u.end) for u in r.unloaded] == [
        ("swmidi.sys", "0xf9f53000", "0xf9f61000"), ("splitter.sys", "0xfb0ae000", "0xfb0b0000"),
        ("Sfloppy.SYS", "0xfb040000", "0xfb043000"),
    ]  # fmt: skip


def _family_04(c: Corpus) -> None:
    r = c.record("families/modules/04.txt", "lm")
    assert [m.name for m in r.modules] == ["stst", "msvcrt", "ADVAPI32", "RPCRT4", "kernel32", "ntdll"]
    nt = r.modules[-1]
    assert (nt.start, nt.symbol_status) == ("0x7c900000", "private pdb symbols")
    assert nt.symbol_file == r"c:\db20sym\ntdll.pdb"
    assert all(m.symbol_status == "deferred" and m.symbol_file is None for m in r.modules[:-1])


def _family_05(c: Corpus) -> None:
    r = c.record("families/modules/05.txt", "lm")
    assert len(r.modules) == 16
    loaded = [(m.name, m.symbol_file) for m in r.modules if m.symbol_status == "pdb symbols"]
    assert loaded == [
        ("notepad", r"C:\ProgramData\Dbg\sym\notepad.pdb\BC04D9A431EDE299D4625AD6201C8A4A1\notepad.pdb"),
        ("ntdll", r"C:\ProgramData\Dbg\sym\ntdll.pdb\53F12BFE149A2F50205C8D5D66290B481\ntdll.pdb"),
    ]
    assert sum(m.symbol_status == "deferred" for m in r.modules) == 14
    assert (r.modules[1].name, r.modules[1].symbol_status) == ("gdi32full", "deferred")  # misaligned column
    last = r.modules[-1]
    assert (last.name, last.start, last.end) == ("COMCTL32", "0x00007ffff8580000", "0x00007ffff881a000")


def _family_06(c: Corpus) -> None:
    r = c.output_record("families/modules/06.txt")  # cut with "..." lines by the author
    assert [m.name for m in r.modules] == ["CI", "BasicRender", "BasicDisplay", "nt", "hal"]
    nt = r.modules[3]
    assert (nt.start, nt.end) == ("0xfffff80002a0e000", "0xfffff80003191000")
    assert (nt.symbol_status, nt.symbol_file) == ("pdb symbols", r"C:\...\ntkrnlmp.pdb")
    assert r.modules[4].symbol_status == "deferred" and r.unloaded == []


def _family_07(c: Corpus) -> None:
    r = c.record("families/modules/07.txt", "lmf")
    assert len(r.modules) == 10
    assert [(m.name, m.image_path) for m in r.modules[:4]] == [
        ("cmd", "cmd.exe"), ("kernel32", r"C:\Windows\system32\kernel32.dll"),
        ("USER32", r"C:\Windows\system32\USER32.dll"), ("ntdll", "ntdll.dll"),
    ]  # fmt: skip
    assert all(m.symbol_status is None and m.symbol_file is None and m.checksum is None for m in r.modules)


def _family_08(c: Corpus) -> None:
    r = c.record("families/modules/08.txt", "lmfc")
    assert len(r.modules) == 10
    assert [(m.name, m.image_path, m.checksum) for m in r.modules[:2]] == [
        ("cmd", "cmd.exe", "0x0005bdec"), ("kernel32", r"C:\Windows\system32\kernel32.dll", "0x00127a43"),
    ]  # fmt: skip
    gdi = r.modules[-1]
    assert (gdi.name, gdi.start, gdi.image_path, gdi.checksum) == (
        "GDI32", "0x000007feff830000", r"C:\Windows\system32\GDI32.dll", "0x000711dd",
    )  # fmt: skip


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "modules/01.txt": _modules_01,
    "modules/02.txt": _modules_02,
    "modules/03.txt": _modules_03,
    "modules/04.txt": _modules_04,
    "modules/05.txt": _modules_05,
    "modules/08.txt": _modules_08,
    "modules/09.txt": _modules_09,
    "families/modules/01.txt": _family_01,
    "families/modules/03.txt": _family_03,
    "families/modules/04.txt": _family_04,
    "families/modules/05.txt": _family_05,
    "families/modules/06.txt": _family_06,
    "families/modules/07.txt": _family_07,
    "families/modules/08.txt": _family_08,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
