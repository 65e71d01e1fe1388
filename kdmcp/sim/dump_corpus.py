"""A corpus of crash dumps for fleet triage's tests and bench: N files built from a few real ones.

Fleet triage (issue 32) is measured on hundreds of dumps; the project ships six real minidumps
(``fixtures/dumps/``, Breakpad's test data, attribution in its README) and the simulated kernel
dump's header (``kernel-header-only.dmp``, :mod:`kdmcp.sim.dump_files`). :func:`build_corpus`
copies them into a directory, each copy varied so that

- every file's content hash differs (triage resumes and dedupes by sha256): a minidump's
  ``MINIDUMP_HEADER.TimeDateStamp`` (offset 20, the "Debug session time" cdb prints) and a kernel
  dump's ``SystemTime`` (``DUMP_HEADER64`` offset 0xFA8) move by the copy's index;
- buckets differ: a minidump copy's exception stream gets another exception code and parameters
  (an access violation reading or writing a null or a wild pointer, executing one, a stack
  overflow, a fail-fast, a breakpoint, a division by zero) and another ``ExceptionAddress``, inside
  one of the dump's first modules, so the simulated cdb's ``.exr -1`` and ``!analyze -v``
  (:mod:`kdmcp.sim.minidump_reports`: ``FAILURE_BUCKET_ID: <class>_<code>_<image>!Unknown``) name
  another class and faulting module. The thread contexts and stacks stay the dump's own.

The simulated kd does not read a kernel dump's header (``kd -z`` stops in the world's D1
bugcheck, :meth:`kdmcp.sim.debugger.SimDebugger.dump_location`): kernel copies differ in hash,
not bucket -- one bucket of many dumps, as a fleet's repeated driver bug is.

A few bad files join them for the failure categories: minidumps cut short (``MDMP`` and then
too little: cdb's "The data is invalid."), files that are no dump ("Could not match Dump File
signature"), one empty file. Every file's content differs, so no two share a hash. Which copy
is which is drawn from ``random.Random(seed)``: the same arguments build the same bytes.

``python -m kdmcp.sim.dump_corpus DIR COUNT [--seed S] [--bad B]`` builds one from the shell.
"""

from __future__ import annotations

import argparse
import random
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["BAD_KINDS", "CLASSES", "CorpusEntry", "ExceptionClass", "build_corpus", "default_sources", "main"]

BadKind = Literal["truncated", "not_a_dump", "empty"]
BAD_KINDS: tuple[BadKind, ...] = ("truncated", "not_a_dump", "empty")
_KERNEL_SOURCE = "kernel-header-only.dmp"
# MINIDUMP_HEADER (minidumpapiset.h): Signature, Version, NumberOfStreams, StreamDirectoryRva,
# CheckSum, TimeDateStamp
_HEADER = struct.Struct("<4sIIIII")
_TIME_DATE_STAMP = 20
_MODULE_LIST, _EXCEPTION = 4, 6  # MINIDUMP_STREAM_TYPE: ModuleListStream, ExceptionStream
_MODULE_SIZE = 108  # sizeof(MINIDUMP_MODULE)
# MINIDUMP_EXCEPTION_STREAM: ThreadId, __alignment, then MINIDUMP_EXCEPTION: ExceptionCode,
# ExceptionFlags, ExceptionRecord (ULONG64), ExceptionAddress (ULONG64), NumberParameters,
# __unusedAlignment, ExceptionInformation[15] (ULONG64)
_EXCEPTION_AT = 8
_EXCEPTION_RECORD = struct.Struct("<IIQQII15Q")
_SYSTEM_TIME = 0xFA8  # DUMP_HEADER64.SystemTime (a FILETIME)
_FILETIME_SECOND = 10_000_000
_TRUNCATED_SIZE = 96  # the header and part of the stream directory: no stream can be read
_MODULES_USED = 4  # the main image, ntdll, kernel32, KERNELBASE (as the dumps list them)
_KERNEL_SHARE = 8  # one copy in 8 is the kernel dump's header


