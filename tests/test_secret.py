"""The literal prefilter in front of the masking patterns changes no verdict (``kdmcp/secret.py``)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp import secret
from kdmcp.secret import Secret, SecretSet

KEY = "1a2b3c4d5e6f7.2b3c4d5e6f7g8.3c4d5e6f7g8h9.4d5e6f7g8h9i0"
# Characters that fold in surprising ways next to the ones keys and assignments use.
ODD = "kKsS\u0131\u0130\u017f\u212a\u03a3\u03c3\u03c2\u00e9=,. \"'\n"  # dotless i, İ, long s, Kelvin, sigmas


def _unfiltered_spans(text: str, known: list[secret._Known]) -> list[tuple[int, int]]:
    """The patterns alone, as before the prefilter."""
    spans = [m.span(1) for k in known for m in k.pattern.finditer(text)]
    return spans + [m.span(1) for m in secret._ASSIGNMENT_RE.finditer(text)]


def _known(*values: str) -> list[secret._Known]:
    return [secret._Known(v) for v in values]


@st.composite
def _texts(draw: st.DrawFn) -> str:
    """Text made of pieces of a key in any case, assignment words and odd characters."""
    pieces = st.one_of(
        st.sampled_from([KEY, KEY.upper(), KEY[:20], "key=", "KEY=", "Password=", "tOkEn=", "\u017fecret"]),
        st.text(alphabet=ODD + "abcdef0123456789", max_size=8),
        st.text(max_size=4),
    )
    return "".join(draw(st.lists(pieces, max_size=8)))


@settings(max_examples=300, deadline=None)
@given(_texts())
def test_the_prefilter_finds_exactly_what_the_patterns_find(text: str) -> None:
    known = _known(KEY, "s\u0130gma\u03a3ecret")
    assert sorted(secret._text_spans(text, known)) == sorted(_unfiltered_spans(text, known))


@settings(max_examples=200, deadline=None)
@given(_texts())
def test_the_byte_prefilter_finds_exactly_what_the_patterns_find(text: str) -> None:
    data = text.encode()
    known = SecretSet([Secret(KEY)])
    shown, _ = known.byte_range(lambda o, n: data[o : o + n], len(data), 0, len(data), final=True)
    pattern = re.compile(re.escape(KEY).encode(), re.IGNORECASE)
    assert not pattern.search(shown.encode())
    assert KEY.lower() not in shown.lower()


def test_text_without_any_secret_or_assignment_is_returned_unchanged() -> None:
    text = "fffff803`1a2b3c4d 48895c2408 mov qword ptr [rsp+8],rbx\n" * 1000
    assert SecretSet([Secret(KEY)]).text(text) == text


def test_a_key_in_any_case_inside_a_large_text_is_masked() -> None:
    text = "x" * 100_000 + KEY.upper() + " key=hunter22 " + "y" * 100_000
    masked = SecretSet([Secret(KEY)]).text(text)
    assert KEY.upper() not in masked and "hunter22" not in masked
    assert masked.count(secret.MASK) == 2


_leaf = st.one_of(_texts(), st.integers(), st.booleans(), st.none())
_json = st.recursive(_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(["truncated", "output", "banner", "record", "text", "k"]), _texts()),
                    inner, max_size=4)), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_data_called_clean_is_data_the_walk_would_not_change(value: object) -> None:
    known = SecretSet([Secret(KEY), Secret('q"uo\\te\u00e9x')])
    assert known.data(value) == secret._mask_data(value, known._known, ())


def test_a_clean_document_comes_back_as_it_was_without_a_walk() -> None:
    data = {"registers": {f"r{i}": f"0x{i:016x}" for i in range(100)}, "state": "broken"}
    assert SecretSet([Secret(KEY)]).data(data) is data
