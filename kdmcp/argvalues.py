"""The values that end up on a debugger's command line: one set of rules, whatever their source.

A guest address, a KDNET key, a dump path, a symbol path, a ``-remote`` connection string or
a debuggee's command line reach kd/cdb's argv from a state file, the config, a tool argument
or the CLI. kd splits ``-k net:port=N,key=K,target=H`` at ``,`` and ``=`` itself, so a state
file saying ``guest_host: 127.0.0.2,key=...,port=1`` rewrote the connection; a value starting
with ``-`` reads as an option; quotes and control characters change how Windows re-parses
the command line (and newlines how a log reads). Every source checks its values here, and
``kdmcp.engine.launch.build_plan`` checks them again as the argv is built.

Each ``check_*`` returns the value (cleaned where the rule says so) or raises ``ValueError``
with the problem alone, so pydantic validators can use it and put the field in front;
``require`` names the field itself (``ArgvValueError``) for callers outside a model.
Messages never quote the value: a key or a ``password=`` may be in it.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

__all__ = [
    "ArgvValueError",
    "check_argument",
    "check_command_line",
    "check_host",
    "check_ip_address",
    "check_kdnet_key",
    "check_option",
    "check_path",
    "check_port",
    "check_remote_connection",
    "check_symbol_path",
    "remote_connection_parts",
    "require",
]

T = TypeVar("T")
R = TypeVar("R")

HOST_RULE: Final = "must be a host name (RFC 1123: dot-separated labels of letters, digits and '-') or an IP address"
IP_RULE: Final = "must be an IP address (IPv4 or IPv6)"
KEY_RULE: Final = "must be four dot-separated base-36 words of 1-13 characters (0-9, a-z)"
# What splits kd's own option strings (-k net:..., -remote tcp:...): refused inside their values.
OPTION_STRING_SEPARATORS: Final = ",;="
_QUOTES: Final = "\"'`"
# Unicode categories that are not text: controls (newline, NUL, ESC...), format characters
# (right-to-left overrides that make a log lie) and the line/paragraph separators.
_NOT_TEXT: Final = frozenset({"Cc", "Cf", "Zl", "Zp"})
_LABEL_RE: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
# bcdedit/kdnet print the key as four 64-bit numbers in base 36: 36**13 > 2**64 > 36**12.
_KEY_WORD_RE: Final = re.compile(r"[0-9a-zA-Z]{1,13}")
_OPTION_RE: Final = re.compile(r"-[A-Za-z][A-Za-z0-9]*")
_WORD_RE: Final = re.compile(r"[A-Za-z0-9_.:-]+")

# ``-remote`` transports and the parameters each takes, from the "Activating a Debugging
# Client" reference (npipe:server=S,pipe=P; tcp:server=S,port=N[,ipversion=6]; tcp:clicon=S,...;
# com:port=COMn,baud=B,channel=C; spipe:/ssl:proto=...,certuser=...|machuser=...; password= on all).
_REMOTE_PARAMS: Final = {
    "tcp": frozenset({"server", "clicon", "port", "password", "ipversion"}),
    "npipe": frozenset({"server", "pipe", "password"}),
    "com": frozenset({"port", "baud", "channel", "password"}),
    "ssl": frozenset({"proto", "certuser", "machuser", "server", "clicon", "port", "password"}),
    "spipe": frozenset({"proto", "certuser", "machuser", "server", "pipe", "password"}),
}
_NUMERIC_PORT_TRANSPORTS: Final = frozenset({"tcp", "ssl"})


class ArgvValueError(ValueError):
    """A value refused for a debugger argv; ``field`` names it in the caller's terms."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def require(field: str, value: T, check: Callable[[T], R]) -> R:
    """``check(value)``, with a refusal re-raised as ``ArgvValueError`` naming ``field``."""
    try:
        return check(value)
    except ValueError as exc:
        raise ArgvValueError(field, str(exc)) from None


# --------------------------------------------------------------------------- the common defects


def _defect(value: str, *, separators: str = "", leading_dash: bool = True, blanks: bool = True) -> str | None:
    """What makes ``value`` unsafe as (part of) one argv element, as a phrase after "it"."""
    if not value:
        return "is empty"
    for n, char in enumerate(value, 1):
        if unicodedata.category(char) in _NOT_TEXT:
            return f"contains a control character (U+{ord(char):04X}) at character {n}"
    if leading_dash and value.startswith("-"):
        return "starts with '-', which the debugger would read as an option"
    for n, char in enumerate(value, 1):
        if char in _QUOTES:
            return f"contains a quote character at character {n}"
        if char in separators:
            return f"contains {char!r} at character {n}, which would split the debugger's option string"
        if not blanks and char.isspace():
            return f"contains a blank at character {n}"
    return None


def _refuse(rule: str | None, defect: str | None) -> None:
    if defect is not None:
        raise ValueError(f"{rule}; it {defect}" if rule else defect)


# --------------------------------------------------------------------------- hosts, ports, keys


def check_host(value: str) -> str:
    """A host name (RFC 1123) or an IP address: kd's ``target=``, a state file's ``guest_host``."""
    _refuse(HOST_RULE, _defect(value, separators=OPTION_STRING_SEPARATORS, blanks=False))
    try:
        ipaddress.ip_address(value)
    except ValueError:
        _refuse(HOST_RULE, _host_name_defect(value))
    return value


