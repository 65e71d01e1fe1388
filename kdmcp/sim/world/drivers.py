"""The world's drivers: DRIVER_OBJECTs with dispatch tables, device stacks, IRPs in flight, the
loaded-module list, and the routines whose bytes a published sample fixes.

The third-party test driver is ``myfault.sys`` (Sysinternals NotMyFault's driver, which the
default target's canned ``!analyze -v`` already blamed), with no symbols, as a third-party
driver without its PDB is seen: kd names its code ``myfault+0x1e00``. Its
``IRP_MJ_DEVICE_CONTROL`` routine is real x64 code assembled with iced-x86 that switches on
the I/O control code the way MSVC compiles a ``switch``: a compare chain for three codes, then
a bounds-checked jump table (``lea``/``mov ecx,dword ptr [rdx+rax*4+…]``/``add``/``jmp rcx``)
for four more -- so a tool that recovers IOCTLs from a dispatch routine has real bytes to read.
The control codes are this simulator's own (device type 0x8336, functions 0x800-0x807).
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable

from iced_x86 import Code, Encoder, Instruction, MemoryOperand, Register

from kdmcp.sim.world import catalog as cat
from kdmcp.sim.world.code import pad
from kdmcp.sim.world.laying import Builder
from kdmcp.sim.world.layouts import put
from kdmcp.sim.world.model import Device, Driver, Irp, IrpStack, Module, Process

__all__ = ["BODIES", "IOCTLS", "MYFAULT_ROUTINES", "Filler", "lay", "lay_module_list"]

Filler = Callable[[], bytes]
MYFAULT = 0xFFFFF80060DA0000
# myfault's routines (no symbols): offset -> (role, size)
MYFAULT_ROUTINES: dict[int, tuple[str, int]] = {
    0x1900: ("the faulting read", 0x100),
    0x1C80: ("bug dispatcher", 0x100),
    0x1E00: ("IRP_MJ_DEVICE_CONTROL", 0x160),
    0x1F80: ("IRP_MJ_CREATE/CLOSE", 0x40),
    0x2000: ("DriverUnload", 0x30),
    0x6000: ("DriverEntry", 0x200),
}
JUMP_TABLE = 0x3000  # myfault+0x3000: the switch's table of routine offsets (rva, 4 bytes each)
# the control codes the dispatch routine handles, in the order it tests them
CHAIN_CODES = (0x8336E00B, 0x83362000, 0x83366005)  # compare chain
TABLE_BASE = 0x8336A012  # jump table: TABLE_BASE + 4*i, i = 0..3
TABLE_CODES = tuple(TABLE_BASE + 4 * i for i in range(4))
IOCTLS = CHAIN_CODES + TABLE_CODES
BUG_CODE = 0x8336E00B  # the one that reaches the faulting read (the !analyze scenario's)
WAIT_CODE = TABLE_CODES[3]  # the one the client's pending IRP carries
# each code's case, as an offset in the dispatch routine (the bug case is longer: it calls out)
CASES = (0x90, *(0xB0 + 0x10 * i for i in range(len(IOCTLS) - 1)))


def _enc(instrs: list[Instruction], ip: int) -> bytes:
    out = bytearray()
    for instr in instrs:
        e = Encoder(64)
        e.encode(instr, ip + len(out))
        out.extend(e.take_buffer())
    return bytes(out)


def _m(base: int, displ: int = 0, index: int = Register.NONE, scale: int = 1) -> MemoryOperand:
    return MemoryOperand(base, index, scale, displ, 8 if displ > 0x7F else 1 if displ else 0)  # type: ignore[arg-type]


def _dispatch(address: int) -> bytes:
    """myfault's IRP_MJ_DEVICE_CONTROL: ``switch (IoControlCode)`` with a chain and a table."""
    default = address + 0x110  # STATUS_INVALID_DEVICE_REQUEST
    cases = [address + off for off in CASES]
    bug_call_at = 0x9C  # ends at +0xa1: the canned stack's myfault+0x1ea1 return address
    head = [
        Instruction.create_mem_reg(Code.MOV_RM64_R64, _m(Register.RSP, 8), Register.RBX),
        Instruction.create_reg(Code.PUSH_R64, Register.RDI),
        Instruction.create_reg_i32(Code.SUB_RM64_IMM8, Register.RSP, 0x20),
        # rax = Irp->Tail.Overlay.CurrentStackLocation; ecx = Parameters.DeviceIoControl.IoControlCode
        Instruction.create_reg_mem(Code.MOV_R64_RM64, Register.RAX, _m(Register.RDX, 0xB8)),
        Instruction.create_reg_reg(Code.MOV_R64_RM64, Register.RDI, Register.RDX),
        Instruction.create_reg_mem(Code.MOV_R32_RM32, Register.ECX, _m(Register.RAX, 0x18)),
    ]
    code = _enc(head, address)
    chain_jumps: list[int] = []
    for i, ioctl in enumerate(CHAIN_CODES):
        code += _enc([Instruction.create_reg_u32(Code.CMP_RM32_IMM32, Register.ECX, ioctl)], address + len(code))
        chain_jumps.append(len(code))
        code += _enc([Instruction.create_branch(Code.JE_REL32_64, cases[i])], address + len(code))
    table = [
        Instruction.create_reg_mem(
            Code.LEA_R32_M, Register.EAX, MemoryOperand(Register.RCX, displ=(1 << 32) - TABLE_BASE, displ_size=8)
        ),  # [rcx-TABLE_BASE], 32-bit wrap
        Instruction.create_reg_u32(Code.TEST_RM8_IMM8, Register.AL, 3),
        Instruction.create_branch(Code.JNE_REL32_64, default),
        Instruction.create_reg_u32(Code.SHR_RM32_IMM8, Register.EAX, 2),
        Instruction.create_reg_u32(Code.CMP_RM32_IMM8, Register.EAX, 3),
        Instruction.create_branch(Code.JA_REL32_64, default),
    ]
    code += _enc(table, address + len(code))
    lea_at = len(code)
    lea = Instruction.create_reg_mem(
        Code.LEA_R64_M, Register.RDX, MemoryOperand.ctor_u64(Register.RIP, Register.NONE, 1, MYFAULT, 8)
    )
    code += _enc([lea], address + lea_at)
    code += _enc(
        [
            Instruction.create_reg_mem(
                Code.MOV_R32_RM32, Register.ECX, MemoryOperand(Register.RDX, Register.RAX, 4, JUMP_TABLE, 8)
            ),
            Instruction.create_reg_reg(Code.ADD_R64_RM64, Register.RCX, Register.RDX),
            Instruction.create_reg(Code.JMP_RM64, Register.RCX),
        ],
        address + len(code),
    )
    if len(code) > 0x90:
        raise ValueError(f"myfault dispatch head is {len(code):#x} bytes")
    code += b"\xcc" * (0x90 - len(code))
    # case bodies: most complete the request; the bug case (first) calls the bug dispatcher
    for i, at in enumerate(CASES):
        if IOCTLS[i] == BUG_CODE:
            continue
        body = _enc(
            [
                Instruction.create_reg_u32(Code.MOV_R32_IMM32, Register.EBX, i),
                Instruction.create_branch(Code.JMP_REL32_64, address + 0x120),
            ],
            address + at,
        )
        code = code.ljust(at, b"\xcc")[:at] + body + code[at + len(body) :]
    code = code.ljust(0x110, b"\xcc")
    code += _enc(
        [
            Instruction.create_reg_u32(Code.MOV_R32_IMM32, Register.EBX, 0xC0000010),
            Instruction.create_branch(Code.JMP_REL32_64, address + 0x120),
        ],
        address + 0x110,
    )
    code = code.ljust(0x120, b"\xcc")
    bug_case = CASES[IOCTLS.index(BUG_CODE)]
    # the bug case: rcx = Irp, call the bug dispatcher so that it returns to +0xa1
    call = _enc([Instruction.create_reg_reg(Code.MOV_R64_RM64, Register.RCX, Register.RDI)], address + bug_case)
    call += pad(bug_call_at - bug_case - len(call))
    call += _enc([Instruction.create_branch(Code.CALL_REL32_64, MYFAULT + 0x1C80)], address + bug_call_at)
    call += _enc([Instruction.create_branch(Code.JMP_REL32_64, address + 0x120)], address + len(call) + bug_case)
    code = code[:bug_case] + call + code[bug_case + len(call) :]
    tail = [  # +0x120: complete the IRP with the status in ebx, return it
        Instruction.create_reg_reg(Code.MOV_R32_RM32, Register.EAX, Register.EBX),
        Instruction.create_mem_reg(Code.MOV_RM32_R32, _m(Register.RDI, 0x30), Register.EAX),
        Instruction.create_reg_reg(Code.MOV_R64_RM64, Register.RCX, Register.RDI),
        Instruction.create_reg_reg(Code.XOR_R32_RM32, Register.EDX, Register.EDX),
        Instruction.create_branch(Code.CALL_REL32_64, cat.NT_ROUTINES["IofCompleteRequest"][0]),
        Instruction.create_reg_mem(Code.MOV_R64_RM64, Register.RBX, _m(Register.RSP, 0x30)),
        Instruction.create_reg_i32(Code.ADD_RM64_IMM8, Register.RSP, 0x20),
        Instruction.create_reg(Code.POP_R64, Register.RDI),
        Instruction.create(Code.RETNQ),
    ]
    code = code[:0x120] + _enc(tail, address + 0x120)
    del chain_jumps
    return code


