"""``split_params``: a kp/kP frame's parameter list out of its function name."""

from __future__ import annotations

import pytest

from kdmcp.parse.frame_params import split_params


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("_efree(void * ptr = 0x030bf1e0)", ("_efree", ("void * ptr = 0x030bf1e0",))),  # issue 29's sample
        ("invoke_main(void)", ("invoke_main", ())),
        (
            "main(int argc = 0n1, char ** argv = 0x00000000`020b8b30)",
            ("main", ("int argc = 0n1", "char ** argv = 0x00000000`020b8b30")),
        ),
        # commas inside template arguments, braces and quoted strings do not split
        (
            'f(class std::vector<a,b> * v = 0x0 { size=0 }, char * p = 0x1 "a, (b")',
            ("f", ("class std::vector<a,b> * v = 0x0 { size=0 }", 'char * p = 0x1 "a, (b"')),
        ),
        ("Functor::operator()", ("Functor::operator()", None)),  # a name that ends in a group
        ("KiSystemServiceCopyEnd", ("KiSystemServiceCopyEnd", None)),
        ("g(int)", ("g(int)", None)),  # a signature without values is no parameter list
    ],
)
def test_split_params(function: str, expected: tuple[str, tuple[str, ...] | None]) -> None:
    assert split_params(function) == expected
