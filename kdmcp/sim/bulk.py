"""Generated bulk output: N MB of ``dq``-style lines for throughput and loss tests.

Every line carries its own address, so a dropped, duplicated or reordered chunk changes the
bytes (and their hash), not just the length.
"""

from __future__ import annotations

from collections.abc import Iterator

LINE_BYTES = 64  # each generated line (newline included, before line-end translation)
_LINES_PER_BLOCK = 1024


def _line(n: int) -> str:
    # "ffffd000`00000000  00000000`00000000 00000000`00000000\n" is 56 chars; pad to 64.
    addr = 0xFFFFD00000000000 + n * 16
    return (
        f"{addr >> 32:08x}`{addr & 0xFFFFFFFF:08x}  {n:08x}`{n ^ 0x5A5A:08x} "
        f"{~n & 0xFFFFFFFF:08x}`00000000 ........\n"
    )


def blocks(megabytes: float) -> Iterator[str]:
    """Yield the output in blocks of ``_LINES_PER_BLOCK`` lines (64 KiB each)."""
    total = int(megabytes * 1024 * 1024) // LINE_BYTES
    n = 0
    while n < total:
        end = min(total, n + _LINES_PER_BLOCK)
        yield "".join(_line(i) for i in range(n, end))
        n = end
