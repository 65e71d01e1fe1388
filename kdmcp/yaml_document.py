"""One YAML document from a file someone named: read safely, decoded, parsed, errors that quote nothing.

The state file and the config file are both read this way. Only a regular file is read,
size-capped and under a deadline (:mod:`kdmcp.regular_file`: a client names the state file,
and a FIFO or ``/proc/self/fd/1`` must not hang the server). Windows PowerShell 5.1 writes
UTF-16 (``Out-File``) or UTF-8 with a BOM, so both decode. Either file may hold a KDNET key,
so a YAML syntax error is reported by line and column only (PyYAML's message quotes the
offending line) and key-shaped text in what is reported is masked.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from kdmcp.errors import KdMcpError
from kdmcp.regular_file import FileRefused, read_regular_file

__all__ = ["KEYLIKE_RE", "MAX_FILE_BYTES", "read_yaml_document"]

# A state file is a few hundred bytes, a config a few KiB; anything much larger is the wrong file.
MAX_FILE_BYTES = 64 * 1024
# Anything that looks like a key, for masking text we did not write (YAML error text).
KEYLIKE_RE = re.compile(r"[0-9a-zA-Z]{1,13}(?:\.[0-9a-zA-Z]{1,13}){3}")


def read_yaml_document(
    path: Path,
    label: str,
    error: type[KdMcpError],
    *,
    max_bytes: int = MAX_FILE_BYTES,
    not_found_hint: str = "",
) -> object:
    """Read and parse one YAML document, raising ``error("<label>: <defect>")``.

    Shared by the state file and the config file; why it reads this way is the module's docstring.
    """
    problem: str | None = None
    raw = b""
    try:
        raw = read_regular_file(path, max_bytes)
    except FileRefused as exc:
        problem = str(exc)
    except FileNotFoundError:
        problem = "not found" + not_found_hint
    except PermissionError:
        problem = "cannot be read: permission denied"
    except OSError as exc:
        problem = f"cannot be read: {exc.strerror or type(exc).__name__}"
    if problem is not None:
        raise error(f"{label}: {problem}", file_problem=True)

    text, problem = _decode(raw)
    if text is None:
        raise error(f"{label}: {problem}")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problem = _describe_yaml_error(exc)
    # Raised outside the except block, so the YAML error (which quotes the file) is not chained.
    raise error(f"{label}: not valid YAML: {problem}")


def _decode(raw: bytes) -> tuple[str | None, str]:
    """Bytes to text. Windows PowerShell 5.1 writes UTF-16 (``Out-File``) or UTF-8 with a BOM."""
    encoding = "utf-16" if raw.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        return raw.decode(encoding), ""
    except UnicodeDecodeError:
        return None, f"is not {encoding.upper().replace('-SIG', '')} text"


def _describe_yaml_error(exc: yaml.YAMLError) -> str:
    """``problem at line L, column C`` without the snippet PyYAML appends; key-shaped text masked."""
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        text = ", ".join(parts) or "syntax error"
        mark = exc.problem_mark or exc.context_mark
        if mark is not None:
            text += f" at line {mark.line + 1}, column {mark.column + 1}"
    elif isinstance(exc, yaml.reader.ReaderError):  # its str() quotes the character
        text = f"a control character YAML does not allow, at character {exc.position + 1}"
    else:
        text = type(exc).__name__
    return KEYLIKE_RE.sub("***", text)
