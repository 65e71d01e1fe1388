"""``kdmcp.parse.error_table``: values in every spelling, the layouts, the HRESULT mappings."""

from __future__ import annotations

import pytest

from kdmcp.parse.error_table import decode, lookup, parse_value


@pytest.mark.parametrize("text", ["0xC0000005", "c0000005", "-1073741819", "0xc000`0005"])
def test_every_spelling_of_an_access_violation(text: str) -> None:
    d = decode(parse_value(text))
    assert (d.kind, d.name, d.severity, d.facility, d.code) == ("ntstatus", "STATUS_ACCESS_VIOLATION", "error", 0, 5)


def test_bare_digits_are_a_win32_error() -> None:
    d = decode(parse_value("5"))
    assert (d.kind, d.name, d.message) == ("win32", "ERROR_ACCESS_DENIED", "Access is denied.")


def test_hresults_and_their_mappings() -> None:
    e = decode(parse_value("0x80070005"))
    assert (e.kind, e.name, e.facility, e.facility_name, e.win32) == ("hresult", "E_ACCESSDENIED", 7, "WIN32", 5)
    mapped = decode(0x80070002)
    assert mapped.name == "HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)" and mapped.win32 == 2
    nt = decode(0xD0000022)
    assert nt.ntstatus == 0xC0000022 and nt.name == "HRESULT_FROM_NT(STATUS_ACCESS_DENIED)"
    assert decode(0x80004005).name == "E_FAIL"


def test_a_kind_can_be_forced_and_unknown_values_still_decode() -> None:
    assert decode(2, "ntstatus").name == "STATUS_WAIT_2"
    d = decode(0xC0DE1234)
    assert (d.kind, d.name, d.facility, d.code, d.severity) == ("ntstatus", None, 0xDE, 0x1234, "error")
    assert lookup("win32", 87) == ("ERROR_INVALID_PARAMETER", "The parameter is incorrect.")


@pytest.mark.parametrize("text", ["", "0x", "zz", "0x1ffffffff", "1.5"])
def test_not_a_32_bit_value(text: str) -> None:
    with pytest.raises(ValueError):
        parse_value(text)
