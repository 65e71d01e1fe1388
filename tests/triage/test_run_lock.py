"""The records file's OS lock: one run a file, a stale lock file never blocks, the sidecar is not
left behind; the Windows path (msvcrt.locking) on a fake that locks as Windows does."""

from __future__ import annotations

import errno
import os
import sys
import types
from pathlib import Path

import pytest

from kdmcp.errors import SessionBusy
from kdmcp.triage.models import TriageSpec
from kdmcp.triage.run import triage_run
from kdmcp.triage.run_lock import LOCK_SUFFIX, run_lock


class FakeMsvcrt(types.ModuleType):
    """``msvcrt.locking`` as Windows does it: byte ranges of a file, per handle ("if the bytes cannot
    be locked, the constant raises an OSError"); a second handle's lock is refused, in one process too."""

    LK_UNLCK, LK_LOCK, LK_NLCK, LK_RLCK, LK_NBLCK, LK_NBRLCK = 0, 1, 2, 3, 4, 5

    def __init__(self) -> None:
        super().__init__("msvcrt")
        self.held: dict[tuple[int, int, int], int] = {}  # (dev, inode, byte) -> the fd holding it
        self.calls: list[tuple[int, int, int]] = []  # (mode, position, bytes)

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        st = os.fstat(fd)
        position = os.lseek(fd, 0, os.SEEK_CUR)
        self.calls.append((mode, position, nbytes))
        keys = [(st.st_dev, st.st_ino, position + n) for n in range(nbytes)]
        if mode == self.LK_UNLCK:
            for key in keys:
                if self.held.get(key) != fd:
                    raise OSError(errno.EACCES, "Permission denied")
                del self.held[key]
        elif mode == self.LK_NBLCK:
            if any(key in self.held for key in keys):
                raise OSError(errno.EACCES, "Permission denied")
            self.held.update(dict.fromkeys(keys, fd))
        else:
            raise AssertionError(f"a blocking mode ({mode}) would hang the second run, not refuse it")


@pytest.fixture(params=[False, True], ids=["posix", "windows"])
def windows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if request.param:
        monkeypatch.setitem(sys.modules, "msvcrt", FakeMsvcrt())
    return bool(request.param)


def test_a_second_run_on_the_file_is_busy_and_names_it(tmp_path: Path, windows: bool) -> None:
    out = tmp_path / "run.jsonl"
    with run_lock(str(out), windows=windows) as held:
        assert held == str(out) + LOCK_SUFFIX and os.path.exists(held)
        with pytest.raises(SessionBusy, match=f"out: {out} is being written by another triage run"), \
                run_lock(str(out), windows=windows):
            pass
        # the same file by another name (a relative path, a symlink) is the same lock
        (tmp_path / "alias.jsonl").symlink_to(out)
        with pytest.raises(SessionBusy), run_lock(str(tmp_path / "alias.jsonl"), windows=windows):
            pass
    assert not os.path.exists(str(out) + LOCK_SUFFIX)  # not left behind
    with run_lock(str(out), windows=windows):  # free again
        pass
    if windows:
        fake = sys.modules["msvcrt"]
        assert isinstance(fake, FakeMsvcrt) and not fake.held
        assert {(position, nbytes) for _, position, nbytes in fake.calls} == {(0, 1)}  # the first byte, always


def test_a_stale_lock_file_never_blocks(tmp_path: Path, windows: bool) -> None:
    out = tmp_path / "run.jsonl"
    Path(str(out) + LOCK_SUFFIX).write_text("")  # a run killed with its lock file there: no holder
    with run_lock(str(out), windows=windows):
        pass
    assert not os.path.exists(str(out) + LOCK_SUFFIX)


def test_a_run_on_a_held_file_fails_before_it_reads_or_writes_it(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    out.write_bytes(b'{"name": "torn')  # a torn tail the run would cut: it must not, the holder owns the file
    spec = TriageSpec(debuggers={"cdb": ["cdb"]})
    with run_lock(str(out)), pytest.raises(SessionBusy, match=str(out)):
        triage_run([str(tmp_path)], spec, out=str(out), found=[])
    assert out.read_bytes() == b'{"name": "torn'
