"""Where kd.exe, cdb.exe and windbg are: the config, the environment, PATH, then the usual installs.

The chain, first hit wins:

1. ``config``: ``debuggers.kd`` (etc.) in the config file. A bare name (``kd.exe``) is looked
   up on PATH; anything with a directory must be that file.
2. ``env``: ``$KDMCP_KD``, ``$KDMCP_CDB``, ``$KDMCP_WINDBG`` (surrounding quotes are removed, as
   ``set KDMCP_KD="C:\\...\\kd.exe"`` in cmd.exe keeps them).
3. ``path``: ``shutil.which`` over ``$PATH``.
4. ``windows_kits`` (Windows only): ``%ProgramFiles(x86)%`` then ``%ProgramFiles%``
   ``\\Windows Kits\\10\\Debuggers\\<arch>\\``, the host's architecture first. Only
   architectures the host can run are tried: x64 hosts run x64 and x86 debuggers, arm64 hosts run
   all three (x64 and x86 under emulation), x86 hosts only x86. Any of them debugs any target.
5. ``windows_apps`` (Windows only): app execution aliases in
   ``%LOCALAPPDATA%\\Microsoft\\WindowsApps`` (the WinDbg app from the Store / winget registers
   ``WinDbgX.exe``; ``kd.exe``/``cdb.exe`` are looked for there too).

A setting that points nowhere does not stop the search, but the result says so, so a typo in
the config is reported rather than silently replaced. Nothing here raises for "not found": the
result lists every place looked at, for ``kd-mcp doctor`` and for the error a tool returns.

Environment, platform, CPU architecture and the filesystem are parameters, so tests can lay out
a Windows machine on Linux: pass ``exists`` and the PATH walk is emulated through it with the
platform's rules instead of calling ``shutil.which``.
"""

from __future__ import annotations

import ctypes
import ntpath
import os
import platform as _platform
import posixpath
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "DEBUGGERS",
    "ENV_VARS",
    "DebuggerLocation",
    "DebuggerName",
    "Discovery",
    "LocationSource",
    "Probe",
    "find_debugger",
    "find_debuggers",
]

DebuggerName = Literal["kd", "cdb", "windbg"]
LocationSource = Literal["config", "env", "path", "windows_kits", "windows_apps"]

DEBUGGERS: tuple[DebuggerName, ...] = ("kd", "cdb", "windbg")
ENV_VARS: dict[DebuggerName, str] = {"kd": "KDMCP_KD", "cdb": "KDMCP_CDB", "windbg": "KDMCP_WINDBG"}

# Executable names without extension, in the order tried. The Debugging Tools ship windbg.exe;
# the WinDbg app's execution alias is WinDbgX.exe.
_NAMES: dict[DebuggerName, tuple[str, ...]] = {"kd": ("kd",), "cdb": ("cdb",), "windbg": ("windbg", "WinDbgX")}
_APP_ALIAS_NAMES: dict[DebuggerName, tuple[str, ...]] = {
    "kd": ("kd",),
    "cdb": ("cdb",),
    "windbg": ("WinDbgX", "windbg"),
}

# platform.machine() values → the Debuggers\<arch> directory names.
_ARCH_ALIASES = {
    "amd64": "x64",
    "x86_64": "x64",
    "x64": "x64",
    "arm64": "arm64",
    "aarch64": "arm64",
    "x86": "x86",
    "i386": "x86",
    "i686": "x86",
}
# What each host can run, best first (native, then emulated / WOW64).
_RUNNABLE = {"x64": ("x64", "x86"), "arm64": ("arm64", "x64", "x86"), "x86": ("x86",)}
_UNKNOWN_ARCH_ORDER = ("x64", "x86", "arm64")

_KITS_SUBDIR = ("Windows Kits", "10", "Debuggers")
_DEFAULT_PROGRAM_FILES_X86 = r"C:\Program Files (x86)"
_DEFAULT_PROGRAM_FILES = r"C:\Program Files"


