"""The code sets of IOCTL recovery: preimages through a switch's bias and scaling, jcc conditions."""

from __future__ import annotations

import pytest

from kdmcp.parse import ioctl_domain as dom


@pytest.mark.parametrize(
    ("lin", "lo", "hi", "want"),
    [
        (dom.Lin(), 5, 5, ((5, 5),)),
        (dom.Lin(bias=0x7CC95FEE, shift=2), 0, 3, ((0x8336A012, 0x8336A021),)),
        (dom.Lin(bias=-0x10 & dom.MASK), 0, 0x1F, ((0x10, 0x2F),)),
        (dom.Lin(bias=0x10), 0, 0x1F, ((0, 0xF), (0xFFFFFFF0, dom.MASK))),  # wraps
    ],
)
def test_preimages(lin: dom.Lin, lo: int, hi: int, want: dom.Domain) -> None:
    assert lin.preimage(lo, hi) == want
    assert all(lo <= lin.apply(c) <= hi for a, b in want for c in (a, b))


def test_conditions_signed_and_unsigned() -> None:
    assert dom.condition("ja", 3) == ([(4, dom.MASK)], True)
    assert dom.condition("jbe", 3) == ([(4, dom.MASK)], False)
    assert dom.condition("jg", 0xFFFFFFFF) == ([(0, 0x7FFFFFFF)], True)  # > -1
    assert dom.condition("jl", 5) == ([(5, 0x7FFFFFFF)], False)
    assert dom.condition("js", 0) is None
    inside, outside = dom.cut(dom.FULL, ((10, 20),))
    assert inside == ((10, 20),) and outside == ((0, 9), (21, dom.MASK)) and dom.count(outside) == dom.MASK - 10
    assert dom.values(inside, 5) is None and dom.values(((1, 2),), 5) == [1, 2]
