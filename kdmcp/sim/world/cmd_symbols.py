"""World commands: symbols, modules and numbers (``x``, ``ln``, ``lm``, ``.reload``, ``.sympath``,
``?``, ``.formats``).

``x`` and ``ln`` search the same symbol table that ``k``, ``u`` and ``dps`` name addresses
with, so an address ``x`` prints lies in its module's ``lm`` range and ``ln`` of it names it.
The world's kernel symbols are public ones (ntkrnlmp.pdb from the symbol server), which is why
kd prints ``(<no parameter info>)`` after a routine and ``<no type information>`` after data.
``lm`` lists the world's modules in the canned default target's layouts; only nt has a pdb.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kdmcp.sim.world.code import fmt_addr
from kdmcp.sim.world.machine import World
from kdmcp.sim.world.model import Module, Symbol
from kdmcp.sim.world.registry import command

__all__ = ["ctime", "sympath_text"]

# where symsrv keeps what srv* fetches (the pdb path lm prints for nt lies under it)
_DOWNSTREAM = "C:\\ProgramData\\Dbg\\sym"
_MSDL = "https://msdl.microsoft.com/download/symbols"


@dataclass
class _SymbolState:
    """The symbol search path (``.sympath``); the banner's ``Symbol search path is: srv*``."""

    path: list[str] = field(default_factory=lambda: ["srv*"])


def _state(world: World) -> _SymbolState:
    return world.state_of(_SymbolState)


def ctime(seconds: int) -> str:
    """``Fri Jul 10 01:26:53 2020``: C's ctime in the target's zone (UTC + 0:00), day padded."""
    dt = datetime(1970, 1, 1) + timedelta(seconds=seconds)
    return f"{dt:%a %b} {dt.day:2d} {dt:%H:%M:%S %Y}"


# ------------------------------------------------------------------ x


def _signature(sym: Symbol) -> str:
    # public symbols carry no types: "nt!KiPageFault (<no parameter info>)" (ln's exact match),
    # "nt!KeServiceDescriptorTable = <no type information>" (x of data)
    return "(<no parameter info>)" if sym.kind == "code" else "= <no type information>"


@command("x", modes=("kernel", "user"), summary="examine symbols")
def _x(world: World, name: str, args: str) -> str | None:
    flags: set[str] = set()
    words = args.split()
    while words and words[0].startswith("/"):
        flags.add(words.pop(0)[1:].lower())
    if not words:
        return None
    target = " ".join(words)
    module, bang, pattern = target.partition("!")
    if not bang:
        module, pattern = "*", target
    found = world.symbols.find(module, pattern)
    found.sort(key=lambda pair: pair[1].name.lower() if "n" in flags else pair[1].address)
    out: list[str] = []
    for mod, sym in found:
        full = f"{mod.name}!{sym.name}"
        if "0" in flags:  # families/types_symbols/10: addresses alone
            out.append(fmt_addr(sym.address))
        elif "1" in flags:  # names alone
            out.append(full)
        elif "2" in flags:  # address and name
            out.append(f"{fmt_addr(sym.address)} {full}")
        elif "v" in flags:
            # families/types_symbols/06: "prv func   00000001`00003340  249 notepad!WinMain (…)";
            # public symbols are "pub", data "global"
            kind = "pub func  " if sym.kind == "code" else "pub global"
            out.append(f"{kind} {fmt_addr(sym.address)} {sym.size:4x} {full} {_signature(sym)}")
        else:
            # families/types_symbols/09: "000007f6`466a2f9c Fabric!Common::…::ConfigEntry<…> (void)"
            out.append(f"{fmt_addr(sym.address)} {full} {_signature(sym)}")
    return "".join(line + "\n" for line in out)


# ------------------------------------------------------------------ ln


