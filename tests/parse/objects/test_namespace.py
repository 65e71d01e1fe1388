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
    (h,) = r.handles
    assert h.handle == "0x0044" and h.flags == ["Protected", "Inherit", "Audit"]
    assert h.entry == "0xffffa08f5b1ff110"
    assert (h.type, h.type_address) == ("File", "0xffffc38e2c0fcf00")
    assert h.object_header == "0xffffc38e2ff24df0"
    assert (h.handle_count, h.pointer_count) == (2, 65456)
    assert h.name == "\\Input {ConDrv}"


def test_user_handle_blocks_with_tabs() -> None:
    # DebugPrivilege's "What is the root cause of this deadlock within this code?" (x64 cdb,
    # "0:000> !handle 0 f event"): newer cdb aligns the keys with a tab, names the handles with
    # 16 digits and ends a filtered listing with "N handles of type T"; first and last handles
    out = (
        "Handle 0000000000000008\n"
        "  Type         \tEvent\n"
        "  Attributes   \t0\n"
        "  GrantedAccess\t0x1f0003:\n"
        "         Delete,ReadControl,WriteDac,WriteOwner,Synch\n"
        "         QueryState,ModifyState\n"
        "  HandleCount  \t2\n"
        "  PointerCount \t65536\n"
        "  Name         \t<none>\n"
        "  Object specific information\n"
        "    Event Type Manual Reset\n"
        "    Event is Set\n"
        "Handle 00000000000000ac\n"
        "  Type         \tEvent\n"
        "  Attributes   \t0\n"
        "  GrantedAccess\t0x1f0003:\n"
        "         Delete,ReadControl,WriteDac,WriteOwner,Synch\n"
        "         QueryState,ModifyState\n"
        "  HandleCount  \t2\n"
        "  PointerCount \t65538\n"
        "  Name         \t\\BaseNamedObjects\\FilesMovedEvent\n"
        "  Object specific information\n"
        "    Event Type Manual Reset\n"
        "    Event is Waiting\n"
        "7 handles of type Event\n"
    )
    r = parse("!handle 0 f event", out)
    assert r.kind == "object" and [h.handle for h in r.handles] == ["0x0000000000000008", "0x00000000000000ac"]
    first, last = r.handles
    assert (first.type, first.granted_access, first.name) == ("Event", "0x1f0003", None)
    assert first.access_rights == [
        "Delete",
        "ReadControl",
        "WriteDac",
        "WriteOwner",
        "Synch",
        "QueryState",
        "ModifyState",
    ]
    assert (first.handle_count, first.pointer_count) == (2, 65536)
    assert first.object_info == ["Event Type Manual Reset", "Event is Set"]
    assert last.name == "\\BaseNamedObjects\\FilesMovedEvent" and last.object_info[-1] == "Event is Waiting"
    assert (r.fields["handles_of_type"], r.fields["type_filter"]) == ("7", "Event")


def test_user_handle_summary_without_indent() -> None:
    # a Windows 11 x64 "0:000> !handle" of a leaking python.exe, from the Chinese edition of
    # Vostokov's Python debugging book, whose copy lost the two-blank indent; type names with a
    # blank ("ALPC Port") and the "None" type in the summary. First handles and the summary only.
    out = (
        "Handle 0000000000000004\n"
        "Type             File\n"
        "Handle 0000000000000008\n"
        "Type             Event\n"
        "...\n"
        "Handle 0000000000001cdc\n"
        "Type             IRTimer\n"
        "1838 Handles\n"
        "Type                      Count\n"
        "None                     616\n"
        "Event                     7\n"
        "Semaphore                1188\n"
        "ALPC Port                 1\n"
        "WaitCompletionPacket      5\n"
    )
    r = parse("!handle", out)
    assert [(h.handle, h.type) for h in r.handles] == [
        ("0x0000000000000004", "File"),
        ("0x0000000000000008", "Event"),
        ("0x0000000000001cdc", "IRTimer"),
    ]
    assert r.fields["handle_total"] == "1838"
    assert [(t.type, t.count) for t in r.handle_types] == [
        ("None", 616),
        ("Event", 7),
        ("Semaphore", 1188),
        ("ALPC Port", 1),
        ("WaitCompletionPacket", 5),
    ]


