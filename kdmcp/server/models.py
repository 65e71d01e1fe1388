"""What the tools return: one pydantic model per tool result, served as ``structuredContent``.

Every result says the session's state *after* the call, so a program never has to guess
whether the target runs. Output is capped inline; ``output_id`` and the byte offsets address
all of it through ``read_output``.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import BaseModel, Field, PlainSerializer, PlainValidator, PrivateAttr, TypeAdapter, WithJsonSchema
from typing_extensions import Self

from kdmcp.engine import DebuggerEvent, SessionState
from kdmcp.engine.kinds import SessionKind
from kdmcp.errors import ErrorCategory
from kdmcp.parse.prompt import Prompt
from kdmcp.parse.record_base import SERVED, RecordBase
from kdmcp.server.text import (
    Data,
    command_extras,
    command_text,
    dump_text,
    event_lines,
    fallback_text,
    header,
    health_text,
    join,
    module_rows,
    process_rows,
    sessions_text,
    share_text,
    start_text,
    symbol_summary,
    tidy,
)
from kdmcp.validation import LazyModel

# Milliseconds as served: a tenth is what a reader can use; more digits are noise to pay for.
Millis = Annotated[float, PlainSerializer(lambda ms: round(ms, 1), return_type=float)]


def output_id(session_id: str, start: int, end: int) -> str:
    """The handle ``read_output`` takes for bytes ``[start, end)`` of a session's output."""
    return f"{session_id}:{start}-{end}"


def served_fields(model: type[BaseModel], result: BaseModel) -> dict[str, Any]:
    """The fields of an engine ``result`` that the served ``model`` declares under the same name.

    The engine's results and the served ones share their field names; a served model states
    which of them it serves (and adds its own), so nothing is copied field by field.
    """
    return {name: getattr(result, name) for name in _shared_names(model, type(result))}


@functools.cache
def _shared_names(model: type[BaseModel], result: type[BaseModel]) -> tuple[str, ...]:
    """The field names ``model`` and ``result`` share, in ``model``'s order (``model_fields`` is
    a descriptor, read on every call of a comprehension over it)."""
    return tuple(name for name in model.model_fields if name in result.model_fields)


def _record_json(record: RecordBase | None) -> dict[str, Any] | None:
    """The record as served: its kind first, then the fields that say something (nulls, defaults
    and empty lists left out). The raw text and the command are the result's ``output`` and
    ``command`` already: served once."""
    if record is None:
        return None
    fields = record.model_dump(mode="json", exclude={"raw", "command"}, exclude_none=True, exclude_defaults=True,
                               context=SERVED)
    return {"kind": getattr(record, "kind", "text"), **fields}


@functools.cache
def _record_adapter() -> TypeAdapter[Any]:
    """The ``Record`` union's validator, built on first use: building it (and importing every
    record model) is a quarter of a second a client would wait for at start-up."""
    from kdmcp.parse.models import Record

    return TypeAdapter(Record)


def _record_in(value: object) -> RecordBase | None:
    """A record as built (typed) or as served (an object without ``raw``, which it gets back empty):
    the SDK checks each result against the output model, and a program may read one back."""
    if value is None or isinstance(value, RecordBase):
        return value
    if isinstance(value, dict):
        record: RecordBase = _record_adapter().validate_python({**value, "raw": ""})
        return record
    raise ValueError("a record is a parsed record or its served object")


# A parsed record stays typed (one of kdmcp.parse's ``Record`` kinds) until it is serialised; the
# output schema promises an object, as it always has (each kind's fields: docs/parsing.md).
ServedRecord = Annotated[
    RecordBase | None,
    PlainValidator(_record_in),
    PlainSerializer(_record_json, return_type=dict[str, Any] | None),
    WithJsonSchema({"anyOf": [{"additionalProperties": True, "type": "object"}, {"type": "null"}]}),
]


