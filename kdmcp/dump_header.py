"""What a dump file is by its header, and whether it is whole: what ``open_dump`` and triage check first.

kd and cdb decide how to open a file by its first bytes: ``DUMP_HEADER64`` starts ``PAGE``
``DU64``, ``DUMP_HEADER32`` ``PAGE`` ``DUMP``, a user-mode ``MINIDUMP_HEADER`` ``MDMP``. Any other
file is refused here without a byte of it reaching the caller: the message goes to a client,
and the file may be anything the server can read (a key file starts ``AKIA…``).

A truncated copy (a half-finished upload, a full disk) still starts with its signature, and
dbgeng opens many of them, answering from whatever pages are there; a triage of such a dump
would bucket garbage. :func:`truncation` reads what the header promises and compares it with
the file's size: a minidump's stream directory and every stream it lists must lie inside the
file; a kernel dump must hold its whole header (0x2000 bytes for ``DUMP_HEADER64``, 0x1000 for
``DUMP_HEADER32``) and, where the header fills ``RequiredDumpSpace`` (at 0xFA0 / 0xF88), that
many bytes. A header written by the simulator leaves that field at kd's ``PAGE`` fill, which
means "not given".
"""

from __future__ import annotations

import os
import struct
from typing import BinaryIO

from kdmcp.errors import InvalidArgument
from kdmcp.regular_file import FileRefused, read_regular_file

__all__ = ["SIGNATURES", "DumpFileError", "dump_kind", "truncation"]

# The first bytes of a dump file -> whether it is a kernel dump.
SIGNATURES: dict[bytes, bool] = {b"PAGEDU64": True, b"PAGEDUMP": True, b"MDMP": False}

_HEADER_SIZE = {b"PAGEDU64": 0x2000, b"PAGEDUMP": 0x1000}
_REQUIRED_SPACE_AT = {b"PAGEDU64": 0xFA0, b"PAGEDUMP": 0xF88}  # RequiredDumpSpace, a LARGE_INTEGER
_PAGE_FILL = int.from_bytes(b"PAGEPAGE", "little")  # a field kd left unwritten
_MINIDUMP_HEADER = struct.Struct("<4sIII")  # Signature, Version, NumberOfStreams, StreamDirectoryRva
_MINIDUMP_HEADER_SIZE = 32  # then CheckSum, TimeDateStamp, Flags
_DIRECTORY_ENTRY = struct.Struct("<III")  # StreamType, DataSize, Rva (MINIDUMP_DIRECTORY)
_MAX_STREAMS = 4096  # far beyond any writer's; a count past it is a corrupt header


class DumpFileError(InvalidArgument):
    """The file cannot be opened as a dump: ``reason`` is ``unreadable`` or ``not_a_dump``."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message, file_problem=reason == "unreadable")
        self.reason = reason


def dump_kind(path: str) -> bool:
    """Whether the file at ``path`` is a kernel dump (True) or a user minidump (False), by its header."""
    try:
        head = read_regular_file(path, 8, head=True)
    except FileNotFoundError:
        raise DumpFileError(f"path: no such file: {path}", "unreadable") from None
    except (FileRefused, OSError) as exc:
        raise DumpFileError(f"path: cannot be read: {exc}", "unreadable") from None
    for signature, kernel in SIGNATURES.items():
        if head.startswith(signature):
            return kernel
    raise DumpFileError("path: not a crash dump (unknown header; a kernel dump starts PAGEDU64 or PAGEDUMP, "
                        "a user minidump MDMP)", "not_a_dump")


def truncation(path: str) -> str | None:
    """Why the dump at ``path`` is shorter than its header says (one line), or None when it is whole.

    Only for a file :func:`dump_kind` accepted; an error reading it is raised as ``OSError``.
    """
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(0x1000 if size >= 0x1000 else size)
        if head[:4] == b"MDMP":
            return _minidump_truncation(f, head, size)
        signature = head[:8]
        need = _HEADER_SIZE.get(signature)
        if need is None:
            return None
        if size < need:
            return f"{size} bytes, less than the {need:#x}-byte kernel dump header"
        f.seek(_REQUIRED_SPACE_AT[signature])
        (required,) = struct.unpack("<Q", f.read(8))
        if required not in (0, _PAGE_FILL) and required > size:
            return f"{size} bytes of the {required} its header gives (RequiredDumpSpace)"
    return None


def _minidump_truncation(f: BinaryIO, head: bytes, size: int) -> str | None:
    """A minidump's directory and streams must lie inside the file (MINIDUMP_DIRECTORY)."""
    if size < _MINIDUMP_HEADER_SIZE:
        return f"{size} bytes, less than the minidump header"
    _, _, streams, directory = _MINIDUMP_HEADER.unpack_from(head)
    if streams > _MAX_STREAMS:
        return f"a header giving {streams} streams"
    end = directory + streams * _DIRECTORY_ENTRY.size
    if end > size:
        return f"{size} bytes, the stream directory ends at {end}"
    f.seek(directory)
    table = f.read(end - directory)
    for n in range(streams):
        kind, length, rva = _DIRECTORY_ENTRY.unpack_from(table, n * _DIRECTORY_ENTRY.size)
        if length and rva + length > size:
            return f"{size} bytes, stream {n} (type {kind}) ends at {rva + length}"
    return None
