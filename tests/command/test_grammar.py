"""kdmcp/command/grammar.py: argument shapes, options, and local paths."""

from __future__ import annotations

import pytest

from kdmcp.command.grammar import Entry, Shape, path_refusal, refusal

ROOTS = ("https://msdl.microsoft.com/download/symbols", "\\\\symbols\\team")
EXT = Entry(("!x",), "-x", options=("-v[0-9]*", "-s="), both_spellings=True)


def test_options_are_listed_positively_in_both_spellings() -> None:
    assert refusal(EXT, " -v 1", ROOTS) is None
    assert refusal(EXT, " /v2 1", ROOTS) is None
    assert refusal(EXT, " -s 4 1", ROOTS) is None
    assert refusal(EXT, " /w 1", ROOTS) is not None
    assert refusal(EXT, " -1", ROOTS) is None  # a negative number is no option


def test_shapes() -> None:
    assert refusal(Entry(("k",), "k", args=Shape.NONE), " 1", ROOTS) is not None
    assert refusal(Entry(("k",), "k", args=Shape.STRING), ' "a b"', ROOTS) is None
    assert refusal(Entry(("k",), "k"), ' "a b"', ROOTS) is not None
    assert refusal(Entry(("!o",), "o", args=Shape.OBJECT), " \\Driver\\x 2", ROOTS) is None
    assert refusal(Entry(("k",), "k", keywords=("on",)), " on", ROOTS) is None


@pytest.mark.parametrize(
    "path",
    ["\\??\\GLOBALROOT\\Device\\Mup\\h\\s", "\\??\\GLOBALROOT\\??\\UNC\\h\\s", "\\Device\\LanmanRedirector\\h\\s",
     "\\\\?\\UNC\\h\\s", "\\\\?\\c:\\x", "\\\\.\\pipe\\x", "//?/UNC/h/s", "c:\\x::$DATA", "\\\\evil\\s",
     "x\\y", "..\\x", "\\\\symbols\\teamx", "\\\\symbols\\team\\..\\x"],
)  # fmt: skip
def test_paths_that_are_refused(path: str) -> None:
    assert path_refusal(path, ROOTS) is not None


@pytest.mark.parametrize("path", ["c:\\symbols", "C:/build/x64", "\\\\symbols\\team\\x", "https://msdl.microsoft.com/download/symbols"])
def test_paths_that_are_allowed(path: str) -> None:
    assert path_refusal(path, ROOTS) is None
