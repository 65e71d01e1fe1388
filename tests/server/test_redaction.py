"""Which values become secrets, and masking that no secret and no caller can break.

Only declared secret fields register a value (a KDNET key that passed validation, a listener
token): an argument a caller merely *names* ``key`` or ``token`` masks nothing. Masking works
on the string leaves of the data, so a secret full of quotes, backslashes or regex syntax is
masked like any other and never breaks a result. Text the engine cut at a byte cap (inline
output, event text, a timeout's partial output) may end inside a key; its tail is masked too.
"""

from __future__ import annotations

import json
import logging
import sys

import anyio
import pytest

from kdmcp.config import Config
from kdmcp.engine import DebuggerEvent, KdnetTarget, SessionConfig, SessionState, build_plan, simulator_command
from kdmcp.errors import InvalidArgument
from kdmcp.parse import TargetRecord
from kdmcp.secret import MASK, Secret, redact
from kdmcp.server import KdMcpApp, ServerOptions, models
from kdmcp.server.call import Call
from kdmcp.server.clients import ClientRegistry, ListenerClient
from kdmcp.server.logs import RedactingFilter
from kdmcp.server.registry import all_tools
from kdmcp.server.tools.sessions.kdnet import start_kd
from kdmcp.server.transcript import FIELD_LIMIT, read_records
from tests.server.helpers import CANARY_KEY, CANARY_WORD, in_memory, make_app, text_of

pytestmark = pytest.mark.anyio

# Listener tokens a token file may well hold: JSON syntax, escapes, regex syntax.
NASTY_TOKENS = ('t0k"en\\q.*+?()[]{}|^$', '", "category": "internal', "\\u0041\\n\\\\" * 3, "(.*)" * 5)


def token_app(*tokens: str, transcript: str | None = None) -> KdMcpApp:
    clients = ClientRegistry([ListenerClient(f"c{i}", Secret(t), all_tools(), "standard")
                              for i, t in enumerate(tokens)])
    return KdMcpApp(ServerOptions(config=Config(), simulate=True, clients=clients, transcript=transcript,
                                  structured=True))


def transcript_app(tmp_path) -> KdMcpApp:
    return KdMcpApp(ServerOptions(config=Config(), simulate=True, transcript=str(tmp_path / "run.jsonl"),
                                  structured=True))


# ------------------------------------------------------------------ what may become a secret


async def test_an_argument_named_key_or_token_registers_nothing(tmp_path):
    """``list_sessions(key="max_sessions")`` used to mask that word in every later result."""
    app = transcript_app(tmp_path)
    async with in_memory(app) as client:
        for poison in ({"key": "max_sessions"}, {"token": '"'}, {"password": "\\"}, {"key": "f"}):
            await client.call_tool("list_sessions", poison)
            clean = await client.call_tool("list_sessions", {})
            assert not clean.is_error, (poison, clean.structured_content)
            assert clean.structured_content == {"max_sessions": 4}, poison
        health = await client.call_tool("health_check", {"token": "simulator"})
        assert not health.is_error and "simulator" in json.dumps(health.structured_content)
    assert app.redactor.text("f max_sessions \" \\ simulator") == "f max_sessions \" \\ simulator"
    requests = [r for r in read_records(tmp_path / "run.jsonl") if r["kind"] == "request"]
    # The transcript still shows secret-named arguments masked: only the registration is gone.
    assert {"key": MASK} in [r["args"] for r in requests]


@pytest.mark.parametrize("value", ["", "f", "abcdef", "1.2.3"])
def test_a_value_shorter_than_any_declared_secret_cannot_be_registered(value):
    app = make_app()
    with pytest.raises(ValueError, match="secret") as caught:
        app.redactor.remember(Secret(value))
    assert value not in str(caught.value) or not value
    assert app.redactor.text(f"<{value}>") == f"<{value}>"


def test_start_kd_refuses_a_malformed_key_before_it_registers_it():
    app = make_app()
    with pytest.raises(InvalidArgument) as caught:
        start_kd(Call(app, None), 50000, "fff", None, None, initial_break=False, timeout_s=0.5)
    assert "fff" not in caught.value.message
    assert app.redactor.text("0xfffff800") == "0xfffff800"
    assert app.manager.infos() == []  # nothing was started


