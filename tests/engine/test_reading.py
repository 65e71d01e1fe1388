"""The reading path (engine/reading.py) through the real engine, against in-process fake consoles.

A console that delivers (pipes: ``console.base.Delivering``) has its reader thread store each chunk
and build the waiting caller's result as the answer completes (``Asked``); a console that does not
is read by the caller itself, which builds the result. Both must give the same answer, however
kd's output is cut into chunks. Fast tier: no process.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.engine import DebuggerSession, SessionState
from kdmcp.engine.reading import Asked
from kdmcp.engine.results import CommandOutput
from tests.engine.test_prompt_timeout import FakeKd, _session

PROMPT = "0: kd> "


class ChunkedKd(FakeKd):
    """FakeKd on pipes whose answer to any command but ``.echo`` is ``output``, handed over in
    pieces cut at ``cuts`` (offsets into the whole answer, marker line and prompt included)."""

    def __init__(self, output: bytes, cuts: list[int]) -> None:
        super().__init__(PROMPT, echo=False)
        self.output, self.cuts = output, cuts
        self._line = b""

    def write(self, data: bytes) -> None:
        self._line += data
        lines = self._line.split(b"\n")
        self._line = lines.pop()
        answer = b""
        for line in lines:
            text = line.strip()
            if text.startswith(b".echo "):
                answer += PROMPT.encode() + text[len(b".echo "):] + b"\r\n"
            else:
                answer += self.output
        answer += PROMPT.encode()
        edges = sorted({0, len(answer), *(c % (len(answer) + 1) for c in self.cuts)})
        for lo, hi in itertools.pairwise(edges):
            self._out.put(answer[lo:hi])


class DeliveringKd(ChunkedKd):
    """The same, but its chunks go straight to the engine (``Delivering``), as the pipe backend's do."""

    def deliver_to(self, sink: Callable[[bytes], None]) -> None:
        self._out.deliver_to(sink)


@pytest.fixture(scope="module")
def both() -> Iterator[tuple[DebuggerSession, DebuggerSession]]:
    """A session whose console delivers, and one whose caller reads: the same fake kd behind each."""
    made = [_session(DeliveringKd(b"", [])), _session(ChunkedKd(b"", []))]
    yield made[0], made[1]
    for session in made:
        session.stop(timeout=2.0)
        session.store.close()


def _ask(session: DebuggerSession, output: bytes, cuts: list[int]) -> CommandOutput:
    kd = session._console
    assert isinstance(kd, ChunkedKd)
    kd.output, kd.cuts = output, cuts
    return session.execute("r")


ANSWER_LINES = [
    b"rax=0000000000000000 rbx=fffff80062f25180 rcx=0000000000000001\r\n",
    b"nt!DbgBreakPointWithStatus:\r\n",
    b"fffff800`62a05c20 cc              int     3\r\n",
    b"Breakpoint 0 hit\r\n",  # an event line inside the answer
    b"\r\n",
    b"0: kd> \r\n",  # prompt-like text inside the output cannot end the command
]
_LINES = st.sampled_from(ANSWER_LINES)


def _fields(result: CommandOutput) -> dict[str, object]:
    """What must agree: all but the time, the offsets (each session has its own stream) and a
    prompt's trailing space. kd's prompt may end without it (parse/prompt.py: ``> ?``), so a chunk
    cut between ``0: kd>`` and `` `` completes the command with ``0: kd>``; the caller here reads all
    that was queued at once and sees the space."""
    fields = result.model_dump(exclude={"elapsed_ms", "output_offset", "output_end"})
    fields["prompt"]["text"] = fields["prompt"]["text"].rstrip()
    return fields


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_LINES, max_size=8), cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=6))
def test_the_reader_thread_builds_the_same_answer_as_a_caller_reading_for_itself(both, lines, cuts):
    delivering, reading = both
    assert delivering._delivered and not reading._delivered
    output = b"".join(lines)
    delivered, read = _ask(delivering, output, cuts), _ask(reading, output, cuts)
    assert _fields(delivered) == _fields(read)
    assert delivered.output == output.decode()
    assert delivered.output_end - delivered.output_offset == read.output_end - read.output_offset == len(output)
    assert delivered.state == SessionState.broken and delivered.prompt is not None


def test_the_answer_is_built_as_its_last_bytes_are_stored(both):
    """On a delivering console the result is built where the bytes were stored (``Reading._ingest``,
    here inside ``write``, which delivers at once), and the caller returns that very object."""
    delivering, _ = both
    built: list[CommandOutput] = []
    original = DebuggerSession._answer

    def spy(self: DebuggerSession, asked: Asked) -> CommandOutput:
        built.append(original(self, asked))
        return built[-1]

    DebuggerSession._answer = spy  # type: ignore[method-assign]
    try:
        result = _ask(delivering, b"answer\r\n", [3, 9])
    finally:
        DebuggerSession._answer = original  # type: ignore[method-assign]
    assert built == [result] and built[0] is result
    assert result.output == "answer\r\n"


def test_an_answer_built_from_the_chunk_in_hand_is_masked(both):
    """A whole answer in one chunk is taken from that chunk, not read back from the store
    (``DebuggerSession._answer``): masked all the same, and as the caller would build it."""
    delivering, reading = both
    output = b"rax=0000000000000001\r\nkey=0123456789abcdef\r\n"
    delivered, read = _ask(delivering, output, []), _ask(reading, output, [])
    assert "0123456789abcdef" not in delivered.output and "rax=0000000000000001" in delivered.output
    assert _fields(delivered) == _fields(read)