def _int3_ret(_address: int) -> bytes:
    return b"\xcc\xc3"


def _user_break(_address: int) -> bytes:
    # the canned ub: "DbgUserBreakPoint+0x1: ret", int 3 padding, "nop dword ptr [rax+rax]"
    return b"\xcc\xc3" + b"\xcc" * 6 + bytes.fromhex("0f1f840000000000")


def _break_end(_address: int) -> bytes:
    # the canned db at DbgBreakPointWithStatus: "cc c3 cc cc cc cc cc cc-0f 1f 84 00 00 00 00 00"
    return b"\xcc" * 6 + bytes.fromhex("0f1f840000000000")


def _syscall_stub(number: int) -> Callable[[int], bytes]:
    def make(_address: int) -> bytes:
        # ntdll's x64 system-call stub: mov r10,rcx / mov eax,N / test byte ptr [7FFE0308h],1 /
        # jne +3 / syscall / ret / int 2Eh / ret -- "syscall" ends at +0x14, where kd's stacks return
        return bytes.fromhex("4c8bd1b8") + struct.pack("<I", number) + bytes.fromhex("f604250803fe7f0175030f05c3cd2ec3")

    return make


BODIES: dict[str, Callable[[int], bytes]] = {
    "nt!DbgBreakPointWithStatus": _int3_ret,
    "nt!DbgUserBreakPoint": _user_break,
    "nt!DbgBreakPointWithStatusEnd": _break_end,
    "ntdll!DbgBreakPoint": _int3_ret,
    "ntdll!NtWaitForSingleObject": _syscall_stub(0x4),
    "ntdll!NtDeviceIoControlFile": _syscall_stub(0x7),
    "ntdll!NtRemoveIoCompletion": _syscall_stub(0x9),
    "ntdll!NtDelayExecution": _syscall_stub(0x34),
    "ntdll!NtCreateFile": _syscall_stub(0x55),
    "ntdll!NtWaitForMultipleObjects": _syscall_stub(0x5B),
    "myfault!#1e00": _dispatch,
}

