"""Decoding an I/O control code: device type, function, transfer method and required access.

Why here, pure: an IOCTL such as ``0x222003`` shows up in an IRP's stack location, a dispatch
routine's compare or a log line, with or without a debugger; decoding it by hand is where a model
slips a bit. The layout is the WDK's ``CTL_CODE`` macro (devioctl.h; "Defining I/O Control
Codes", Windows driver docs)::

    #define CTL_CODE(DeviceType, Function, Method, Access) \\
        (((DeviceType) << 16) | ((Access) << 14) | ((Function) << 2) | (Method))

so bits 31-16 are the device type, 15-14 the required access, 13-2 the function and 1-0 the
transfer type. "Specifying Device Types": values below 0x8000 are Microsoft's, 0x8000 and up
are for vendors; function codes below 0x800 are Microsoft's, 0x800 and up are vendors' (the
"Custom" bit 13). Device type ``FILE_DEVICE_FILE_SYSTEM`` (9) is the FSCTL family.
"""

from __future__ import annotations

from kdmcp.parse.ioctl_names import NAMES

# record_base, not the models package: the server imports this at start-up, before any record model is
# needed (tests/server/test_tools.py, the cold start)
from kdmcp.parse.record_base import StrictModel

__all__ = ["DEVICE_TYPES", "IoctlCode", "decode", "parse_code"]

# winioctl.h / devioctl.h FILE_DEVICE_* values (the WDK 10 list)
DEVICE_TYPES: dict[int, str] = {
    0x01: "FILE_DEVICE_BEEP", 0x02: "FILE_DEVICE_CD_ROM", 0x03: "FILE_DEVICE_CD_ROM_FILE_SYSTEM",
    0x04: "FILE_DEVICE_CONTROLLER", 0x05: "FILE_DEVICE_DATALINK", 0x06: "FILE_DEVICE_DFS",
    0x07: "FILE_DEVICE_DISK", 0x08: "FILE_DEVICE_DISK_FILE_SYSTEM", 0x09: "FILE_DEVICE_FILE_SYSTEM",
    0x0A: "FILE_DEVICE_INPORT_PORT", 0x0B: "FILE_DEVICE_KEYBOARD", 0x0C: "FILE_DEVICE_MAILSLOT",
    0x0D: "FILE_DEVICE_MIDI_IN", 0x0E: "FILE_DEVICE_MIDI_OUT", 0x0F: "FILE_DEVICE_MOUSE",
    0x10: "FILE_DEVICE_MULTI_UNC_PROVIDER", 0x11: "FILE_DEVICE_NAMED_PIPE", 0x12: "FILE_DEVICE_NETWORK",
    0x13: "FILE_DEVICE_NETWORK_BROWSER", 0x14: "FILE_DEVICE_NETWORK_FILE_SYSTEM", 0x15: "FILE_DEVICE_NULL",
    0x16: "FILE_DEVICE_PARALLEL_PORT", 0x17: "FILE_DEVICE_PHYSICAL_NETCARD", 0x18: "FILE_DEVICE_PRINTER",
    0x19: "FILE_DEVICE_SCANNER", 0x1A: "FILE_DEVICE_SERIAL_MOUSE_PORT", 0x1B: "FILE_DEVICE_SERIAL_PORT",
    0x1C: "FILE_DEVICE_SCREEN", 0x1D: "FILE_DEVICE_SOUND", 0x1E: "FILE_DEVICE_STREAMS", 0x1F: "FILE_DEVICE_TAPE",
    0x20: "FILE_DEVICE_TAPE_FILE_SYSTEM", 0x21: "FILE_DEVICE_TRANSPORT", 0x22: "FILE_DEVICE_UNKNOWN",
    0x23: "FILE_DEVICE_VIDEO", 0x24: "FILE_DEVICE_VIRTUAL_DISK", 0x25: "FILE_DEVICE_WAVE_IN",
    0x26: "FILE_DEVICE_WAVE_OUT", 0x27: "FILE_DEVICE_8042_PORT", 0x28: "FILE_DEVICE_NETWORK_REDIRECTOR",
    0x29: "FILE_DEVICE_BATTERY", 0x2A: "FILE_DEVICE_BUS_EXTENDER", 0x2B: "FILE_DEVICE_MODEM",
    0x2C: "FILE_DEVICE_VDM", 0x2D: "FILE_DEVICE_MASS_STORAGE", 0x2E: "FILE_DEVICE_SMB", 0x2F: "FILE_DEVICE_KS",
    0x30: "FILE_DEVICE_CHANGER", 0x31: "FILE_DEVICE_SMARTCARD", 0x32: "FILE_DEVICE_ACPI", 0x33: "FILE_DEVICE_DVD",
    0x34: "FILE_DEVICE_FULLSCREEN_VIDEO", 0x35: "FILE_DEVICE_DFS_FILE_SYSTEM", 0x36: "FILE_DEVICE_DFS_VOLUME",
    0x37: "FILE_DEVICE_SERENUM", 0x38: "FILE_DEVICE_TERMSRV", 0x39: "FILE_DEVICE_KSEC", 0x3A: "FILE_DEVICE_FIPS",
    0x3B: "FILE_DEVICE_INFINIBAND", 0x3E: "FILE_DEVICE_VMBUS", 0x3F: "FILE_DEVICE_CRYPT_PROVIDER",
    0x40: "FILE_DEVICE_WPD", 0x41: "FILE_DEVICE_BLUETOOTH", 0x42: "FILE_DEVICE_MT_COMPOSITE",
    0x43: "FILE_DEVICE_MT_TRANSPORT", 0x44: "FILE_DEVICE_BIOMETRIC", 0x45: "FILE_DEVICE_PMI",
    0x46: "FILE_DEVICE_EHSTOR", 0x47: "FILE_DEVICE_DEVAPI", 0x48: "FILE_DEVICE_GPIO", 0x49: "FILE_DEVICE_USBEX",
    0x50: "FILE_DEVICE_CONSOLE", 0x51: "FILE_DEVICE_NFP", 0x52: "FILE_DEVICE_SYSENV",
    0x53: "FILE_DEVICE_VIRTUAL_BLOCK", 0x54: "FILE_DEVICE_POINT_OF_SERVICE",
    0x55: "FILE_DEVICE_STORAGE_REPLICATION", 0x56: "FILE_DEVICE_TRUST_ENV", 0x57: "FILE_DEVICE_UCM",
    0x58: "FILE_DEVICE_UCMTCPCI", 0x59: "FILE_DEVICE_PERSISTENT_MEMORY", 0x5A: "FILE_DEVICE_NVDIMM",
    0x5B: "FILE_DEVICE_HOLOGRAPHIC", 0x5C: "FILE_DEVICE_SDFXHCI", 0x5D: "FILE_DEVICE_UCMUCSI",
    0x5E: "FILE_DEVICE_PRM", 0x5F: "FILE_DEVICE_EVENT_COLLECTOR", 0x60: "FILE_DEVICE_USB4",
    0x61: "FILE_DEVICE_SOUNDWIRE",
}
# the Method (transfer type) and Access field values, as devioctl.h names them
METHODS = ("METHOD_BUFFERED", "METHOD_IN_DIRECT", "METHOD_OUT_DIRECT", "METHOD_NEITHER")
ACCESS = ("FILE_ANY_ACCESS", "FILE_READ_ACCESS", "FILE_WRITE_ACCESS", "FILE_READ_ACCESS | FILE_WRITE_ACCESS")