class Served(LazyModel):
    """A served result: its text block is its own (``render_text``, from its masked dump)."""

    @classmethod
    def render_text(cls, data: Data) -> str:
        return fallback_text(data)

    @classmethod
    def header_extras(cls, data: Data) -> list[str]:
        """What its text block's header says after the session, state, prompt and elapsed time
        (``confirmed running``): the gist of a result with nothing under its header, which
        ``debug_batch`` shows as the step's summary."""
        return []


class ErrorResult(LazyModel):
    """An ``isError`` result: branch on ``category``, show ``message``.

    Not served as ``structuredContent`` (it would not match the tool's output schema): it
    leaves as text, ``error[category]: message`` plus a JSON block of the other fields
    (docs/clients.md).
    """

    category: ErrorCategory
    message: str
    session_id: str | None = None
    state: SessionState | None = None
    # timeout: what arrived before the deadline, and where all of it is.
    partial_output: str | None = None
    output_id: str | None = None
    exit_code: int | None = None


class SessionResult(Served):
    """Fields every session-bound result carries."""

    session_id: str
    state: SessionState
    prompt: str | None = Field(default=None, description="the debugger's prompt, e.g. '0: kd> '")
    events: list[DebuggerEvent] = Field(
        default_factory=list, description="what the debugger reported since the previous result for this session"
    )
    elapsed_ms: Millis

    @classmethod
    def serve(
        cls, result: BaseModel, *, session_id: str, prompt: Prompt | None, events: list[DebuggerEvent], **own: Any
    ) -> Self:
        """The served result of an engine ``result``: its shared fields, the prompt as text, the
        events since the previous result for this session, and the fields only the server has."""
        shared = {**served_fields(cls, result), "session_id": session_id, "events": events,
                  "prompt": prompt.text if prompt is not None else None}
        return cls(**{**shared, **own})


class StartResult(SessionResult):
    kind: SessionKind = Field(default="kdnet", description="what the session debugs (docs/targets.md)")
    command_line: str = Field(description="the debugger's command line, key redacted")
    banner: str
    truncated: bool = False
    state_file: str | None = None
    warnings: list[str] = Field(default_factory=list)

    @classmethod
    def render_text(cls, data: Data) -> str:
        return start_text(data, cls.header_extras(data))

    @classmethod
    def header_extras(cls, data: Data) -> list[str]:
        extra = [data["kind"]] if "kind" in data else []  # left out: kdnet, the default
        return extra + (["banner truncated"] if data.get("truncated") else [])


StartT = TypeVar("StartT", bound=StartResult)


class DumpSummary(LazyModel):
    """What a dump holds, read from the debugger's own answers (vertarget, .bugcheck or .exr -1, lm)."""

    os: str | None = Field(default=None, description="vertarget's version line")
    build_lab: str | None = None
    arch: str | None = None
    processors: int | None = None
    bugcheck: dict[str, Any] | None = Field(default=None, description="kernel dumps: code and args (.bugcheck)")
    exception: dict[str, Any] | None = Field(default=None, description="user dumps: the stored exception (.exr -1)")
    modules: int | None = Field(default=None, description="modules loaded (lm)")


class DumpResult(StartResult):
    dump: DumpSummary

    @classmethod
    def render_text(cls, data: Data) -> str:
        return dump_text(data, cls.header_extras(data))


class ShareResult(SessionResult):
    connection: str = Field(description="what a debugging client passes to -remote")
    join: list[str] = Field(description="command lines a person runs to join: windbg, then kd or cdb")
    listener: str = Field(description="where the debugging server listens (local machine only)")

    @classmethod
    def render_text(cls, data: Data) -> str:
        return share_text(data)


class CommandResult(SessionResult):
    command: str
    output: str
    truncated: bool = Field(default=False,
                            description="output was cut at the inline cap: read the rest with read_output")
    output_id: str = Field(description="pass to read_output to read the whole output (SESSION:START-END: "
                           "where it lies in the session's output)")
    output_bytes: int
    record: ServedRecord = Field(
        default=None,
        description="the output parsed into a typed record (kind + fields, docs/parsing.md); raw text is in output",
    )
    record_partial: bool = Field(default=False, description="the record covers only the inline (capped) output")
    # The record's kind where only that was read (a text-only result's kd_command: the text says
    # ``unparsed`` for ``text``, and no more of the record; render.ok_result). Not a field: not served.
    _record_kind: str | None = PrivateAttr(default=None)

    @property
    def record_kind(self) -> str | None:
        """The record's kind: the record's own, or the one read alone (``read_kind``)."""
        return getattr(self.record, "kind", "text") if self.record is not None else self._record_kind

    def read_kind(self, kind: str) -> None:
        self._record_kind = kind

    @classmethod
    def render_text(cls, data: Data) -> str:
        return command_text(data)

    @classmethod
    def header_extras(cls, data: Data) -> list[str]:
        return command_extras(data)