# driver -> (object name, {major function: routine}, default routine, devices (name, type, flags))
_IRP_MJ_CREATE, _IRP_MJ_CLOSE, _IRP_MJ_READ, _IRP_MJ_WRITE = 0x0, 0x2, 0x3, 0x4
_IRP_MJ_FSCTL, _IRP_MJ_DEVICE_CONTROL, _IRP_MJ_POWER, _IRP_MJ_PNP = 0xD, 0xE, 0x16, 0x1B
_DRIVERS: list[tuple[str, str, dict[int, str], str | None]] = [
    ("ACPI", "\\Driver\\ACPI", {}, "ACPI!ACPIDispatchIrp"),
    ("pci", "\\Driver\\pci", {_IRP_MJ_PNP: "pci!PciDispatchPnpPower", _IRP_MJ_POWER: "pci!PciDispatchPnpPower"}, None),
    ("partmgr", "\\Driver\\partmgr", {}, "partmgr!PmGlobalDispatch"),
    ("volmgr", "\\Driver\\volmgr", {}, "volmgr!VmGlobalDispatch"),
    ("disk", "\\Driver\\disk", {}, "CLASSPNP!ClassGlobalDispatch"),
    (
        "Ntfs",
        "\\FileSystem\\Ntfs",
        {
            _IRP_MJ_CREATE: "Ntfs!NtfsFsdCreate",
            _IRP_MJ_CLOSE: "Ntfs!NtfsFsdClose",
            _IRP_MJ_READ: "Ntfs!NtfsFsdRead",
            _IRP_MJ_WRITE: "Ntfs!NtfsFsdWrite",
            _IRP_MJ_FSCTL: "Ntfs!NtfsFsdFileSystemControl",
            _IRP_MJ_DEVICE_CONTROL: "Ntfs!NtfsFsdDeviceControl",
        },
        None,
    ),
    ("FLTMGR", "\\FileSystem\\FltMgr", {_IRP_MJ_CREATE: "FLTMGR!FltpCreate"}, "FLTMGR!FltpDispatch"),
    (
        "ndis",
        "\\Driver\\NDIS",
        {_IRP_MJ_DEVICE_CONTROL: "ndis!ndisDeviceControlIrpHandler"},
        "ndis!ndisDummyIrpHandler",
    ),
    ("tcpip", "\\Driver\\Tcpip", {_IRP_MJ_DEVICE_CONTROL: "tcpip!IppDispatchDeviceControl"}, "tcpip!TcpDispatch"),
    ("cng", "\\Driver\\CNG", {}, "cng!CngDispatch"),
    ("Wdf01000", "\\Driver\\Wdf01000", {}, "Wdf01000!FxDevice::DispatchWithLock"),
    (
        "myfault",
        "\\Driver\\myfault",
        {_IRP_MJ_CREATE: "myfault+0x1f80", _IRP_MJ_CLOSE: "myfault+0x1f80", _IRP_MJ_DEVICE_CONTROL: "myfault+0x1e00"},
        None,
    ),
]
# devices: (driver, name, DeviceType, Flags, Characteristics); stacks listed bottom-up below
_DEVICES: list[tuple[str, str, int, int, int]] = [
    ("pci", "\\Device\\NTPNP_PCI0005", 0x22, 0x3050, 0x180),
    ("ACPI", "", 0x32, 0x2010, 0),
    ("disk", "\\Device\\Harddisk0\\DR0", 0x7, 0x2050, 0x100),
    ("partmgr", "", 0x7, 0x2010, 0),
    ("volmgr", "\\Device\\VolMgrControl", 0x22, 0x40, 0),
    ("volmgr", "\\Device\\HarddiskVolume3", 0x7, 0x1050, 0x20000),
    ("Ntfs", "\\Ntfs", 0x8, 0x40, 0),
    ("FLTMGR", "\\FileSystem\\Filters\\FltMgr", 0x8, 0x40, 0),
    ("ndis", "\\Device\\Ndis", 0x17, 0x40, 0),
    ("tcpip", "\\Device\\Tcp", 0x12, 0x50, 0x100),
    ("tcpip", "\\Device\\Udp", 0x12, 0x50, 0x100),
    ("cng", "\\Device\\CNG", 0x39, 0x40, 0),
    ("myfault", "\\Device\\Myfault", 0x8336, 0x40, 0x100),
]
_STACKS = [[0, 1, 2, 3]]  # indexes into _DEVICES, bottom (PDO) first