def test_declared_secrets_are_registered():
    app = token_app("t0kenAl1ce-0123456789")
    app.redactor.remember(Secret(CANARY_KEY))
    assert app.redactor.text(f"a {CANARY_KEY} b t0kenAl1ce-0123456789 c") == f"a {MASK} b {MASK} c"


# ------------------------------------------------------------------ masking is structure-safe


@pytest.mark.parametrize("token", NASTY_TOKENS)
def test_a_secret_full_of_quotes_and_regex_syntax_is_masked_and_breaks_nothing(token):
    app = token_app(token)
    error = models.ErrorResult(category="invalid_argument", message=f"a {token} b", session_id=token)
    data = app.redactor.model(error)
    assert data["category"] == "invalid_argument"
    assert data["message"] == f"a {MASK} b" and data["session_id"] == MASK
    assert token not in json.dumps(data) and json.dumps(token)[1:-1] not in json.dumps(data)
    assert app.redactor.text(f"x{token}y") == f"x{MASK}y"


@pytest.mark.parametrize("token", NASTY_TOKENS)
def test_transcript_lines_stay_json_and_hold_no_secret(tmp_path, token):
    app = token_app(token, transcript=str(tmp_path / "run.jsonl"))
    assert app.transcript is not None
    app.transcript.record("request", tool="kd_command", args={"command": f".echo {token}", "key=x": "key=y"})
    app.transcript.close()
    text = (tmp_path / "run.jsonl").read_text()
    records = read_records(tmp_path / "run.jsonl")
    assert len(records) == len(text.splitlines()) == 2  # every line still parses
    assert records[1]["args"] == {"command": f".echo {MASK}", "key=***": "key=***"}
    assert token not in text and json.dumps(token)[1:-1] not in text


def test_a_transcript_field_capped_inside_the_key_shows_none_of_it(tmp_path):
    app = transcript_app(tmp_path)
    app.redactor.remember(Secret(CANARY_KEY))
    assert app.transcript is not None
    for cut in (1, 5, len(CANARY_KEY) - 1):
        command = ".echo " + "x" * (FIELD_LIMIT - 6 - cut) + CANARY_KEY  # the cap falls ``cut`` chars into it
        app.transcript.record("request", tool="kd_command", args={"command": command, "session_id": "s1"})
    app.transcript.close()
    records = read_records(tmp_path / "run.jsonl")[1:]
    assert [r["args"]["command"][-4:] for r in records] == ["x***"] * 3
    assert all(r["truncated"] and r["args"]["session_id"] == "s1" for r in records)


def test_every_occurrence_is_masked_even_overlapping_or_in_another_case():
    app = make_app()
    app.redactor.remember(Secret("aXaXaXa"))
    assert app.redactor.text("aXaXaXaXa!") == f"{MASK}!"  # the second copy starts inside the first
    app.redactor.remember(Secret(CANARY_KEY))
    assert app.redactor.text(f"[{CANARY_KEY.upper()}] [{CANARY_KEY.title()}]") == f"[{MASK}] [{MASK}]"
    # Two secrets sharing a stretch: masking one first must not leave the other's remainder.
    assert redact("ab12345678-cd", [Secret("ab12345"), Secret("2345678")]) == f"{MASK}-cd"
    assert redact("x KEY=abc, password='p'") == "x KEY=***, password='p'"


# ------------------------------------------------------------------ text the engine cut at a cap


@pytest.mark.parametrize("cut", [1, 2, 13, 30, len(CANARY_KEY) - 1])
def test_a_cut_that_falls_inside_the_key_masks_the_tail(cut):
    app = make_app()
    app.redactor.remember(Secret(CANARY_KEY))
    piece = CANARY_KEY[:cut]
    event = DebuggerEvent(seq=1, kind="dbgprint", text="print " + piece, offset=0, end_offset=9, time_unix=0.0,
                          truncated=True)
    command = models.CommandResult(
        session_id="s1", state=SessionState.broken, elapsed_ms=1.0, command="version", output="line\n" + piece,
        truncated=True, output_id="s1:0-99", output_bytes=99,
        record=TargetRecord(raw="", details={"command line": piece}, build=19041), record_partial=True,
        events=[event],
    )
    data = app.redactor.model(command)
    assert data["output"] == f"line\n{MASK}"
    assert data["events"][0]["text"] == f"print {MASK}"
    assert (data["record"]["details"], data["record"]["build"]) == ({"command line": MASK}, 19041)
    assert "raw" not in data["record"]  # the raw text is served once, as output
    assert data["output_id"] == "s1:0-99" and data["session_id"] == "s1"
    error = models.ErrorResult(category="timeout", message="no prompt", partial_output="abc " + piece)
    assert app.redactor.model(error)["partial_output"] == f"abc {MASK}"
    start = models.StartResult(session_id="s1", state=SessionState.broken, elapsed_ms=1.0, command_line="kd",
                               banner="Using NET " + piece, truncated=True)
    assert app.redactor.model(start)["banner"] == f"Using NET {MASK}"


