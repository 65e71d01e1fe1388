"""``kdmcp.parse.transcript``: every corpus sample parses — no exception, no lost byte, a valid
record per block — and CRLF line endings change no record."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from kdmcp.parse import Record, parse, parse_transcript
from tests.parse.samples.corpus import ENTRIES, NAMES, Corpus

ADAPTER: TypeAdapter[Record] = TypeAdapter(Record)


@pytest.mark.parametrize("name", NAMES)
def test_sample_parses(corpus: Corpus, name: str) -> None:
    text = corpus.text(name)
    blocks = corpus.blocks(name)
    assert blocks, name
    assert "".join(b.source for b in blocks) == text
    for b in blocks:
        assert b.record.raw == b.output
        assert not any(w.startswith("parser error") for w in b.record.warnings), b.record.warnings
        assert ADAPTER.validate_json(ADAPTER.dump_json(b.record)) == b.record
    # the whole file handed to parse() with the index's command must not raise either
    entry = ENTRIES[name]
    assert parse(entry["command"] or "", text).raw == text


def test_crlf_line_endings_parse_the_same(corpus: Corpus) -> None:
    """A console (wexpect, Windows pipes) ends lines with CRLF; records must not change."""
    for name in corpus.names():
        text = corpus.text(name)
        lf = parse_transcript(text)
        crlf = parse_transcript(text.replace("\n", "\r\n"))
        assert [b.command for b in crlf] == [b.command for b in lf], name
        for a, b in zip(lf, crlf, strict=True):
            assert a.record.kind == b.record.kind, (name, a.command)
            dump_a = a.record.model_dump(exclude={"raw"})
            dump_b = b.record.model_dump(exclude={"raw"})
            assert dump_a == dump_b, (name, a.command)
