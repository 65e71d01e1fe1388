"""The stdio prelude (kdmcp.prelude): what it answers early, what it only keeps, what it remembers.

Its reader runs on pipes here (no process); every wait on a pipe is bounded (``_line``). The
end-to-end runs, through the server and real clients, are in tests/server/test_prelude_e2e.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdmcp import prelude
from kdmcp.prelude import HEAD, Conversation, Early, Prelude

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
ENVELOPE = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}
LIST_TAIL = ',"result":{"tools":[{"name":"list_sessions"}]}}'
INIT_TAIL = ',"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"kd-mcp","version":"0.1.0"}}}'


def _request(ident: object, method: str, params: object = None) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def _note(method: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": method}).encode()


def _keys(*lines: bytes) -> list[str | None]:
    conversation = Conversation()
    out = []
    for line in lines:
        found = conversation.consider(line)
        out.append(found[1].split(" ", 1)[0] if found and conversation.open else None)
    return out


def test_the_handshake_is_answered_in_order_and_anything_else_ends_it() -> None:
    init, listed = _request(0, "initialize", INIT), _request(1, "tools/list")
    assert _keys(init, _note("notifications/initialized"), listed) == ["initialize", None, "tools/list"]
    assert _keys(init, _request(1, "ping"), listed) == ["initialize", None, None]  # a ping ends it
    assert _keys(listed, init) == [None, None]  # tools/list before initialize: the SDK refuses it
    assert _keys(_note("notifications/initialized"), init) == [None, None]
    assert _keys(init, b"[1, 2]", listed) == ["initialize", None, None]  # a batch
    assert _keys(init, b"{not json", listed) == ["initialize", None, None]
    assert _keys(init, _request(0, "tools/list")) == ["initialize", None]  # an id seen before
    assert _keys(_request({"x": 1}, "initialize", INIT)) == [None]  # an id with no one form
    assert _keys(init, _request(1, "tools/call", {"name": "list_sessions", "arguments": {}})) == ["initialize", None]


def test_the_enveloped_era_answers_each_request_from_its_own_params() -> None:
    discover, listed = _request(1, "server/discover", ENVELOPE), _request(2, "tools/list", ENVELOPE)
    assert _keys(discover, listed) == ["server/discover", "tools/list"]
    assert _keys(listed, discover) == ["tools/list", "server/discover"]
    assert _keys(discover, _request(2, "tools/list")) == ["server/discover", None]  # no envelope: refused there
    assert _keys(_request(1, "tools/list"), listed) == [None, None]  # opened neither era
    conversation = Conversation()
    first, second = conversation.consider(listed), Conversation().consider(_request(2, "tools/list", {
        **ENVELOPE, "cursor": "x"}))
    assert first and second and first[1] != second[1]  # the whole params name the answer


def test_the_tools_list_key_names_the_initialize_it_followed() -> None:
    def key(init: dict[str, object]) -> str:
        conversation = Conversation()
        conversation.consider(_request(0, "initialize", init))
        found = conversation.consider(_request(1, "tools/list"))
        assert found is not None
        return found[1]

    assert key(INIT) != key({**INIT, "protocolVersion": "2025-03-26"})  # serialized for the version


def test_ids_are_written_back_as_the_sdk_writes_them() -> None:
    assert prelude.id_json(7) == b"7"
    assert prelude.id_json("req-1") == b'"req-1"'
    assert prelude.id_json(True) is None and prelude.id_json("a b") is None and prelude.id_json(None) is None


@pytest.fixture
def pipes() -> Iterator[tuple[int, int, int, int]]:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    yield in_r, in_w, out_r, out_w
    for fd in (in_r, in_w, out_r, out_w):
        with contextlib.suppress(OSError):  # closed by the test
            os.close(fd)


def _line(fd: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], 30)
        assert ready, f"nothing written after {data!r}"
        data += os.read(fd, 65536)
    return data


def _kept(tmp_path: Path) -> Early:
    answers = {f"initialize {prelude._canonical(INIT)}": INIT_TAIL,
               f"tools/list null after initialize {prelude._canonical(INIT)}": LIST_TAIL}
    return Early(key="k", directory=tmp_path, answers=answers)


def test_the_reader_answers_kept_requests_and_hands_over_every_byte(
        tmp_path: Path, pipes: tuple[int, int, int, int]) -> None:
    in_r, in_w, out_r, out_w = pipes
    reader = Prelude(_kept(tmp_path), in_r, out_w).start()
    sent = _request(5, "initialize", INIT) + b"\n" + _note("notifications/initialized") + b"\n"
    os.write(in_w, sent)
    assert _line(out_r) == HEAD + b"5" + INIT_TAIL.encode() + b"\n"
    os.write(in_w, _request("a", "tools/list") + b"\n")
    assert _line(out_r) == HEAD + b'"a"' + LIST_TAIL.encode() + b"\n"
    os.write(in_w, _request(7, "ping") + b"\n")
    early = reader.hand_over()
    os.write(in_w, b"after\n")  # the transport's: never read by the prelude
    assert early.prefix.startswith(sent + _request("a", "tools/list") + b"\n")
    assert set(early.answered) == {b"5", b'"a"'}
    rest = early.prefix[len(sent + _request("a", "tools/list") + b"\n"):]
    assert rest in (b"", _request(7, "ping") + b"\n")  # the ping, if it was read before the hand-over
    assert os.read(in_r, 65536) == (b"" if rest else _request(7, "ping") + b"\n") + b"after\n"
    assert select.select([out_r], [], [], 0)[0] == []  # the ping was not answered
    early.incoming(early.prefix + _request(8, "tools/list") + b"\n")  # the transport reads the prefix again
    assert early.conversation.keys[b"8"].startswith("tools/list") and early.conversation.count == (4 if rest else 3) + 1


def test_nothing_is_answered_without_a_kept_answer(tmp_path: Path, pipes: tuple[int, int, int, int]) -> None:
    in_r, in_w, out_r, out_w = pipes
    early = _kept(tmp_path)
    early.answers = {}
    reader = Prelude(early, in_r, out_w).start()
    os.write(in_w, _request(0, "initialize", INIT) + b"\n")
    os.close(in_w)
    early = reader.hand_over()  # what it did not read yet stays in the pipe, for the transport
    assert early.prefix + os.read(in_r, 65536) == _request(0, "initialize", INIT) + b"\n" and not early.answered
    assert select.select([out_r], [], [], 0)[0] == []


def test_the_sdks_twin_of_an_early_answer_is_dropped_and_a_different_one_forgets_the_answers(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    early = _kept(tmp_path)
    prelude.keep_file(tmp_path, prelude.ANSWERS_PREFIX, "k", {"answers": early.answers})
    same, other = HEAD + b"0" + INIT_TAIL.encode(), HEAD + b"1" + b',"result":{"tools":[]}}'
    early.answered = {b"0": same, b"1": HEAD + b"1" + LIST_TAIL.encode()}
    note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}'
    assert early.outgoing(note) == note
    assert early.outgoing(same) is None and not early.mismatched
    assert early.outgoing(HEAD + b'0,"method":"ping"}') == HEAD + b'0,"method":"ping"}'  # the server's own request
    assert early.outgoing(other) is None  # already answered: dropped, but it differed
    assert early.mismatched and early.answers == {}
    assert "differed" in caplog.text and not list(tmp_path.glob("answers-*.json"))


def test_the_sdks_answers_are_kept_for_the_next_start(tmp_path: Path) -> None:
    early = Early(key="k", directory=tmp_path, answers={})
    early.incoming(_request(3, "initialize", INIT) + b"\n" + _request(4, "tools/list")[:10])
    early.incoming(_request(4, "tools/list")[10:] + b"\n" + _request(5, "ping") + b"\n")
    init, listed = HEAD + b"3" + INIT_TAIL.encode(), HEAD + b"4" + LIST_TAIL.encode()
    assert early.outgoing(init) == init and early.outgoing(listed) == listed
    assert early.outgoing(HEAD + b'5,"result":{}}') == HEAD + b'5,"result":{}}'
    error = HEAD + b'9,"error":{"code":-32602,"message":"x"}}'
    assert early.outgoing(error) == error
    assert prelude.load_answers("k", tmp_path) == {f"initialize {prelude._canonical(INIT)}": INIT_TAIL,
                                                   f"tools/list null after initialize {prelude._canonical(INIT)}":
                                                   LIST_TAIL}


def test_the_fingerprint_hashes_the_config_and_secrets_never_enter_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("connections:\n  lab: {host: 10.0.0.2, port: 50000, key: c4n4ryk3y0000}\n")
    first = prelude.fingerprint(["serve"], [config])
    assert prelude.fingerprint(["serve"], [config]) == first
    config.write_text("connections: {}\n")
    assert prelude.fingerprint(["serve"], [config]) != first
    assert prelude.fingerprint(["serve", "--tools=session"], [config]) != prelude.fingerprint(["serve"], [config])
    monkeypatch.setenv("KDMCP_LISTEN_TOKEN", "t0kenAl1ce-0123456789")
    with_token = prelude.fingerprint(["serve"], [config])
    monkeypatch.setenv("KDMCP_LISTEN_TOKEN", "t0kenB0b-fedcba98765")
    assert prelude.fingerprint(["serve"], [config]) == with_token  # a secret by its presence only
    monkeypatch.setenv("KDMCP_STRUCTURED", "1")
    assert prelude.fingerprint(["serve"], [config]) != with_token


def test_the_config_candidates_are_the_ones_the_config_loader_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    from kdmcp import config

    monkeypatch.setenv(config.ENV_CONFIG, "~/from-env.yaml")
    assert prelude.config_candidates(" ~/given.yaml ") == [
        Path(os.path.expanduser("~/given.yaml")), Path(os.path.expanduser("~/from-env.yaml")),
        config.default_config_path()]
    assert prelude.config_candidates(None)[0] is None


def test_it_runs_on_pipes_only_and_is_off_with_the_surface_cache(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, pipes: tuple[int, int, int, int]) -> None:
    in_r, _, _, out_w = pipes
    reader = prelude.start(["serve"], [], tmp_path, in_r, out_w)
    assert reader is not None and reader.hand_over().answers == {}  # nothing kept here yet
    with (tmp_path / "file").open("wb") as regular:
        assert prelude.start(["serve"], [], tmp_path, in_r, regular.fileno()) is None
    monkeypatch.setenv(prelude.ENV_NO_PRELUDE, "1")
    assert prelude.start(["serve"], [], tmp_path, in_r, out_w) is None
    monkeypatch.delenv(prelude.ENV_NO_PRELUDE)
    monkeypatch.setenv(prelude.ENV_OFF, "1")
    assert prelude.start(["serve"], [], tmp_path, in_r, out_w) is None
