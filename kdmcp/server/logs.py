"""Logging for the server: stderr only (stdout is MCP's in stdio mode), secrets masked.

A KDNET key can reach a log line through an exception message or an echoed command line;
the filter masks every secret the server knows, by value and in any letter case, in every
part of every record it lets through: the message, the exception text and the stack.
"""

from __future__ import annotations

import logging
import sys

from kdmcp.server.app import KdMcpApp
from kdmcp.server.redaction import Redactor


class RedactingFilter(logging.Filter):
    """Rewrites each record's final message with known secrets masked."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg = self._redactor.text(message)
        record.args = None
        if record.exc_text:
            record.exc_text = self._redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self._redactor.text(record.stack_info)
        return True


def configure_logging(level: str, app: KdMcpApp) -> None:
    """Send every log record to stderr through the redacting filter."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(app.redactor))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level)
