"""What the typed driver tools return (issue 16): a driver object, a device object, an IRP.

Compact for a model: a dispatch table lists only the majors a driver handles (the rest go to
``nt!IopInvalidDeviceRequest`` and are counted), flags come with their wdm.h names, and an
IOCTL in an IRP comes decoded. Absent facts are None/empty, so ``structuredContent`` leaves them out.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kdmcp.parse.ioctl import IoctlCode
from kdmcp.server.models import TypedResult
from kdmcp.validation import LazyModel

__all__ = [
    "DeviceObjectResult",
    "DeviceRef",
    "DispatchEntry",
    "DriverObjectResult",
    "IrpLocation",
    "IrpResult",
    "Routine",
    "StackEntry",
]


class Routine(LazyModel):
    address: str
    symbol: str | None = None


class DispatchEntry(LazyModel):
    major: str = Field(description="IRP_MJ_DEVICE_CONTROL")
    address: str
    symbol: str | None = None


class DeviceRef(LazyModel):
    address: str
    name: str | None = None
    driver: str | None = None


class DriverObjectResult(TypedResult):
    address: str | None = Field(default=None, description="the DRIVER_OBJECT")
    name: str | None = Field(default=None, description="\\Driver\\myfault")
    routines: dict[str, Routine] = Field(default_factory=dict, description="DriverEntry, DriverUnload… (set ones)")
    devices: list[DeviceRef] = Field(default_factory=list)
    dispatch: list[DispatchEntry] = Field(default_factory=list, description="the majors the driver handles")
    unhandled_majors: int = Field(default=0, description="majors left to nt!IopInvalidDeviceRequest")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        # the majors by routine, which the raw table (one row per major) does not show at a glance
        by_routine: dict[str, list[str]] = {}
        for entry in data.get("dispatch", []):
            by_routine.setdefault(entry.get("symbol") or entry["address"], []).append(entry["major"])
        lines = [f"{routine}: {', '.join(majors)}" for routine, majors in by_routine.items()]
        if data.get("unhandled_majors"):
            lines.append(f"{data['unhandled_majors']} other majors: nt!IopInvalidDeviceRequest")
        return lines


class StackEntry(LazyModel):
    device: str
    driver: str
    name: str | None = None
    this: bool = Field(default=False, description="the device asked about")


class DeviceObjectResult(TypedResult):
    address: str | None = Field(default=None, description="the DEVICE_OBJECT")
    name: str | None = None
    driver: str | None = None
    driver_object: str | None = None
    device_type: str | None = Field(default=None, description="DeviceType, hex")
    device_type_name: str | None = Field(default=None, description="FILE_DEVICE_DISK; none for a vendor's type")
    flags: str | None = None
    flag_names: list[str] = Field(default_factory=list, description="wdm.h DO_* names of flags")
    characteristics: list[str] = Field(default_factory=list, description="FILE_DEVICE_SECURE_OPEN…")
    current_irp: str | None = None
    reference_count: int | None = None
    extension: str | None = Field(default=None, description="DeviceExtension")
    attached_device: DeviceRef | None = Field(default=None, description="the device above (AttachedDevice)")
    attached_to: DeviceRef | None = Field(default=None, description="the device below")
    stack: list[StackEntry] = Field(default_factory=list, description="!devstack, top to bottom")
    devnode: str | None = None

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        lines = []
        if data.get("flag_names"):
            lines.append(f"Flags {data.get('flags')}: {' | '.join(data['flag_names'])}")
        if data.get("device_type_name"):
            lines.append(f"Type {data.get('device_type')}: {data['device_type_name']}")
        return lines


class IrpLocation(LazyModel):
    current: bool = False
    major: str = Field(description="IRP_MJ_DEVICE_CONTROL, or N/A for an unused location")
    major_code: int | None = None
    minor: str | None = None
    device: str | None = None
    driver: str | None = None
    file: str | None = None
    completion_routine: str | None = None
    completion_symbol: str | None = None
    invoke_on: list[str] = Field(default_factory=list, description="Success Error Cancel")
    pending: bool = False
    args: list[str] = Field(default_factory=list, description="the four Parameters words !irp prints")
    ioctl: IoctlCode | None = Field(default=None, description="device control: IoControlCode decoded")
    input_length: int | None = None
    output_length: int | None = None


class IrpResult(TypedResult):
    address: str
    irp_state: str | None = Field(default=None, description="active / completed, as !irp says")
    stack_count: int | None = None
    current_location: int | None = None
    thread: str | None = None
    mdl: str | None = None
    system_buffer: str | None = None
    locations: list[IrpLocation] = Field(default_factory=list)
    details: dict[str, str] = Field(default_factory=dict, description="detail: the IRP's fields that are set")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        # the decoded control codes: what !irp's Args leave for the reader to do by hand
        return [
            f"IoControlCode {loc['ioctl']['code']} = {loc['ioctl']['ctl_code']}"
            for loc in data.get("locations", [])
            if loc.get("ioctl")
        ]
