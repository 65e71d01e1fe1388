"""``WexpectConsole``: the debugger in a real (hidden) Windows console, through wexpect 4.0.

Use it only when kd must see a console rather than pipes; ``PipeConsole`` is the Windows
default (see docs/architecture.md, "Console backends"). What wexpect 4.0 is, and what this
module does about each of its traits:

* wexpect runs a *console-reader* process (``python -m wexpect``) that owns a hidden console,
  starts the child in it, types our input as key events and **scrapes the 80-column screen**
  every 20 ms. Output therefore comes back hard-wrapped at 80 columns (a long ``dt`` or
  ``lm`` line arrives as several lines), CRLF-terminated, with typed input echoed. The width
  is fixed: wexpect ignores its own buffer-size options. The engine must parse accordingly.
  A ``write`` may also wait up to one scrape: it shares wexpect's synchronous pipe handle
  with the read in progress.
* Its input path strips one trailing ``\\n`` and sends each character as a key press, so we
  turn line ends into ``\\r`` (the Enter key).
* The reader maps the input sequences ``\\x01 1`` / ``\\x01 2`` to TerminateProcess; we refuse
  to write ``\\x01`` at all.
* It has no ``sendintr``, and ``kill(SIGINT)`` becomes ``TerminateProcess``, which would end
  kd. Any console control event sent to the whole console would also reach the reader (a
  Python process: Ctrl+C raises KeyboardInterrupt there, and its cleanup kills kd). So kd is
  not started by the reader directly: the reader starts our *launcher* (this module's
  ``__main__``), which starts kd in its own process group, and ``interrupt()`` sends
  Ctrl+Break to that group only, through ``kdmcp.console.ctrl_helper``.
* It ignores its ``env`` argument and hands the reader a full copy of our environment; the
  launcher applies ``child_environment`` so kd still gets a scrubbed one.
* ``import wexpect`` does ``import pkg_resources``, which setuptools >= 82 no longer ships.
  We put a stand-in into ``sys.modules`` for our process and, for the reader process (a
  fresh interpreter that imports wexpect too), into a directory appended to ``PYTHONPATH``
  while wexpect starts it.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import contextlib
import importlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from kdmcp.console import ctrl_helper, win32
from kdmcp.console.base import ConsoleError, OutputQueue, SpawnSpec, child_environment

logger = logging.getLogger(__name__)

LAUNCHER_MODULE = "kdmcp.console.wexpect_backend"
# wexpect reads its named pipe in message mode; one message is whatever appeared on the
# screen since the last scrape (at most ~8000 lines of 80 columns before wexpect pauses kd).
# A read shorter than the message would split it, possibly inside a UTF-8 sequence.
READ_SIZE = 1 << 20
HELPER_TIMEOUT_SEC = 10.0
TASKKILL_TIMEOUT_SEC = 10.0
CLOSE_JOIN_SEC = 1.0
LAUNCH_FAILED_EXIT = 127

# Stand-in for pkg_resources: wexpect 4.0 only calls require("wexpect") for its version
# string, inside try/except, so failing that call is enough.
_PKG_RESOURCES_SHIM = '''\
"""kd-mcp stand-in for pkg_resources (absent with setuptools >= 82), for wexpect 4.0."""


def require(*requirements):
    raise LookupError("pkg_resources is not installed; kd-mcp stand-in")
'''

_shim_lock = threading.Lock()
_pythonpath_lock = threading.Lock()
_pkg_resources_shimmed = False
_reader_shim_dir: str | None = None


class WexpectConsole:
    """kd in a hidden console driven by wexpect; create it with ``WexpectConsole.spawn(spec)``."""

    def __init__(
        self,
        child: Any,
        *,
        eof_error: type[BaseException],
        process_children: Callable[[int], list[int]] | None = None,
    ) -> None:
        self._child = child
        self._eof_error = eof_error
        self._process_children = process_children or _psutil_children
        # wexpect 4.0 calls the console reader its "child" (child_pid == console_pid); the
        # reader is the root of our process tree either way.
        reader_pid = getattr(child, "console_pid", None) or getattr(child, "child_pid", None)
        if not isinstance(reader_pid, int):
            raise ConsoleError("wexpect did not report the console-reader process id")
        self._reader_pid = reader_pid
        self._output = OutputQueue()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(
            target=self._read_loop, name=f"kdmcp-wexpect-reader-{reader_pid}", daemon=True
        )
        self._reader.start()

    @classmethod
    def spawn(
        cls, spec: SpawnSpec, *, process_children: Callable[[int], list[int]] | None = None
    ) -> WexpectConsole:
        """Start ``spec.argv`` under wexpect, through the launcher.

        ``process_children`` (pid -> child pids) replaces psutil in tests.
        """
        if not spec.argv:
            raise ConsoleError("cannot start a debugger from an empty command line")
        wexpect = import_wexpect()
        payload = encode_launch(spec.argv, spec.env)
        with _reader_pythonpath():
            try:
                child = wexpect.spawn(
                    sys.executable, args=["-m", LAUNCHER_MODULE, payload], cwd=spec.cwd, echo=True
                )
            except Exception as exc:
                # Only argv[0]: the rest may carry the KDNET key.
                raise ConsoleError(f"wexpect cannot start {spec.argv[0]!r}: {exc}") from exc
        # wexpect sleeps this long before every send by default.
        child.delaybeforesend = 0
        logger.debug(
            "started %s under wexpect, console reader pid %s",
            spec.argv[0],
            getattr(child, "console_pid", "?"),
        )
        return cls(child, eof_error=wexpect.EOF, process_children=process_children)

    # -- Console protocol ------------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The console reader's pid: the root of the tree, and the process whose exit we see."""
        return self._reader_pid

    @property
    def echoes_input(self) -> bool:
        return True

    def wait_readable(self, timeout: float) -> bool:
        return self._output.wait_readable(timeout)

    def read(self, max_bytes: int, timeout: float) -> bytes:
        return self._output.read(max_bytes, timeout, what=f"wexpect console {self.pid}")

    def write(self, data: bytes) -> None:
        text = console_input(data)
        with self._write_lock:
            try:
                self._child.send(text)
            except Exception as exc:
                raise ConsoleError(f"cannot write to wexpect console {self.pid}: {exc}") from exc

    def input_pending(self) -> int | None:
        """Unknown: the console reader types our input as key presses when it likes."""
        return None

    def interrupt(self) -> None:
        debugger = self._debugger_pid()
        if debugger is None:
            raise ConsoleError(f"wexpect console {self.pid}: no debugger process to interrupt")
        try:
            ctrl_helper.send_ctrl_event(
                debugger, "break", env=child_environment(os.environ, {}), timeout=HELPER_TIMEOUT_SEC
            )
        except RuntimeError as exc:
            raise ConsoleError(f"cannot send Ctrl+Break to debugger pid {debugger}: {exc}") from exc

    def is_alive(self) -> bool:
        return bool(self._child.isalive(trust_console=False, timeout=0))

    def exit_status(self) -> int | None:
        if self.is_alive():
            return None
        status = self._child.exitstatus
        return status if isinstance(status, int) else None

    def terminate(self, force: bool = False) -> None:
        """``force``: taskkill the reader's whole tree. Otherwise end kd alone; the launcher
        and the reader then exit on their own and pass kd's exit status up.
        """
        if not self.is_alive():
            return
        debugger = None if force else self._debugger_pid()
        if debugger is not None:
            try:
                # On Windows os.kill with an ordinary signal number is TerminateProcess.
                os.kill(debugger, signal.SIGTERM)
            except OSError as exc:
                logger.debug("terminating debugger pid %d: %s", debugger, exc)
            else:
                return
        if not win32.kill_process_tree(self.pid, timeout=TASKKILL_TIMEOUT_SEC):
            raise ConsoleError(f"cannot kill the process tree of wexpect console {self.pid}")

    def wait(self, timeout: float) -> int | None:
        if self._child.isalive(trust_console=False, timeout=timeout):
            return None
        status = self._child.exitstatus
        return status if isinstance(status, int) else None

    def close(self) -> None:
        self._output.close()
        self._reader.join(CLOSE_JOIN_SEC)
        if self._reader.is_alive():
            logger.warning("wexpect console %d: output reader still running", self.pid)
            return
        disconnect = getattr(self._child, "disconnect_from_child", None)
        if callable(disconnect):
            try:
                disconnect()
            except Exception as exc:
                logger.debug("wexpect console %d: disconnect: %s", self.pid, exc)

    # -- internals -------------------------------------------------------------------------

    def _read_loop(self) -> None:
        try:
            while True:
                try:
                    text = self._child.read_nonblocking(READ_SIZE)
                except self._eof_error:
                    break
                except Exception as exc:
                    logger.warning("wexpect console %d: read failed: %s", self._reader_pid, exc)
                    break
                if text:
                    self._output.put(text.encode("utf-8") if isinstance(text, str) else bytes(text))
                if getattr(self._child, "flag_eof", False):
                    break
        finally:
            self._output.put_eof()

    def _debugger_pid(self) -> int | None:
        """kd's pid: the launcher's child, the launcher being the reader's child."""
        try:
            for launcher in self._process_children(self._reader_pid):
                debuggers = self._process_children(launcher)
                if debuggers:
                    return debuggers[0]
        except Exception as exc:
            logger.debug("wexpect console %d: listing child processes: %s", self._reader_pid, exc)
        return None


