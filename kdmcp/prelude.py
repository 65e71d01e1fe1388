"""The stdio prelude: ``initialize`` and ``tools/list`` answered while the MCP SDK is still loading.

Importing the SDK (``mcp``, ``mcp_types``' protocol models, pydantic building them) is ~1 s of
every cold start and ~90 % of its work (docs/performance.md, "Cold start"); a client waits for
it before its first ``tools/list``. But the SDK's answers to the handshake depend only on this
checkout, its options and the request: when the server answers for real, the writer keeps the
SDK's own bytes of each answer here (``Early.outgoing``), in the user cache, in a file named
by a fingerprint of everything that decides them (``fingerprint``). The next start with the
same fingerprint (``serve`` on stdio, before importing the SDK) reads fd 0 on a thread and
answers a request with a kept answer at once — the kept bytes, the request's ``id`` put in —
while the main thread imports the SDK. Every byte read is handed to the transport first
(``Early.prefix``); the SDK still reads and answers those requests (its session must be
initialized), and its answers to the ids already answered are compared with what was sent and
dropped. A mismatch is logged and forgets the kept answers. Only this module runs before the
SDK is imported, so it imports the standard library (and platformdirs) only.

What is answered early, and when (the SDK's ``ServerRunner``): ``initialize`` only as the
stream's first message (a first ``initialize`` opens a handshake-era connection whatever it
carries); its result depends on the whole ``params`` (they are validated; the protocol version
is negotiated from them), so the key is all of them — a client sends the same each start.
Then ``tools/list``, keyed by its ``params`` and the ``initialize`` params (the result is
serialized for the negotiated version); ``notifications/initialized`` passes. Any other message
(a ``ping``, a call, a batch, malformed JSON, a request without a kept answer, an id seen
before) ends the early answers: everything after it is only kept, for the SDK, in order.
POSIX only, stdin and stdout pipes or sockets (``select.poll``); elsewhere a start is the normal one.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import re
import select
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kdmcp.config_paths import ENV_CONFIG, default_config_path, named_path

if TYPE_CHECKING:
    import argparse

log = logging.getLogger(__name__)

ENV_OFF = "KDMCP_NO_SURFACE_CACHE"  # one switch for every answer kept between starts
ENV_NO_PRELUDE = "KDMCP_NO_PRELUDE"  # the prelude alone off (the listing is still kept): to measure it
KEEP = 16
ANSWERS_PREFIX = "answers-"
# What the SDK's stdio writer sends: ``model_dump_json(by_alias=True, exclude_unset=True)`` of a
# JSONRPCResponse, whose fields come in this order.
HEAD = b'{"jsonrpc":"2.0","id":'
_VERSION_META = "io.modelcontextprotocol/protocolVersion"
_SAFE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}\Z")
# The SDK's distributions whose files decide the answers (the runner, the protocol models, their
# serialization); kd-mcp's own package is walked from its ``__file__``.
_SDK_PACKAGES = ("mcp", "mcp_types", "pydantic", "pydantic_core")
_SECRET_WORDS = ("TOKEN", "KEY", "PASSWORD", "SECRET")
_WATCHED = 64  # messages each way the writer looks at before it stops parsing (a session is long)


def enabled() -> bool:
    return os.environ.get(ENV_OFF) != "1" and os.environ.get(ENV_NO_PRELUDE) != "1" and hasattr(select, "poll")


def cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("kd-mcp"))


def keep_file(directory: Path, prefix: str, key: str, data: object) -> None:
    """Write ``data`` (JSON) as ``<prefix><key>.json`` atomically, keeping the newest ``KEEP`` files
    of that prefix (several checkouts or versions may share the cache); a cache that cannot be
    written is only a slower next start."""
    if os.environ.get(ENV_OFF) == "1":
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, separators=(",", ":"))
        os.replace(tmp, directory / f"{prefix}{key}.json")
        others = [p for p in directory.glob(f"{prefix}*.json") if p.name != f"{prefix}{key}.json"]
        for old in sorted(others, key=_mtime, reverse=True)[KEEP - 1 :]:
            with contextlib.suppress(OSError):
                old.unlink()
    except OSError as exc:
        log.debug("%s%s not kept: %s", prefix, key, exc)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def source_files(root: Path) -> Iterable[Path]:
    """The files under ``root`` in a stable order, bytecode caches left out: what a fingerprint of
    a package's sources stats (this one's, and ``schema.surface_fingerprint``'s)."""
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        yield from (Path(top, name) for name in sorted(names) if not name.endswith(".pyc"))


