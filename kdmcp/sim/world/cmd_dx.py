"""World commands: ``dx``, the debugger data model over the world's sessions, processes and threads.

``dx @$curprocess`` is a node with children (``KernelObject [Type: _EPROCESS]``, ``Name``, ``Id``,
``Threads``...); a collection (``@$cursession.Processes``) lists ``[key] : value`` children and
takes an index (``[4]`` decimal, ``[0x4]`` hex, as C++ reads numbers); a typed object
(``KernelObject``, ``*(nt!_EPROCESS*)0xADDR``) lists its fields ``[+0x440] UniqueProcessId : 0x4
[Type: void *]`` read from the world's memory, so dx agrees with dt. Spelling follows
families/dx (01-21) and Microsoft's kernel ``dx @$curprocess`` example (``Handle : 0xf0f0f0f0``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from kdmcp.sim.world.cmd_types import bits_of, read_int, read_text, split_args
from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.layouts import Field, Layout, layout
from kdmcp.sim.world.machine import REGISTER_NAMES, ExprError, World
from kdmcp.sim.world.memory import AddressSpace
from kdmcp.sim.world.model import Module, Process, Thread
from kdmcp.sim.world.registry import command

__all__ = ["Node"]

# what dx calls dt's base types ("[+0x5f0] ActiveThreads : 0x1 [Type: unsigned long]")
_C_NAMES = (
    "UChar=unsigned char,Char=char,Uint2B=unsigned short,Int2B=short,Uint4B=unsigned long,"
    "Int4B=long,Uint8B=unsigned __int64,Int8B=__int64,Wchar=wchar_t,Void=void"
)
_C_TYPES = dict(pair.split("=", 1) for pair in _C_NAMES.split(","))
_SIZES = {"UChar": 1, "Char": 1, "Uint2B": 2, "Int2B": 2, "Uint4B": 4, "Int4B": 4, "Uint8B": 8, "Int8B": 8, "Wchar": 2}
_SIGNED = {"Char", "Int2B", "Int4B", "Int8B"}
# function pointers' types as the public symbols declare them (dx prints the signature)
_SIGNATURES = {
    "DriverInit": "long (__cdecl*)(_DRIVER_OBJECT *,_UNICODE_STRING *)",
    "DriverStartIo": "void (__cdecl*)(_DEVICE_OBJECT *,_IRP *)",
    "DriverUnload": "void (__cdecl*)(_DRIVER_OBJECT *)",
    "MajorFunction": "long (__cdecl*)(_DEVICE_OBJECT *,_IRP *)",
    "CompletionRoutine": "long (__cdecl*)(_DEVICE_OBJECT *,_IRP *,void *)",
    "CancelRoutine": "void (__cdecl*)(_DEVICE_OBJECT *,_IRP *)",
}
_ARRAY_RE = re.compile(r"\[(?P<count>\d+)\] (?P<elem>.+)$")
_CAST_RE = re.compile(
    r"^(?P<deref>\*)?\(\s*(?:\w+!)?(?P<type>_\w+)\s*\*\s*\)\s*(?P<addr>[^.\-\[]+?)(?P<rest>(?:->|\.|\[).*)?$"
)
_WRAPPED_RE = re.compile(r"^\(\*\(\((?P<inner>[^()]+\*)\)(?P<addr>[^()]+)\)\)(?P<rest>.*)$")
_GROUPED_RE = re.compile(r"^\((?P<inner>\*?\([^()]+\*\s*\)\s*[^()]+)\)(?P<rest>(?:->|\.|\[).*)$")
_STEP_RE = re.compile(r"\.(?P<member>\w+)(?P<call>\(\))?|\[(?P<index>[^\]]+)\]|->(?P<arrow>\w+)")
_ROOT_RE = re.compile(r"^(?P<root>@\$?\w+|[A-Za-z_]\w*)")
# the pseudo-registers dx reads as typed pointers
_POINTERS = {
    "@$proc": "_EPROCESS",
    "@$thread": "_ETHREAD",
    "@$peb": "_PEB",
    "@$teb": "_TEB",
    "@$prcb": "_KPRCB",
    "@$pcr": "_KPCR",
}
_SESSION = "Remote KD: KdSrv:Server=@{<Local>},Trans=@{NET:Port=50000,Key=1.2.3.4,Target}"


@dataclass
class Node:
    """One data-model value: what follows ``Name : `` (or nothing), its ``[Type: T]``, a DML link,
    its children in order and the members ``.Name`` reads (children are members too)."""

    value: str | None = None
    type: str | None = None
    link: str = ""  # " [Switch To]", "  [Switch To]" (a thread's, families/dx/14)
    kids: Callable[[], list[tuple[str, Node]]] | None = None
    members: dict[str, Callable[[], Node]] = field(default_factory=dict)
    items: Callable[[int], Node | None] | None = None  # a collection's [key]
    scalar: bool = False  # a leaf: "expr : value" with a single blank before the colon

    def children(self) -> list[tuple[str, Node]]:
        return self.kids() if self.kids is not None else []

    def member(self, name: str) -> Node | None:
        low = name.lower()
        for key, make in self.members.items():
            if key.lower() == low:
                return make()
        for key, node in self.children():
            if key.lower() == low or key.split("] ", 1)[-1].rstrip().lower() == low:
                return node
        return None


# --------------------------------------------------------------------- typed objects (layouts)


def _c_type(fld: Field) -> str:
    typ = fld.type
    if m := _ARRAY_RE.match(typ):
        elem = _c_type(Field(0, fld.name, m.group("elem")))
        if "(__cdecl*)" in elem:
            # an array of function pointers, as C declares it: "long (__cdecl*[28])(...)"
            return elem.replace("(__cdecl*)", f"(__cdecl*[{m.group('count')}])", 1)
        return f"{elem} [{m.group('count')}]"
    if typ.startswith("Ptr64  ") or typ.startswith("Ptr64\t"):
        ret = typ[len("Ptr64") :].strip()
        return _SIGNATURES.get(fld.name, f"{ret} (__cdecl*)()")
    if typ.startswith("Ptr64 "):
        inner = _c_type(Field(0, fld.name, typ[len("Ptr64 ") :]))
        return inner + " *"  # "void *", "void * *", "_EPROCESS *"
    return _C_TYPES.get(typ, typ)


def _container(lay: Layout, fld: Field) -> str:
    """A bit field's type is its container's: the field it overlays (``Flags2`` for ``InPrivate``)."""
    before = [f for f in lay.fields if f.offset == fld.offset and f.bits is None and f.type in _C_TYPES]
    if before:
        return _C_TYPES[before[0].type]
    _, width = fld.bits or (0, 32)
    pos = (fld.bits or (0, 0))[0]
    top = pos + width
    widths = ((8, "unsigned char"), (16, "unsigned short"), (32, "unsigned long"))
    return next((name for bits, name in widths if top <= bits), "unsigned __int64")


def typed(world: World, space: AddressSpace, lay: Layout, addr: int) -> Node:
    """A structure at ``addr``: no value, ``[Type: _EPROCESS]``, a child per field."""

    def kids() -> list[tuple[str, Node]]:
        out: list[tuple[str, Node]] = []
        for fld in lay.fields:
            if fld.bits is not None:
                pos, width = fld.bits
                name = f"[+0x{fld.offset:03x} ({pos + width - 1:2d}:{pos:2d})] {fld.name:<16}"
            else:
                # the field's name padded as a member's is: "[+0x000] Pcb              [Type: ..."
                name = f"[+0x{fld.offset:03x}] {fld.name:<16}"
            out.append((name, _field_node(world, space, lay, fld, addr + fld.offset)))
        return out

    return Node(type=lay.name, kids=kids)


def _unreadable(at: int) -> Node:
    # "[+0x038] EnvironmentPointer : Unable to read memory at Address 0x38" (families/dx/04)
    return Node(value=f"Unable to read memory at Address 0x{at:x}", scalar=True)


def _field_node(world: World, space: AddressSpace, lay: Layout, fld: Field, at: int) -> Node:
    typ = fld.type
    if fld.bits is not None:
        value = bits_of(space, at, *fld.bits)
        if value is None:
            return _unreadable(at)
        return Node(value=f"0x{value:x}", type=_container(lay, fld), scalar=True)
    ctype = _c_type(fld)
    if _ARRAY_RE.match(typ):
        return Node(type=ctype)  # "[+0x5a8] ImageFileName [Type: unsigned char [15]]"
    if typ in _SIZES:
        value = read_int(space, at, _SIZES[typ], signed=typ in _SIGNED)
        if value is None:
            return _unreadable(at)
        return Node(value=str(value) if typ in _SIGNED else f"0x{value:x}", type=ctype, scalar=True)
    if typ.startswith("Ptr64"):
        value = read_int(space, at, 8)
        if value is None:
            return _unreadable(at)
        target = typ[len("Ptr64") :]
        if target.startswith("  "):
            shown = world.name(value) if value else "0x0"
            return Node(value=f"0x{value:x} : {shown}", type=ctype, scalar=True)
        target = target.strip()
        if target in ("Char", "UChar", "Wchar") and value:
            text = read_text(space, value, 512, wide=target == "Wchar")
            if text is not None:
                return Node(value=f'0x{value:x} : "{text}"', type=ctype, scalar=True)
        pointee = layout(target)
        if pointee is not None and value and space.readable(value):
            inner = typed(world, space, pointee, value)
            return Node(value=f"0x{value:x}", type=ctype, kids=inner.kids)
        return Node(value=f"0x{value:x}", type=ctype, scalar=True)
    if typ in ("_LARGE_INTEGER", "_ULARGE_INTEGER"):
        value = read_int(space, at, 8, signed=typ == "_LARGE_INTEGER")
        if value is None:
            return _unreadable(at)
        sub = layout(typ)
        kids = typed(world, space, sub, at).kids if sub else None
        return Node(value=f"{{{value}}}", type=typ, kids=kids)  # "{133960160031264255}"
    if typ in ("_UNICODE_STRING", "_STRING"):
        length, buffer = read_int(space, at, 2), read_int(space, at + 8, 8)
        sub = layout(typ)
        kids = typed(world, space, sub, at).kids if sub else None
        if length is None or buffer is None:
            return _unreadable(at)
        text = read_text(space, buffer, length, wide=typ == "_UNICODE_STRING") if buffer and length else ""
        return Node(value=f'"{text or ""}"', type=typ, kids=kids)
    sub = layout(typ)
    if sub is not None:
        return typed(world, space, sub, at)
    return Node(type=typ)


# ------------------------------------------------------------------------- the data model


def _string(text: str) -> Node:
    # "@$curprocess.Name : EngHost.exe" with its Length (a lkd transcript; families/dx/15)
    return Node(value=text, scalar=True, kids=lambda: [("Length", Node(value=f"0x{len(text):x}", scalar=True))])


def _hex(value: int) -> Node:
    return Node(value=f"0x{value:x}", scalar=True)


def _collection(entries: Callable[[], list[tuple[int, Node]]]) -> Node:
    """A collection: ``[0x4]`` children, indexed by key."""

    def kids() -> list[tuple[str, Node]]:
        return [(f"[0x{key:x}]", node) for key, node in entries()]

    def item(key: int) -> Node | None:
        return next((node for k, node in entries() if k == key), None)

    return Node(kids=kids, items=item)


def _thread_site(world: World, t: Thread) -> str:
    site = t.frames[0].site if t.frames else t.start
    return f"{world.name(site)} ({fmt_addr(site)})"


def thread_node(world: World, t: Thread) -> Node:
    space = world.space(world.owner(t))
    node = Node(value=_thread_site(world, t), link="  [Switch To]")

    def frames() -> Node:
        # "[0x1]            : nt!KdCheckForDebugBreak + 0x7a006" (families/dx/03)
        return _collection(
            lambda: [
                (i, Node(value=world.name(f.site).replace("+", " + "), scalar=True)) for i, f in enumerate(t.frames)
            ]
        )

    def registers() -> Node:
        # the thread's context, the values r prints ("rax              : 0x0"), in r's order
        regs = world.registers(t)
        return Node(kids=lambda: [(r, _hex(regs.get(r, 0))) for r in REGISTER_NAMES])

    def teb() -> Node:
        lay = layout("_TEB")
        env = Node(kids=lambda: [("EnvironmentBlock", typed(world, space, lay, t.teb))] if lay else [])
        return env

    ethread = layout("_ETHREAD")
    node.members = {
        "KernelObject": lambda: typed(world, space, ethread, t.address) if ethread else Node(),
        "Id": lambda: _hex(t.tid),
        "Stack": lambda: Node(kids=lambda: [("Frames", frames())]),
        "Registers": lambda: Node(kids=lambda: [("User", registers()), ("Kernel", Node(kids=list))]),
        "Environment": teb,
    }
    node.kids = lambda: [(k, make()) for k, make in node.members.items()]
    return node


def process_node(world: World, p: Process) -> Node:
    space = world.space(p)
    node = Node(value=p.image, link=" [Switch To]")
    eprocess, peb = layout("_EPROCESS"), layout("_PEB")
    threads = _collection(lambda: [(t.tid, thread_node(world, t)) for t in p.threads])
    modules = _collection(lambda: [(i, _module(m.image, m.base, m.size)) for i, m in enumerate(_load_order(world))])
    node.members = {
        "KernelObject": lambda: typed(world, space, eprocess, p.address) if eprocess else Node(),
        "Name": lambda: _string(p.image),
        "Id": lambda: _hex(p.pid),
        "Handle": lambda: _hex(0xF0F0F0F0),  # kd's placeholder for a kernel process's handle
        "Threads": lambda: threads,
        "Modules": lambda: modules,
        "Environment": lambda: Node(
            kids=lambda: [("EnvironmentBlock", typed(world, space, peb, p.peb))] if peb else []
        ),
        "Devices": lambda: Node(kids=list),
        "Io": lambda: Node(kids=lambda: [("Handles", Node(kids=list))]),
    }
    node.kids = lambda: [(k, make()) for k, make in node.members.items()]
    return node


def _load_order(world: World) -> list[Module]:
    """Kernel modules in load order, as PsLoadedModuleList holds them (nt, hal, then by base)."""
    return sorted(world.modules, key=lambda m: (m.name != "nt", m.name != "hal", m.base))


def _module(name: str, base: int, size: int) -> Node:
    return Node(
        value=name,
        kids=lambda: [("BaseAddress", _hex(base)), ("Name", _string(name)), ("Size", _hex(size))],
    )


def _session(world: World) -> Node:
    # the Idle process first, then ActiveProcessLinks order (families/dx/02)
    procs = _collection(lambda: [(p.pid, process_node(world, p)) for p in [world.idle_process, *world.processes]])
    members: dict[str, Callable[[], Node]] = {
        "Processes": lambda: procs,
        "Id": lambda: _hex(0),
        "Diagnostics": Node,
        "TTD": Node,
        "OS": Node,
        "Devices": Node,
        "Attributes": Node,
    }
    node = Node(value=_SESSION, members=members)
    node.kids = lambda: [(k, make()) for k, make in members.items()]
    return node


def _debugger(world: World) -> Node:
    """``dx -r2 Debugger`` over KDNET (families/dx/17)."""

    def heads(*names: str) -> Callable[[], list[tuple[str, Node]]]:
        return lambda: [(n, Node(kids=list)) for n in names]

    sessions = Node(
        value="[object Object]",
        kids=lambda: [("[0x0]", _session(world))],
        items=lambda k: _session(world) if k == 0 else None,
    )
    settings = Node(
        kids=lambda: [
            *heads("Debug", "Display", "EngineInitialization", "Extensions", "Input", "Sources", "Symbols")(),
            ("AutoSaveSettings", Node(value="false", scalar=True)),
        ]
    )
    members: dict[str, Callable[[], Node]] = {
        "Sessions": lambda: sessions,
        "Settings": lambda: settings,
        "State": lambda: Node(kids=heads("DebuggerVariables", "PseudoRegisters", "Scripts", "UserVariables")),
        "Utility": lambda: Node(kids=heads("Collections", "Control", "Objects")),
    }
    node = Node(members=members)
    node.kids = lambda: [(k, make()) for k, make in members.items()]
    return node


def _root(world: World, name: str) -> Node | None:
    low = name.lower()
    if low == "@$curprocess":
        return process_node(world, world.current_process())
    if low == "@$curthread":
        return thread_node(world, world.current_thread())
    if low == "@$cursession":
        return _session(world)
    if name == "Debugger":
        return _debugger(world)
    if low in _POINTERS and (value := world.register(low)) is not None:
        # "@$thread                 : 0xffff9888a3f4e080 [Type: _ETHREAD *]" (dx -r0 @$thread)
        lay = layout(_POINTERS[low])
        obj = typed(world, world.space(), lay, value) if lay and value else Node(kids=list)
        return Node(value=f"0x{value:x}", type=f"{_POINTERS[low]} *", kids=obj.kids)
    if low.startswith("@") and (value := world.register(low[1:])) is not None:
        return Node(value=f"0x{value:x}", type="unsigned __int64", scalar=True)
    return None


# ------------------------------------------------------------------------------ the command


def _number(text: str, world: World) -> int:
    text = text.strip().replace("`", "")
    if text.startswith("@"):
        return world.evaluate(text)
    return int(text, 16) if text.lower().startswith("0x") else int(text, 10)


def _evaluate(world: World, expr: str) -> Node | str:
    """The node ``expr`` names, or the error dx prints."""
    start: Node | None = None
    rest = expr
    grouped = _GROUPED_RE.match(expr)
    if grouped is not None and (_CAST_RE.match(grouped.group("inner")) or _WRAPPED_RE.match(grouped.group("inner"))):
        # "((nt!_EPROCESS*)@$proc)->UniqueProcessId": the cast in parentheses, then its members
        expr = grouped.group("inner") + grouped.group("rest")
    cast = _WRAPPED_RE.match(expr)
    deref = bool(cast)
    if cast is not None:
        inner = cast.group("inner").rstrip("*").strip()
        typ, addr_text, rest = inner.split("!", 1)[-1], cast.group("addr"), cast.group("rest")
    elif (cast := _CAST_RE.match(expr)) is not None:
        deref = bool(cast.group("deref"))
        typ, addr_text, rest = cast.group("type"), cast.group("addr"), cast.group("rest") or ""
    if cast is not None:
        lay = layout(typ)
        if lay is None:
            return f"Error: Unable to find type '{typ} *' for cast."
        addr = _number(addr_text, world)
        obj = typed(world, world.space(), lay, addr)
        # a pointer shows its value and, one level down, the structure's fields (dx -r1)
        start = obj if deref else Node(value=f"0x{addr:x}", type=f"{lay.name} *", kids=obj.kids)
    else:
        m = _ROOT_RE.match(expr)
        if m is None:
            return _arithmetic(world, expr)
        start = _root(world, m.group("root"))
        if start is None:
            if re.fullmatch(r"[\d\s+\-*/%()&|^<>xXa-fA-F]+", expr) and any(c.isdigit() for c in expr):
                return _arithmetic(world, expr)
            return f"Error: Unable to bind name '{m.group('root')}'"
        rest = expr[m.end() :]
    node = start
    pos = 0
    while pos < len(rest):
        step = _STEP_RE.match(rest, pos)
        if step is None:
            return _arithmetic(world, expr)  # "@rip+1": an expression over registers
        pos = step.end()
        name = step.group("member") or step.group("arrow")
        if step.group("index") is not None:
            if node.items is None:
                return "Error: Unable to index this object"
            found = node.items(_number(step.group("index"), world))
            if found is None:
                # kd, indexing past a collection (a dx transcript of a hidden pid)
                return "Error: The operation attempted to access data outside the valid range (0x8000000b)"
            node = found
        elif step.group("call"):
            kids = node.children()
            if name == "Count":
                node = _hex(len(kids))
            elif name == "First" and kids:
                node = kids[0][1]
            else:
                return f"Error: Unable to bind name '{name}'"
        else:
            found = node.member(name) if name else None
            if found is None:
                return f"Error: Unable to bind name '{name}'"
            node = found
    return node


def _arithmetic(world: World, expr: str) -> Node | str:
    """``1+2``: C++'s numbers (decimal unless ``0x``), evaluated as MASM with each decimal made
    ``0n``; a literal is an int, which dx shows in decimal (``1+2              : 3``)."""
    masm = re.sub(r"(?<![\w`$@])(\d+)(?![\w`])", r"0n\1", expr)
    try:
        value = world.evaluate(masm)
    except ExprError:
        word = re.match(r"\W*(\w+)", expr)
        return f"Error: Unable to bind name '{word.group(1) if word else expr}'"
    if "@" in expr:  # a register makes the result an unsigned __int64, shown in hex
        return Node(value=f"0x{value:x}", type="unsigned __int64", scalar=True)
    return Node(value=str(value - (1 << 64) if value >> 63 else value), scalar=True)


def _kid_lines(node: Node, depth: int, limit: int) -> list[str]:
    lines: list[str] = []
    indent = "    " * depth
    for name, kid in node.children():
        typ = f" [Type: {kid.type}]" if kid.type else ""
        if kid.value is not None:
            lines.append(f"{indent}{name:<16} : {kid.value}{typ}{kid.link}")
        else:
            lines.append(f"{indent}{name:<16}{typ}")
        if depth < limit and kid.kids is not None:
            lines += _kid_lines(kid, depth + 1, limit)
    return lines


@command("dx", modes=("kernel",), summary="display a data model expression")
def _dx(world: World, name: str, args: str) -> str | None:
    del name
    words = split_args(args)
    limit = 1
    while words and words[0].startswith("-"):
        opt = words.pop(0)
        if opt.startswith("-r") and opt[2:].isdigit():
            limit = int(opt[2:])
        elif opt == "-r":
            limit = 1
        else:
            return None  # -g grids, -id contexts: not modelled
    expr = " ".join(words)
    if not expr:
        return None
    node = _evaluate(world, expr)
    if isinstance(node, str):
        return node + "\n"
    typ = f" [Type: {node.type}]" if node.type else ""
    if node.scalar or node.kids is None:
        # "@$curprocess.Name : EngHost.exe", "1+2              : 3"
        head = f"{expr:<16} : {node.value}{typ}{node.link}" if node.value is not None else f"{expr}{typ}"
    elif node.value is not None:
        head = f"{expr}{' ' * 17}: {node.value}{typ}{node.link}"  # "@$curprocess                 : System"
    else:
        head = f"{expr}{' ' * 16}{typ}"  # "@$curprocess.Modules                "
    lines = [head]
    if limit > 0:
        lines += _kid_lines(node, 1, limit)
    return "\n".join(lines) + "\n"
