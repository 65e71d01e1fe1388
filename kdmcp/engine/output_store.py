"""The append-only record of everything a debugger printed, addressed by byte offset.

Nothing is ever dropped: every byte goes to a spill file, and the most recent
``memory_bytes`` also stay in memory for cheap reads of what was just printed. Memory is
therefore bounded whatever the output size (a 100 MB ``!process 0 7`` costs a few MB of RAM),
and any range can be read back later by offset. A running SHA-256 lets tests prove that the
stored bytes are exactly the bytes the debugger emitted.
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
            self._file.write(data)
            self._hash.update(data)
            self._tail += data
            self._size += len(data)
            # Trim in halves so trimming stays amortised O(1) per byte.
            if len(self._tail) > 2 * self._memory_bytes:
                cut = len(self._tail) - self._memory_bytes
                del self._tail[:cut]
                self._tail_start += cut
            return self._size

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
            self._file.flush()
            if hasattr(os, "pread"):
                return _pread(self._file.fileno(), end - offset, offset)
            # Windows has no pread: seek, read, and put the write position back at the end.
            self._file.seek(offset)
            data = self._file.read(end - offset)
            self._file.seek(0, os.SEEK_END)
            return data

    def sha256(self) -> str:
        with self._lock:
            return self._hash.copy().hexdigest()

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
