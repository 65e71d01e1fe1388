"""The engine's masking gives exactly what kdmcp.secret.redact gives, skipping it only where nothing can match."""

from __future__ import annotations

import re
import sys

from hypothesis import given
from hypothesis import strategies as st

from kdmcp.engine.masking import ASSIGNMENT_WORDS, redact_output
from kdmcp.secret import _ASSIGNMENT_RE, Secret, _Known, redact

# Every code point once (surrogates included: a str may hold them).
_ALL = "".join(map(chr, range(sys.maxunicode + 1)))


def test_assignment_words_are_the_secret_modules():
    for word in ASSIGNMENT_WORDS:
        assert word[:-1] in _ASSIGNMENT_RE.pattern


def test_every_character_the_assignment_pattern_matches_folds_onto_the_needle():
    for letter in sorted(set("".join(ASSIGNMENT_WORDS))):
        pattern = re.compile(f"(?i){re.escape(letter)}")
        for m in pattern.finditer(_ALL):
            assert m.group().casefold() == letter, (letter, hex(ord(m.group())))


def test_every_character_a_secret_pattern_matches_folds_like_the_secret():
    # KDNET keys are base 36 with dots; listener tokens are URL-safe base64.
    for ch in "abcdefghijklmnopqrstuvwxyz0123456789.-_":  # each pattern ignores case
        pattern = _Known(ch * 7).pattern
        single = re.compile(pattern.pattern.replace(re.escape(ch * 7), re.escape(ch)), pattern.flags)
        for m in single.finditer(_ALL):
            assert m.group(1).casefold() == ch.casefold(), (ch, hex(ord(m.group(1))))


_TRICKY = "kKeEyYpPaAsSwWoOrRdDtTnN=\u212a\u017f\u0130\u0131\u00df\u03a3\u03c2 ,\"'\r\n0123456789.x"
_KEY = "1.2.3.4abcd"


_PIECES = ["key=", "KEY=v", "pa\u017f\u017fword=x", "To\u212aen=1", _KEY, _KEY.upper(), "rax=1 "]


@given(
    st.text(alphabet=st.sampled_from(list(_TRICKY)), max_size=60)
    | st.text(max_size=40)
    | st.builds(lambda a, b, c: a + b + c, st.text(max_size=10), st.sampled_from(_PIECES), st.text(max_size=10)),
    st.lists(st.sampled_from([_KEY, "abcdefgh.ij", "Secret-Token_123", "\u03a3\u03c3\u03c2abcd"]), max_size=2),
)
def test_redact_output_is_redact(text, values):
    secrets = [Secret(v) for v in values]
    assert redact_output(text, secrets) == redact(text, secrets)


def test_plain_register_output_is_not_rescanned():
    text = "rax=0000000000000001 rbx=0000000000000000\r\nrip=fffff80362a05c20 iopl=0 efl=00000246\r\n"
    assert redact_output(text, [Secret(_KEY)]) is text
    assert redact_output("key=abc", []) == "key=***"
    assert redact_output(f"x {_KEY.upper()} y", [Secret(_KEY)]) == "x *** y"
