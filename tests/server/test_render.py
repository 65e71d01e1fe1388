"""Served models to CallToolResult (kdmcp/server/render.py): errors as every client reads them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.engine import DebuggerEvent
from kdmcp.errors import CommandTimeout, DebuggerExited, InvalidArgument
from kdmcp.secret import Secret
from kdmcp.server import models
from kdmcp.server.redaction import Redactor
from kdmcp.server.render import error_of, error_result, from_exception, ok_result, read_error, result_data
from kdmcp.session_state import SessionState
from tests.server.helpers import make_app
from tests.tiers import examples


async def test_a_multi_line_message_and_the_details_survive_the_round_trip():
    app = make_app()
    error = models.ErrorResult(category="timeout", message="line one\nline two", session_id="s3",
                               partial_output="Scanning pool\r\n", output_id="s3:0-15")
    served = {name: value for name, value in app.redactor.model(error).items() if value is not None}  # as masked
    assert read_error(error_result(error, app.redactor)) == served and served["message"] == "line one\nline two"
    app.shutdown()


def test_an_exception_becomes_its_category_and_typed_fields():
    timeout = CommandTimeout("no prompt", session_id="s2", state=SessionState.busy, partial_output="abc",
                             output_offset=10, output_end=13)
    assert error_of(timeout) == models.ErrorResult(category="timeout", message="no prompt", session_id="s2",
                                                   state=SessionState.busy, partial_output="abc",
                                                   output_id="s2:10-13")
    exited = error_of(DebuggerExited("gone", session_id="s1", exit_code=3))
    assert (exited.category, exited.exit_code, exited.output_id) == ("debugger_exited", 3, None)
    plain = read_error(from_exception(InvalidArgument("fix it"), Redactor()))
    assert plain == {"category": "invalid_argument", "message": "fix it"}


def test_a_success_is_one_text_block_and_structured_content_only_when_asked():
    summary = models.SessionList(sessions=[], max_sessions=4)
    # The default: one rendering, whatever the client shows (docs/results.md).
    plain = ok_result(summary, Redactor())
    assert not plain.is_error and plain.structured_content is None
    assert [block.text for block in plain.content] == ["[0 sessions, at most 4]"]
    assert result_data(plain) == {"max_sessions": 4}  # what the transcript records, unsent
    result = ok_result(summary, Redactor(), structured=True)
    # Empty lists and defaults are left out of structuredContent; the text is not its JSON.
    assert not result.is_error and result.structured_content == {"max_sessions": 4}
    assert read_error(result) is None
    assert [block.text for block in result.content] == ["[0 sessions, at most 4]"]


def test_structured_content_never_holds_the_raw_output_beside_a_parse_of_it():
    def command(**fields: object) -> models.CommandResult:
        return models.CommandResult(session_id="s1", state=SessionState.broken, elapsed_ms=1.0, command="x",
                                    output="raw", output_id="s1:0-3", output_bytes=3, **fields)

    unparsed = ok_result(command(), Redactor(), structured=True)
    assert unparsed.structured_content["output"] == "raw"  # nothing parsed it: it is all there is
    parsed = ok_result(command(record={"kind": "expression", "value": "0x1"}), Redactor(), structured=True)
    assert "output" not in parsed.structured_content and parsed.structured_content["record"]["kind"] == "expression"
    assert parsed.content[0].text.endswith("\nraw")  # the raw output is in the text block


def test_a_flood_of_events_is_cut_to_its_first_and_last_few_and_where_the_rest_are():
    events = [DebuggerEvent(seq=i, kind="dbgprint", text=f"print {i}\n", offset=10 * i, end_offset=10 * i + 8,
                            time_unix=0.0) for i in range(1, 51)]
    result = models.ContinueResult(session_id="s1", state=SessionState.running, elapsed_ms=1.0,
                                   confirmed="running", events=events)
    served = ok_result(result, Redactor(), structured=True)
    lines = served.content[0].text.split("\n")
    assert lines[1:4] == ["[event dbgprint] print 1", "[event dbgprint] print 2", "[event dbgprint] print 3"]
    assert lines[4] == "[45 more of 50 events (dbgprint): read_output output_id=s1:40-488]"
    assert lines[5:] == ["[event dbgprint] print 49", "[event dbgprint] print 50"]
    data = served.structured_content
    assert [e["seq"] for e in data["events"]] == [1, 2, 3, 49, 50]
    assert data["events_cut"] == {"total": 50, "left_out": 45, "output_id": "s1:40-488"}
    few = ok_result(result.model_copy(update={"events": events[:6]}), Redactor()).content[0].text
    assert few.count("[event ") == 6 and "more of" not in few  # a few are shown whole


def _event(kind: str, text: str, seq: int = 1) -> DebuggerEvent:
    return DebuggerEvent(seq=seq, kind=kind, text=text, offset=0, end_offset=len(text), time_unix=0.0)


def test_a_command_result_is_a_header_the_raw_output_and_one_line_per_event():
    result = models.CommandResult(
        session_id="s1", state=SessionState.broken, prompt="0: kd> ", elapsed_ms=3.14159, command="k",
        output="line one\r\nline two\r\n", output_id="s1:10-30", output_bytes=20,
        events=[_event("breakpoint", "Breakpoint 0 hit\nnt!Foo:\n"), _event("dbgprint", "x" * 300, 2)],
    )
    served = ok_result(result, Redactor(), structured=True)
    (block,) = served.content
    assert block.text.split("\n") == [
        '[s1 broken "0: kd> " 3.1 ms]', "line one", "line two",  # \\n line ends, as a model reads
        "[event breakpoint] Breakpoint 0 hit…", "[event dbgprint] " + "x" * 200 + "…"]
    data = served.structured_content
    assert data["elapsed_ms"] == 3.1 and "truncated" not in data and "record" not in data
    assert data["events"][0] == {"seq": 1, "kind": "breakpoint", "text": "Breakpoint 0 hit\nnt!Foo:\n",
                                 "offset": 0, "end_offset": 25, "time_unix": 0.0}


def test_the_header_says_where_the_rest_of_a_cut_output_is():
    result = models.CommandResult(session_id="s1", state=SessionState.broken, elapsed_ms=200.0, command="!bulk",
                                  output="abc", truncated=True, output_id="s1:0-99999", output_bytes=99999,
                                  record_partial=True)
    (block,) = ok_result(result, Redactor()).content
    assert block.text.splitlines()[0] == (
        "[s1 broken 200 ms truncated, 99999 B in all: read_output output_id=s1:0-99999]")


def test_read_output_text_is_masked_once_and_not_again():
    key = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"
    redactor = Redactor([Secret(key)])
    # ``text`` comes from byte_range, masked against the whole store: a second pass would turn
    # ``key=abc`` into ``key=***`` here, so the text shows it got exactly one. Other fields get theirs.
    chunk = models.OutputChunk(session_id="s1", state=SessionState.broken, offset=0, next_offset=3,
                               total_bytes=3, eof=True, text="*** key=abc")
    data = ok_result(chunk, redactor, structured=True).structured_content
    assert data["text"] == "*** key=abc"
    masked = ok_result(chunk.model_copy(update={"session_id": key}), redactor, structured=True)
    assert masked.structured_content["session_id"] == "***"


def test_a_stop_says_its_elapsed_time_once_and_what_it_did():
    stop = models.StopResult(session_id="s1", state=SessionState.exited, actions=["resumed target", "sent q"],
                             exit_code=0, elapsed_ms=170.0)
    (block,) = ok_result(stop, Redactor()).content
    assert block.text == "[s1 exited 170 ms exit code 0]\nresumed target, sent q"


def test_a_recursion_in_a_stack_shows_its_first_and_last_frames_and_where_the_rest_are():
    frames = [f"{i:02x} 00103128 00dea6a7     001052f8 001ff9c8 7efde000 crashme+0xa6a7" for i in range(1, 41)]
    output = "\r\n".join([" # ChildEBP RetAddr      Args to Child",
                          "00 00103128 00dea6a7     001052f8 001ff9c8 7efde000 crashme+0xa637", *frames,
                          "29 00145a40 77c1a000     00000000 00000000 00000000 ntdll!RtlUserThreadStart+0x1b"])
    result = models.CommandResult(session_id="s1", state=SessionState.broken, elapsed_ms=1.0, command="kb",
                                  output=output, output_id="s1:0-9000", output_bytes=9000)
    lines = ok_result(result, Redactor()).content[0].text.split("\n")
    assert lines[3:6] == frames[:3]
    assert lines[6] == "[36 more frames at crashme+0xa6a7: read_output output_id=s1:0-9000]"
    assert lines[7] == frames[-1] and lines[8].endswith("ntdll!RtlUserThreadStart+0x1b") and len(lines) == 9
    few = models.CommandResult(session_id="s1", state=SessionState.broken, elapsed_ms=1.0, command="kb",
                               output="\n".join(frames[:4]), output_id="s1:0-9", output_bytes=9)
    assert ok_result(few, Redactor()).content[0].text.split("\n")[1:] == frames[:4]  # a few repeats stay


# The recursion cut counts frame lines in one pass over the whole text (text._FRAMES) before it reads
# them line by line (text._FRAME): both must find the same lines, or a cut would be skipped.
_FRAME_LINES = ["00 fffff800`62a05c20 fffff800`62a05c21 nt!Foo+0x1", "01 ffffd00012345678 ffffd00012345679 nt!Bar",
                "0a 12345678 12345678 12345678 x!y", "rax=0", "fffff800`62a05c20 cc int 3", "",
                " 02 aaaaaaaa bbbbbbbb c", "0b aaaaaaaa bbbbbbbb c \r", "00 aaaaaaaa bbbbbbbb"]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FRAME_LINES), st.text(alphabet="0123456789abcdef` \r\nx!", max_size=40)),
                max_size=14))
def test_the_frames_are_counted_in_one_pass_as_line_by_line(lines: list[str]):
    from kdmcp.server import text

    whole = "\n".join(lines)
    assert len(text._FRAMES.findall(whole)) == sum(1 for line in whole.split("\n") if text._FRAME.match(line))