CommandT = TypeVar("CommandT", bound=CommandResult)


class ListCount(LazyModel):
    total: int
    returned: int


class SymbolCounts(LazyModel):
    """What ``lm`` says of symbols, over every module it listed (not only the ``limit`` returned)."""

    loaded: list[str] = Field(default_factory=list, description="modules with symbols loaded")
    without: list[str] = Field(default_factory=list, description="no symbols, export symbols only, or an error")
    deferred: int = Field(default=0, description="not loaded yet: kd loads them on first use")

    @classmethod
    def of(cls, modules: list[Any]) -> Self:
        counts = cls()
        for m in modules:
            status = m.symbol_status or ""
            if status == "deferred":
                counts.deferred += 1
            elif status in ("no symbols", "export symbols") or "error" in status:
                counts.without.append(m.name)
            elif status:
                counts.loaded.append(m.name)
        return counts


# Record kinds whose rows ``InspectResult`` renders itself, compact and cut to ``limit``, with
# the count first; their raw output stays one ``read_output`` away (the header's ``raw:``).
_ROWS = {"processes": ("processes", process_rows), "modules": ("modules", module_rows)}


class InspectResult(CommandResult):
    """A typed read: one command, one record, long lists capped (counts say what was cut).

    Its text block: for a listing (``_ROWS``: processes, modules) the count, then one compact
    row per item, at most ``limit``, and where kd's own text is; for the rest kd's output.
    """

    lists: dict[str, ListCount] = Field(default_factory=dict, description="per list field: total and returned")
    symbols: SymbolCounts | None = Field(default=None, description="lm: symbol status over every module listed")

    @classmethod
    def render_text(cls, data: Data) -> str:
        record = data.get("record") or {}
        rows = _ROWS.get(record.get("kind", ""))
        frames = data.get("lists", {}).get("frames")
        if rows is None and frames is not None and frames["returned"] < frames["total"]:
            # a cut stack: kd's column header and the frames returned, not the rest
            kept = tidy(data["output"]).split("\n")[: 1 + frames["returned"]]
            return command_text({**data, "output": "\n".join(kept)})
        if rows is None:
            return command_text(data)
        name, render = rows
        count = data.get("lists", {}).get(name, {"total": 0, "returned": 0})
        shown = f", {count['returned']} shown" if count["returned"] < count["total"] else ""
        lines = [f"{count['total']} {name}{shown}"]
        if "symbols" in data:
            lines[0] += "; " + symbol_summary(data["symbols"])
        head = header(data, *[e for e in command_extras(data) if not e.startswith("lists cut")],
                      f"raw: output_id={data['output_id']}")
        return join(head, "\n".join(lines + render(record)), event_lines(data))


class TypedResult(CommandResult):
    """A typed tool's result (issue 15): its own typed fields beside the debugger's raw ``output``.

    ``command`` is what it ran (several commands joined by ``; ``), ``output`` their outputs
    in order, ``output_id`` the span of all of them. The text block is the header, the lines
    of ``text_lines`` (what the raw output does not say at a glance), then the raw output.
    """

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        """Lines shown before the raw output in the text block (``data``: the served dump)."""
        return []

    @classmethod
    def render_text(cls, data: Data) -> str:
        return command_text(data, cls.text_lines(data))


class BreakResult(SessionResult):
    already_broken: bool

    @classmethod
    def render_text(cls, data: Data) -> str:
        return join(header(data, *cls.header_extras(data)), None, event_lines(data))

    @classmethod
    def header_extras(cls, data: Data) -> list[str]:
        return ["already broken in"] if data["already_broken"] else []


