"""Names of well-known I/O control codes, as the SDK/WDK headers define them.

Why a small exact table and not a guess: a name is only worth showing when it is certainly the
header's. Each row is the header's own ``CTL_CODE(DeviceType, Function, Method, Access)``
arguments (winioctl.h / ntddstor.h / ntdddisk.h / ntddscsi.h / ntddvol.h), and
tests/parse/test_ioctl_names.py checks every row's code against the value the headers' users
publish for it. ``IOCTL_STORAGE_BASE`` is ``FILE_DEVICE_MASS_STORAGE`` (0x2d), ``IOCTL_DISK_BASE``
``FILE_DEVICE_DISK`` (7), ``IOCTL_SCSI_BASE`` ``FILE_DEVICE_CONTROLLER`` (4), ``IOCTL_VOLUME_BASE``
``'V'`` (0x56); FSCTLs are ``FILE_DEVICE_FILE_SYSTEM`` (9); ``FILE_SPECIAL_ACCESS`` is
``FILE_ANY_ACCESS`` (0). Methods: 0 buffered, 1 in direct, 2 out direct, 3 neither; access: 0 any,
1 read, 2 write, 3 both.
"""

from __future__ import annotations

__all__ = ["NAMES", "ROWS", "ctl_code"]

# name -> (DeviceType, Function, Method, Access), as the header's #define spells them
ROWS: dict[str, tuple[int, int, int, int]] = {
    "IOCTL_STORAGE_MEDIA_REMOVAL": (0x2D, 0x0201, 0, 1),
    "IOCTL_STORAGE_EJECT_MEDIA": (0x2D, 0x0202, 0, 1),
    "IOCTL_STORAGE_GET_DEVICE_NUMBER": (0x2D, 0x0420, 0, 0),
    "IOCTL_STORAGE_QUERY_PROPERTY": (0x2D, 0x0500, 0, 0),
    "IOCTL_DISK_GET_DRIVE_GEOMETRY": (0x07, 0x0000, 0, 0),
    "IOCTL_DISK_GET_LENGTH_INFO": (0x07, 0x0017, 0, 1),
    "IOCTL_DISK_GET_DRIVE_GEOMETRY_EX": (0x07, 0x0028, 0, 0),
    "IOCTL_SCSI_PASS_THROUGH": (0x04, 0x0401, 0, 3),
    "IOCTL_SCSI_PASS_THROUGH_DIRECT": (0x04, 0x0405, 0, 3),
    "IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS": (0x56, 0, 0, 0),
    "FSCTL_REQUEST_OPLOCK_LEVEL_1": (0x09, 0, 0, 0),
    "FSCTL_LOCK_VOLUME": (0x09, 6, 0, 0),
    "FSCTL_UNLOCK_VOLUME": (0x09, 7, 0, 0),
    "FSCTL_DISMOUNT_VOLUME": (0x09, 8, 0, 0),
    "FSCTL_GET_COMPRESSION": (0x09, 15, 0, 0),
    "FSCTL_SET_COMPRESSION": (0x09, 16, 0, 3),
    "FSCTL_GET_NTFS_VOLUME_DATA": (0x09, 25, 0, 0),
    "FSCTL_GET_RETRIEVAL_POINTERS": (0x09, 28, 3, 0),
    "FSCTL_SET_REPARSE_POINT": (0x09, 41, 0, 0),
    "FSCTL_GET_REPARSE_POINT": (0x09, 42, 0, 0),
    "FSCTL_DELETE_REPARSE_POINT": (0x09, 43, 0, 0),
    "FSCTL_SET_SPARSE": (0x09, 49, 0, 0),
}


def ctl_code(device: int, function: int, method: int, access: int) -> int:
    """devioctl.h's CTL_CODE macro."""
    return (device << 16) | (access << 14) | (function << 2) | method


NAMES: dict[int, str] = {ctl_code(*args): name for name, args in ROWS.items()}
