"""Served models to CallToolResult (kdmcp/server/render.py): errors as every client reads them."""

from __future__ import annotations

from kdmcp.errors import CommandTimeout, DebuggerExited, InvalidArgument
from kdmcp.server import models
from kdmcp.server.redaction import Redactor
from kdmcp.server.render import error_of, error_result, from_exception, ok_result, read_error
from kdmcp.session_state import SessionState
from tests.server.helpers import make_app


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


def test_a_success_is_the_model_as_structured_content_and_as_text():
    summary = models.SessionList(sessions=[], max_sessions=4)
    result = ok_result(summary, Redactor())
    assert not result.is_error and result.structured_content == {"sessions": [], "max_sessions": 4}
    assert read_error(result) is None
    assert [block.text for block in result.content] == ['{"sessions": [], "max_sessions": 4}']
