"""Where the config file is looked for: ``--config PATH``, else ``$KDMCP_CONFIG``, else the per-user file.

Its own module, of the standard library and platformdirs only, because two readers need it: the
config loader (``kdmcp.config``, which validates with pydantic) and the stdio prelude, which runs
before pydantic is imported and fingerprints the bytes of every file the loader may read
(``kdmcp.prelude.config_candidates``).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_CONFIG = "KDMCP_CONFIG"
CONFIG_FILE_NAME = "config.yaml"


def named_path(text: str | None) -> Path | None:
    """A config path as given (the option or the environment): blanks trimmed, ``~`` expanded;
    None when nothing is given."""
    return Path(os.path.expanduser(text.strip())) if text is not None and text.strip() else None


def default_config_path() -> Path:
    """The per-user config file: ``%LOCALAPPDATA%\\kd-mcp\\kd-mcp\\config.yaml`` on Windows,
    ``~/.config/kd-mcp/config.yaml`` on Linux, ``~/Library/Application Support/kd-mcp/`` on macOS."""
    return Path(platformdirs.user_config_dir("kd-mcp")) / CONFIG_FILE_NAME