def test_text_that_was_not_cut_keeps_its_ending():
    app = make_app()
    app.redactor.remember(Secret(CANARY_KEY))
    command = models.CommandResult(
        session_id="s1", state=SessionState.broken, elapsed_ms=1.0, command="?", output="c4", truncated=False,
        output_id="s1:0-2", output_bytes=2,
    )
    assert app.redactor.model(command)["output"] == "c4"


@pytest.mark.process
async def test_inline_output_cut_inside_the_key_shows_none_of_it():
    app = make_app()
    async with in_memory(app) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.structured_content
        session = app.manager.get()
        # version prints the key after "key="; .echo prints it bare (no assignment to spot).
        for command, before in (("version", "key="), (f".echo <{CANARY_KEY}>", "<")):
            whole = await client.call_tool("kd_command", {"command": command})
            # the raw output as the engine holds it (CRLF and all; the result's text block is tidied)
            raw = (await anyio.to_thread.run_sync(session.execute, command)).output
            at = raw.index(before + MASK) + len(before)  # where the key starts (the engine masks it too)
            # Pieces of the key that the uncut result does not happen to hold anyway ("0000" in addresses).
            pieces = {CANARY_KEY[i : i + 4] for i in range(len(CANARY_KEY) - 3)}
            pieces = {p for p in pieces if p not in json.dumps(whole.structured_content)}
            for cut in (1, 2, 14, len(CANARY_KEY) - 1):
                session.config.inline_output_bytes = at + cut
                result = await client.call_tool("kd_command", {"command": command})
                data = result.structured_content
                assert data["truncated"] and text_of(result).endswith(before + MASK), (command, cut)
                shown = json.dumps(data) + text_of(result)
                assert not [p for p in pieces if p in shown], (command, cut)


# ------------------------------------------------------------------ logs and session logs


def test_log_records_are_masked_in_message_exception_and_stack():
    app = make_app()
    app.redactor.remember(Secret(CANARY_KEY))
    record = logging.LogRecord("kdmcp", logging.ERROR, __file__, 1, "saw %s", (CANARY_KEY.upper(),), None)
    record.stack_info = f"Stack: {CANARY_KEY}"
    try:
        raise RuntimeError(f"boom {CANARY_KEY}")
    except RuntimeError:
        record.exc_info = sys.exc_info()
    assert RedactingFilter(app.redactor).filter(record)
    shown = logging.Formatter().format(record)
    assert CANARY_WORD not in shown.lower() and "saw ***" in shown and "boom ***" in shown


def test_the_session_log_never_holds_a_byte_of_the_key_however_it_arrives(tmp_path):
    """The console log is written as output grows: one byte at a time, the key in any case."""
    app = transcript_app(tmp_path)
    app.redactor.remember(Secret(CANARY_KEY))
    plan = build_plan(simulator_command("kd"), KdnetTarget(port=50000, key=Secret(CANARY_KEY)))
    session = app.manager.create(plan, config=SessionConfig(memory_bytes=4096))
    filler = "-_ #@\n"
    stream = f"{filler}{CANARY_KEY}{filler}{CANARY_KEY.upper()}{CANARY_KEY}{filler}".encode()
    try:
        for byte in stream:
            session.store.append(bytes([byte]))
            app.flush_session_logs()
    finally:
        app.shutdown()
        session.store.close()  # kept readable for the transcript after shutdown; the test is done with it
    log = (tmp_path / f"run.jsonl.{session.session_id}.log").read_text()
    assert set(log.replace(MASK, "")) <= set(filler), log.replace(CANARY_WORD, "<canary>")
    assert log.replace(MASK, "") == filler * 3
