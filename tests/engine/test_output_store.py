"""OutputStore: offsets, spill reads, bounded memory, hashing."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.engine.output_store import OutputStore


def test_reads_from_memory_and_from_spill_file_agree():
    store = OutputStore(memory_bytes=4096)
    data = bytes(range(256)) * 200  # 51,200 bytes
    for i in range(0, len(data), 1000):
        store.append(data[i : i + 1000])
    assert store.size == len(data)
    assert store.memory_in_use() <= 2 * 4096
    for off, n in [(0, 10), (100, 5000), (len(data) - 100, 100), (len(data) - 50, 500), (len(data), 10)]:
        assert store.read(off, n) == data[off : off + n]
    assert store.sha256() == hashlib.sha256(data).hexdigest()
    store.append(b"more")  # writing after a spill read still appends at the end
    assert store.read(len(data), 4) == b"more"
    store.close()


def test_rejects_negative_ranges_and_closed_use():
    store = OutputStore()
    with pytest.raises(ValueError):
        store.read(-1, 1)
    store.close()
    with pytest.raises(ValueError):
        store.append(b"x")


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=5000), max_size=40),
    reads=st.lists(st.tuples(st.integers(min_value=0, max_value=90_000), st.integers(min_value=0, max_value=20_000)),
                   max_size=12),
)
def test_every_byte_stays_retrievable_whatever_the_chunks_and_reads(sizes, reads):
    """Bytes reach the spill file only when they are about to leave memory: any range, read at
    any point (from memory, from the file, or across the two), and the hash stay exact."""
    store = OutputStore(memory_bytes=4096)
    data = bytearray()
    for i, size in enumerate(sizes):
        chunk = bytes((i * 7 + j) % 251 for j in range(size))
        store.append(chunk)
        data += chunk
        off, n = reads[i % len(reads)] if reads else (0, 0)
        assert store.read(off, n) == bytes(data[off : off + n])
        assert store.memory_in_use() <= 2 * 4096
    for off, n in reads:
        assert store.read(off, n) == bytes(data[off : off + n])
    assert store.sha256() == hashlib.sha256(data).hexdigest()
    store.close()


def test_a_read_across_the_spill_files_end_and_memory_is_whole():
    store = OutputStore(memory_bytes=4096)
    data = bytes(range(256)) * 40  # 10,240 bytes: the first trim writes 8,193 and keeps 4,096
    for i in range(0, len(data), 1024):
        store.append(data[i : i + 1024])
    boundary = len(data) - store.memory_in_use()
    assert boundary > 0
    assert store.read(boundary - 100, 200) == data[boundary - 100 : boundary + 100]
    assert store.read(0, len(data)) == data
    store.close()