@dataclass(frozen=True)
class ExceptionClass:
    """An exception a copy is given: its code and parameters (``address`` is replaced by the
    faulting address where the class takes it, an execute violation's target), its weight."""

    label: str
    code: int
    params: tuple[int, ...]
    weight: int


_FAULT = -1  # a parameter standing for the faulting address
# The classes !analyze -v tells apart (minidump_reports._problem), weighted as a crash fleet is:
# null reads dominate, breakpoints and illegal instructions are rare.
CLASSES: tuple[ExceptionClass, ...] = (
    ExceptionClass("null_read", 0xC0000005, (0, 0), 8),
    ExceptionClass("null_write", 0xC0000005, (1, 8), 4),
    ExceptionClass("wild_read", 0xC0000005, (0, 0xDEADBEEF), 3),
    ExceptionClass("wild_write", 0xC0000005, (1, 0x41414141), 2),
    ExceptionClass("execute", 0xC0000005, (8, _FAULT), 1),
    ExceptionClass("stack_overflow", 0xC00000FD, (1, 0x00A42FFC), 2),
    ExceptionClass("stack_cookie", 0xC0000409, (2,), 2),
    ExceptionClass("fatal_app_exit", 0xC0000409, (7,), 1),
    ExceptionClass("breakpoint", 0x80000003, (), 1),
    ExceptionClass("divide_by_zero", 0xC0000094, (), 1),
    ExceptionClass("illegal_instruction", 0xC000001D, (), 1),
)


@dataclass(frozen=True)
class CorpusEntry:
    """One file of the corpus: its name, what it was made from and how."""

    name: str
    source: str  # the fixture's file name
    kind: Literal["user", "kernel", "bad"]
    exception: str | None = None  # the ExceptionClass label a user copy was given (None: the dump's own)
    module: str | None = None  # the module its ExceptionAddress was put in
    bad: BadKind | None = None


def default_sources() -> Path:
    """The checkout's ``fixtures/dumps``: the corpus is built from a source tree (tests, benches),
    not from an installed wheel, which ships no fixtures."""
    return Path(__file__).resolve().parents[2] / "fixtures" / "dumps"


def _streams(data: bytes) -> dict[int, tuple[int, int]]:
    """The first (size, rva) of each stream type in the directory."""
    _sig, _version, count, directory, _sum, _stamp = _HEADER.unpack_from(data)
    found: dict[int, tuple[int, int]] = {}
    for i in range(count):
        kind, size, rva = struct.unpack_from("<III", data, directory + 12 * i)
        found.setdefault(kind, (size, rva))
    return found


def _modules(data: bytes, rva: int) -> list[tuple[int, int, str]]:
    """(base, size, file name) of the module list, in its order (the main image first)."""
    (count,) = struct.unpack_from("<I", data, rva)
    modules = []
    for i in range(count):
        base, size, _sum, _stamp, name_rva = struct.unpack_from("<QIIII", data, rva + 4 + _MODULE_SIZE * i)
        (length,) = struct.unpack_from("<I", data, name_rva)  # MINIDUMP_STRING: bytes, then UTF-16
        name = data[name_rva + 4 : name_rva + 4 + length].decode("utf-16-le")
        modules.append((base, size, name.replace("\\", "/").rsplit("/", 1)[-1]))
    return modules


def _user_copy(data: bytes, index: int, rng: random.Random) -> tuple[bytes, str | None, str | None]:
    """A minidump copy: its time moved by ``index`` seconds; when it holds an exception stream,
    another exception (class drawn by weight) at an address inside one of its first modules."""
    out = bytearray(data)
    (stamp,) = struct.unpack_from("<I", data, _TIME_DATE_STAMP)
    struct.pack_into("<I", out, _TIME_DATE_STAMP, stamp + index + 1)
    streams = _streams(data)
    if _EXCEPTION not in streams:  # a dump taken without a crash: nothing to vary but the time
        return bytes(out), None, None
    cls = rng.choices(CLASSES, weights=[c.weight for c in CLASSES])[0]
    base, size, module = rng.choice(_modules(data, streams[_MODULE_LIST][1])[:_MODULES_USED])
    fault = base + rng.randrange(0x1000, min(size, 0x40000)) if size > 0x1000 else base
    at = streams[_EXCEPTION][1] + _EXCEPTION_AT
    _code, flags, record, _address, _count, _pad, *_info = _EXCEPTION_RECORD.unpack_from(data, at)
    params = [fault if p == _FAULT else p for p in cls.params]
    info = params + [0] * (15 - len(params))
    _EXCEPTION_RECORD.pack_into(out, at, cls.code, flags, record, fault, len(params), 0, *info)
    return bytes(out), cls.label, module


