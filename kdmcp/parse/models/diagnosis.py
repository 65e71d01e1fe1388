"""Records of what went wrong: ``!analyze -v``, ``.exr``, ``!error``/``!gle``, and the debugger's own errors."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kdmcp.parse.models.base import RecordBase, ServedForm, StrictModel
from kdmcp.parse.models.parts import Context, ExceptionInfo, Frame, Instruction

# --------------------------------------------------------------------------- analysis


class Bugcheck(StrictModel):
    """The bugcheck ``!analyze`` names: ``DRIVER_IRQL_NOT_LESS_OR_EQUAL (d1)`` and Arg1..Arg4."""

    code: str | None = None
    name: str | None = None
    args: list[str] = Field(default_factory=list)
    arg_descriptions: list[str] = Field(default_factory=list)
    description: str | None = None


class AnalysisRecord(RecordBase, ServedForm):
    """``!analyze -v``, kernel and user mode, pre-2019 and current layouts."""

    kind: Literal["analysis"] = "analysis"
    mode: Literal["kernel", "user"] | None = None
    bugcheck: Bugcheck | None = None
    exception: ExceptionInfo | None = None
    module_name: str | None = None
    image_name: str | None = None
    symbol_name: str | None = None
    process_name: str | None = None
    failure_bucket_id: str | None = None
    failure_id_hash: str | None = None
    faulting_ip: Instruction | None = None
    followup_ip: Instruction | None = None
    faulting_source_file: str | None = None
    faulting_source_line: int | None = None
    stack_command: str | None = None
    stack: list[Frame] = Field(default_factory=list)
    trap_frame: Context | None = None
    key_values: dict[str, str] = Field(default_factory=dict)
    fields: dict[str, str] = Field(default_factory=dict)

    def leave_out_derived(self, data: dict[str, Any]) -> None:
        """Served, ``fields`` keeps only the sections no typed field holds parsed: the others'
        text is in the result's ``output`` already (and parsed here), so it is not sent twice."""
        if "fields" in data:
            kept = {
                name: text
                for name, text in data["fields"].items()
                if name not in TYPED_SECTIONS or not getattr(self, TYPED_SECTIONS[name])
            }
            if kept:
                data["fields"] = kept
            else:
                del data["fields"]


# Sections of ``!analyze -v`` whose value ``kdmcp/parse/analyze.py`` copies into a field as is.
SIMPLE_SECTIONS = {
    "MODULE_NAME": "module_name",
    "IMAGE_NAME": "image_name",
    "SYMBOL_NAME": "symbol_name",
    "PROCESS_NAME": "process_name",
    "FAILURE_BUCKET_ID": "failure_bucket_id",
    "FAILURE_ID_HASH": "failure_id_hash",
    "STACK_COMMAND": "stack_command",
    "FAULTING_SOURCE_FILE": "faulting_source_file",
}
# Every section a typed field holds parsed: those, and the ones analyze.py parses.
TYPED_SECTIONS = {
    "STACK_TEXT": "stack",
    "EXCEPTION_RECORD": "exception",
    "FAULTING_IP": "faulting_ip",
    "FOLLOWUP_IP": "followup_ip",
    "KEY_VALUES_STRING": "key_values",
    "FAULTING_SOURCE_LINE_NUMBER": "faulting_source_line",
    **SIMPLE_SECTIONS,
}


# --------------------------------------------------------------------------- exceptions, errors


class ExceptionRecordRecord(RecordBase, ExceptionInfo):
    """``.exr``, ``.lastevent``, ``.jdinfo`` (which adds a context)."""

    kind: Literal["exception_record"] = "exception_record"
    thread: str | None = None
    context: Context | None = None
    # what .exr / .lastevent print beyond ExceptionInfo: "NumberParameters: 0" (the count, also
    # when no Parameter[n] line follows), the NT4-era "Exception Record @ FE40CD88:" and
    # "Chained Record: 00000000", and .lastevent's "debugger time: ..." line
    parameter_count: int | None = None
    record_address: str | None = None
    chained_record: str | None = None
    debugger_time: str | None = None


class ErrorCodeRecord(RecordBase):
    """``!error``: ``Error code: (Win32) 0x2 (2) - The system cannot find the file specified.``;
    ``!gle``: ``LastErrorValue: (Win32) 0x2 (2) - ...`` and ``LastStatusValue: (NTSTATUS) ...``."""

    kind: Literal["error_code"] = "error_code"
    code: str | None = None
    decimal: int | None = None
    facility: str | None = None  # "Win32", "NTSTATUS", "HRESULT"
    message: str | None = None
    # !gle prints the thread's last Win32 error (the fields above) and its last NTSTATUS
    last_status: str | None = None
    last_status_message: str | None = None


class DebuggerError(StrictModel):
    """One complaint line of the debugger, classified."""

    category: str
    message: str
    line: str
    noise: bool = False  # symbol/unwind chatter that accompanies successful output


class ErrorRecord(RecordBase):
    """The command failed: the debugger printed only its own error text.

    ``category`` is what a caller acts on: ``syntax``, ``memory_access``, ``bad_register``,
    ``unresolved_symbol``, ``no_export``, ``symbol_load``, ``not_supported``,
    ``extension_load``, ``no_target``, ``context``, ``invalid_argument``, ``script``,
    ``file``.
    """

    kind: Literal["error"] = "error"
    category: str
    message: str
    errors: list[DebuggerError] = Field(default_factory=list)