@command("ln", modes=("kernel", "user"), summary="list nearest symbols")
def _ln(world: World, name: str, args: str) -> str | None:
    addr = world.evaluate(args) if args.strip() else world.registers().get("rip", 0)
    mod, sym, off = world.symbols.nearest(addr)
    if mod is None:
        return ""  # no module there: kd prints nothing
    before, after = world.symbols.neighbours(addr)
    left = fmt_addr(sym.address if sym is not None else mod.base)
    # the DML links kd prints as text (Browse module / Set bu breakpoint), then the neighbours:
    # "(fffff800`2a492200)   nt!KiSystemCall64   |  (fffff800`2a492348)   nt!KiSystemServiceStart"
    line = f"({left})   {world.name(addr)}"
    if after is not None:
        line += f"   |  ({fmt_addr(after.address)})   {mod.name}!{after.name}"
    out = ["Browse module", "Set bu breakpoint", "", line]
    if before is not None and off == 0:
        out += ["Exact matches:", f"    {mod.name}!{before.name} {_signature(before)}"]
    return "".join(s + "\n" for s in out)


# ------------------------------------------------------------------ ? and .formats


def _signed(value: int) -> int:
    return value - (1 << 64) if value >> 63 else value


@command("?", modes=("kernel", "user"), summary="evaluate expression")
def _evaluate(world: World, name: str, args: str) -> str | None:
    if not args.strip():
        return None  # "?" alone is the command help
    value = world.evaluate(args)
    # corpus misc/10: "Evaluate expression: -8781847822336 = fffff803`51148000"
    return f"Evaluate expression: {_signed(value)} = {fmt_addr(value)}\n"


def _g(value: float) -> str:
    """printf %g as the MSVC runtime spells it: three exponent digits, ``1.#QNAN``, ``1.#INF``."""
    if math.isnan(value):
        return ("-" if math.copysign(1.0, value) < 0 else "") + "1.#QNAN"
    if math.isinf(value):
        return ("-" if value < 0 else "") + "1.#INF"
    text = f"{value:g}"
    m = re.fullmatch(r"(.*e[-+])(\d+)", text)
    return f"{m.group(1)}{int(m.group(2)):03d}" if m else text


def _filetime(value: int) -> str:
    """A 64-bit value as a FILETIME (100 ns since 1601), as .formats prints one with ms."""
    if value >> 63:
        return "***** Invalid FILETIME"
    days, rest = divmod(value // 10_000, 86_400_000)
    # the Gregorian calendar repeats every 400 years (146097 days, a whole number of weeks):
    # fold years past datetime's 9999 back into range and add the cycles to the year printed
    cycles, days = divmod(days, 146_097)
    dt = datetime(1601, 1, 1) + timedelta(days=days, milliseconds=rest)
    year = dt.year + 400 * cycles
    return f"{dt:%a %b} {dt.day:2d} {dt:%H:%M:%S}.{dt.microsecond // 1000:03d} {year} (UTC + 0:00)"


@command(".formats", modes=("kernel", "user"), summary="show number formats")
def _formats(world: World, name: str, args: str) -> str | None:
    if not args.strip():
        return None
    value = world.evaluate(args)
    raw = value.to_bytes(8, "little")
    low, high = struct.unpack("<ff", raw)
    (double,) = struct.unpack("<d", raw)
    chars = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in reversed(raw))
    binary = " ".join(f"{b:08b}" for b in reversed(raw))
    time = ctime(value) if value < 1 << 32 else _filetime(value)
    # published x64 kd .formats (Decimal (unsigned) line, 22 octal digits, 8 binary groups;
    # a 32-bit value's Time is CRT time, a larger one a FILETIME); corpus misc/03
    lines = [
        "Evaluate expression:",
        f"  Hex:     {fmt_addr(value)}",
        f"  Decimal: {_signed(value)}",
        f"  Decimal (unsigned) : {value}",
        f"  Octal:   {value:022o}",
        f"  Binary:  {binary}",
        f"  Chars:   {chars}",
        f"  Time:    {time}",
        f"  Float:   low {_g(low)} high {_g(high)}",
        f"  Double:  {_g(double)}",
    ]
    return "".join(s + "\n" for s in lines)


# ------------------------------------------------------------------ .sympath


