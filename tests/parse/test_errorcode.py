"""``kdmcp.parse.errorcode``: ``!error`` and ``!gle``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_gle_reads_last_error_and_status() -> None:
    # !gle as RE notes and the Microsoft docs print it
    record = parse(
        "!gle",
        "LastErrorValue: (Win32) 0x2 (2) - The system cannot find the file specified.\n"
        "LastStatusValue: (NTSTATUS) 0xc0000034 - Object Name not found.\n",
    )
    assert record.kind == "error_code"
    assert (record.facility, record.code, record.decimal) == ("Win32", "0x2", 2)
    assert record.message == "The system cannot find the file specified."
    assert (record.last_status, record.last_status_message) == ("0xc0000034", "Object Name not found.")
    ok = parse(
        "!gle",
        "LastErrorValue: (Win32) 0 (0) - The operation completed successfully.\n"
        "LastStatusValue: (NTSTATUS) 0 - STATUS_SUCCESS\n",
    )
    assert (ok.code, ok.decimal, ok.last_status) == ("0x0", 0, "0x0")


def _exceptions_errors_09(c: Corpus) -> None:
    r = c.record("exceptions_errors/09.txt", "!error 2")
    assert (r.facility, r.code, r.decimal) == ("Win32", "0x2", 2)
    assert r.message == "The system cannot find the file specified."
    nt = c.record("exceptions_errors/09.txt", "!error 2 1")
    assert (nt.facility, nt.message) == ("NTSTATUS", "STATUS_WAIT_2")


def _exceptions_errors_10(c: Corpus) -> None:
    r = c.record("exceptions_errors/10.txt", "!error 00000000c0000005")
    assert r.code == "0xc0000005" and r.decimal == 3221225477
    assert r.message.startswith("The instruction at 0x%p")


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "exceptions_errors/09.txt": _exceptions_errors_09,
    "exceptions_errors/10.txt": _exceptions_errors_10,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