def test_user_handle_rights_inline() -> None:
    # a published "cdb.exe -p <pid> -pv -c \"!handle 0xbcc f; q\"" session (Windows 11 x64, found by
    # code search): newer cdb prints the decoded rights in parentheses after the mask
    out = (
        "Handle bcc\n"
        "  Type          Event\n"
        "  GrantedAccess 0x1f0003 (Delete,ReadControl,WriteDac,WriteOwner,Synch,QueryState,ModifyState)\n"
        "  HandleCount   2\n"
        "  PointerCount  51683\n"
        "  Object Specific Information\n"
        "    Event Type Auto Reset\n"
        "    Event is Waiting\n"
    )
    (h,) = parse("!handle 0xbcc f", out).handles
    assert (h.handle, h.type, h.granted_access) == ("0xbcc", "Event", "0x1f0003")
    assert h.access_rights == ["Delete", "ReadControl", "WriteDac", "WriteOwner", "Synch", "QueryState", "ModifyState"]
    assert (h.handle_count, h.pointer_count, h.object_info) == (2, 51683, ["Event Type Auto Reset", "Event is Waiting"])


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
    assert len(r.handles) == 9
    free = r.handles[0]
    assert (free.handle, free.free, free.entry, free.next_entry) == ("0x0000", True, "0xe1002000", "0xfffffffe")
    assert r.handles[1].object == "0x80ed5238" and r.handles[1].granted_access == "0x001f0fff"
    assert r.handles[5].handle == "0x0168" and r.handles[5].flags == ["Protected"]
    assert r.handles[7].free and r.handles[7].next_entry == "0x00000458"
    assert {h.process for h in r.handles} == {"0x80559800"}


def _handles_01(c: Corpus) -> None:
    # user-mode "!handle": one type per handle, then the per-type summary
    r = c.record("families/handles/01.txt", "!handle")
    assert r.kind == "object" and r.object_type == "handle"
    assert [(h.handle, h.type) for h in r.handles] == [
        ("0x4", "Section"),
        ("0x8", "Event"),
        ("0xc", "Event"),
        ("0x10", "Event"),
        ("0x14", "Directory"),
        ("0x5c", "File"),
    ]
    assert r.fields["handle_total"] == "6"
    assert [(t.type, t.count) for t in r.handle_types] == [("Event", 3), ("Section", 1), ("File", 1), ("Directory", 1)]


def _handles_02(c: Corpus) -> None:
    r = c.record("families/handles/02.txt", "!handle 8 f")
    (h,) = r.handles
    assert (h.handle, h.type, h.attributes, h.granted_access) == ("0x8", "Event", "0", "0x100003")
    assert h.access_rights == ["Synch", "QueryState", "ModifyState"]
    assert (h.handle_count, h.pointer_count, h.name) == (2, 3, None)  # "Name          <none>"
    assert h.object_info == ["Event Type Auto Reset", "Event is Waiting"]
    assert (h.event_type, h.state, h.owner, h.semaphore_count) == ("Auto Reset", "Waiting", None, None)
    assert r.handle_types == []


def _handles_03(c: Corpus) -> None:
    r = c.record("families/handles/03.txt", "!handle 14 13")
    assert (r.fields["process"], r.fields["image"]) == ("0x80559800", "Idle")
    assert (r.fields["handle_table"], r.fields["entries_in_use"]) == ("0xe1002000", "380")
    # XP prints the ids on the PROCESS line and "TableSize: 380." where 7+ print HandleCount
    assert (r.fields["session_id"], r.fields["cid"], r.fields["table_size"]) == ("0", "0x0000", "380")
    (h,) = r.handles
    assert (h.handle, h.object, h.granted_access) == ("0x0014", "0xe12751d0", "0x0002001f")
    assert (h.type, h.type_address, h.object_header) == ("Key", "0x80ec8db8", "0xe12751b8")
    assert (h.handle_count, h.pointer_count, h.flags, h.entry) == (1, 1, [], None)
    assert h.name == "\\REGISTRY\\MACHINE\\SYSTEM\\CONTROLSET001\\CONTROL\\SESSION MANAGER\\EXECUTIVE"


