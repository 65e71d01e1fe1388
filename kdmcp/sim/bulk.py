"""Generated bulk output: N MB of ``dq``-style lines for throughput and loss tests.

Each 64 KiB block starts with a line carrying the block's own address, so a dropped,
duplicated or reordered block changes the bytes (and their hash), not just the length. The
rest of a block is precomputed: formatting 1.6 million lines per 100 MB in Python would make
the simulator, not the engine, the thing a throughput benchmark measures.
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


_BODY = [_line(i) for i in range(1, _LINES_PER_BLOCK)]


def blocks(megabytes: float) -> Iterator[str]:
    """Yield the output in blocks of ``_LINES_PER_BLOCK`` lines (64 KiB each)."""
    total = int(megabytes * 1024 * 1024) // LINE_BYTES
    full_body = "".join(_BODY)
    n = 0
    while n < total:
        count = min(total - n, _LINES_PER_BLOCK)
        body = full_body if count == _LINES_PER_BLOCK else "".join(_BODY[: count - 1])
        yield _line(n) + body
        n += count