def _expanded(element: str) -> str:
    """``srv*`` as symsrv reads it: the default downstream store, then Microsoft's server."""
    low = element.lower()
    if low in ("srv*", "srv"):
        return f"SRV*{_DOWNSTREAM}*{_MSDL}"
    if low.startswith("srv*") and "*" not in element[4:]:
        return f"SRV*{element[4:]}*{_MSDL}"
    return element


@command(".sympath", modes=("kernel", "user"), summary="symbol search path")
def _sympath(world: World, name: str, args: str) -> str | None:
    return sympath_text(_state(world).path, args)


def sympath_text(path: list[str], args: str) -> str:
    """``.sympath args`` on the search path ``path`` (changed in place: ``.sympath+`` appends,
    a path replaces it), and what the debugger prints; a user dump's cdb answers the same."""
    text = args.strip()
    if text.startswith("+"):
        path += [p for p in text[1:].strip().split(";") if p]
    elif text:
        path[:] = [p for p in text.split(";") if p]
    joined = ";".join(path)
    # corpus misc/01: the path, its expansion, a blank line and the validation summary
    lines = [
        f"Symbol search path is: {joined}",
        f"Expanded Symbol search path is: {';'.join(_expanded(p) for p in path)}",
        "",
        "************* Symbol Path validation summary **************",
        "Response                         Time (ms)     Location",
    ]
    for element in path:
        response = "Deferred" if element.lower().startswith("srv") else "OK"
        lines.append(f"{response:<47}{element}")
    return "".join(s + "\n" for s in lines)


# ------------------------------------------------------------------ lm


def _status(mod: Module) -> tuple[str, str]:
    """lm's symbol column and what follows it: ``(pdb symbols)`` and the pdb, or ``(deferred)``."""
    if mod.pdb is not None and not mod.deferred:
        return "(pdb symbols)", mod.pdb
    return "(deferred)", ""


def _row(mod: Module, opts: set[str]) -> str:
    head = f"{fmt_addr(mod.base)} {fmt_addr(mod.end)}   "
    if "f" in opts or "n" in opts:
        # families/modules/07 (lmf): "cmd      cmd.exe     ", the path in place of the status
        return f"{head}{mod.name:<8} {mod.path if 'f' in opts else mod.image:<12}"
    if "t" in opts:
        return f"{head}{mod.name:<8} {_timestamp(mod)}"
    status, tail = _status(mod)
    # corpus modules/05, the canned lm: the name padded to 8 and three blanks, the status to 22
    return f"{head}{mod.name:<8}   {status:<22} {tail}"


def _timestamp(mod: Module) -> str:
    if mod.brepro:
        return f"{mod.timestamp:08X} (This is a reproducible build file hash, not a timestamp)"
    return f"{ctime(mod.timestamp)} ({mod.timestamp:08X})"


def _verbose(mod: Module) -> list[str]:
    """lmv's block under a row (corpus modules/04, modules/05; the canned lmv)."""
    lines = []
    if mod.pdb is not None and not mod.deferred:
        lines.append(f"Loaded symbol image file: {mod.image}")
    lines += [f"Image path: {mod.path}", f"Image name: {mod.image}", "Browse all global symbols  functions  data"]
    if mod.brepro:
        lines.append("Image was built with /Brepro flag.")
    lines += [
        f"Timestamp:        {_timestamp(mod)}",
        f"CheckSum:         {mod.checksum:08X}",
        f"ImageSize:        {mod.size:08X}",
        "Translations:     0000.04b0 0000.04e4 0409.04b0 0409.04e4",
        "Information from resource tables:",
    ]
    return ["    " + s for s in lines]


_OPTION_LETTERS = set("vkumofnt1dsceila")


def _wild(pattern: str, text: str) -> bool:
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, text, re.I) is not None