class ContinueResult(SessionResult):
    confirmed: str = Field(description="'running', 'stopped' when the target stopped again at once, or 'unread' "
                           "when kd did not read the g (frozen or hung: the target may still be at its break)")

    @classmethod
    def render_text(cls, data: Data) -> str:
        return join(header(data, *cls.header_extras(data)), None, event_lines(data))

    @classmethod
    def header_extras(cls, data: Data) -> list[str]:
        if data["confirmed"] == "unread":
            return ["NOT confirmed: kd has not read the g (frozen or hung?); the target may still be at its "
                    "break: break_in, then continue_go again, or check the guest"]
        return [f"confirmed {data['confirmed']}"]


class ResumeResult(ContinueResult):
    waited_s: float
    hint: str

    @classmethod
    def render_text(cls, data: Data) -> str:
        return join(header(data, *cls.header_extras(data)), data["hint"], event_lines(data))

    @classmethod
    def header_extras(cls, data: Data) -> list[str]:
        return [*super().header_extras(data), f"waited {data['waited_s']} s"]


class OutputChunk(Served):
    # ``text`` comes masked from ``Redactor.byte_range`` (judged against the whole store).
    MASKED: ClassVar[tuple[str, ...]] = ("text",)

    session_id: str
    state: SessionState | None = Field(default=None, description="none for a record file (a triage run's)")
    # In the request's frame: from the output_id's start when one was given, else the session's.
    offset: int
    next_offset: int = Field(description="the offset to read next (same frame as the request's offset)")
    total_bytes: int = Field(description="bytes stored so far: of the output_id's output, else the session's")
    eof: bool = Field(description="no more bytes stored yet past next_offset")
    text: str

    @classmethod
    def render_text(cls, data: Data) -> str:
        return join(header(data, *cls.header_extras(data)), data["text"], [])

    @classmethod
    def header_extras(cls, data: Data) -> list[str]:
        where = f"bytes {data['offset']}-{data['next_offset']} of {data['total_bytes']}"
        return [where, "eof" if data["eof"] else f"more at offset {data['next_offset']}"]


class StopResult(Served):
    session_id: str
    state: SessionState
    actions: list[str] = Field(description="what was done, in order: resumed target, sent q, terminated, killed")
    exit_code: int | None
    elapsed_ms: Millis

    @classmethod
    def render_text(cls, data: Data) -> str:
        return join(header(data, *cls.header_extras(data)), ", ".join(data["actions"]), [])

    @classmethod
    def header_extras(cls, data: Data) -> list[str]:
        return [f"exit code {data['exit_code']}"] if "exit_code" in data else []


class SessionSummary(LazyModel):
    session_id: str
    state: SessionState
    kind: SessionKind
    attached_to: str
    shared: str | None = Field(default=None, description="the -remote connection of the session's debugging server")
    live: bool
    command_line: str
    pid: int | None
    output_bytes: int
    started_at_unix: float


class SessionList(Served):
    sessions: list[SessionSummary] = Field(default_factory=list)
    max_sessions: int

    @classmethod
    def render_text(cls, data: Data) -> str:
        return sessions_text(data)


class DebuggerCheck(LazyModel):
    name: str
    found: bool
    path: str | None = None
    source: str | None = None
    version: str | None = None
    looked_in: list[str] = Field(default_factory=list)


class HealthResult(Served):
    ok: bool
    simulated: bool
    debuggers: list[DebuggerCheck]
    config_path: str | None
    config_ok: bool
    config_error: str | None = None
    state_file: str | None = None
    state_file_ok: bool
    state_file_error: str | None = None
    state_file_warnings: list[str] = Field(default_factory=list)
    local_kernel: list[str] = Field(default_factory=list,
                                    description="what stands in the way of attach_local_kernel (kd -kl) here")
    sessions: list[SessionSummary] = Field(default_factory=list)

    @classmethod
    def render_text(cls, data: Data) -> str:
        return health_text(data)
