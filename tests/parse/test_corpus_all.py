"""Every corpus sample parses: no exception, no lost byte, a valid record per block."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from kdmcp.parse import Record, parse

Corpus = Any  # the session fixture from conftest.py

# same location conftest.py uses (test modules cannot import conftest); in the repository, so a
# missing index.json fails collection instead of skipping the samples
CORPUS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"
INDEX: list[dict[str, Any]] = json.loads((CORPUS_DIR / "index.json").read_text(encoding="utf-8"))
NAMES = sorted(e["file"] for e in INDEX)
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
    entry = next(e for e in corpus.index if e["file"] == name)
    assert parse(entry["command"] or "", text).raw == text


def test_fast_frame_path_agrees_with_general_reader(corpus: Corpus) -> None:
    """Every corpus line the fast frame reader accepts reads the same through FRAME_RE."""
    from kdmcp.parse.frames import FRAME_RE, _fast_frame, frame_fields
    from kdmcp.parse.models import Frame

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


def test_crlf_line_endings_parse_the_same(corpus: Corpus) -> None:
    """A console (wexpect, Windows pipes) ends lines with CRLF; records must not change."""
    from kdmcp.parse import parse_transcript

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


def test_the_folder_holds_exactly_the_indexed_samples_with_their_attribution() -> None:
    """index.json and fixtures/corpus agree file for file, and the README names each sample's source."""
    on_disk = sorted(p.relative_to(CORPUS_DIR).as_posix() for p in CORPUS_DIR.rglob("*") if p.is_file())
    assert on_disk == sorted([*NAMES, "README.md", "index.json"])
    assert len(NAMES) == 139
    readme = (CORPUS_DIR / "README.md").read_text(encoding="utf-8")
    for entry in INDEX:
        assert entry["source"], entry["file"]
        assert f"| `{entry['file']}` | {entry['source']} |" in readme, entry["file"]
