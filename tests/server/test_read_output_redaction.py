"""read_output never shows any byte of a secret, whatever window is asked for.

A window may start, end or lie inside a key (a forged ``output_id`` chooses both edges), be a
single byte, or cross the store's memory/spill boundary and the writer's append boundaries.
The oracle finds every occurrence of every secret in the whole stored output and expects each
of its bytes inside the window masked.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdmcp.config import Config
from kdmcp.engine import DebuggerSession, KdnetTarget, SessionConfig, build_plan, simulator_command
from kdmcp.secret import MASK, Secret
from kdmcp.server import KdMcpApp, ServerOptions
from kdmcp.server.call import Call
from kdmcp.server.clients import ClientRegistry, ListenerClient
from kdmcp.server.registry import all_tools
from kdmcp.server.tools.output.reads import read_output
from tests.server.helpers import CANARY_KEY, CANARY_WORD, in_memory, make_app

pytestmark = [pytest.mark.anyio, pytest.mark.process]  # process: starts processes (tests/tiers.py)



async def test_chunked_reads_never_show_any_part_of_the_key():
    app = make_app()
    async with in_memory(app) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.structured_content
        version = await client.call_tool("kd_command", {"command": "version"})
        session = app.manager.get()
        raw = session.read_output(0, session.store.size)
        key_at = raw.index(CANARY_KEY.encode())  # the debugger really printed it
        pieces = [CANARY_KEY[:4], CANARY_KEY[-6:], CANARY_KEY.split(".")[2]]
        for size in (7, 13, 64, 4096):
            # Start reads at every offset around the key so some chunk boundary cuts through it.
            for start in range(key_at - size, key_at + len(CANARY_KEY), max(1, size // 3)):
                offset, texts = max(0, start), []
                while offset < min(session.store.size, key_at + len(CANARY_KEY) + size):
                    chunk = await client.call_tool("read_output", {"offset": offset, "limit": size})
                    data = chunk.structured_content
                    assert data["next_offset"] > offset
                    texts.append(data["text"])
                    offset = data["next_offset"]
                joined = "".join(texts)
                assert CANARY_WORD not in joined
                for piece in pieces:
                    assert piece not in joined, (size, start, piece)
        assert CANARY_WORD not in str(version.structured_content)


# --------------------------------------------------------------- any window, any edge

TOKEN = 'tok"en\\.*+?()[]{}|^$-0123456789'  # a listener token full of JSON and regex metacharacters
FILLER = "-_ #@\n" + "c4n4ry" + "TOK"  # near-miss characters around the secrets, never an '='


def expected_read(full: bytes, secrets: tuple[str, ...], start: int, end: int, *, final: bool) -> tuple[str, int]:
    """The oracle: the window's text and where the next read starts.

    Each run of bytes that belongs to any occurrence of any secret (in any letter case,
    overlapping or not, wherever it starts or ends) shows as one MASK. The store's last bytes,
    when they are the start of a secret, may be a key still being printed: held back while
    the debugger runs, masked once it has ended (``final``).
    """
    covered = [False] * len(full)
    low = full.lower()
    unfinished = len(full)
    for secret in secrets:
        value = secret.encode().lower()
        at = low.find(value)
        while at >= 0:
            covered[at : at + len(value)] = [True] * len(value)
            at = low.find(value, at + 1)
        for n in range(1, len(value)):
            if low.endswith(value[:n]):
                unfinished = min(unfinished, len(full) - n)
    if final:
        covered[unfinished:] = [True] * (len(full) - unfinished)
    else:
        end = max(start, min(end, unfinished))
    out, i = [], start
    while i < end:
        j = i
        while j < end and covered[j] == covered[i]:
            j += 1
        out.append(MASK if covered[i] else full[i:j].decode())
        i = j
    return "".join(out), end


def store_app() -> tuple[KdMcpApp, DebuggerSession]:
    """An app knowing KEY and TOKEN, with one never-started session whose store the test fills."""
    clients = ClientRegistry([ListenerClient("t", Secret(TOKEN), all_tools(), "standard")])
    app = KdMcpApp(ServerOptions(config=Config(), simulate=True, clients=clients))
    app.redactor.remember(Secret(CANARY_KEY))
    plan = build_plan(simulator_command("kd"), KdnetTarget(port=50000, key=Secret(CANARY_KEY)))
    # The smallest memory tail, so long layouts are read partly from the spill file, partly from memory.
    session = app.manager.create(plan, config=SessionConfig(memory_bytes=4096))
    return app, session


def random_case(draw: st.DrawFn, text: str) -> str:
    style = draw(st.sampled_from(["same", "upper", "lower", "mixed"]))
    if style == "mixed":
        flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
        return "".join(c.upper() if f else c.lower() for c, f in zip(text, flips, strict=True))
    return {"same": text, "upper": text.upper(), "lower": text.lower()}[style]


@st.composite
def layouts(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    """Output holding the secrets at random places (some overlapping, some adjacent, some cut
    copies that are not secrets), and where the writer's appends cut it."""
    parts = ["-" * draw(st.sampled_from([0, 10, 4090, 8190, 12300]))]  # around the memory tail's edges
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["filler", "key", "token", "prefix", "suffix", "overlap"]))
        secret = draw(st.sampled_from([CANARY_KEY, TOKEN]))
        if kind == "filler":
            parts.append(draw(st.text(alphabet=FILLER, max_size=40)))
        elif kind in ("key", "token"):
            parts.append(random_case(draw, CANARY_KEY if kind == "key" else TOKEN))
        elif kind == "prefix":
            parts.append(secret[: draw(st.integers(1, len(secret) - 1))])
        elif kind == "suffix":
            parts.append(secret[draw(st.integers(1, len(secret) - 1)) :])
        else:  # two copies sharing a stretch: "...c4n4ry" + the whole key
            parts.append(secret[: draw(st.integers(1, len(secret) - 1))] + secret)
    full = "".join(parts).encode()
    cuts = sorted(set(draw(st.lists(st.integers(0, len(full)), max_size=12))))
    return full, cuts


