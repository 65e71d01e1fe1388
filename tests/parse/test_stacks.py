"""``!stacks``: one row per thread under its process's ``[image]`` line (``kdmcp.parse.threads``).

Its corpus samples outside the mirror are checked here through ``CHECKS`` (the mirrored
``kernel_objects/17.txt`` is checked with the other thread listings in ``test_threads``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.parse.samples.corpus import Corpus


def _kernel_state_05(c: Corpus) -> None:
    # "!stacks 0": the blocker only; smss.exe has no thread rows, a blocker may be a bare offset
    r = c.record("families/kernel_state/05.txt", "!stacks 0")
    assert r.kind == "threads"
    assert [(t.id, t.address, t.state, t.image) for t in r.threads] == [
        ("4.50", "0x827eea10", "Blocked", "System"),
        ("b0.a8", "0x82723b70", "Blocked", "csrss.exe"),
        ("b0.c8", "0x82719620", "Blocked", "csrss.exe"),
        ("b0.d0", "0x827d5d50", "Blocked", "csrss.exe"),
    ]
    assert [t.details["blocker"] for t in r.threads] == [
        "+0xfe0343a5",
        "ntoskrnl!_KiSystemService+0xc4",
        "ntoskrnl!_KiSystemService+0xc4",
        "ntoskrnl!_KiSystemService+0xc4",
    ]
    assert (r.threads[0].process_id, r.threads[0].thread_id) == ("0x4", "0x50")
    assert r.threads[1].frames[0].module == "ntoskrnl" and r.threads[1].frames[0].function == "_KiSystemService"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "families/kernel_state/05.txt": _kernel_state_05,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