@command("lm", summary="list loaded modules")
def _lm(world: World, name: str, args: str) -> str | None:
    opts: set[str] = set()
    pattern: str | None = None
    address = 0
    words = args.split()
    i = 0
    while i < len(words):
        word = words[i].lower()
        if not set(word) <= _OPTION_LETTERS:
            return None
        opts |= set(word)
        if word.endswith(("m", "a")) and word != "1m":
            if i + 1 >= len(words):
                return None
            if word.endswith("a"):  # lm a Address: the module that contains it
                address = world.evaluate(words[i + 1])
            else:
                pattern = words[i + 1]
            i += 1
        i += 1
    mods: list[Module] = []
    if "u" not in opts or "k" in opts:
        mods += world.modules
    if ("k" not in opts or "u" in opts) and world.current_process().peb:
        mods += world.user_modules
    if pattern is not None:
        mods = [m for m in mods if _wild(pattern, m.name)]
    if "a" in opts:
        mods = [m for m in mods if m.base <= address < m.end]
        pattern = pattern or "*"  # a selection: printed as lm m is, without the unloaded list
    if "l" in opts:  # only the modules whose symbols are loaded
        mods = [m for m in mods if m.pdb is not None and not m.deferred]
    mods.sort(key=lambda m: m.base)
    if "1" in opts:  # lm 1m: the names alone
        return "".join(m.name + "\n" for m in mods)
    # corpus modules/06: a pattern's listing starts with the DML "Browse full module list"
    out = ["Browse full module list"] if pattern is not None else []
    out.append("start             end                 module name")
    for mod in mods:
        out.append(_row(mod, opts))
        if "v" in opts:
            out += _verbose(mod)
    unloaded = [
        u for u in world.unloaded if pattern is None or _wild(pattern, u[0]) or _wild(pattern, u[0].rsplit(".", 1)[0])
    ]
    if not opts & {"o", "u", "a", "l"} and unloaded:
        # corpus modules/09: "Unloaded modules:" and each image's range and file name
        out.append("Unloaded modules:")
        out += [f"{fmt_addr(lo)} {fmt_addr(hi)}   {image}" for image, lo, hi in unloaded]
    return "".join(s + "\n" for s in out)


# ------------------------------------------------------------------ .reload


def _reload_text(world: World) -> str:
    """The canned default target's ``.reload`` (a live kd transcript: Loading Kernel Symbols
    dots, the ctrl-c notice, the user-mode unloaded list error 0n30)."""
    kernel = "." * min(len(world.modules), 7)
    rest = "." * max(len(world.modules) - 7, 0)
    return (
        f"Connected to Windows 10 19041 x64 target at ({world.session_epoch}), ptr64 TRUE\n"
        f"Loading Kernel Symbols\n{kernel}\n\n"
        "Press ctrl-c (cdb, kd, ntsd) or ctrl-break (windbg) to abort symbol loads that take too long.\n"
        "Run !sym noisy before .reload to track down problems loading symbols.\n\n"
        f"{rest}\nLoading User Symbols\n\nLoading unloaded module list\n"
        f"{'.' * len(world.unloaded)}Unable to enumerate user-mode unloaded modules, Win32 error 0n30\n"
    )


@command(".reload", modes=("kernel",), summary="reload symbols")
def _reload(world: World, name: str, args: str) -> str | None:
    words = [w for w in args.split() if not w.startswith("/")]
    if not words:
        return _reload_text(world)
    target = words[0]
    stem = target.rsplit(".", 1)[0] if target.lower().endswith((".sys", ".dll", ".exe")) else target
    mod = world.symbols.module(stem) or next((m for m in world.modules if m.image.lower() == target.lower()), None)
    if mod is None:
        # kd's answer for an image that is not in the loaded module list
        return (
            f'"{target}" was not found in the image list.\n'
            f'Debugger will attempt to load "{target}" at given base 00000000`00000000.\n\n'
            "Please provide the full image name, including the extension (i.e. kernel32.dll)\n"
            "for more reliable results.Base address and size overrides can be given as\n"
            ".reload <image.ext>=<base>,<size>.\n"
            "Unable to add module at 00000000`00000000\n"
        )
    if mod.pdb is not None:
        mod.deferred = False  # its pdb is at hand: loaded now (only nt's is, in this world)
    return ""
