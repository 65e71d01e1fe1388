"""debug_batch's text block (kdmcp/server/tools/batch/models.py): a line per step, then the rollback."""

from __future__ import annotations

from kdmcp.server.tools.batch.models import BatchResult, StepRecord, text


def test_the_text_block_has_a_line_per_step_and_the_rollback():
    result = BatchResult(
        session_id="s1",
        state="broken",
        prompt="0: kd> ",
        elapsed_ms=42.0,
        outcome="failed",
        failed_step=3,
        steps=[
            StepRecord(index=1, what="`bp nt!NtWriteFile`", ok=True),
            StepRecord(index=2, what="continue_go", ok=True, summary="confirmed running"),
            StepRecord(
                index=3,
                what="`r`",
                ok=False,
                unmet="expected ok, got error[target_running]",
                error={"category": "target_running", "message": "break in first"},
            ),
            StepRecord(index=1, what="`.echo done`", always=True, ok=True, summary="done"),
        ],
        rolled_back=["break_in", "bc 0"],
        not_rolled_back=["registers: the target ran"],
    )
    assert text(result.model_dump(mode="json", exclude_defaults=True, exclude_none=True)).splitlines() == [
        '[s1 broken "0: kd> " 42.0 ms failed at step 3]',
        "1 ok `bp nt!NtWriteFile`",
        "2 ok continue_go: confirmed running",
        "3 FAILED `r`: expected ok, got error[target_running] (break in first)",
        "always 1 ok `.echo done`: done",
        "rolled back: break_in; bc 0",
        "not rolled back: registers: the target ran",
    ]


def test_an_expected_error_reads_as_ok_with_the_error():
    step = StepRecord(index=1, what="`bp x`", ok=True, error={"category": "policy_denied", "message": "no"})
    result = BatchResult(session_id="s1", state="broken", elapsed_ms=1.0, outcome="committed", steps=[step])
    lines = text(result.model_dump(mode="json", exclude_defaults=True, exclude_none=True)).splitlines()
    assert lines[1] == "1 ok `bp x`: error[policy_denied]: no"
