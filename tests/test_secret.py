"""The literal prefilter in front of the masking patterns changes no verdict (``kdmcp/secret.py``)."""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp import secret
from kdmcp.secret import Secret, SecretSet
from tests.tiers import examples

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


@settings(max_examples=examples(300), deadline=None)
@given(_texts())
def test_the_prefilter_finds_exactly_what_the_patterns_find(text: str) -> None:
    known = _known(KEY, "s\u0130gma\u03a3ecret")
    assert sorted(secret._text_spans(text, known)) == sorted(_unfiltered_spans(text, known))


@settings(max_examples=examples(200), deadline=None)
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


@settings(max_examples=examples(300), deadline=None)
@given(_json)
def test_data_called_clean_is_data_the_walk_would_not_change(value: object) -> None:
    known = SecretSet([Secret(KEY), Secret('q"uo\\te\u00e9x')])
    assert known.data(value) == secret._mask_data(value, known._known, ())


def test_a_clean_document_comes_back_as_it_was_without_a_walk() -> None:
    data = {"registers": {f"r{i}": f"0x{i:016x}" for i in range(100)}, "state": "broken"}
    assert SecretSet([Secret(KEY)]).data(data) is data


# ------------------------------------------------- the case-folding prefilter is exact
# Every code point once (surrogates included: a str may hold them).
_ALL = "".join(map(chr, range(sys.maxunicode + 1)))


def test_the_assignment_words_are_the_patterns():
    for word in secret._ASSIGNMENT_WORDS:
        assert word[:-1] in secret._ASSIGNMENT_RE.pattern


def test_every_character_the_assignment_pattern_matches_folds_onto_the_needle():
    for letter in sorted(set("".join(secret._ASSIGNMENT_WORDS))):
        pattern = re.compile(f"(?i){re.escape(letter)}")
        for m in pattern.finditer(_ALL):
            assert m.group().casefold() == letter, (letter, hex(ord(m.group())))


def test_every_character_a_secret_pattern_matches_folds_like_the_secret():
    # KDNET keys are base 36 with dots; listener tokens are URL-safe base64.
    for ch in "abcdefghijklmnopqrstuvwxyz0123456789.-_":  # each pattern ignores case
        pattern = secret._Known(ch * 7).pattern
        single = re.compile(pattern.pattern.replace(re.escape(ch * 7), re.escape(ch)), pattern.flags)
        for m in single.finditer(_ALL):
            assert m.group(1).casefold() == ch.casefold(), (ch, hex(ord(m.group(1))))


_TRICKY = "kKeEyYpPaAsSwWoOrRdDtTnN=\u212a\u017f\u0130\u0131\u00df\u03a3\u03c2 ,\"'\r\n0123456789.x"
_SHORT_KEY = "1.2.3.4abcd"
_PIECES = ["key=", "KEY=v", "pa\u017f\u017fword=x", "To\u212aen=1", _SHORT_KEY, _SHORT_KEY.upper(), "rax=1 "]


def _unprefiltered_redact(text: str, secrets: list[Secret]) -> str:
    known = [secret._Known(s.reveal()) for s in secrets]
    return secret._render(text, _unfiltered_spans(text, known))


@settings(max_examples=examples(300), deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list(_TRICKY)), max_size=60)
    | st.text(max_size=40)
    | st.builds(lambda a, b, c: a + b + c, st.text(max_size=10), st.sampled_from(_PIECES), st.text(max_size=10)),
    st.lists(st.sampled_from([_SHORT_KEY, "abcdefgh.ij", "Secret-Token_123", "\u03a3\u03c3\u03c2abcd"]), max_size=2),
)
def test_redact_with_its_prefilter_is_the_patterns_alone(text: str, values: list[str]) -> None:
    secrets = [Secret(v) for v in values]
    assert secret.redact(text, secrets) == _unprefiltered_redact(text, secrets)


def test_plain_register_output_comes_back_as_the_same_object():
    text = "rax=0000000000000001 rbx=0000000000000000\r\nrip=fffff80362a05c20 iopl=0 efl=00000246\r\n"
    assert secret.redact(text, [Secret(_SHORT_KEY)]) is text
    assert secret.redact("key=abc", []) == "key=***"
    assert secret.redact(f"x {_SHORT_KEY.upper()} y", [Secret(_SHORT_KEY)]) == "x *** y"


def test_a_cut_field_with_no_secret_tail_is_served_as_it_is() -> None:
    # A start's banner is always judged cut; with no key it ends at the prompt, not in a mask.
    from kdmcp.secret import SecretSet

    assert SecretSet().data({"banner": "0:002> "}) == {"banner": "0:002> "}
