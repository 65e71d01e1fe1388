"""``kdmcp.parse.expressions``: ``?``, ``??``, ``.formats``.

Corpus samples are checked through ``CHECKS``, keyed by sample (``tests/parse/samples``);
hand-written excerpts of layouts the corpus lacks name where the layout was published.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdmcp.parse import parse
from tests.parse.samples.corpus import Corpus


def test_cpp_expression() -> None:
    r = parse("?? sizeof(nt!_EPROCESS)", "unsigned int64 0xa40\n")
    assert r.value == "0xa40" and r.fields["type"] == "unsigned int64"


def _exceptions_errors_07(c: Corpus) -> None:
    ok = c.record("exceptions_errors/07.txt", '? $spat( "c:\\dir\\name.txt", "*name*" )')
    assert ok.kind == "expression" and ok.value == "0x00000000" and ok.decimal == 0
    bad = c.record("exceptions_errors/07.txt", '? $spat( "c:\\dir\\", "*filename*" )')
    assert bad.kind == "error" and bad.category == "syntax"
    assert bad.message.startswith("Syntax error at '(")


def _misc_03(c: Corpus) -> None:
    r = c.record("misc/03.txt", ".formats rip")
    assert r.value == "0x000000007763cb60"
    assert r.decimal == 2003028832
    assert r.fields["Octal"] == "0000000000016730745540"
    assert r.fields["Chars"] == "....wc.`"


def _misc_10(c: Corpus) -> None:
    ev = c.record("misc/10.txt", "? @$pcr")
    assert (ev.value, ev.decimal) == ("0xfffff80351148000", -8781847822336)
    pcr = c.record("misc/10.txt", "!pcr")
    assert pcr.address == "0xfffff80351148000" and pcr.fields["processor"] == "0"
    assert pcr.fields["NtTib.StackBase"] == "fffff803536de000"


CHECKS: dict[str, Callable[[Corpus], None]] = {
    "exceptions_errors/07.txt": _exceptions_errors_07,
    "misc/03.txt": _misc_03,
    "misc/10.txt": _misc_10,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_sample(corpus: Corpus, name: str) -> None:
    CHECKS[name](corpus)