def hash_stats(digest: hashlib._Hash, paths: Iterable[Path]) -> None:
    """Each of ``paths`` into ``digest`` by path, size and mtime (a file that is gone: left out),
    so an edit, another checkout or an upgrade changes the fingerprint without reading a byte."""
    for path in paths:
        with contextlib.suppress(OSError):
            st = path.stat()
            digest.update(f"|{path}|{st.st_size}|{st.st_mtime_ns}".encode())


def fingerprint(argv: Sequence[str], config_paths: Sequence[Path | None]) -> str:
    """Everything that decides the handshake's answers, hashed: Python (version, ``-O``), every
    file of kd-mcp and of the SDK's distributions (path, size, mtime: as ``schema``'s surface
    fingerprint, without importing them), the server's arguments, the ``KDMCP_*`` environment
    (a secret-named one by presence only) and the bytes of each config file it may read.
    Secrets in a config file enter only this hash, never the cache."""
    import kdmcp

    digest = hashlib.sha256(f"{sys.version}|{sys.flags.optimize}|{sys.executable}".encode())
    roots = [Path(kdmcp.__file__).parent]
    for name in _SDK_PACKAGES:
        spec = importlib.util.find_spec(name)  # a top-level name: found, not imported
        if spec is not None:
            roots += [Path(p) for p in spec.submodule_search_locations or []]
    for root in roots:
        hash_stats(digest, source_files(root))
    digest.update(json.dumps(list(argv)).encode())
    for name in sorted(os.environ):
        if name.startswith("KDMCP_"):
            secret = any(word in name for word in _SECRET_WORDS)
            digest.update(f"|{name}={'(set)' if secret else os.environ[name]}".encode())
    for candidate in config_paths:
        digest.update(f"|{candidate}|".encode())
        if candidate is not None:
            with contextlib.suppress(OSError):
                digest.update(hashlib.sha256(candidate.read_bytes()).digest())
    return digest.hexdigest()[:32]


def config_candidates(argument: str | None) -> list[Path | None]:
    """Every config file the server may read (``kdmcp.config.load_config`` picks one: ``--config``,
    else ``$KDMCP_CONFIG``, else the per-user file), found without importing it (it imports pydantic)."""
    return [named_path(argument), named_path(os.environ.get(ENV_CONFIG)), default_config_path()]