@st.composite
def windows(draw: st.DrawFn, full: bytes) -> tuple[int, int]:
    """A window near an edge of a secret most of the time, anywhere otherwise."""
    low = full.lower()
    edges = [0, len(full)]
    for secret in (CANARY_KEY, TOKEN):
        at = low.find(secret.encode().lower())
        while at >= 0:
            edges += [at, at + len(secret)]
            at = low.find(secret.encode().lower(), at + 1)
    if draw(st.booleans()):
        start = draw(st.integers(0, len(full)))
    else:
        start = min(len(full), max(0, draw(st.sampled_from(edges)) + draw(st.integers(-3, 3))))
    length = draw(st.one_of(st.integers(0, 4), st.integers(0, 80), st.integers(0, 20000)))
    return start, length


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts(), data=st.data())
def test_every_window_masks_every_byte_of_every_secret(layout, data):
    full, cuts = layout
    app, session = store_app()
    try:
        pos = 0
        for cut in [*cuts, len(full)]:
            session.store.append(full[pos:cut])
            pos = max(pos, cut)
        assert session.store.read(0, len(full)) == full
        for _ in range(6):
            start, length = data.draw(windows(full))
            end = min(len(full), start + length)
            forged = f"{session.session_id}:{start}-{end}"  # the window as a forged output_id
            chunk = read_output(Call(app, None), None, forged, 0, 10 * len(full) + 1)
            text, next_offset = expected_read(full, (CANARY_KEY, TOKEN), start, end, final=False)
            # Offsets answer in the request's frame: from the output_id's start.
            assert (chunk.text, start + chunk.next_offset) == (text, next_offset), (start, end)
            assert (chunk.offset, chunk.total_bytes) == (0, end - start)
            assert chunk.eof == (next_offset == end)
            # the same by offset and limit
            plain = read_output(Call(app, None), session.session_id, None, start, length)
            assert (plain.text, plain.next_offset) == (text, next_offset)
            # Once the debugger has ended nothing can finish a key: the window is served whole.
            ended = app.redactor.byte_range(session.read_output, len(full), start, end, final=True)
            assert ended == expected_read(full, (CANARY_KEY, TOKEN), start, end, final=True)
    finally:
        app.shutdown()


async def test_forged_output_ids_around_the_key_never_show_any_of_it():
    """Every window that starts, ends or lies inside the key the debugger printed: no byte of it."""
    app = make_app()
    async with in_memory(app) as client:
        started = await client.call_tool("start_kd", {"port": 50000, "key": CANARY_KEY, "initial_break": True})
        assert not started.is_error, started.structured_content
        await client.call_tool("kd_command", {"command": "version"})
        session = app.manager.get()
        full = session.read_output(0, session.store.size)
        at, n = full.index(CANARY_KEY.encode()), len(CANARY_KEY)
        spans = {(a, a + 1) for a in range(at - 1, at + n + 1)}  # every 1-byte window
        spans |= {(at, b) for b in range(at, at + n + 2)} | {(a, at + n) for a in range(at - 2, at + n + 1)}
        spans |= {(at - 5, at + n - 1), (at + 1, at + n + 5), (at + 3, at + 4)}
        for a, b in sorted(spans):
            forged = f"{session.session_id}:{a}-{b}"
            chunk = await client.call_tool("read_output", {"output_id": forged})
            assert not chunk.is_error, chunk.structured_content
            text, _ = expected_read(full, (CANARY_KEY,), a, b, final=False)
            assert chunk.structured_content["text"] == text, (a, b)


def test_paging_an_output_id_by_next_offset_reads_exactly_that_output():
    """A client sends back the next_offset it got, with the same output_id, until eof."""
    app, session = store_app()
    try:
        session.store.append(b"before|" + bytes(range(65, 91)) * 40 + b"|after")
        start, end = 7, 7 + 26 * 40
        offset, pieces = 0, []
        while True:
            chunk = read_output(Call(app, None), None, f"{session.session_id}:{start}-{end}", offset, 100)
            assert chunk.offset == offset and chunk.total_bytes == end - start
            pieces.append(chunk.text)
            offset = chunk.next_offset
            if chunk.eof:
                break
        assert "".join(pieces) == (bytes(range(65, 91)) * 40).decode() and offset == end - start
    finally:
        app.shutdown()