def _handles_04(c: Corpus) -> None:
    r = c.output_record("families/handles/04.txt")
    assert (r.fields["process"], r.fields["image"]) == ("0xfffffa8004f48940", "smss.exe")
    assert (r.fields["session_id"], r.fields["cid"], r.fields["parent_cid"]) == ("none", "0x0138", "0x0004")
    assert (r.fields["handle_table"], r.fields["entries_in_use"]) == ("0xfffff8a00066f700", "39")
    (h,) = r.handles
    assert (h.handle, h.process, h.object) == ("0x0040", "0xfffffa8004f48940", "0xfffff8a000633f00")
    assert (h.granted_access, h.flags, h.entry) == ("0x00000006", ["Inherit"], "0xfffff8a000670100")
    assert (h.type, h.type_address, h.object_header) == ("Section", "0xfffffa80035fef20", "0xfffff8a000633ed0")
    assert (h.handle_count, h.pointer_count, h.name) == (1, 262144, None)


def _handles_05(c: Corpus) -> None:
    r = c.record("families/handles/05.txt", "!handle 0 3 ffffc38e2c0dc080 File")
    assert r.fields["type_filter"] == "File"
    assert (r.fields["process"], r.fields["image"]) == ("0xffffc38e2c0dc080", "IrpTrackerClient.exe")
    assert (r.fields["session_id"], r.fields["cid"], r.fields["parent_cid"]) == ("1", "0x08fc", "0x156c")
    assert (r.fields["peb"], r.fields["process_handle_count"]) == ("0xda309be000", "45")
    assert (r.fields["handle_table"], r.fields["entries_in_use"]) == ("0xffffa08f5ad26540", "45")
    assert [h.handle for h in r.handles] == ["0x0004", "0x0044", "0x004c", "0x00a4"]
    assert [h.flags for h in r.handles] == [[], ["Protected", "Inherit", "Audit"], ["Inherit"], ["Protected"]]
    assert [h.name for h in r.handles] == [
        "\\Reference {ConDrv}",
        "\\Input {ConDrv}",
        "\\IrpTracker {HarddiskVolume4}",
        None,
    ]
    last = r.handles[-1]
    assert (last.object, last.granted_access, last.entry) == ("0xffffc38e3d04ee40", "0x0012019f", "0xffffa08f5b1ff290")
    assert (last.object_header, last.handle_count, last.pointer_count) == ("0xffffc38e3d04ee10", 1, 32766)
    assert {h.type for h in r.handles} == {"File"} and r.warnings == []


def _handles_06(c: Corpus) -> None:
    # "0:000> !handle 0 f event" of a deadlocked x64 process: seven Event handles, tab-aligned
    r = c.record("families/handles/06.txt", "!handle 0 f event")
    assert [h.handle for h in r.handles] == [
        "0x0000000000000008",
        "0x000000000000000c",
        "0x0000000000000010",
        "0x0000000000000048",
        "0x000000000000004c",
        "0x00000000000000a8",
        "0x00000000000000ac",
    ]
    assert {h.type for h in r.handles} == {"Event"} and {h.granted_access for h in r.handles} == {"0x1f0003"}
    assert [h.pointer_count for h in r.handles] == [65536, 65536, 65537, 65525, 65533, 65538, 65538]
    assert [h.name for h in r.handles][-2:] == [
        "\\BaseNamedObjects\\FilesCreatedEvent",
        "\\BaseNamedObjects\\FilesMovedEvent",
    ]
    assert [h.name for h in r.handles][:5] == [None] * 5  # "Name         \t<none>"
    assert [(h.event_type, h.state) for h in r.handles] == [
        ("Manual Reset", "Set"),
        ("Manual Reset", "Set"),
        ("Auto Reset", "Waiting"),
        ("Auto Reset", "Set"),
        ("Auto Reset", "Set"),
        ("Manual Reset", "Waiting"),
        ("Manual Reset", "Waiting"),
    ]
    assert r.handles[0].access_rights[-2:] == ["QueryState", "ModifyState"] and len(r.handles[0].access_rights) == 7
    assert (r.fields["type_filter"], r.fields["handles_of_type"]) == ("Event", "7")
    assert r.handle_types == [] and r.warnings == []


