"""The I/O manager's numbers and their names: IRP major functions and DEVICE_OBJECT flags.

One list for everyone who names them: the typed driver tools (an IRP's ``[e, 0]`` is
``IRP_MJ_DEVICE_CONTROL``; a device's ``Flags 00002050`` is DO_DEVICE_HAS_NAME | DO_DIRECT_IO |
DO_POWER_PAGABLE) and the simulator's ``!drvobj``, which prints the dispatch table in this order.
The values are wdm.h's (``IRP_MJ_CREATE 0x00`` … ``IRP_MJ_PNP 0x1b``; ``DO_VERIFY_VOLUME
0x00000002`` … ``DO_BOOT_CRITICAL 0x20000000``).
"""

from __future__ import annotations

__all__ = ["DEVICE_FLAGS", "IRP_MJ_NAMES", "device_flag_names", "major_name"]

# wdm.h IRP_MJ_* in code order (IRP_MJ_MAXIMUM_FUNCTION is IRP_MJ_PNP, 0x1b)
IRP_MJ_NAMES = (
    "IRP_MJ_CREATE",
    "IRP_MJ_CREATE_NAMED_PIPE",
    "IRP_MJ_CLOSE",
    "IRP_MJ_READ",
    "IRP_MJ_WRITE",
    "IRP_MJ_QUERY_INFORMATION",
    "IRP_MJ_SET_INFORMATION",
    "IRP_MJ_QUERY_EA",
    "IRP_MJ_SET_EA",
    "IRP_MJ_FLUSH_BUFFERS",
    "IRP_MJ_QUERY_VOLUME_INFORMATION",
    "IRP_MJ_SET_VOLUME_INFORMATION",
    "IRP_MJ_DIRECTORY_CONTROL",
    "IRP_MJ_FILE_SYSTEM_CONTROL",
    "IRP_MJ_DEVICE_CONTROL",
    "IRP_MJ_INTERNAL_DEVICE_CONTROL",
    "IRP_MJ_SHUTDOWN",
    "IRP_MJ_LOCK_CONTROL",
    "IRP_MJ_CLEANUP",
    "IRP_MJ_CREATE_MAILSLOT",
    "IRP_MJ_QUERY_SECURITY",
    "IRP_MJ_SET_SECURITY",
    "IRP_MJ_POWER",
    "IRP_MJ_SYSTEM_CONTROL",
    "IRP_MJ_DEVICE_CHANGE",
    "IRP_MJ_QUERY_QUOTA",
    "IRP_MJ_SET_QUOTA",
    "IRP_MJ_PNP",
)

# wdm.h DO_* (DEVICE_OBJECT.Flags), low bit first
DEVICE_FLAGS = (
    (0x00000002, "DO_VERIFY_VOLUME"),
    (0x00000004, "DO_BUFFERED_IO"),
    (0x00000008, "DO_EXCLUSIVE"),
    (0x00000010, "DO_DIRECT_IO"),
    (0x00000020, "DO_MAP_IO_BUFFER"),
    (0x00000040, "DO_DEVICE_HAS_NAME"),
    (0x00000080, "DO_DEVICE_INITIALIZING"),
    (0x00000100, "DO_SYSTEM_BOOT_PARTITION"),
    (0x00000200, "DO_LONG_TERM_REQUESTS"),
    (0x00000400, "DO_NEVER_LAST_DEVICE"),
    (0x00000800, "DO_SHUTDOWN_REGISTERED"),
    (0x00001000, "DO_BUS_ENUMERATED_DEVICE"),
    (0x00002000, "DO_POWER_PAGABLE"),
    (0x00004000, "DO_POWER_INRUSH"),
    (0x00010000, "DO_LOW_PRIORITY_FILESYSTEM"),
    (0x00020000, "DO_SUPPORTS_PERSISTENT_ACLS"),
    (0x00040000, "DO_SUPPORTS_TRANSACTIONS"),
    (0x00080000, "DO_FORCE_NEITHER_IO"),
    (0x00100000, "DO_VOLUME_DEVICE_OBJECT"),
    (0x00200000, "DO_SYSTEM_SYSTEM_PARTITION"),
    (0x00400000, "DO_SYSTEM_CRITICAL_PARTITION"),
    (0x00800000, "DO_DISALLOW_EXECUTE"),
    (0x04000000, "DO_DEVICE_TO_BE_RESET"),
    (0x08000000, "DO_DEVICE_IRP_REQUIRES_EXTENSION"),
    (0x10000000, "DO_DAX_VOLUME"),
    (0x20000000, "DO_BOOT_CRITICAL"),
)


def device_flag_names(flags: int) -> list[str]:
    """The DO_* names of ``flags``; bits wdm.h does not name are one ``0x…`` item at the end."""
    names = [name for bit, name in DEVICE_FLAGS if flags & bit]
    rest = flags & ~sum(bit for bit, _ in DEVICE_FLAGS)
    return [*names, f"{rest:#x}"] if rest else names


def major_name(code: int) -> str | None:
    """``IRP_MJ_DEVICE_CONTROL`` for 0xe; None past IRP_MJ_PNP (kd prints such a major as N/A)."""
    return IRP_MJ_NAMES[code] if 0 <= code < len(IRP_MJ_NAMES) else None