@dataclass(frozen=True)
class DebuggerLocation:
    """A debugger executable and which link of the chain found it."""

    path: str
    source: LocationSource


@dataclass(frozen=True)
class Probe:
    """One place looked at: ``place`` is a setting name, ``PATH`` or a file; ``outcome`` says what was there."""

    source: LocationSource
    place: str
    outcome: str
    found: bool = False


@dataclass(frozen=True)
class Discovery:
    """The outcome for one debugger: where it is (or ``None``), every place looked at, and warnings."""

    name: DebuggerName
    location: DebuggerLocation | None
    probes: tuple[Probe, ...]
    warnings: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.location is not None

    @property
    def path(self) -> str | None:
        return None if self.location is None else self.location.path

    @property
    def source(self) -> LocationSource | None:
        return None if self.location is None else self.location.source

    @property
    def looked_in(self) -> list[str]:
        """One ``place: outcome`` line per probe, for a one-line error or a table cell."""
        return [f"{p.place}: {p.outcome}" for p in self.probes]

    def explain(self) -> str:
        """Lines for ``doctor`` and for a "debugger not found" error."""
        if self.location is not None:
            head = f"{self.name}: {self.location.path} (from {self.location.source})"
        else:
            head = f"{self.name}: not found"
        lines = [head, *(f"  {p.source}: {p.place}: {p.outcome}" for p in self.probes)]
        lines += [f"  warning: {w}" for w in self.warnings]
        if self.location is None:
            lines.append(
                f"  install the Debugging Tools for Windows (Windows SDK or WDK) or the WinDbg app, or set "
                f"debuggers.{self.name} in the config or ${ENV_VARS[self.name]}; to try kd-mcp without "
                "them, run it on the simulated debuggers: kd-mcp --simulate"
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class _Host:
    """The (possibly simulated) machine: environment, platform rules, filesystem test."""

    env: Mapping[str, str]
    windows: bool
    arch: str | None
    exists: Callable[[str], bool]
    emulate_which: bool

    def getenv(self, name: str) -> str | None:
        """Environment lookup; Windows variable names are case-insensitive (``ProgramFiles``)."""
        if name in self.env:
            return self.env[name]
        if self.windows:
            lowered = name.lower()
            for key, value in self.env.items():
                if key.lower() == lowered:
                    return value
        return None

    @property
    def pathmod(self) -> Callable[..., str]:
        return ntpath.join if self.windows else posixpath.join

    def exe_names(self, stem: str) -> tuple[str, ...]:
        # Windows: only .exe (a kd.cmd wrapper could not be sent Ctrl+Break as kd).
        # Elsewhere: the bare name, and name.exe for a Wine-style install.
        return (f"{stem}.exe",) if self.windows else (stem, f"{stem}.exe")

    def which(self, name: str) -> tuple[str | None, int]:
        """Look ``name`` up on PATH: (path or None, number of PATH directories)."""
        path_var = self.getenv("PATH") or ""
        sep = ";" if self.windows else ":"
        dirs = [d.strip().strip('"') for d in path_var.split(sep) if d.strip()]
        if not self.emulate_which:
            return shutil.which(name, path=path_var or None), len(dirs)
        join = self.pathmod
        for directory in dirs:
            candidate = join(directory, name)
            if self.exists(candidate):
                return candidate, len(dirs)
        return None, len(dirs)


def find_debugger(
    name: DebuggerName,
    configured: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
    machine: str | None = None,
    exists: Callable[[str], bool] | None = None,
) -> Discovery:
    """Run the chain for ``name``; ``configured`` is ``debuggers.<name>`` from the config.

    ``env`` defaults to ``os.environ``, ``platform`` to ``sys.platform``, ``machine`` to
    ``platform.machine()``; ``exists(path)`` (default: an existing non-directory) switches the PATH
    lookup to an emulation through it.
    """
    host = _Host(
        env=os.environ if env is None else env,
        windows=(platform or sys.platform) == "win32",
        arch=_ARCH_ALIASES.get((machine if machine is not None else _platform.machine()).lower()),
        exists=_real_exists if exists is None else exists,
        emulate_which=exists is not None,
    )
    probes: list[Probe] = []
    warnings: list[str] = []

    settings: list[tuple[LocationSource, str, str | None]] = [
        ("config", f"debuggers.{name}", configured),
        ("env", f"${ENV_VARS[name]}", host.getenv(ENV_VARS[name])),
    ]
    for source, setting, value in settings:
        location = _try_setting(host, source=source, setting=setting, value=value, probes=probes, warnings=warnings)
        if location is not None:
            return _done(name, location, probes, warnings)

    for stem in _NAMES[name]:
        for exe in host.exe_names(stem):
            hit, count = host.which(exe)
            if hit is not None:
                probes.append(Probe("path", f"PATH ({exe})", "found", found=True))
                return _done(name, DebuggerLocation(hit, "path"), probes, warnings)
            probes.append(Probe("path", f"PATH ({exe})", f"not in any of {count} directories"))

    if host.windows:
        for candidate in _windows_kits_candidates(host, name):
            location = _try_file(host, "windows_kits", candidate, probes)
            if location is not None:
                return _done(name, location, probes, warnings)
        for candidate in _windows_apps_candidates(host, name):
            location = _try_file(host, "windows_apps", candidate, probes)
            if location is not None:
                return _done(name, location, probes, warnings)

    return _done(name, None, probes, warnings)


def find_debuggers(
    configured: Mapping[str, str | None] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
    machine: str | None = None,
    exists: Callable[[str], bool] | None = None,
) -> dict[DebuggerName, Discovery]:
    """All three, for ``doctor``; ``configured`` is ``config.debuggers.model_dump()``."""
    settings = configured or {}
    return {
        name: find_debugger(name, settings.get(name), env=env, platform=platform, machine=machine, exists=exists)
        for name in DEBUGGERS
    }


def _try_setting(
    host: _Host,
    *,
    source: LocationSource,
    setting: str,
    value: str | None,
    probes: list[Probe],
    warnings: list[str],
) -> DebuggerLocation | None:
    """A configured or environment path: a bare name goes through PATH, a path must exist."""
    cleaned = (value or "").strip().strip('"').strip()
    if not cleaned:
        probes.append(Probe(source, setting, "not set"))
        return None
    if not any(sep in cleaned for sep in ("/", "\\")):
        hit, count = host.which(cleaned)
        if hit is not None:
            probes.append(Probe(source, setting, f"{cleaned} found on PATH", found=True))
            return DebuggerLocation(hit, source)
        outcome = f"{cleaned} is not in any of {count} PATH directories"
    elif host.exists(cleaned):
        probes.append(Probe(source, setting, f"{cleaned} exists", found=True))
        return DebuggerLocation(cleaned, source)
    else:
        outcome = f"{cleaned} does not exist"
    probes.append(Probe(source, setting, outcome))
    warnings.append(f"{setting} is set, but {outcome}; it was skipped")
    return None


def _try_file(host: _Host, source: LocationSource, candidate: str, probes: list[Probe]) -> DebuggerLocation | None:
    if host.exists(candidate):
        probes.append(Probe(source, candidate, "found", found=True))
        return DebuggerLocation(candidate, source)
    probes.append(Probe(source, candidate, "no such file"))
    return None


def _windows_kits_candidates(host: _Host, name: DebuggerName) -> list[str]:
    """``<ProgramFiles>\\Windows Kits\\10\\Debuggers\\<arch>\\<name>.exe``, host arch first."""
    roots: list[str] = []
    for var, fallback in (("ProgramFiles(x86)", _DEFAULT_PROGRAM_FILES_X86), ("ProgramFiles", _DEFAULT_PROGRAM_FILES)):
        root = (host.getenv(var) or "").strip() or fallback
        if root.lower() not in (r.lower() for r in roots):
            roots.append(root)
    archs = _RUNNABLE.get(host.arch or "", _UNKNOWN_ARCH_ORDER)
    # Windows Kits hold the classic windbg.exe only: WinDbgX is the Store app's alias.
    exe = f"{_NAMES[name][0]}.exe"
    return [ntpath.join(root, *_KITS_SUBDIR, arch, exe) for arch in archs for root in roots]


def _windows_apps_candidates(host: _Host, name: DebuggerName) -> list[str]:
    """App execution aliases under ``%LOCALAPPDATA%\\Microsoft\\WindowsApps``."""
    local = (host.getenv("LOCALAPPDATA") or "").strip()
    if not local:
        profile = (host.getenv("USERPROFILE") or "").strip()
        if not profile:
            return []
        local = ntpath.join(profile, "AppData", "Local")
    return [ntpath.join(local, "Microsoft", "WindowsApps", f"{stem}.exe") for stem in _APP_ALIAS_NAMES[name]]


def _done(name: DebuggerName, location: DebuggerLocation | None, probes: list[Probe], warnings: list[str]) -> Discovery:
    return Discovery(name=name, location=location, probes=tuple(probes), warnings=tuple(warnings))


def _real_exists(path: str) -> bool:
    """An existing non-directory. App execution aliases are reparse points that ``os.stat`` cannot
    follow; since Python 3.8 it then describes the link itself, so they count as existing."""
    return os.path.exists(path) and not os.path.isdir(path)


class VersionApi(Protocol):
    """The three version.dll calls ``file_version`` needs (a fake in tests)."""

    def GetFileVersionInfoSizeW(self, path: str, handle: Any) -> int: ...

    def GetFileVersionInfoW(self, path: str, handle: int, size: int, buffer: Any) -> int: ...

    def VerQueryValueW(self, block: Any, sub_block: str, pointer: Any, length: Any) -> int: ...


def file_version(path: str, api: VersionApi | None = None) -> str | None:
    """The file version of a Windows executable (``10.0.26100.1``), from its version resource.

    This is what ``kd-mcp doctor`` and ``health_check`` report: it needs no debugger run (kd
    would try to connect). None off Windows (without a fake ``api``) or without a resource.
    """
    if api is None:
        if sys.platform != "win32":
            return None
        api = ctypes.WinDLL("version")  # type: ignore[attr-defined,unused-ignore]
    size = api.GetFileVersionInfoSizeW(path, None)
    if not size:
        return None
    buffer = ctypes.create_string_buffer(size)
    if not api.GetFileVersionInfoW(path, 0, size, buffer):
        return None
    pointer = ctypes.c_void_p()
    length = ctypes.c_uint()
    if not api.VerQueryValueW(buffer, "\\", ctypes.byref(pointer), ctypes.byref(length)) or not pointer.value:
        return None
    fixed = ctypes.cast(pointer, ctypes.POINTER(_FixedFileInfo)).contents
    if fixed.dwSignature != 0xFEEF04BD:
        return None
    ms, ls = fixed.dwFileVersionMS, fixed.dwFileVersionLS
    return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"


class _FixedFileInfo(ctypes.Structure):
    """VS_FIXEDFILEINFO: the binary head of a version resource."""

    _fields_ = [
        ("dwSignature", ctypes.c_uint32),
        ("dwStrucVersion", ctypes.c_uint32),
        ("dwFileVersionMS", ctypes.c_uint32),
        ("dwFileVersionLS", ctypes.c_uint32),
        ("dwProductVersionMS", ctypes.c_uint32),
        ("dwProductVersionLS", ctypes.c_uint32),
        ("dwFileFlagsMask", ctypes.c_uint32),
        ("dwFileFlags", ctypes.c_uint32),
        ("dwFileOS", ctypes.c_uint32),
        ("dwFileType", ctypes.c_uint32),
        ("dwFileSubtype", ctypes.c_uint32),
        ("dwFileDateMS", ctypes.c_uint32),
        ("dwFileDateLS", ctypes.c_uint32),
    ]