def load_answers(key: str, directory: Path) -> dict[str, str]:
    """The kept answers for ``key``: request key -> the answer's bytes after its id (see ``HEAD``)."""
    try:
        data = json.loads((directory / f"{ANSWERS_PREFIX}{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, dict) or not all(isinstance(v, str) for v in answers.values()):
        return {}
    return answers


def id_json(value: object) -> bytes | None:
    """A request id as the SDK writes it back, for the ids that have one unambiguous form."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value).encode()
    if isinstance(value, str) and _SAFE_ID.match(value):
        return f'"{value}"'.encode()
    return None


def _canonical(params: object) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _enveloped(params: object) -> bool:
    """A 2026-07-28 request: its ``_meta`` names the protocol version (``runner._has_modern_envelope``)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and _VERSION_META in meta


class Conversation:
    """The client's messages in order, as far as the opening goes: which requests are ones whose
    answers are kept (their keys by id), and whether the stream is still one the early answers
    may follow.

    The SDK serves one of two protocol eras, decided by the first request (``runner.
    serve_dual_era_loop``): ``initialize`` opens the handshake era, where ``tools/list`` is
    answered for the version ``initialize`` negotiated (its key names the ``initialize``);
    a request carrying the 2026-07-28 envelope opens the stateless era, where each request is
    answered from its own ``params`` (``server/discover``, ``tools/list``: the SDK's own client).
    """

    def __init__(self) -> None:
        self.open = True  # still answering early
        self.era: str | None = None  # "handshake" or "enveloped", by the first request
        self.init_key: str | None = None
        self.keys: dict[bytes, str] = {}  # id -> request key, for the requests whose answers are kept
        self.seen: set[bytes] = set()
        self.count = 0
        self._partial = b""

    def lines(self, chunk: bytes) -> list[bytes]:
        data = self._partial + chunk
        *whole, self._partial = data.split(b"\n")
        return [line.strip() for line in whole if line.strip()]

    def consider(self, line: bytes) -> tuple[bytes, str] | None:
        """The id and request key of a request whose answer may be kept (and answered early,
        while ``open``), else None; a message the early answers may not pass ends them."""
        self.count += 1
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.open = False
            return None
        method, params = message.get("method"), message.get("params")
        if "id" not in message:
            if not (method == "notifications/initialized" and self.era == "handshake"):
                self.open = False
            return None
        ident = id_json(message["id"])
        known = ident is not None and ident not in self.seen
        if ident is not None:
            self.seen.add(ident)
        key = self._key(method, params)
        if key is None or not known or ident is None:
            self.open = False
            return None
        self.keys[ident] = key
        return ident, key

    def _key(self, method: object, params: object) -> str | None:
        if self.era is None:  # the first request
            if method == "initialize":
                self.era = "handshake"
                self.init_key = f"initialize {_canonical(params)}"
                return self.init_key
            self.era = "enveloped" if _enveloped(params) else "other"
        if self.era == "handshake" and method == "tools/list":
            return f"tools/list {_canonical(params)} after {self.init_key}"
        if self.era == "enveloped" and method in ("server/discover", "tools/list") and _enveloped(params):
            return f"{method} {_canonical(params)}"
        return None


@dataclass
class Early:
    """What the prelude hands the transport: the bytes it read (to be read before fd 0), the ids
    it answered with the lines it wrote, and the two hooks the transport calls from then on.

    ``incoming(data)``: every byte the transport reads, in order, ``prefix`` included (it skips
    what it read itself), in chunks or lines as the transport reads them: the requests whose
    answers are to be kept. ``outgoing(message)``: every JSON-RPC message the SDK is about to
    write (the bytes of one line, without its newline); returns the bytes to write, or None to
    drop it.
    """

    key: str
    directory: Path
    answers: dict[str, str]
    prefix: bytes = b""
    answered: dict[bytes, bytes] = field(default_factory=dict)  # id -> the line sent (without newline)
    conversation: Conversation = field(default_factory=Conversation)
    mismatched: bool = False
    _seen_out: int = 0
    _skip: int = 0  # bytes of ``prefix`` the transport has yet to show ``incoming``

    @property
    def watching(self) -> bool:
        return bool(self.answered) or (not self.mismatched and self.conversation.count < _WATCHED
                                       and self._seen_out < _WATCHED)

    def incoming(self, chunk: bytes) -> None:
        if self._skip:
            skipped = min(self._skip, len(chunk))
            self._skip -= skipped
            chunk = chunk[skipped:]
        if not chunk or not self.watching or self.conversation.count >= _WATCHED:
            return
        for line in self.conversation.lines(chunk):
            self.conversation.consider(line)

    def outgoing(self, message: bytes) -> bytes | None:
        if not self.watching or not message.startswith(HEAD):
            return message
        self._seen_out += 1
        rest = message[len(HEAD):]
        ident = rest[:rest.find(b",")]
        result = rest[len(ident):].startswith(b',"result":')
        if not (result or rest[len(ident):].startswith(b',"error":')):
            return message  # a request of the server's own (its ids are its own)
        sent = self.answered.pop(ident, None)
        key = self.conversation.keys.pop(ident, None)
        if sent is not None:
            if sent != message:
                log.warning("the early answer to %s differed from the SDK's; the kept answers are forgotten", key)
                self._forget()
            return None
        if key is not None and result and not self.mismatched:
            tail = rest[len(ident):].decode("utf-8")
            if self.answers.get(key) != tail:
                self.answers[key] = tail
                keep_file(self.directory, ANSWERS_PREFIX, self.key, {"answers": self.answers})
        return message

    def _forget(self) -> None:
        self.mismatched = True
        self.answers.clear()
        with contextlib.suppress(OSError):
            (self.directory / f"{ANSWERS_PREFIX}{self.key}.json").unlink()


class Prelude:
    """The reader of fd 0 until the transport takes it over (``hand_over``)."""

    def __init__(self, early: Early, fd_in: int = 0, fd_out: int = 1, verbose: bool = False) -> None:
        self.early = early
        self._verbose = verbose
        self._in, self._out = fd_in, fd_out
        self._kept = bytearray()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._read, name="kdmcp-prelude", daemon=True)

    def start(self) -> Prelude:
        self._thread.start()
        return self

    def _read(self) -> None:
        poller = select.poll()
        poller.register(self._in, select.POLLIN | select.POLLHUP | select.POLLERR)
        poller.register(self._wake_r, select.POLLIN)
        conversation = self.early.conversation
        try:
            while True:
                ready = {fd for fd, _ in poller.poll()}
                if self._wake_r in ready:
                    return  # the transport reads on from here: what is unread stays in the pipe
                chunk = os.read(self._in, 65536)
                if not chunk:
                    return
                self._kept += chunk
                for line in conversation.lines(chunk):
                    self._answer(line)
        except Exception:  # the SDK reads the rest; nothing is lost but the early answers
            log.exception("the prelude stopped reading")
            conversation.open = False

    def _answer(self, line: bytes) -> None:
        conversation = self.early.conversation
        was_open = conversation.open
        found = conversation.consider(line)  # a message that ends the early answers has said so
        if not was_open or found is None:
            return
        ident, key = found
        tail = self.early.answers.get(key)
        if tail is None:
            conversation.open = False
            return
        sent = HEAD + ident + tail.encode("utf-8")
        out = memoryview(sent + b"\n")
        while out:
            out = out[os.write(self._out, out):]
        self.early.answered[ident] = sent
        if self._verbose:  # logging is configured later, with the server: a line of its own (tests read it)
            sys.stderr.write(f"kd-mcp: prelude: answered {key.split(' ', 1)[0]} (id {ident.decode()}) early\n")
            sys.stderr.flush()

    def hand_over(self, timeout: float = 10.0) -> Early:
        """Stop reading (the thread never blocks in a read: it waits in ``poll``) and give the
        transport what was read."""
        os.write(self._wake_w, b"x")
        self._thread.join(timeout)
        if self._thread.is_alive():  # it cannot be: it only reads what poll said is there
            raise RuntimeError("the prelude's reader did not stop")
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self.early.prefix = bytes(self._kept)
        self.early._skip = len(self._kept)
        return self.early


def pipe_or_socket(fd: int) -> bool:
    """What a client starts a server on; a terminal or a file is served the usual way."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def loop_serves(fd_in: int = 0, fd_out: int = 1) -> bool:
    """Whether the event loop serves stdio on these descriptors (``mcp_server.loop_stdio_usable``):
    POSIX, both pipes or sockets. The one condition of both: the prelude starts only where the
    loop's transport will take its bytes over and drop the SDK's twins of its answers."""
    return sys.platform != "win32" and pipe_or_socket(fd_in) and pipe_or_socket(fd_out)


def start(argv: Sequence[str], config_paths: Sequence[Path | None], directory: Path | None = None,
          fd_in: int = 0, fd_out: int = 1, verbose: bool = False) -> Prelude | None:
    """The prelude for this start, reading fd 0 (answering early when answers are kept for this
    fingerprint), or None when it is off or anything goes wrong (the normal start)."""
    if not enabled() or not loop_serves(fd_in, fd_out):
        return None
    try:
        directory = directory or cache_dir()
        key = fingerprint(argv, config_paths)
        early = Early(key=key, directory=directory, answers=load_answers(key, directory))
        if not early.answers:
            early.conversation.open = False  # nothing to answer: only keep what the SDK answers
        return Prelude(early, fd_in, fd_out, verbose).start()
    except Exception:
        log.exception("the prelude did not start; starting normally")
        return None


def serve_prelude(parsed: argparse.Namespace) -> Prelude | None:
    """``kd-mcp serve``'s prelude, on stdio (not a terminal, not the listener), keyed by its parsed
    options, the working directory and the config files it may read; None on any error."""
    try:
        if parsed.listen or sys.stdin.isatty():
            return None
        argv = [os.getcwd(), *sorted(f"{name}={value!r}" for name, value in vars(parsed).items())]
        return start(argv, config_candidates(parsed.config), verbose=parsed.log_level in ("DEBUG", "INFO"))
    except Exception:  # the normal start: the prelude only ever saves time
        log.exception("the prelude did not start; starting normally")
        return None
