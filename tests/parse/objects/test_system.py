"""``kdmcp.parse.objects.system``: ``!irql``, ``!teb``, ``!peb``, ``!pcr``, ``!apic``,
``!address``, ``!vm``, ``!locks``, ``!lmi``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_lmi() -> None:
    # Microsoft docs, "Debugging performance-optimized code" (!lmi ntdll)
    out = (
        "Loaded Module Info: [ntdll]\n"
        "         Module: ntdll\n"
        "   Base Address: 77f80000\n"
        "     Image Name: ntdll.dll\n"
        "     Time Stamp: 394193d2 Fri Jun 09 18:03:14 2000\n"
        "    Symbol Type: DIA PDB  - Symbols loaded successfully from symbol server.\n"
        "                 c:\\symbols\\dll\\ntdll.pdb\n"
    )
    r = parse("!lmi ntdll", out)
    assert r.kind == "object" and r.object_type == "lmi"
    assert (r.name, r.address) == ("ntdll", "0x77f80000")
    assert r.fields["Image Name"] == "ntdll.dll"
    assert r.fields["Time Stamp"] == "394193d2 Fri Jun 09 18:03:14 2000"
    assert r.fields["Symbol Type"] == (
        "DIA PDB  - Symbols loaded successfully from symbol server.\nc:\\symbols\\dll\\ntdll.pdb"
    )
    assert "c" not in r.fields  # the drive letter's colon is not a key


def _memory_03(c: Corpus) -> None:
    r = c.record("memory/03.txt", "!address fffff80240d322f9")
    assert r.object_type == "address"
    assert r.fields["Usage"] == "Module"
    assert r.fields["Module name"] == "ntoskrnl.exe"
    assert r.address == "0xfffff80240ca8000"


def _kernel_objects_12(c: Corpus) -> None:
    r = c.record("kernel_objects/12.txt", "!vm 1")
    assert r.object_type == "vm"
    assert r.fields["Physical Memory"].startswith("16270")
    assert r.fields["Commit limit"].startswith("36256")
    assert r.fields["Page File"] == r"\??\E:\pagefile.sys"


def _kernel_objects_13(c: Corpus) -> None:
    r = c.record("kernel_objects/13.txt", "!locks")
    assert r.fields == {"total_locks": "2263", "held_locks": "3"}
    assert [e["resource"] for e in r.entries] == ["0x80e97620", "0x80e23f38", "0x80d8b0b0"]
    assert r.entries[0]["owners"] == "4" and r.entries[0]["mode"] == "Shared"


def _kernel_objects_15(c: Corpus) -> None:
    r0 = c.record("kernel_objects/15.txt", "!irql 0")
    assert r0.fields == {"processor": "0x0", "irql": "28", "irql_name": "CLOCK2_LEVEL"}
    assert c.record("kernel_objects/15.txt", "!irql 1").fields["irql_name"] == "LOW_LEVEL"


def _kernel_objects_16(c: Corpus) -> None:
    r = c.record("kernel_objects/16.txt", "!irql")
    assert (r.fields["irql"], r.fields["irql_name"]) == ("2", "DISPATCH_LEVEL")


def _kernel_objects_19(c: Corpus) -> None:
    r = c.record("kernel_objects/19.txt", "!apic")
    assert r.address == "0xc0009000"
    assert r.fields["ID"] == "d"
    assert r.fields["SpurVec"] == "df"
    assert r.fields["LogDesc"] == "28000000"
    assert r.fields["Timer.."] == "00000000`000300d1"


def _process_thread_09(c: Corpus) -> None:
    assert len(c.record("process_thread/09.txt", "~").threads) == 2
    teb = c.record("process_thread/09.txt", "!teb")
    assert teb.kind == "object" and teb.object_type == "teb"
    assert teb.address == "0x7ffdd000"
    assert teb.fields["ClientId"] == "324.48c"
    assert teb.fields["PEB Address"] == "7ffdf000"


def _process_thread_11(c: Corpus) -> None:
    r = c.record("process_thread/11.txt", "!peb")
    assert r.object_type == "peb" and r.address == "0x7ffdf000"
    assert r.fields["BeingDebugged"] == "Yes"
    assert r.fields["ImageBaseAddress"] == "00f70000"
    assert r.fields["Ldr"] == "77c08880"
    assert len(r.entries) == 25
    assert r.entries[0]["path"] == r"C:\Windows\system32\notepad.exe"
    assert r.fields["env.COMPUTERNAME"] == "DEBUG-WK86-7"


def _process_thread_13(c: Corpus) -> None:
    r = c.record("process_thread/13.txt", "!teb")
    assert r.address == "0x7ffde000"
    assert r.fields["StackBase"] == "00780000"
    assert r.fields["ClientId"] == "00000be0 . 00000f18"


def _families_modules_02(c: Corpus) -> None:
    r = c.record("families/modules/02.txt", "!lmi 00400000")
    assert (r.kind, r.object_type, r.name, r.address) == ("object", "lmi", "Prymes", "0x00400000")
    f = r.fields
    assert (f["Image Name"], f["Machine Type"], f["Size"], f["CheckSum"]) == ("Prymes.exe", "332 (I386)", "2d000", "0")
    assert f["Time Stamp"] == "3c76c346 Fri Feb 22 14:16:38 2002"
    assert f["Characteristics"] == "230e stripped"
    assert f["Debug Data Dirs"] == "Type Size     VA  Pointer\nMISC  110,     0,   77a00 [Data not mapped]"
    assert (f["Symbol Type"], f["Load Report"]) == ("EXPORT   - PDB not found", "export symbols")


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "memory/03.txt": _memory_03,
    "kernel_objects/12.txt": _kernel_objects_12,
    "kernel_objects/13.txt": _kernel_objects_13,
    "kernel_objects/15.txt": _kernel_objects_15,
    "kernel_objects/16.txt": _kernel_objects_16,
    "kernel_objects/19.txt": _kernel_objects_19,
    "process_thread/09.txt": _process_thread_09,
    "process_thread/11.txt": _process_thread_11,
    "process_thread/13.txt": _process_thread_13,
    "families/modules/02.txt": _families_modules_02,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
