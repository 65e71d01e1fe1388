"""decode_ioctl's decoder, table-tested against control codes whose CTL_CODE is published.

Each row is a code and the ``CTL_CODE(...)`` its header defines it with (winioctl.h / ntddstor.h /
ntddscsi.h / ntddcdrm.h / ntifs.h), so a wrong shift, mask or name fails here: every transfer
method, every access value, a file system control code and vendor device types (≥ 0x8000).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kdmcp.parse import ioctl

KNOWN = [
    # the issue's example: CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_NEITHER, FILE_ANY_ACCESS)
    (0x222003, "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_NEITHER, FILE_ANY_ACCESS)"),
    (0x222000, "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_BUFFERED, FILE_ANY_ACCESS)"),
    (0x222005, "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x801, METHOD_IN_DIRECT, FILE_ANY_ACCESS)"),
    (0x222006, "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x801, METHOD_OUT_DIRECT, FILE_ANY_ACCESS)"),
    # IOCTL_DISK_GET_DRIVE_GEOMETRY: CTL_CODE(IOCTL_DISK_BASE, 0x0000, METHOD_BUFFERED, FILE_ANY_ACCESS)
    (0x00070000, "CTL_CODE(FILE_DEVICE_DISK, 0x0, METHOD_BUFFERED, FILE_ANY_ACCESS)"),
    # IOCTL_DISK_SET_DRIVE_LAYOUT: (IOCTL_DISK_BASE, 0x0004, METHOD_BUFFERED, FILE_READ_ACCESS | FILE_WRITE_ACCESS)
    (0x0007C010, "CTL_CODE(FILE_DEVICE_DISK, 0x4, METHOD_BUFFERED, FILE_READ_ACCESS | FILE_WRITE_ACCESS)"),
    # IOCTL_STORAGE_QUERY_PROPERTY: (IOCTL_STORAGE_BASE, 0x0500, METHOD_BUFFERED, FILE_ANY_ACCESS)
    (0x002D1400, "CTL_CODE(FILE_DEVICE_MASS_STORAGE, 0x500, METHOD_BUFFERED, FILE_ANY_ACCESS)"),
    # IOCTL_STORAGE_EJECT_MEDIA: (IOCTL_STORAGE_BASE, 0x0202, METHOD_BUFFERED, FILE_READ_ACCESS)
    (0x002D4808, "CTL_CODE(FILE_DEVICE_MASS_STORAGE, 0x202, METHOD_BUFFERED, FILE_READ_ACCESS)"),
    # IOCTL_SCSI_PASS_THROUGH_DIRECT: (IOCTL_SCSI_BASE, 0x0405, METHOD_BUFFERED, FILE_READ_ACCESS | FILE_WRITE_ACCESS)
    (0x0004D014, "CTL_CODE(FILE_DEVICE_CONTROLLER, 0x405, METHOD_BUFFERED, FILE_READ_ACCESS | FILE_WRITE_ACCESS)"),
    # IOCTL_CDROM_RAW_READ: (IOCTL_CDROM_BASE, 0x000F, METHOD_OUT_DIRECT, FILE_READ_ACCESS)
    (0x0002403E, "CTL_CODE(FILE_DEVICE_CD_ROM, 0xf, METHOD_OUT_DIRECT, FILE_READ_ACCESS)"),
    # FSCTL_GET_REPARSE_POINT: (FILE_DEVICE_FILE_SYSTEM, 42, METHOD_BUFFERED, FILE_ANY_ACCESS)
    (0x000900A8, "CTL_CODE(FILE_DEVICE_FILE_SYSTEM, 0x2a, METHOD_BUFFERED, FILE_ANY_ACCESS)"),
    # FSCTL_SET_ZERO_DATA: (FILE_DEVICE_FILE_SYSTEM, 50, METHOD_BUFFERED, FILE_WRITE_DATA), FILE_WRITE_DATA = 2
    (0x000980C8, "CTL_CODE(FILE_DEVICE_FILE_SYSTEM, 0x32, METHOD_BUFFERED, FILE_WRITE_ACCESS)"),
    # vendor device types: the simulator's myfault codes, and the top of the range
    (0x8336E00B, "CTL_CODE(0x8336, 0x802, METHOD_NEITHER, FILE_READ_ACCESS | FILE_WRITE_ACCESS)"),
    (0x8336A01E, "CTL_CODE(0x8336, 0x807, METHOD_OUT_DIRECT, FILE_WRITE_ACCESS)"),
    (0xFFFFFFFF, "CTL_CODE(0xffff, 0xfff, METHOD_NEITHER, FILE_READ_ACCESS | FILE_WRITE_ACCESS)"),
]


@pytest.mark.parametrize(("code", "spelled"), KNOWN)
def test_known_codes_decode_to_the_ctl_code_their_header_defines(code: int, spelled: str) -> None:
    assert ioctl.decode(code).ctl_code == spelled


def test_the_fields_of_the_issues_example() -> None:
    got = ioctl.decode("0x222003")
    assert got.model_dump(exclude_defaults=True) == {
        "code": "0x00222003", "device_type": "0x22", "device_type_name": "FILE_DEVICE_UNKNOWN", "function": "0x800",
        "method": "METHOD_NEITHER", "access": "FILE_ANY_ACCESS",
        "ctl_code": "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_NEITHER, FILE_ANY_ACCESS)", "vendor_function": True,
    }


def test_vendor_ranges_and_the_fsctl_family_are_marked() -> None:
    vendor = ioctl.decode(0x8336E00B)
    assert vendor.vendor_device_type and vendor.vendor_function and vendor.device_type_name is None
    assert not ioctl.decode(0x2D1400).vendor_device_type and not ioctl.decode(0x2D1400).vendor_function
    assert ioctl.decode(0x900A8).fsctl and not ioctl.decode(0x222003).fsctl


@pytest.mark.parametrize(
    "text", ["0x222003", "222003", "222003h", "0x00222003", "0000`00222003", "0n2236419", " 0X222003 "]
)
def test_the_spellings_of_one_code(text: str) -> None:
    assert ioctl.parse_code(text) == 0x222003


@pytest.mark.parametrize("bad", ["", "0x", "zz", "0x1ffffffff", "-1", "12 34", "0n", True])
def test_what_is_not_a_control_code(bad: object) -> None:
    with pytest.raises(ValueError):
        ioctl.parse_code(bad)  # type: ignore[arg-type]


@given(st.integers(0, 0xFFFF), st.integers(0, 0xFFF), st.integers(0, 3), st.integers(0, 3))
def test_decode_inverts_ctl_code(device: int, function: int, method: int, access: int) -> None:
    got = ioctl.decode((device << 16) | (access << 14) | (function << 2) | method)
    assert int(got.device_type, 16) == device and int(got.function, 16) == function
    assert got.method == ioctl.METHODS[method] and got.access == ioctl.ACCESS[access]
