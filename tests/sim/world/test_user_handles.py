"""cdb's ``!handle`` text (kdmcp/sim/world/user_handles.py) held to the published samples' lines,
and the parser's reading of every form: the handles, the type summary, the type count."""

from __future__ import annotations

from pathlib import Path

import pytest

from kdmcp.parse import parse
from kdmcp.parse.models import ObjectRecord
from kdmcp.sim.world.symbols import ExprError
from kdmcp.sim.world.user_handles import UserHandle, handle_text

CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "corpus" / "families" / "handles"


def _eval(text: str) -> int:
    try:
        return int(text, 16) & ((1 << 64) - 1) if not text.startswith("-") else (1 << 64) - int(text[1:], 16)
    except ValueError:
        raise ExprError(text) from None


# the first two Event handles of families/handles/06 (a Windows 10 x64 process dump)
EVENTS = [
    UserHandle(0x8, "Event", 0x1F0003, 0, 2, 65536, info=("Event Type Manual Reset", "Event is Set")),
    UserHandle(0xC, "Event", 0x1F0003, 0, 2, 65536, info=("Event Type Manual Reset", "Event is Set")),
]


def test_a_dump_s_full_form_is_the_published_one_line_for_line() -> None:
    sample = (CORPUS / "06.txt").read_text().split("\n", 1)[1]  # the lines after "0:000> !handle 0 f event"
    ours = handle_text(EVENTS, "0 f event", _eval, live=False)
    # the first two blocks byte for byte (the sample goes on with five more)
    blocks = ours.split("2 handles of type Event")[0]
    assert blocks.count("Handle ") == 2 and sample.startswith(blocks)
    assert ours.endswith("2 handles of type Event\n")


def test_the_summary_counts_types_in_ntsdexts_order_unknown_ones_as_none() -> None:
    # i4's published live !handle: IRTimer is not in the type table, so it counts as None
    handles = [UserHandle(4, "Event", 0x1F0003), UserHandle(8, "IRTimer", 0x100002), UserHandle(0xC, "File", 0x12019F),
               UserHandle(0x10, "WaitCompletionPacket", 1), UserHandle(0x14, "TpWorkerFactory", 0xF00FF)]
    text = handle_text(handles, "", _eval, live=True)
    assert text.startswith("Handle 4\n  Type         \tEvent\nHandle 8\n  Type         \tIRTimer\n")
    assert text.endswith(
        "5 Handles\nType           \tCount\nNone           \t1\nEvent          \t1\nFile           \t1\n"
        "TpWorkerFactory\t1\nWaitCompletionPacket\t1\n"
    )
    record = parse("!handle", text)
    assert isinstance(record, ObjectRecord)
    assert len(record.handles) == 5 and record.fields["handle_total"] == "5"
    assert [(t.type, t.count) for t in record.handle_types][-1] == ("WaitCompletionPacket", 1)


def test_a_file_has_no_name_line_and_live_specific_wording() -> None:
    # i4's "!handle a4 f" (live, Windows 10 x64), line for line
    text = handle_text([UserHandle(0xA4, "File", 0x120196, 0, 2, 32769)], "a4 f", _eval, live=True)
    assert text == (
        "Handle a4\n  Type         \tFile\n  Attributes   \t0\n  GrantedAccess\t0x120196:\n"
        "         ReadControl,Synch\n         Write/Add,Append/SubDir/CreatePipe,WriteEA,ReadAttr,WriteAttr\n"
        "  HandleCount  \t2\n  PointerCount \t32769\n  No Object Specific Information available\n"
    )


def test_flags_zero_print_only_the_count_and_the_errors() -> None:
    assert handle_text(EVENTS, "0 0 Event", _eval, live=True) == "2 handles of type Event\n"
    assert handle_text(EVENTS, "0 0 file", _eval, live=True) == "0 handles of type File\n"
    assert handle_text(EVENTS, "0 1 Bogus", _eval, live=True) == "Unknown type 'Bogus'\n"
    # a dump written without MINIDUMP_HANDLE_DATA_STREAM
    assert handle_text(None, "", _eval, live=False) == "Unable to read handle information\n"
    with pytest.raises(ExprError):
        handle_text(EVENTS, "zz", _eval, live=True)


def test_pointer_width_handles_in_a_dump() -> None:
    assert handle_text(EVENTS, "c", _eval, live=False) == "Handle 000000000000000c\n  Type         \tEvent\n"
    assert handle_text(EVENTS, "c", _eval, live=False, x64=False) == "Handle 0000000c\n  Type         \tEvent\n"


def test_one_handle_without_flag_1_has_no_type_for_its_rights() -> None:
    # jumpdollar.blogspot.com's "!handle 10 2" / "!handle 10 8" on a Windows x64 user dump
    event = [UserHandle(0x10, "Event", 0x1F0003, 0, 2, 65537)]
    standard = "         Delete,ReadControl,WriteDac,WriteOwner,Synch\n"
    assert handle_text(event, "10 2", _eval, live=False) == (
        "Handle 0000000000000010\n  Attributes   \t0\n  GrantedAccess\t0x1f0003:\n"
        + standard + standard + "  HandleCount  \t2\n  PointerCount \t65537\n"
    )
    assert handle_text(event, "10 8", _eval, live=False) == (
        "Handle 0000000000000010\n  No object specific information available\n"
    )
    # with flag 1 the type is known: its own rights
    assert "         QueryState,ModifyState\n" in handle_text(event, "10 f", _eval, live=False)
