"""OutputStore: offsets, spill reads, bounded memory, hashing."""

from __future__ import annotations

import hashlib

import pytest

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
