"""Every named control code is the header's: its CTL_CODE row gives the value published for it.

The values are the ones programs that use the headers write out (winioctl.h's users:
``IOCTL_STORAGE_QUERY_PROPERTY 0x002D1400``, ``FSCTL_LOCK_VOLUME 0x00090018``…), so a row with a
wrong function, method or access fails here.
"""

from __future__ import annotations

import pytest

from kdmcp.parse import ioctl
from kdmcp.parse.ioctl_names import NAMES, ROWS, ctl_code

PUBLISHED = {
    "IOCTL_STORAGE_MEDIA_REMOVAL": 0x002D4804,
    "IOCTL_STORAGE_EJECT_MEDIA": 0x002D4808,
    "IOCTL_STORAGE_GET_DEVICE_NUMBER": 0x002D1080,
    "IOCTL_STORAGE_QUERY_PROPERTY": 0x002D1400,
    "IOCTL_DISK_GET_DRIVE_GEOMETRY": 0x00070000,
    "IOCTL_DISK_GET_LENGTH_INFO": 0x0007405C,
    "IOCTL_DISK_GET_DRIVE_GEOMETRY_EX": 0x000700A0,
    "IOCTL_SCSI_PASS_THROUGH": 0x0004D004,
    "IOCTL_SCSI_PASS_THROUGH_DIRECT": 0x0004D014,
    "IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS": 0x00560000,
    "FSCTL_REQUEST_OPLOCK_LEVEL_1": 0x00090000,
    "FSCTL_LOCK_VOLUME": 0x00090018,
    "FSCTL_UNLOCK_VOLUME": 0x0009001C,
    "FSCTL_DISMOUNT_VOLUME": 0x00090020,
    "FSCTL_GET_COMPRESSION": 0x0009003C,
    "FSCTL_SET_COMPRESSION": 0x0009C040,
    "FSCTL_GET_NTFS_VOLUME_DATA": 0x00090064,
    "FSCTL_GET_RETRIEVAL_POINTERS": 0x00090073,
    "FSCTL_SET_REPARSE_POINT": 0x000900A4,
    "FSCTL_GET_REPARSE_POINT": 0x000900A8,
    "FSCTL_DELETE_REPARSE_POINT": 0x000900AC,
    "FSCTL_SET_SPARSE": 0x000900C4,
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_each_row_builds_the_published_value(name: str) -> None:
    assert ctl_code(*ROWS[name]) == PUBLISHED[name]
    assert NAMES[PUBLISHED[name]] == name


def test_every_row_is_checked_and_names_are_unique() -> None:
    assert set(ROWS) == set(PUBLISHED) and len(NAMES) == len(ROWS)


def test_decode_names_a_known_code_and_leaves_others_unnamed() -> None:
    assert ioctl.decode(0x2D1400).name == "IOCTL_STORAGE_QUERY_PROPERTY"
    assert ioctl.decode("90018").name == "FSCTL_LOCK_VOLUME"
    assert ioctl.decode(0x222003).name is None
    assert "name" not in ioctl.decode(0x222003).model_dump(exclude_none=True)
