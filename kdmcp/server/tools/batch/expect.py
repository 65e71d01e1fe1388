"""A step's result as ``debug_batch`` reads it: what the step's tool returned, against the step's ``expect``.

A step's outcome is what the call wrapper hands back for any call (``call.invoke``): the
tool's result model, or the error it raised. It is read here as the client would read the
same call's answer — the masked dump that is its ``structuredContent``, the model's own text
block, the error's category and message (``render.error_of``) — from the objects themselves,
never by parsing a rendered ``CallToolResult`` back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kdmcp.engine import DebuggerEvent, SessionState
from kdmcp.errors import KdMcpError
from kdmcp.server import models
from kdmcp.server.call import Outcome
from kdmcp.server.redaction import Redactor
from kdmcp.server.render import error_of, error_text, served_data, text_block
from kdmcp.server.tools.batch.models import Expect

__all__ = ["SUMMARY_CHARS", "Observed", "observe", "summary_of", "unmet"]

SUMMARY_CHARS = 160


@dataclass(frozen=True)
class Observed:
    """A step's result as ``expect`` reads it: ``data`` is its ``structuredContent`` (an error's:
    its category, message and the fields set), ``text`` its text block (an error's:
    ``error[category]: message``), ``extras`` what its header line says beyond the session,
    state, prompt and elapsed time (``models.Served.header_extras``)."""

    ok: bool
    data: dict[str, Any]
    text: str
    state: str | None
    extras: tuple[str, ...] = ()
    events: tuple[DebuggerEvent, ...] = ()  # what the result reported: the batch's result lists every step's

    @property
    def category(self) -> str | None:
        return None if self.ok else str(self.data.get("category", "internal"))


def observe(outcome: Outcome, redactor: Redactor, state_now: SessionState) -> Observed:
    """``outcome`` as the client would read it (masked by ``redactor``); ``state_now``: the session's
    state, for a result that does not say it."""
    if isinstance(outcome, KdMcpError):
        data = redactor.model(error_of(outcome))
        return Observed(ok=False, data=data, text=error_text(data), state=data.get("state") or state_now.value)
    data = served_data(outcome, redactor)
    served = type(outcome) if isinstance(outcome, models.Served) else None
    events = tuple(outcome.events) if isinstance(outcome, models.SessionResult) else ()
    return Observed(
        ok=True,
        data=data,
        text=text_block(outcome, data),
        state=data.get("state") or state_now.value,
        extras=tuple(served.header_extras(data)) if served is not None else (),
        events=events,
    )


def unmet(expect: Expect, seen: Observed) -> str | None:
    """How ``seen`` misses ``expect`` (None: it meets it). Pure: the fast tier tests every case."""
    got = "ok" if seen.ok else f"error[{seen.category}]"
    if expect.wants_ok and not seen.ok:
        return f"expected ok, got {got}"
    if not expect.wants_ok:
        wanted = f"error[{expect.error}]" if expect.error is not None else "an error"
        if seen.ok or (expect.error is not None and seen.category != expect.error):
            return f"expected {wanted}, got {got}"
    if expect.state is not None and seen.state != expect.state.value:
        return f"expected state {expect.state.value}, got {seen.state}"
    if expect.contains is not None and expect.contains not in seen.text:
        return f"expected text containing {expect.contains!r}"
    missing = object()
    for name, value in (expect.fields or {}).items():
        actual = seen.data.get(name, missing)
        if actual != value:
            shown = "nothing" if actual is missing else repr(actual)
            return f"expected {name}={value!r}, got {shown}"
    return None


def summary_of(seen: Observed) -> str:
    """One line for a step that gave a result (an error's message is its ``error``): the first line
    under the text block's header (the output's first line), else what the header adds to the
    session, state, prompt and elapsed time (``confirmed running``), else nothing."""
    if not seen.ok:
        return ""
    # the event lines are the batch's own events (its result lists every step's)
    body = [line for line in seen.text.splitlines()[1:] if line.strip() and not line.startswith("[event ")]
    if body:
        line = body[0].strip() + (f" (+{len(body) - 1} lines)" if len(body) > 1 else "")
    else:
        # "unparsed" only says no parser knew the command: nothing the step did
        line = " ".join(word for extra in seen.extras for word in extra.split() if word != "unparsed")
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"
