"""The tolerance rule (issue 29, ``kdmcp/parse/partial.py``): a listing row that does not fully
match is kept with what could be read, marked ``partial``, its line whole in ``raw_line``; never
dropped. Each listing is fed a real sample (``fixtures/released/``) whose rows are mutated past
their first column: the row count holds, and a row not read whole is the mutated line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.parse import breakpoints, frames, modules, parse, processes, threads
from kdmcp.parse.objects import heap, memory, namespace
from tests.tiers import examples

RELEASED = Path(__file__).resolve().parents[2] / "fixtures" / "released"

# (sample, the record's row list, the reader's "row-like" start: mutations keep it whole)
LISTINGS: dict[str, tuple[str, str, re.Pattern[str]]] = {
    "frames": ("set1/stack/a_14.txt", "frames", frames._PARTIAL_FRAME_RE),
    "modules": ("set1/modules/n_01.txt", "modules", modules._PARTIAL_ROW_RE),
    "breakpoints": ("set2/breakpoints/n_03.txt", "breakpoints", breakpoints._PARTIAL_ROW_RE),
    "threads": ("set2/threads_processes/n_02.txt", "threads", threads._PARTIAL_USER_THREAD_RE),
    "processes": ("set2/threads_processes/n_01.txt", "processes", processes._PARTIAL_USER_PROCESS_RE),
    "pool": ("set2/pool/n_01.txt", "pool_blocks", memory._PARTIAL_POOL_RE),
    "handles": ("set2/handle/n_02.txt", "handles", namespace._PARTIAL_HANDLE_RE),
    "heap -x": ("classes/heap_x_lfh.txt", "heap_entries", heap._PARTIAL_BLOCK_ROW_RE),
}

# what replaces the tail of a row: characters no column is made of alone
_GARBAGE = st.text(alphabet="#@%~?!= ()[]{}'\"zq", min_size=0, max_size=12)


def _sample(path: str) -> tuple[str, list[str]]:
    text = (RELEASED / path).read_bytes().decode("utf-8")
    first, _, output = text.partition("\n")
    return first.split("> ", 1)[1].strip(), output.split("\n")


def _rows(command: str, output: str, table: str) -> list[Any]:
    record = parse(command, output)
    assert record.raw == output
    return list(getattr(record, table))


@pytest.mark.parametrize("name", sorted(LISTINGS))
def test_every_sample_row_reads_whole(name: str) -> None:
    path, table, _ = LISTINGS[name]
    command, lines = _sample(path)
    rows = _rows(command, "\n".join(lines), table)
    assert rows and not any(r.partial for r in rows)


@pytest.mark.parametrize("name", sorted(LISTINGS))
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_a_mutated_row_is_kept(name: str, data: st.DataObject) -> None:
    path, table, row_like = LISTINGS[name]
    command, lines = _sample(path)
    before = _rows(command, "\n".join(lines), table)
    candidates = [i for i, line in enumerate(lines) if row_like.match(line)]
    i = data.draw(st.sampled_from(candidates))
    keep = row_like.match(lines[i]).end()  # type: ignore[union-attr]
    cut = data.draw(st.integers(keep, len(lines[i])))
    mutated = lines[i][:cut] + " " + data.draw(_GARBAGE)  # the blank: the start stays a column of its own
    lines = [*lines[:i], mutated, *lines[i + 1 :]]
    after = _rows(command, "\n".join(lines), table)
    assert len(after) == len(before)
    for row in after:
        if row.partial:
            assert row.raw_line == mutated.rstrip()


def test_a_truncated_frame_keeps_its_number_and_column() -> None:
    out = (
        " # Child-SP          RetAddr               Call Site\n"
        "00 0000003d`78a7f5b8 00007ffd`616e14bb     win32u!NtUserRegisterLogonProcess\n"
        "01 0000003d`78a7f5c0\n"
    )
    r = parse("k", out)
    assert len(r.frames) == 2
    f = r.frames[1]
    assert (f.partial, f.index, f.child_sp, f.call_site, f.raw_line) == (
        True,
        1,
        "0x0000003d78a7f5c0",
        "",
        "01 0000003d`78a7f5c0",
    )


def test_a_module_row_without_its_name_is_kept() -> None:
    r = parse(
        "lm", "start    end        module name\n000e0000 0011a000\n74bd0000 74c6f000   apphelp    (pdb symbols)\n"
    )
    assert [(m.name, m.partial) for m in r.modules] == [("", True), ("apphelp", False)]
    assert (r.modules[0].start, r.modules[0].end, r.modules[0].raw_line) == (
        "0x000e0000",
        "0x0011a000",
        "000e0000 0011a000",
    )


def test_a_breakpoint_row_cut_after_its_address_is_kept() -> None:
    r = parse(
        "bl",
        "     0 e Disable Clear  00007ff6`7762b890\n"
        "     1 e Disable Clear  00007ff6`7762b8b0     0001 (0001)  0:**** a!b\n",
    )
    a, b = r.breakpoints
    assert (a.id, a.enabled, a.address, a.partial, b.partial) == (0, True, "0x00007ff67762b890", True, False)


def test_a_user_thread_row_cut_after_its_id_is_kept() -> None:
    r = parse("~", ".  0  Id: 203c.3dc0 Suspend: 1 Teb: 00000083`28f68000 Unfrozen\n   1  Id: 203c.3ce0 Suspend\n")
    t = r.threads[1]
    assert (t.index, t.id, t.partial, t.raw_line) == (1, "203c.3ce0", True, "   1  Id: 203c.3ce0 Suspend")