def _kernel_copy(data: bytes, index: int) -> bytes:
    out = bytearray(data)
    (when,) = struct.unpack_from("<Q", data, _SYSTEM_TIME)
    struct.pack_into("<Q", out, _SYSTEM_TIME, when + (index + 1) * _FILETIME_SECOND)
    return bytes(out)


def _bad_kind(seen: int) -> BadKind:
    """The ``seen``-th bad file's kind: each kind once, then truncated and not-a-dump in turn (one
    empty file only: two would share a content hash, and triage counts a hash once)."""
    if seen < len(BAD_KINDS):
        return BAD_KINDS[seen]
    return BAD_KINDS[seen % 2]


def _bad(kind: BadKind, minidump: bytes, seen: int) -> bytes:
    """The ``seen``-th bad file: each cut at a length of its own, each text its own (distinct hashes)."""
    if kind == "truncated":
        return minidump[: _TRUNCATED_SIZE + seen]
    if kind == "not_a_dump":
        return f"not a crash dump: a text file named like one ({seen})\n".encode()
    return b""


def build_corpus(directory: str | Path, count: int, *, seed: int = 0, bad: int | None = None,
                 sources: str | Path | None = None) -> list[CorpusEntry]:
    """Write ``count`` files into ``directory`` (created if missing): ``bad`` of them bad (by
    default one in 25, at least one of each kind from 10 files on), one in 8 of the rest a kernel
    dump, the others varied minidumps. Returns what each file is, in name order."""
    if count < 0:
        raise ValueError("count must be >= 0")
    if bad is None:
        bad = max(len(BAD_KINDS), count // 25) if count >= 10 else 0
    if not 0 <= bad <= count:
        raise ValueError(f"bad must be between 0 and count ({count})")
    root = Path(sources) if sources is not None else default_sources()
    minidumps = sorted(p for p in root.glob("*.dmp") if p.name != _KERNEL_SOURCE)
    originals = {p.name: p.read_bytes() for p in [*minidumps, root / _KERNEL_SOURCE]}
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    bad_at = set(rng.sample(range(count), bad))
    width = max(4, len(str(count - 1)))
    entries: list[CorpusEntry] = []
    bad_seen = 0
    for i in range(count):
        name = f"crash-{i:0{width}d}.dmp"
        if i in bad_at:
            kind = _bad_kind(bad_seen)
            source = minidumps[0].name
            data = _bad(kind, originals[source], bad_seen)
            bad_seen += 1
            entry = CorpusEntry(name, source, "bad", bad=kind)
        elif rng.randrange(_KERNEL_SHARE) == 0:
            data = _kernel_copy(originals[_KERNEL_SOURCE], i)
            entry = CorpusEntry(name, _KERNEL_SOURCE, "kernel")
        else:
            source = rng.choice(minidumps).name
            data, label, module = _user_copy(originals[source], i, rng)
            entry = CorpusEntry(name, source, "user", exception=label, module=module)
        (out / name).write_bytes(data)
        entries.append(entry)
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kdmcp.sim.dump_corpus", description=__doc__.split("\n")[0])
    parser.add_argument("directory")
    parser.add_argument("count", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bad", type=int, default=None, help="how many bad files (default: one in 25)")
    args = parser.parse_args(argv)
    try:
        entries = build_corpus(args.directory, args.count, seed=args.seed, bad=args.bad)
    except (OSError, ValueError) as exc:
        parser.exit(2, f"dump_corpus: {exc}\n")
    kinds = {k: sum(e.kind == k for e in entries) for k in ("user", "kernel", "bad")}
    print(f"{len(entries)} files in {args.directory}: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
