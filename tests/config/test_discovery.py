"""Finding kd/cdb/windbg: each link of the chain, their order, and a full account when nothing is found.

A Windows machine is laid out as a set of file paths; ``exists`` answers from it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from kdmcp.discovery import DebuggerLocation, Discovery, find_debugger, find_debuggers

PF86 = r"C:\Program Files (x86)"
PF = r"C:\Program Files"
KITS86 = PF86 + r"\Windows Kits\10\Debuggers"
KITS = PF + r"\Windows Kits\10\Debuggers"
APPS = r"C:\Users\dev\AppData\Local\Microsoft\WindowsApps"
WIN_ENV = {
    "PATH": r"C:\Windows\system32;C:\Windows;C:\tools",
    "ProgramFiles(x86)": PF86,
    "ProgramFiles": PF,
    "LOCALAPPDATA": r"C:\Users\dev\AppData\Local",
}


def fs(paths: Iterable[str]) -> Callable[[str], bool]:
    files = set(paths)
    return files.__contains__


def win(
    name: str = "kd",
    files: Iterable[str] = (),
    configured: str | None = None,
    env: dict[str, str] | None = None,
    machine: str = "AMD64",
) -> Discovery:
    return find_debugger(
        name,  # type: ignore[arg-type]
        configured,
        env=WIN_ENV if env is None else env,
        platform="win32",
        machine=machine,
        exists=fs(files),
    )


# --------------------------------------------------------------------------- each link


def test_config_path() -> None:
    found = win(configured=r"D:\dbg\kd.exe", files=[r"D:\dbg\kd.exe", KITS86 + r"\x64\kd.exe"])
    assert found.location == DebuggerLocation(r"D:\dbg\kd.exe", "config")
    assert found.found
    assert (found.path, found.source) == (r"D:\dbg\kd.exe", "config")
    assert [p.source for p in found.probes] == ["config"]
    assert found.warnings == ()


def test_config_bare_name_is_looked_up_on_path() -> None:
    found = win(configured="kd.exe", files=[r"C:\tools\kd.exe"])
    assert found.location == DebuggerLocation(r"C:\tools\kd.exe", "config")


def test_env_variable() -> None:
    env = {**WIN_ENV, "KDMCP_KD": r"E:\kd\kd.exe"}
    found = win(env=env, files=[r"E:\kd\kd.exe", r"C:\tools\kd.exe"])
    assert found.location == DebuggerLocation(r"E:\kd\kd.exe", "env")
    assert (found.probes[0].source, found.probes[0].outcome) == ("config", "not set")


def test_env_variable_with_cmd_quotes() -> None:
    env = {**WIN_ENV, "KDMCP_CDB": r'"E:\Program Files\cdb.exe"'}
    found = win("cdb", env=env, files=[r"E:\Program Files\cdb.exe"])
    assert found.location == DebuggerLocation(r"E:\Program Files\cdb.exe", "env")


def test_env_variable_names_per_debugger() -> None:
    env = {**WIN_ENV, "KDMCP_KD": r"E:\kd.exe", "KDMCP_CDB": r"E:\cdb.exe", "KDMCP_WINDBG": r"E:\windbg.exe"}
    files = [r"E:\kd.exe", r"E:\cdb.exe", r"E:\windbg.exe"]
    found = find_debuggers(env=env, platform="win32", machine="AMD64", exists=fs(files))
    assert {name: d.path for name, d in found.items()} == {"kd": files[0], "cdb": files[1], "windbg": files[2]}
    assert all(d.source == "env" for d in found.values())


def test_path() -> None:
    found = win(files=[r"C:\tools\kd.exe", KITS86 + r"\x64\kd.exe"])
    assert found.location == DebuggerLocation(r"C:\tools\kd.exe", "path")
    assert found.probes[-1].place == "PATH (kd.exe)"


def test_path_on_windows_uses_semicolons_and_quotes() -> None:
    env = {**WIN_ENV, "PATH": r'C:\Windows;"C:\My Tools";'}
    found = win(env=env, files=[r"C:\My Tools\kd.exe"])
    assert found.location == DebuggerLocation(r"C:\My Tools\kd.exe", "path")


def test_windows_kits_host_arch_first() -> None:
    files = [KITS86 + r"\x86\kd.exe", KITS + r"\x64\kd.exe", KITS86 + r"\arm64\kd.exe"]
    assert win(files=files, machine="AMD64").path == KITS + r"\x64\kd.exe"
    assert win(files=files, machine="ARM64").path == KITS86 + r"\arm64\kd.exe"
    assert win(files=files, machine="x86").path == KITS86 + r"\x86\kd.exe"


def test_windows_kits_program_files_x86_before_program_files() -> None:
    files = [KITS86 + r"\x64\kd.exe", KITS + r"\x64\kd.exe"]
    assert win(files=files).location == DebuggerLocation(KITS86 + r"\x64\kd.exe", "windows_kits")


def test_windows_kits_only_runnable_architectures() -> None:
    """An x86 host cannot run x64 or arm64 debuggers; an x64 host cannot run arm64 ones."""
    assert not win(files=[KITS86 + r"\x64\kd.exe"], machine="x86").found
    assert not win(files=[KITS86 + r"\arm64\kd.exe"], machine="AMD64").found
    assert win(files=[KITS86 + r"\x86\kd.exe"], machine="AMD64").found
    assert win(files=[KITS86 + r"\x64\kd.exe"], machine="ARM64").found


def test_windows_kits_unknown_arch_tries_all() -> None:
    assert win(files=[KITS86 + r"\arm64\kd.exe"], machine="").found


def test_windows_kits_default_roots_and_case_insensitive_env() -> None:
    env = {"PATH": "", "LOCALAPPDATA": WIN_ENV["LOCALAPPDATA"]}
    assert win(env=env, files=[KITS + r"\x64\kd.exe"]).source == "windows_kits"
    env = {"PROGRAMFILES(X86)": r"D:\PF86", "PATH": ""}
    assert win(env=env, files=[r"D:\PF86\Windows Kits\10\Debuggers\x64\kd.exe"]).source == "windows_kits"


def test_windows_apps_alias() -> None:
    found = win(files=[APPS + r"\kd.exe"])
    assert found.location == DebuggerLocation(APPS + r"\kd.exe", "windows_apps")


def test_windows_apps_windbgx() -> None:
    found = win("windbg", files=[APPS + r"\WinDbgX.exe"])
    assert found.location == DebuggerLocation(APPS + r"\WinDbgX.exe", "windows_apps")


def test_windows_apps_from_userprofile() -> None:
    env = {"USERPROFILE": r"C:\Users\dev", "PATH": ""}
    assert win(env=env, files=[APPS + r"\cdb.exe"], name="cdb").source == "windows_apps"


def test_windbg_on_path_under_either_name() -> None:
    assert win("windbg", files=[r"C:\tools\windbg.exe"]).path == r"C:\tools\windbg.exe"
    assert win("windbg", files=[r"C:\tools\WinDbgX.exe"]).path == r"C:\tools\WinDbgX.exe"


# --------------------------------------------------------------------------- order

ALL_LINKS = {
    "config": r"D:\cfg\kd.exe",
    "env": r"D:\env\kd.exe",
    "path": r"C:\tools\kd.exe",
    "windows_kits": KITS86 + r"\x64\kd.exe",
    "windows_apps": APPS + r"\kd.exe",
}


@pytest.mark.parametrize("winner", list(ALL_LINKS))
def test_chain_order(winner: str) -> None:
    """With the winner and every later link present, the winner is chosen."""
    order = list(ALL_LINKS)
    present = order[order.index(winner) :]
    env = {**WIN_ENV, "KDMCP_KD": ALL_LINKS["env"]}
    found = win(configured=ALL_LINKS["config"], env=env, files=[ALL_LINKS[link] for link in present])
    assert found.location == DebuggerLocation(ALL_LINKS[winner], winner)  # type: ignore[arg-type]
    sources = [p.source for p in found.probes]
    assert sources == sorted(sources, key=order.index)  # looked in chain order
    assert [p.found for p in found.probes].count(True) == 1
    assert found.probes[-1].found


def test_a_setting_that_points_nowhere_is_skipped_with_a_warning() -> None:
    env = {**WIN_ENV, "KDMCP_KD": r"D:\typo\kd.exe"}
    found = win(configured="kdd.exe", env=env, files=[r"C:\tools\kd.exe"])
    assert found.location == DebuggerLocation(r"C:\tools\kd.exe", "path")
    assert len(found.warnings) == 2
    assert "debuggers.kd is set, but kdd.exe is not in any of 3 PATH directories" in found.warnings[0]
    assert r"$KDMCP_KD is set, but D:\typo\kd.exe does not exist" in found.warnings[1]
    assert "warning:" in found.explain()


# --------------------------------------------------------------------------- not found


def test_not_found_lists_every_place() -> None:
    found = win(files=[])
    assert not found.found
    assert found.location is None
    assert (found.path, found.source) == (None, None)
    places = [p.place for p in found.probes]
    assert places[:3] == ["debuggers.kd", "$KDMCP_KD", "PATH (kd.exe)"]
    # x64 host: x64 then x86, each in both Program Files roots; then the WindowsApps alias.
    assert places[3:] == [
        KITS86 + r"\x64\kd.exe",
        KITS + r"\x64\kd.exe",
        KITS86 + r"\x86\kd.exe",
        KITS + r"\x86\kd.exe",
        APPS + r"\kd.exe",
    ]
    assert not any(p.found for p in found.probes)
    text = found.explain()
    assert text.startswith("kd: not found")
    for place in places:
        assert place in text
    assert "install the Debugging Tools for Windows" in text
    assert len(found.looked_in) == len(found.probes)


def test_linux_looks_only_at_settings_and_path() -> None:
    found = find_debugger("cdb", env={"PATH": "/usr/bin:/opt/dbg"}, platform="linux", exists=fs([]))
    assert not found.found
    assert [p.place for p in found.probes] == ["debuggers.cdb", "$KDMCP_CDB", "PATH (cdb)", "PATH (cdb.exe)"]
    assert "not in any of 2 directories" in found.probes[2].outcome


def test_linux_path_emulated() -> None:
    found = find_debugger("kd", env={"PATH": "/usr/bin:/opt/dbg"}, platform="linux", exists=fs(["/opt/dbg/kd.exe"]))
    assert found.location == DebuggerLocation("/opt/dbg/kd.exe", "path")


def test_explain_when_found() -> None:
    text = win(files=[r"C:\tools\kd.exe"]).explain()
    assert text.splitlines()[0] == r"kd: C:\tools\kd.exe (from path)"
    assert "install" not in text


# --------------------------------------------------------------------------- the real filesystem


@pytest.mark.skipif(os.name != "posix", reason="executable bits")
def test_real_which_and_real_files(tmp_path: Path) -> None:
    """Without ``exists``, PATH goes through shutil.which and files through os.path."""
    kd = tmp_path / "bin" / "kd"
    kd.parent.mkdir()
    kd.write_text("#!/bin/sh\n")
    kd.chmod(kd.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": str(kd.parent)}
    assert find_debugger("kd", env=env, platform="linux").location == DebuggerLocation(str(kd), "path")
    assert find_debugger("kd", str(kd), env={}).location == DebuggerLocation(str(kd), "config")
    assert find_debugger("kd", "kd", env=env).location == DebuggerLocation(str(kd), "config")
    found = find_debugger("kd", str(tmp_path / "bin"), env={"PATH": ""})  # a directory is not a debugger
    assert not found.found
    assert "does not exist" in found.warnings[0]


def test_default_environment_is_os_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    target = tmp_path / "cdb.exe"
    target.write_text("")
    monkeypatch.setenv("KDMCP_CDB", str(target))
    assert find_debugger("cdb").location == DebuggerLocation(str(target), "env")
    assert find_debuggers({"cdb": None})["cdb"].source == "env"


class _FakeVersionApi:
    """version.dll as far as file_version uses it: one VS_FIXEDFILEINFO for 10.0.26100.1."""

    def __init__(self, signature: int = 0xFEEF04BD, size: int = 64) -> None:
        import ctypes

        from kdmcp.discovery import _FixedFileInfo

        self.info = _FixedFileInfo(dwSignature=signature, dwFileVersionMS=(10 << 16) | 0,
                                   dwFileVersionLS=(26100 << 16) | 1)
        self.size = size
        self.calls: list[str] = []
        self._ctypes = ctypes

    def GetFileVersionInfoSizeW(self, path, handle):
        self.calls.append(f"size {path}")
        return self.size

    def GetFileVersionInfoW(self, path, handle, size, buffer):
        self.calls.append("info")
        return 1

    def VerQueryValueW(self, block, sub_block, pointer, length):
        self.calls.append(f"query {sub_block}")
        ctypes = self._ctypes
        ctypes.cast(pointer, ctypes.POINTER(ctypes.c_void_p)).contents.value = ctypes.addressof(self.info)
        return 1


def test_file_version_reads_the_fixed_version_resource():
    from kdmcp.discovery import file_version

    api = _FakeVersionApi()
    assert file_version(r"C:\Debuggers\x64\kd.exe", api) == "10.0.26100.1"
    assert api.calls == [r"size C:\Debuggers\x64\kd.exe", "info", "query \\"]
    assert file_version("kd.exe", _FakeVersionApi(size=0)) is None
    assert file_version("kd.exe", _FakeVersionApi(signature=0)) is None


def test_file_version_off_windows_is_none():
    import sys

    from kdmcp.discovery import file_version

    if sys.platform == "win32":
        pytest.skip("on Windows the real version.dll answers")
    assert file_version("/usr/bin/true") is None