def lay(
    b: Builder, kernel: list[Module], procs: list[Process], client: Process
) -> tuple[list[Driver], list[Device], list[Irp]]:
    """DRIVER_OBJECTs, DEVICE_OBJECTs and IRPs, in the model and in memory."""
    for off, (_role, size) in MYFAULT_ROUTINES.items():
        b.routines[f"myfault!#{off:x}"] = (MYFAULT + off, size)
    b.fixed["myfault!#1900"] = {0x81: bytes.fromhex("8b03")}  # !analyze: "mov eax,dword ptr [rbx]"
    b.calls.setdefault("myfault!#1c80", {})[0xBD] = MYFAULT + 0x1900  # returns to myfault+0x1d3d
    table = b"".join(struct.pack("<I", 0x1E00 + CASES[len(CHAIN_CODES) + i]) for i in range(4))
    b.mem.load(MYFAULT + JUMP_TABLE, table)
    invalid = cat.NT_ROUTINES["IopInvalidDeviceRequest"][0]
    drivers: list[Driver] = []
    for module, name, majors, default in _DRIVERS:
        dispatch = [b.site(default) if default else invalid for _ in range(28)]
        for major, routine in majors.items():
            dispatch[major] = b.site(routine)
        addr = b.block("Driv", 0x150)
        mod = next(m for m in kernel if m.name == module)
        d = Driver(
            addr,
            name,
            module,
            dispatch,
            # the module's DriverEntry symbol where it has one (x and !drvobj agree)
            init=mod.base + 0x6000
            if module == "myfault"
            else b.routines.get(f"{module}!DriverEntry", (mod.base + 0x1010,))[0],
            unload=MYFAULT + 0x2000 if module == "myfault" else 0,
        )
        drivers.append(d)
    devices: list[Device] = []
    for module, name, dtype, flags, chars in _DEVICES:
        d = next(x for x in drivers if x.module == module)
        addr = b.block("Devi", 0x150 + 0x60)
        dev = Device(addr, d.address, name, dtype, flags, chars, addr + 0x150)
        d.devices.insert(0, addr)  # IoCreateDevice pushes at the head of DeviceObject's list
        devices.append(dev)
    for stack in _STACKS:
        for lower, upper in itertools.pairwise(stack):
            devices[lower].attached = devices[upper].address
            devices[upper].lower = devices[lower].address
        for depth, i in enumerate(stack):
            devices[i].stack_size = depth + 1
    myfault_dev = next(dev for dev in devices if dev.name == "\\Device\\Myfault")
    client_thread = next(t for t in client.threads if t.address == cat.CLIENT_THREAD)
    file_obj = b.block("File", 0xD8)
    irp_addr = b.block("Irp ", 0xD0 + 0x48, at=cat.CLIENT_IRP, header=0)
    system_buffer = b.block("Mfio", 0x20, header=0)
    irp = Irp(
        irp_addr,
        client_thread.address,
        [
            IrpStack(
                _IRP_MJ_DEVICE_CONTROL, 0, myfault_dev.address, file_obj, control=0x1, args=(0x20, 0x20, WAIT_CODE, 0)
            )
        ],  # SL_PENDING_RETURNED
        current=1,
        system_buffer=system_buffer,
        user_buffer=0x000001E35FB24550,
    )
    myfault_dev.current_irp = irp_addr
    irps = [irp]
    for d in drivers:
        put(
            b.mem,
            "_DRIVER_OBJECT",
            d.address,
            {
                "Type": 4,
                "Size": 0x150,
                "DeviceObject": d.devices[0] if d.devices else 0,
                "Flags": d.flags,
                "DriverStart": next(m.base for m in kernel if m.name == d.module),
                "DriverSize": next(m.size for m in kernel if m.name == d.module),
                "DriverInit": d.init,
                "DriverUnload": d.unload,
                "DriverName.Length": 2 * len(d.name),
                "DriverName.MaximumLength": 2 * len(d.name) + 2,
                "DriverName.Buffer": _wide(b, d.name),
            },
        )
        b.mem.load(d.address + 0x70, struct.pack("<28Q", *d.dispatch))
    for dev in devices:
        owner = next(x for x in drivers if x.address == dev.driver)
        siblings = owner.devices
        nxt = siblings[siblings.index(dev.address) + 1] if siblings.index(dev.address) + 1 < len(siblings) else 0
        put(
            b.mem,
            "_DEVICE_OBJECT",
            dev.address,
            {
                "Type": 3,
                "Size": 0x150 + 0x60,
                "ReferenceCount": 1,
                "DriverObject": dev.driver,
                "NextDevice": nxt,
                "AttachedDevice": dev.attached,
                "CurrentIrp": dev.current_irp,
                "Flags": dev.flags,
                "Characteristics": dev.characteristics,
                "DeviceExtension": dev.extension,
                "DeviceType": dev.device_type,
                "StackSize": dev.stack_size,
            },
        )
    for irp_ in irps:
        put(
            b.mem,
            "_IRP",
            irp_.address,
            {
                "Type": 6,
                "Size": 0xD0 + 0x48 * len(irp_.stacks),
                "Flags": irp_.flags,
                "StackCount": len(irp_.stacks),
                "CurrentLocation": irp_.current,
                "AssociatedIrp": irp_.system_buffer,
                "UserBuffer": irp_.user_buffer,
                "PendingReturned": 1,
            },
        )
        b.mem.load(irp_.address + 0x98, struct.pack("<Q", irp_.thread))  # Tail.Overlay.Thread
        first = irp_.address + 0xD0
        b.mem.load(irp_.address + 0xB8, struct.pack("<Q", first + 0x48 * (irp_.current - 1)))
        for k, s in enumerate(irp_.stacks):
            put(
                b.mem,
                "_IO_STACK_LOCATION",
                first + 0x48 * k,
                {
                    "MajorFunction": s.major,
                    "MinorFunction": s.minor,
                    "Flags": s.flags,
                    "Control": s.control,
                    "DeviceObject": s.device,
                    "FileObject": s.file,
                    "CompletionRoutine": s.completion,
                    "Context": s.context,
                },
            )
            b.mem.load(first + 0x48 * k + 8, struct.pack("<QQQQ", *s.args))
    return drivers, devices, irps