class IoctlCode(StrictModel):
    """One decoded control code; ``ctl_code`` is the ``CTL_CODE(...)`` that builds it again."""

    code: str  # "0x00222003"
    device_type: str  # "0x22"
    device_type_name: str | None = None  # "FILE_DEVICE_UNKNOWN"; None for a vendor's or an unassigned type
    function: str  # "0x800"
    method: str  # "METHOD_NEITHER"
    access: str  # "FILE_ANY_ACCESS"
    ctl_code: str  # "CTL_CODE(FILE_DEVICE_UNKNOWN, 0x800, METHOD_NEITHER, FILE_ANY_ACCESS)"
    vendor_device_type: bool = False  # device type 0x8000 and up
    vendor_function: bool = False  # function 0x800 and up
    fsctl: bool = False  # FILE_DEVICE_FILE_SYSTEM: a file system control code (FSCTL_*)
    name: str | None = None  # the header's name of a well-known code (kdmcp/parse/ioctl_names.py)


def parse_code(value: int | str) -> int:
    """A control code from an integer or its text: ``0x222003``, ``222003h``, ``00222003``,
    kd's backquoted form; a bare string of digits is hex, as kd prints codes (``Args: ... 0x8336a01e``
    and ``!irp``'s ``IoControlCode``), and ``0n`` marks a decimal one, as in kd's MASM syntax.
    ``ValueError`` if it is not a 32-bit value."""
    if isinstance(value, bool):
        raise ValueError("a control code is a number, not a boolean")
    if isinstance(value, int):
        number = value
    else:
        text = value.strip().replace("`", "").lower()
        if text.startswith("0n") and text[2:].isdigit():
            return parse_code(int(text[2:]))
        if text.endswith("h"):
            text = text[:-1]
        if text.startswith("0x"):
            text = text[2:]
        if not text or any(c not in "0123456789abcdef" for c in text):
            raise ValueError(f"{value!r} is not a hex control code")
        number = int(text, 16)
    if not 0 <= number <= 0xFFFFFFFF:
        raise ValueError(f"{value!r} is not a 32-bit control code")
    return number


def decode(value: int | str) -> IoctlCode:
    """``value`` split into CTL_CODE's four fields, each named where devioctl.h names it."""
    code = parse_code(value)
    device, access, function, method = code >> 16, (code >> 14) & 3, (code >> 2) & 0xFFF, code & 3
    name = DEVICE_TYPES.get(device)
    return IoctlCode(
        code=f"{code:#010x}",
        device_type=f"{device:#x}",
        device_type_name=name,
        function=f"{function:#x}",
        method=METHODS[method],
        access=ACCESS[access],
        ctl_code=f"CTL_CODE({name or f'{device:#x}'}, {function:#x}, {METHODS[method]}, {ACCESS[access]})",
        vendor_device_type=device >= 0x8000,
        vendor_function=function >= 0x800,
        fsctl=device == 0x09,
        name=NAMES.get(code),
    )