def _handles_07(c: Corpus) -> None:
    # "!handle 0 f mutant": the mutex the main thread never released, owned by 2dd8.23a0
    r = c.record("families/handles/07.txt", "!handle 0 f mutant")
    free, owned = r.handles
    assert (free.handle, free.type, free.granted_access) == ("0x0000000000000078", "Mutant", "0x1f0001")
    assert free.access_rights == ["Delete", "ReadControl", "WriteDac", "WriteOwner", "Synch", "QueryState"]
    assert free.name == "\\Sessions\\1\\BaseNamedObjects\\SM0:11736:304:WilStaging_02"
    assert (free.state, free.owner, free.pointer_count) == ("Free", "0.0", 65536)
    assert (owned.handle, owned.name) == ("0x00000000000000b0", "\\Sessions\\1\\BaseNamedObjects\\NewMutex")
    assert (owned.state, owned.owner, owned.handle_count, owned.pointer_count) == ("Owned", "2dd8.23a0", 2, 65538)
    assert owned.object_info == ["Mutex is Owned", "Mutant Owner 2dd8.23a0"] and owned.event_type is None
    assert (r.fields["type_filter"], r.fields["handles_of_type"]) == ("Mutant", "2")


def _handles_08(c: Corpus) -> None:
    # "!handle 0 f semaphore": the file-operation semaphore is taken (count 0 of limit 1)
    r = c.record("families/handles/08.txt", "!handle 0 f semaphore")
    assert [(h.handle, h.semaphore_count, h.semaphore_limit) for h in r.handles] == [
        ("0x0000000000000078", 1736680388, 1736680388),
        ("0x000000000000007c", 274, 274),
        ("0x00000000000000a8", 0, 1),
    ]
    assert [h.name.rsplit("\\", 1)[-1] for h in r.handles if h.name] == [
        "SM0:7324:304:WilStaging_02_p0",
        "SM0:7324:304:WilStaging_02_p0h",
        "FileOperationSyncSemaphore",
    ]
    assert [h.pointer_count for h in r.handles] == [65538, 65538, 63537]
    assert {h.type for h in r.handles} == {"Semaphore"} and all(h.state is None for h in r.handles)
    assert (r.fields["type_filter"], r.fields["handles_of_type"]) == ("Semaphore", "3")


def _handles_09(c: Corpus) -> None:
    # kernel "1: kd> !handle 6c": the table could not be read, so no "Handle table at" line
    r = c.record("families/handles/09.txt", "!handle 6c")
    assert (r.fields["process"], r.fields["image"]) == ("0xffffe00128780080", "test.exe")
    assert (r.fields["session_id"], r.fields["cid"], r.fields["parent_cid"]) == ("1", "0x0a80", "0x0d5c")
    assert (r.fields["peb"], r.fields["dir_base"], r.fields["object_table"]) == (
        "0x7ff617654000",
        "0x080e5000",
        "0xffffc000d43244c0",
    )
    assert "process_handle_count" not in r.fields and "handle_table" not in r.fields  # "<Data Not Accessible>"
    assert r.warnings == ["Handle Error reading handle count."]
    (h,) = r.handles
    assert (h.handle, h.object, h.granted_access) == ("0x006c", "0xffffe001283ddf20", "0x00100081")
    assert (h.flags, h.entry) == (["Protected", "Inherit", "Audit"], "0xffffc000d2d5b1b0")
    assert (h.type, h.type_address, h.object_header) == ("File", "0xffffe001249b49a0", "0xffffe001283ddef0")
    assert (h.handle_count, h.pointer_count, h.directory_object) == (1, 32768, "0x00000000")
    assert h.name == "\\sample.txt {HarddiskVolume3}"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "kernel_objects/08.txt": _kernel_objects_08,
    "kernel_objects/09.txt": _kernel_objects_09,
    "families/handles/01.txt": _handles_01,
    "families/handles/02.txt": _handles_02,
    "families/handles/03.txt": _handles_03,
    "families/handles/04.txt": _handles_04,
    "families/handles/05.txt": _handles_05,
    "families/handles/06.txt": _handles_06,
    "families/handles/07.txt": _handles_07,
    "families/handles/08.txt": _handles_08,
    "families/handles/09.txt": _handles_09,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