def _wide(b: Builder, text: str) -> int:
    buf = b.block("ObNm", 2 * len(text) + 2, header=0, paged=True)
    b.mem.load(buf, text.encode("utf-16-le") + b"\0\0")
    return buf


def lay_module_list(b: Builder, kernel: list[Module]) -> None:
    """``nt!PsLoadedModuleList``: a KLDR_DATA_TABLE_ENTRY per module, in load order (nt first)."""
    order = sorted(kernel, key=lambda m: (m.name != "nt", m.name != "hal", m.base))
    entries = []
    for m in order:
        e = b.block("MmLd", 0xA0, header=0)
        put(
            b.mem,
            "_KLDR_DATA_TABLE_ENTRY",
            e,
            {
                "DllBase": m.base,
                "EntryPoint": m.base + 0x1010,
                "SizeOfImage": m.size,
                "FullDllName.Length": 2 * len(m.path),
                "FullDllName.MaximumLength": 2 * len(m.path) + 2,
                "FullDllName.Buffer": _wide(b, m.path),
                "BaseDllName.Length": 2 * len(m.image),
                "BaseDllName.MaximumLength": 2 * len(m.image) + 2,
                "BaseDllName.Buffer": _wide(b, m.image),
                "LoadCount": 1,
            },
        )
        entries.append(e)
    ring = [cat.NT_DATA["PsLoadedModuleList"][0], *entries]
    for i, node in enumerate(ring):
        b.mem.load(node, struct.pack("<QQ", ring[(i + 1) % len(ring)], ring[i - 1]))