def console_input(data: bytes) -> str:
    """Our bytes as the text wexpect should type: line ends become Enter (``\\r``)."""
    if b"\x01" in data:
        raise ConsoleError("refusing to send \\x01: wexpect treats \\x01 1 / \\x01 2 as kill requests")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConsoleError(f"console input must be UTF-8: {exc}") from exc
    return text.replace("\r\n", "\n").replace("\n", "\r")


def _psutil_children(pid: int) -> list[int]:
    import psutil

    return [child.pid for child in psutil.Process(pid).children()]


# -- importing wexpect ---------------------------------------------------------------------


def import_wexpect() -> types.ModuleType:
    """``import wexpect``, standing in for pkg_resources when setuptools no longer has it."""
    global _pkg_resources_shimmed  # noqa: PLW0603 - decided once per process
    with _shim_lock:
        try:
            return importlib.import_module("wexpect")
        except ModuleNotFoundError as exc:
            if exc.name != "pkg_resources":
                raise _wexpect_import_error(exc) from exc
            logger.info("pkg_resources is missing (setuptools >= 82); using a stand-in for wexpect")
        except ImportError as exc:
            raise _wexpect_import_error(exc) from exc
        sys.modules["pkg_resources"] = _pkg_resources_module()
        _pkg_resources_shimmed = True
        try:
            return importlib.import_module("wexpect")
        except ImportError as exc:
            raise _wexpect_import_error(exc) from exc


