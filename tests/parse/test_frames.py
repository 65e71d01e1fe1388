"""``kdmcp.parse.frames``: the stack frame readers (general, fast, Child-SP rows) agree, on hand-written
excerpts and on every line of the corpus.

(``tests/parse/test_properties.py`` holds them equal on mangled lines of real output too.)

"""

from __future__ import annotations

from kdmcp.parse.frames import (
    CHILD_SP_ROW_RE,
    FAST_FRAME_RE,
    FRAME_RE,
    _fast_frame,
    child_sp_frame,
    fast_frame_model,
    frame_fields,
)
from kdmcp.parse.models import Frame
from tests.parse.samples.corpus import Corpus


def test_every_frame_reader_reads_a_short_bare_address_alike() -> None:
    # Microsoft sysvad lab (!thread, x64): the last frame of a Child-SP stack
    line = "000000ee`6d37c580 00000000`00000000     0x12e"
    fast = FAST_FRAME_RE.fullmatch(line)
    general = FRAME_RE.match(line)
    (row,) = CHILD_SP_ROW_RE.findall(line + "\n")
    assert fast is not None and general is not None
    fields = frame_fields(general)
    assert fields is not None
    expected = Frame.model_validate(fields)
    assert expected.address == "0x12e" and expected.module is None
    assert fast_frame_model(fast) == expected
    assert child_sp_frame(row) == expected


def test_fast_frame_path_agrees_with_general_reader_on_the_corpus(corpus: Corpus) -> None:
    """Every corpus line the fast frame reader accepts reads the same through FRAME_RE."""
    checked = 0
    for name in corpus.names():
        for line in corpus.text(name).split("\n"):
            fast = _fast_frame(line.strip())
            if fast is None:
                continue
            m = FRAME_RE.match(line.strip())
            assert m is not None, line
            slow = frame_fields(m)
            assert slow is not None, line
            assert Frame.model_validate(fast) == Frame.model_validate(slow), line
            checked += 1
    assert checked > 100
