"""The arithmetic of IOCTL recovery: which control codes a branch lets through.

Why a set of intervals: a dispatch routine narrows ``IoControlCode`` with equality tests
(``cmp ecx,imm`` / ``je``), ordered splits (``ja``/``jb``/``jg``… in a binary-search tree) and
range checks before a jump table (``cmp eax,N`` / ``ja default``). Each path through the routine
carries the set of codes that can still be on it; a path whose set is one code has found that
code's case. A compiled ``switch`` also rewrites the value it tests -- ``sub eax,imm`` cascades,
``lea eax,[rcx+X]`` biases, ``shr eax,2`` scaling -- so what a compare sees is a ``Lin`` of the
code, and a condition on it maps back to code intervals through ``Lin.preimage``.
All arithmetic is modulo 2**32, as the 32-bit registers that hold the code wrap.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FULL", "MASK", "Domain", "Lin", "condition", "count", "cut", "preimage_of", "values"]

MASK = 0xFFFFFFFF
Domain = tuple[tuple[int, int], ...]  # sorted, disjoint, inclusive [lo, hi] intervals of codes
FULL: Domain = ((0, MASK),)


@dataclass(frozen=True)
class Lin:
    """``(((code + bias) mod 2**32) >> shift) + post`` mod 2**32: what a register holds."""

    bias: int = 0
    shift: int = 0
    post: int = 0

    def apply(self, code: int) -> int:
        return ((((code + self.bias) & MASK) >> self.shift) + self.post) & MASK

    def add(self, k: int) -> Lin:
        if self.shift == 0:
            return Lin((self.bias + k) & MASK)
        return Lin(self.bias, self.shift, (self.post + k) & MASK)

    def shr(self, k: int) -> Lin | None:
        """Shifted right by ``k``; ``None`` once a bias follows a shift (not linear any more)."""
        if self.post or self.shift + k >= 32:
            return None
        return Lin(self.bias, self.shift + k)

    def preimage(self, lo: int, hi: int) -> Domain:
        """The codes whose value lies in ``[lo, hi]``."""
        out: list[tuple[int, int]] = []
        for a, b in _wrapped(lo - self.post, hi - self.post):
            top = MASK >> self.shift
            if a > top:
                continue
            w_lo, w_hi = a << self.shift, (min(b, top) << self.shift) | ((1 << self.shift) - 1)
            out.extend(_wrapped(w_lo - self.bias, w_hi - self.bias))
        return _normal(out)


def _wrapped(lo: int, hi: int) -> list[tuple[int, int]]:
    """``[lo, hi]`` taken modulo 2**32 (``hi - lo`` < 2**32): one interval or two."""
    if hi - lo >= MASK:
        return [(0, MASK)]
    lo, hi = lo & MASK, hi & MASK
    return [(lo, hi)] if lo <= hi else [(0, hi), (lo, MASK)]


def _normal(ivs: list[tuple[int, int]]) -> Domain:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ivs):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _intersect(a: Domain, b: Domain) -> Domain:
    out = []
    for lo1, hi1 in a:
        for lo2, hi2 in b:
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            if lo <= hi:
                out.append((lo, hi))
    return _normal(out)


def _complement(a: Domain) -> Domain:
    out, at = [], 0
    for lo, hi in a:
        if lo > at:
            out.append((at, lo - 1))
        at = hi + 1
    if at <= MASK:
        out.append((at, MASK))
    return tuple(out)


def cut(domain: Domain, inside: Domain) -> tuple[Domain, Domain]:
    """``domain`` split into the codes in ``inside`` and the others."""
    return _intersect(domain, inside), _intersect(domain, _complement(inside))


def count(domain: Domain) -> int:
    return sum(hi - lo + 1 for lo, hi in domain)


def values(domain: Domain, limit: int) -> list[int] | None:
    """The codes of ``domain`` in order, or ``None`` if there are more than ``limit``."""
    if count(domain) > limit:
        return None
    return [c for lo, hi in domain for c in range(lo, hi + 1)]


def _signed(lo: int, hi: int) -> list[tuple[int, int]]:
    """A signed 32-bit range as unsigned intervals."""
    if lo > hi:
        return []
    if lo >= 0 or hi < 0:
        return [(lo & MASK, hi & MASK)]
    return [(lo & MASK, MASK), (0, hi)]


# jcc mnemonic -> (the condition when the branch is taken, as "is the value in this set")
_SAME = {
    "jz": "je",
    "jnz": "jne",
    "jnbe": "ja",
    "jnb": "jae",
    "jnc": "jae",
    "jc": "jb",
    "jnae": "jb",
    "jna": "jbe",
    "jnle": "jg",
    "jnl": "jge",
    "jnge": "jl",
    "jng": "jle",
}
_NEGATED = {"jne": "je", "jbe": "ja", "jb": "jae", "jle": "jg", "jl": "jge"}


def condition(jcc: str, imm: int) -> tuple[list[tuple[int, int]], bool] | None:
    """For ``cmp value,imm`` then ``jcc``: the value intervals ``(S, taken_if_in_S)``; ``None`` for a
    condition this does not model (js, jo, jp…)."""
    jcc = _SAME.get(jcc, jcc)
    negated = jcc in _NEGATED
    jcc = _NEGATED.get(jcc, jcc)
    imm &= MASK
    simm = imm - (1 << 32) if imm & 0x80000000 else imm
    sets: dict[str, list[tuple[int, int]]] = {
        "je": [(imm, imm)],
        "ja": [(imm + 1, MASK)] if imm < MASK else [],
        "jae": [(imm, MASK)],
        "jg": _signed(simm + 1, 0x7FFFFFFF),
        "jge": _signed(simm, 0x7FFFFFFF),
    }
    if jcc not in sets:
        return None
    return sets[jcc], not negated


def preimage_of(lin: Lin, ivs: list[tuple[int, int]]) -> Domain:
    """The codes whose ``lin`` value is in any of ``ivs``."""
    return _normal([iv for lo, hi in ivs for iv in lin.preimage(lo, hi)])
