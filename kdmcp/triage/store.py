"""The JSONL file of a triage run: one ``DumpRecord`` per line, appended and flushed per record.

The file is the run's memory. A rerun with the same file reads it first and skips every dump
whose content hash is already there (``done``), so a run killed half way (the process, the
machine, a Dask cluster) finishes with nothing done twice and nothing lost. Records are written
whole and flushed one by one; a kill can still leave the last line torn (a partial write), and
that line is dropped on reading — its dump is simply done again — and cut off before the next
append, so the file stays one record per line.

``add`` refuses a hash already there: a dump Dask ran twice (its worker was lost after finishing)
or two copies of one file under different names are counted once.

A failure of a category a rerun retries (``RETRIED_CATEGORIES``: a timeout, a lost worker…) is
not ``done``: the run ``forget``s its record before doing the dump again, so the file keeps one
record per dump (what ``read_output`` pages) and a kill mid-retry leaves the dump undone, never
recorded twice.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator

from pydantic import ValidationError

from kdmcp.errors import InvalidArgument
from kdmcp.triage.models import RETRIED_CATEGORIES, DumpRecord

__all__ = ["ResultStore"]


class ResultStore:
    """A JSONL file of ``DumpRecord``; safe to ``add`` from several threads."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self._lock = threading.Lock()
        self._done: set[str] = set()  # every hash with a record
        self._retried: set[str] = set()  # of those, the failures a rerun does again
        self.dropped = 0  # lines that were not a record (a torn last line)
        good_end = self._read()
        if good_end is not None:
            with open(self.path, "r+b") as f:
                f.truncate(good_end)

    def _read(self) -> int | None:
        """Read the existing file; the offset to cut it at when its tail is torn, else None."""
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - read in one pass below
        except FileNotFoundError:
            return None
        end = 0
        with f:
            head = f.read(len(_RECORD_START))
            f.seek(0)
            if head and head != _RECORD_START:
                # `--out notes.txt`, `--out crash.dmp`: not a records file; cutting its "torn tail" would destroy it
                raise InvalidArgument(f"out: {self.path} is not a triage records file (JSON lines of records)")
            for line in f:
                record = _parse(line)
                if record is None:
                    self.dropped += 1
                else:
                    self._note(record)
                if line.endswith(b"\n"):
                    end = f.tell()  # whole lines stay (a bad one in the middle is skipped, not cut)
            size = f.tell()
        return end if end != size else None

    def _note(self, record: DumpRecord) -> None:
        self._done.add(record.sha256)
        if record.status == "failed" and record.category in RETRIED_CATEGORIES:
            self._retried.add(record.sha256)

    def done(self) -> set[str]:
        """The sha256 of every record a rerun skips: the dump triaged, or failed for good."""
        with self._lock:
            return self._done - self._retried

    def __contains__(self, sha256: object) -> bool:
        with self._lock:
            return sha256 in self._done

    def __len__(self) -> int:
        with self._lock:
            return len(self._done)

    def forget(self, hashes: Iterable[str]) -> int:
        """Drop the records of ``hashes`` that a rerun retries (others stay); how many. The file
        is rewritten beside itself and swapped in (``os.replace``): a kill leaves the old or the new."""
        with self._lock:
            drop = set(hashes) & self._retried
            if not drop:
                return 0
            keep = f"{self.path}.{os.getpid()}.tmp"
            with open(self.path, "rb") as old, open(keep, "wb") as new:
                for line in old:
                    record = _parse(line)
                    if record is None or record.sha256 not in drop:
                        new.write(line)
                new.flush()
                os.fsync(new.fileno())
            os.replace(keep, self.path)
            self._done -= drop
            self._retried -= drop
            return len(drop)

    def add(self, record: DumpRecord) -> bool:
        """Append ``record`` (one line, flushed); False, and nothing written, when its hash is there."""
        line = record.model_dump_json(exclude_none=True) + "\n"
        with self._lock:
            if record.sha256 in self._done:
                return False
            directory = os.path.dirname(self.path)
            os.makedirs(directory, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
            self._note(record)
            return True

    def records(self) -> Iterator[DumpRecord]:
        """Every record in the file, in the order written (torn lines skipped)."""
        try:
            f = open(self.path, "rb")  # noqa: SIM115
        except FileNotFoundError:
            return
        with f:
            for line in f:
                record = _parse(line)
                if record is not None:
                    yield record


# Every record's line starts so: ``name`` is DumpRecord's first field, and never None.
_RECORD_START = b'{"name":'


def _parse(line: bytes) -> DumpRecord | None:
    if not line.endswith(b"\n"):
        return None  # a torn last line: written in part when the run was killed
    try:
        return DumpRecord.model_validate(json.loads(line))
    except (ValueError, ValidationError):
        return None
