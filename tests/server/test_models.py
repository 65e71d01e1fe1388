"""The served models (kdmcp/server/models.py): records typed until serialised, engine fields by name."""

from __future__ import annotations

from kdmcp.engine.results import StopResult as EngineStopResult
from kdmcp.parse import RegistersRecord, parse
from kdmcp.server import models
from kdmcp.session_state import SessionState

REGISTERS = "rax=0000000000000001 rbx=0000000000000002\r\nrip=fffff80062a05c20\r\n"


def _command(record: object) -> models.CommandResult:
    return models.CommandResult(
        session_id="s1", state=SessionState.broken, elapsed_ms=1.0, command="r", output=REGISTERS,
        truncated=False, output_id=models.output_id("s1", 0, 9), output_bytes=9,
        record=record,
    )


def test_a_record_stays_typed_and_is_served_without_its_raw_text():
    served = _command(parse("r", REGISTERS))
    assert isinstance(served.record, RegistersRecord)
    data = served.model_dump(mode="json")
    assert data["record"]["kind"] == "registers" and "raw" not in data["record"]
    assert data["output_id"] == "s1:0-9"
    # Read back from the wire (as the SDK checks every result against the output model): typed again.
    again = models.CommandResult.model_validate(data)
    assert isinstance(again.record, RegistersRecord) and again.record.registers == served.record.registers


def test_the_output_schema_still_promises_an_object_or_null():
    schema = models.CommandResult.model_json_schema()["properties"]["record"]
    assert schema["anyOf"] == [{"additionalProperties": True, "type": "object"}, {"type": "null"}]
    assert _command(None).model_dump()["record"] is None


def test_served_fields_are_the_engine_fields_the_model_declares():
    engine = EngineStopResult(actions=["sent q"], state=SessionState.exited, exit_code=0, elapsed_ms=2.5)
    assert models.served_fields(models.StopResult, engine) == {
        "state": SessionState.exited, "actions": ["sent q"], "exit_code": 0, "elapsed_ms": 2.5}
