"""``kdmcp.parse.objects.namespace``: ``!object`` and ``!handle``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_object_directory_type_with_a_blank() -> None:
    # Jekyll post "Exploring the Windows Executive - Part 1 - Object Manager" (2016, Win7 x86)
    out = (
        "Object: 86a05750  Type: (85261eb0) Directory\n"
        "    Hash Address  Type          Name\n"
        "    ---- -------  ----          ----\n"
        "     01  8d5f6dc0 ALPC Port     SeLsaCommandPort\n"
        "         8d464500 Event         UniqueInteractiveSessionIdEvent\n"
        "     22  9335d528 Directory     RPC Control\n"
    )
    r = parse("!object \\", out)
    assert [(d.hash, d.type, d.name) for d in r.directory] == [
        ("01", "ALPC Port", "SeLsaCommandPort"),
        ("01", "Event", "UniqueInteractiveSessionIdEvent"),
        ("22", "Directory", "RPC Control"),
    ]


def test_object_symbolic_link_target() -> None:
    # same post: "!object \Global??\C:"
    out = (
        "Object: 86bda030  Type: (85261de8) SymbolicLink\n"
        "    ObjectHeader: 86bda018 (new version)\n"
        "    HandleCount: 0  PointerCount: 1\n"
        "    Directory Object: 86a05128  Name: C:\n"
        "    Target String is '\\Device\\HarddiskVolume2'\n"
        "    Drive Letter Index is 3 (C:)\n"
    )
    r = parse("!object 86bda030", out)
    assert r.name == "C:" and r.fields["type"] == "SymbolicLink"
    assert r.fields["target"] == "\\Device\\HarddiskVolume2"
    assert (r.fields["drive_letter_index"], r.fields["drive_letter"]) == ("3", "C:")


def test_object_name_with_a_blank() -> None:
    # made in the layout of the post above, whose root directory lists "RPC Control"
    out = "Object: 9335d528  Type: (85261eb0) Directory\n    Directory Object: 86a05750  Name: RPC Control\n"
    assert parse('!object "\\RPC Control"', out).name == "RPC Control"


def test_handle_object_block_per_handle() -> None:
    # jasandoval1/windev_training, io-subsystem/tracking-irps/README.md ("!handle 0 3 <proc> File")
    out = (
        "Handle table at ffffa08f5ad26540 with 45 entries in use\n"
        "\n"
        "0044: Object: ffffc38e2ff24e20  GrantedAccess: 0012019f "
        "(Protected) (Inherit) (Audit) Entry: ffffa08f5b1ff110\n"
        "Object: ffffc38e2ff24e20  Type: (ffffc38e2c0fcf00) File\n"
        "    ObjectHeader: ffffc38e2ff24df0 (new version)\n"
        "        HandleCount: 2  PointerCount: 65456\n"
        "        Directory Object: 00000000  Name: \\Input {ConDrv}\n"
    )
    r = parse("!handle 0 3 ffffc38e2c0dc080 File", out)
    assert (r.fields["handle_table"], r.fields["entries_in_use"]) == ("0xffffa08f5ad26540", "45")
    (entry,) = r.entries
    assert entry["handle"] == "0x0044" and entry["attributes"] == "Protected Inherit Audit"
    assert entry["entry"] == "0xffffa08f5b1ff110"
    assert (entry["type"], entry["type_address"]) == ("File", "0xffffc38e2c0fcf00")
    assert entry["object_header"] == "0xffffc38e2ff24df0"
    assert (entry["handle_count"], entry["pointer_count"]) == ("2", "65456")
    assert entry["name"] == "\\Input {ConDrv}"


def _kernel_objects_08(c: Corpus) -> None:
    r = c.record("kernel_objects/08.txt", r"!object \Device")
    assert r.address == "0xffffc00b074166a0"
    assert r.fields["type"] == "Directory" and r.fields["PointerCount"] == "224"
    assert r.name == "Device"
    assert len(r.directory) == 7
    assert r.directory[0].hash == "00" and r.directory[0].name == "00000044"
    assert r.directory[4].name == "USBPDO-8"


def _kernel_objects_09(c: Corpus) -> None:
    r = c.record("kernel_objects/09.txt", "!handle 0 4")
    assert r.fields["image"] == "Idle" and r.fields["entries_in_use"] == "380"
    assert len(r.entries) == 9
    assert r.entries[0] == {"handle": "0x0000", "free": "true"}
    assert r.entries[1]["object"] == "0x80ed5238" and r.entries[1]["granted_access"] == "0x001f0fff"
    assert r.entries[5]["attributes"] == "Protected"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "kernel_objects/08.txt": _kernel_objects_08,
    "kernel_objects/09.txt": _kernel_objects_09,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