def _wexpect_import_error(exc: ImportError) -> ConsoleError:
    if exc.name == "wexpect":
        return ConsoleError(
            "the wexpect console backend needs the 'wexpect' package (Windows only): "
            "pip install wexpect, or use the pipe backend"
        )
    return ConsoleError(f"cannot import wexpect: {exc}")


def _pkg_resources_module() -> types.ModuleType:
    module = types.ModuleType("pkg_resources", "kd-mcp stand-in for pkg_resources (wexpect 4.0)")

    def require(*requirements: str) -> list[Any]:
        raise LookupError("pkg_resources is not installed; kd-mcp stand-in")

    module.require = require  # type: ignore[attr-defined]
    return module


def reader_shim_dir() -> str:
    """A directory holding the stand-in ``pkg_resources.py``, created once per process."""
    global _reader_shim_dir  # noqa: PLW0603 - one directory per process
    with _shim_lock:
        if _reader_shim_dir is None:
            directory = tempfile.mkdtemp(prefix="kdmcp-wexpect-")
            with open(os.path.join(directory, "pkg_resources.py"), "w", encoding="utf-8") as f:
                f.write(_PKG_RESOURCES_SHIM)
            atexit.register(shutil.rmtree, directory, ignore_errors=True)
            _reader_shim_dir = directory
        return _reader_shim_dir


@contextlib.contextmanager
def _reader_pythonpath() -> Iterator[None]:
    """While wexpect starts its reader, let that interpreter find our pkg_resources stand-in.

    wexpect builds the reader's environment from ``os.environ`` (and ignores ``env=``), so the
    directory must be in ``os.environ`` for that moment. It goes *last*, shadowing nothing, and
    only when our own process needed the stand-in (same interpreter, same site-packages).
    """
    if not _pkg_resources_shimmed:
        yield
        return
    directory = reader_shim_dir()
    with _pythonpath_lock:
        saved = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (saved, directory) if p)
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = saved


# -- the launcher --------------------------------------------------------------------------


def encode_launch(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """argv and environment additions as one URL-safe base64 word.

    wexpect quotes arguments naively (no escaping of ``"`` or trailing ``\\``) on the way to
    the reader and again to the child; a word of ``[A-Za-z0-9_-]`` survives both unchanged.
    """
    raw = json.dumps({"argv": list(argv), "env": dict(env)}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_launch(payload: str) -> tuple[list[str], dict[str, str]]:
    padded = payload + "=" * (-len(payload) % 4)
    try:
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error) as exc:
        raise ValueError(f"malformed launch payload: {exc}") from exc
    argv, env = data.get("argv"), data.get("env")
    if (
        not isinstance(argv, list)
        or not argv
        or not all(isinstance(a, str) for a in argv)
        or not isinstance(env, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
    ):
        raise ValueError("malformed launch payload: expected argv (non-empty list of str) and env")
    return argv, env


def launch_main(args: Sequence[str]) -> int:
    """Run kd in its own process group inside the wexpect console; exit with its status.

    The launcher itself ignores Ctrl+C / Ctrl+Break: it must outlive kd to report the exit
    status, and an event meant for kd must not end the chain above it.
    """
    if len(args) != 1:
        sys.stderr.write(f"usage: python -m {LAUNCHER_MODULE} PAYLOAD\n")
        return 2
    try:
        argv, extra_env = decode_launch(args[0])
    except ValueError as exc:
        sys.stderr.write(f"kd-mcp launcher: {exc}\n")
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sigbreak = getattr(signal, "SIGBREAK", None)
    if sigbreak is not None:
        signal.signal(sigbreak, signal.SIG_IGN)
    flags = win32.CREATE_NEW_PROCESS_GROUP if sys.platform == "win32" else 0
    try:
        process = subprocess.Popen(argv, env=child_environment(os.environ, extra_env), creationflags=flags)
    except OSError as exc:
        sys.stderr.write(f"kd-mcp launcher: cannot start {argv[0]!r}: {exc}\n")
        return LAUNCH_FAILED_EXIT
    return process.wait()


if __name__ == "__main__":
    sys.exit(launch_main(sys.argv[1:]))
