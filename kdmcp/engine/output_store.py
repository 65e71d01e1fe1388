"""The append-only record of everything a debugger printed, addressed by byte offset.

Nothing is ever dropped: the most recent ``memory_bytes`` (up to twice that) stay in memory
for cheap reads of what was just printed, and every byte older than that is in a spill file.
Memory is therefore bounded whatever the output size (a 100 MB ``!process 0 7`` costs a few MB
of RAM), and any range can be read back later by offset. A running SHA-256 lets tests prove
that the stored bytes are exactly the bytes the debugger emitted.

Bytes go to the file when they are about to leave memory, a few MB at a time, not as they
arrive: a write per chunk was a system call (and its hashing) on every command's critical path
(docs/performance.md, "The engine: one ``r`` over pipes"). The file is anonymous and dies with
the process, so writing it earlier would keep nothing more.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading

DEFAULT_MEMORY_BYTES = 4 * 1024 * 1024


class OutputStore:
    """Bytes in, offsets out; safe for one writer (the pump) and many readers."""

    def __init__(self, memory_bytes: int = DEFAULT_MEMORY_BYTES, spill_dir: str | None = None) -> None:
        self._memory_bytes = max(4096, memory_bytes)
        self._lock = threading.Lock()
        self._file = tempfile.TemporaryFile(prefix="kdmcp-output-", dir=spill_dir)  # noqa: SIM115
        self._size = 0
        self._tail = bytearray()
        self._tail_start = 0  # offset of _tail[0]
        self._spilled = 0  # bytes [0, _spilled) are in the file (and hashed); _tail_start <= _spilled
        self._hash = hashlib.sha256()
        self._closed = False

    @property
    def size(self) -> int:
        """Total bytes stored: the offset the next byte will get."""
        return self._size

    def append(self, data: bytes) -> int:
        """Store ``data``; return the new size."""
        if not data:
            return self._size
        with self._lock:
            if self._closed:
                raise ValueError("output store is closed")
            self._tail += data
            self._size += len(data)
            # Trim in halves so trimming stays amortised O(1) per byte.
            if len(self._tail) > 2 * self._memory_bytes:
                self._spill()
                cut = len(self._tail) - self._memory_bytes
                del self._tail[:cut]
                self._tail_start += cut
            return self._size

    def _spill(self) -> None:
        """Write (and hash) what memory holds that the file does not yet (lock held)."""
        # views, released before the trim below resizes the bytearray (which an export forbids)
        with memoryview(self._tail) as whole, whole[self._spilled - self._tail_start :] as unwritten:
            self._file.write(unwritten)
            self._hash.update(unwritten)
        self._spilled = self._size

    def read(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset`` (fewer at the end of what is stored)."""
        if offset < 0 or length < 0:
            raise ValueError("offset and length must be non-negative")
        with self._lock:
            end = min(self._size, offset + length)
            if offset >= end:
                return b""
            if offset >= self._tail_start:
                lo = offset - self._tail_start
                return bytes(self._tail[lo : lo + (end - offset)])
            if end > self._tail_start:  # from the file up to memory, then from memory
                return self._read_file(offset, self._tail_start - offset) + bytes(self._tail[: end - self._tail_start])
            return self._read_file(offset, end - offset)

    def _read_file(self, offset: int, length: int) -> bytes:
        """``length`` bytes of the spill file from ``offset`` (all below ``_spilled``; lock held)."""
        self._file.flush()
        if hasattr(os, "pread"):
            return _pread(self._file.fileno(), length, offset)
        # Windows has no pread: seek, read, and put the write position back at the end.
        self._file.seek(offset)
        data = self._file.read(length)
        self._file.seek(0, os.SEEK_END)
        return data

    def sha256(self) -> str:
        """The SHA-256 of every byte stored: the file's, then memory's not yet written."""
        with self._lock:
            digest = self._hash.copy()
            digest.update(self._tail[self._spilled - self._tail_start :])
            return digest.hexdigest()

    def memory_in_use(self) -> int:
        return len(self._tail)

    def close(self) -> None:
        """Free the spill file (its bytes are gone after this)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._file.close()
                self._tail = bytearray()


def _pread(fd: int, length: int, offset: int) -> bytes:
    """Positional read that leaves the writer's file position alone."""
    chunks = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return b"".join(chunks)