def _host_name_defect(value: str) -> str | None:
    if len(value) > 253:
        return "is longer than 253 characters"
    labels = value.split(".")
    # RFC 1123 2.1: a name must not look like dotted decimals that are not an address.
    if all(label.isdigit() for label in labels):
        return "looks like an IPv4 address but is not one"
    for n, label in enumerate(labels, 1):
        if not label:
            return f"has an empty label (label {n})"
        if len(label) > 63:
            return f"has a label longer than 63 characters (label {n})"
        if not _LABEL_RE.fullmatch(label):
            return f"has a character other than letters, digits and an inner '-' in label {n}"
    return None


def check_ip_address(value: str) -> str:
    """An IPv4 or IPv6 address, nothing else: the host's ``hostip:`` that bcdedit was given."""
    _refuse(IP_RULE, _defect(value, separators=OPTION_STRING_SEPARATORS, blanks=False))
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{IP_RULE}; it is not one") from None
    return value


def check_port(value: object) -> int:
    """A TCP/UDP port, 1-65535 (``bool`` is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be an integer from 1 to 65535")
    if not 1 <= value <= 65535:
        raise ValueError(f"must be an integer from 1 to 65535, not {value}")
    return value


def check_kdnet_key(value: str) -> str:
    """The key stripped of surrounding blanks; the message says what is wrong by position only."""
    key = value.strip()
    words = key.split(".")
    if len(words) != 4:
        raise ValueError(f"{KEY_RULE}; found {len(words)} word{'s' if len(words) != 1 else ''}")
    for n, word in enumerate(words, 1):
        if not word:
            raise ValueError(f"{KEY_RULE}; word {n} is empty")
        if len(word) > 13:
            raise ValueError(f"{KEY_RULE}; word {n} has {len(word)} characters")
        if not _KEY_WORD_RE.fullmatch(word):
            raise ValueError(f"{KEY_RULE}; word {n} has a character outside 0-9 and a-z")
    return key


# --------------------------------------------------------------------------- paths and the rest


def check_path(value: str) -> str:
    """A file path as one argv element (``-z`` dump, ``--scenario``, the debugger itself).

    Commas, semicolons, ``=`` and blanks are legal in Windows file names and harmless in an
    element of their own; quotes are neither, and a leading ``-`` would read as an option.
    """
    _refuse(None, _defect(value))
    return value


def check_symbol_path(value: str) -> str:
    """A symbol path for ``-y`` (``srv*C:\\sym*https://...;C:\\more``): a path's rules, ``;``/``*`` its syntax."""
    _refuse(None, _defect(value))
    return value


def check_option(value: str) -> str:
    """A debugger flag we add ourselves (``-noshell``): a dash and a plain word, nothing else."""
    if not _OPTION_RE.fullmatch(value):
        raise ValueError("must be a single debugger option such as -noshell")
    return value


def check_argument(value: str) -> str:
    """An argument that may be an option (``-m``, a debuggee's ``-x``): text without controls or quotes."""
    _refuse(None, _defect(value, leading_dash=False))
    return value


def check_command_line(values: Sequence[str]) -> list[str]:
    """A debuggee's command line: the executable a path, every argument text without quotes.

    Arguments may start with ``-``: cdb stops reading its own options at the executable.
    """
    items = list(values)
    if not items:
        raise ValueError("is empty")
    for n, item in enumerate(items):
        defect = _defect(item, leading_dash=n == 0)
        if defect is not None:
            raise ValueError(f"element {n} {defect}" if n else f"the executable {defect}")
    return items


def check_remote_connection(value: str) -> str:
    """A ``-remote`` string: ``transport:name=value,...`` with known names and plain values."""
    remote_connection_parts(value)
    return value


def remote_connection_parts(value: str) -> tuple[str, dict[str, str]]:
    """A checked ``-remote`` string's transport and parameters (names in lower case), as
    :func:`check_remote_connection` reads it: ``ValueError`` for what it refuses."""
    _refuse(None, _defect(value, separators=";", blanks=False))
    transport, colon, rest = value.partition(":")
    allowed = _REMOTE_PARAMS.get(transport.lower())
    if not colon or allowed is None:
        raise ValueError(f"must start with a transport ({', '.join(sorted(_REMOTE_PARAMS))}) and ':'")
    seen: dict[str, str] = {}
    for n, part in enumerate(rest.split(","), 1):
        name, eq, item = part.partition("=")
        name = name.lower()
        if not eq or not name or not item:
            raise ValueError(f"parameter {n} must be name=value")
        if name not in allowed:
            raise ValueError(f"parameter {n} is not one {transport} takes ({', '.join(sorted(allowed))})")
        if name in seen:
            raise ValueError(f"parameter {name} is given twice")
        seen[name] = item
        if name in ("server", "clicon"):
            try:
                check_host(item)
            except ValueError as exc:
                raise ValueError(f"{name}=: {exc}") from None
        elif name == "port" and transport.lower() in _NUMERIC_PORT_TRANSPORTS:
            if not item.isdigit() or not 1 <= int(item) <= 65535:
                raise ValueError("port= must be an integer from 1 to 65535")
        elif "=" in item:
            raise ValueError(f"the value of {name}= contains '=', which would split the option string")
        elif item.startswith("-"):
            raise ValueError(f"the value of {name}= starts with '-'")
        elif name != "password" and not _WORD_RE.fullmatch(item):
            raise ValueError(f"the value of {name}= must be letters, digits, '_', '.', ':' or '-'")
    return transport.lower(), seen
