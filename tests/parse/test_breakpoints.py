"""``kdmcp.parse.breakpoints``: ``bl`` rows and what ``bp``/``bu``/``bm`` print.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_bl_deferred_data_and_command() -> None:
    out = (
        " 0 e Disable Clear  fffff803`52c4a2fc     0001 (0001) nt!MmCreateProcessAddressSpace\n"
        " 1 eu                                      0001 (0001) (foo!bar)\n"
        " 2 d Enable Clear  fffff803`11112222 w 4 0002 (0004) nt!KiFoo\n"
        '     "r rax; g"\n'
    )
    r = parse("bl", out)
    b0, b1, b2 = r.breakpoints
    assert b0.enabled and b0.address == "0xfffff80352c4a2fc"
    assert b1.unresolved and b1.address is None and b1.symbol == "foo!bar"
    assert (b2.enabled, b2.access, b2.size, b2.pass_count, b2.initial_pass_count) == (False, "w", 4, 2, 4)
    assert b2.command == "r rax; g"


def test_bm_lists_what_it_set() -> None:
    r = parse("bm nt!MmCreate*", '  1: fffff803`52c4a2fc @!"nt!MmCreateProcessAddressSpace"\n')
    assert r.breakpoints[0].symbol == "nt!MmCreateProcessAddressSpace"


def test_dml_bl_deferred_row() -> None:
    # current WinDbg (DML) bl of a deferred breakpoint, VBS/Secure Kernel debugging notes
    out = "     0 e Disable Clear u                      0001 (0001) (securekernel!IumInvokeSecureService)\n"
    (bp,) = parse("bl", out).breakpoints
    assert (bp.id, bp.enabled, bp.unresolved, bp.address) == (0, True, True, None)
    assert bp.symbol == "securekernel!IumInvokeSecureService"
    assert (bp.pass_count, bp.initial_pass_count) == (1, 1)


def test_deferred_bp_is_set_with_a_warning() -> None:
    # the same notes: bp on a module not loaded yet
    out = "Bp expression 'securekernel!IumInvokeSecureService' could not be resolved, adding deferred bp\n"
    r = parse("bp0 securekernel!IumInvokeSecureService", out)
    assert r.kind == "breakpoints" and r.breakpoints == []
    assert r.warnings == [out.rstrip("\n")]


def test_bl_printing_nothing_lists_no_breakpoints() -> None:
    # the same notes: bl after bc 0 prints an empty line
    for out in ("", "\n"):
        r = parse("bl", out)
        assert r.kind == "breakpoints" and r.breakpoints == []


def _misc_06(c: Corpus) -> None:
    r = c.record("misc/06.txt", "bl")
    assert r.kind == "breakpoints"
    assert [(b.id, b.enabled, b.address, b.symbol) for b in r.breakpoints] == [
        (0, True, "0x00007ff68402c0f8", "notepad!wWinMain"),
        (1, True, "0x00007ff99d32ce60", "ntdll!NtWriteFile"),
    ]
    assert r.breakpoints[0].thread == "0:****"
    assert (r.breakpoints[0].pass_count, r.breakpoints[0].initial_pass_count) == (1, 1)


def _misc_07(c: Corpus) -> None:
    (bp,) = c.record("misc/07.txt", "bl").breakpoints
    assert (bp.id, bp.address, bp.symbol, bp.thread) == (
        0,
        "0xfffff80352c4a2fc",
        "nt!MmCreateProcessAddressSpace",
        None,
    )


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "misc/06.txt": _misc_06,
    "misc/07.txt": _misc_07,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
